"""``CosineSimilarity`` and ``PairwiseDistance``."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    Args:
        dim: the dimension of the vectors. Default: 1.
        eps: the smallest norm divided by. Default: 1e-8.
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The p-norm distance ``||x1 - x2 + eps||_p`` over the last dimension.

    Args:
        p: the norm degree. Default: 2.
        eps: added to the difference to avoid division by zero. Default: 1e-6.
        keepdim: keep the vector dimension (of size 1). Default: ``False``.
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
