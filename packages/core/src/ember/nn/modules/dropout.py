"""Dropout layers: active in training mode, the identity in evaluation mode."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; in evaluation, the identity.

    Args:
        p: probability of an element to be zeroed. Default: 0.5.
        inplace: do the operation in place. Default: ``False``.

    Examples::

        >>> m = nn.Dropout(p=0.2)
        >>> m(ember.randn(20, 16)).shape
        ember.Size([20, 16])
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p``
    (in training), scaling the others by ``1 / (1 - p)``."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p`` (in
    training), scaling the others by ``1 / (1 - p)``."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs with
    probability ``p`` (in training), scaling the others by ``1 / (1 - p)``."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks): keeps zero mean and unit variance.

    Args:
        p: probability of an element to be dropped. Default: 0.5.
        inplace: kept for PyTorch compatibility; the module does not use it.
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (dim 1)."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
