"""Distances and similarities: ``cosine_similarity``, ``pairwise_distance``, ``pdist``.

They are compositions of ember's recorded ops (norms, products, sums), so their
gradients, including higher-order ones, come from autograd.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._util import TensorBase, type_name, wrap, wrap_dim

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _check_tensor(fn, name, pos, x):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 * x2, dim) / (max(||x1||, eps) * max(||x2||, eps))``, with broadcasting.

    As PyTorch, each input is divided by its (clamped) norm before the product, and the
    clamping does not change the gradient path of the norm.

    Examples::

        >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    _check_tensor("cosine_similarity", "x1", 1, x1)
    _check_tensor("cosine_similarity", "x2", 2, x2)
    rt = _dtype.result_type(x1, x2).numpy
    if rt.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{type_name(rt)}")
    from ember._ops.shape import broadcast_tensors

    a, b = broadcast_tensors(x1.to(rt), x2.to(rt))
    d = wrap_dim(dim, a.dim())
    na = a.norm(2, d, keepdim=True)
    nb = b.norm(2, d, keepdim=True)
    # clamp_min_ under no_grad in PyTorch: the value changes, the norm's gradient does not
    na = na + (na.detach().clamp_min(eps) - na.detach())
    nb = nb + (nb.detach().clamp_min(eps) - nb.detach())
    return ((a / na) * (b / nb)).sum(d)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm distance ``||x1 - x2 + eps||_p`` over the last dimension (inputs
    broadcast).

    Examples::

        >>> F.pairwise_distance(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0]]), eps=0)
        tensor([5.])
    """
    _check_tensor("pairwise_distance", "x1", 1, x1)
    _check_tensor("pairwise_distance", "x2", 2, x2)
    ndim = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if ndim == 0:
        return diff.norm(p)
    return diff.norm(p, ndim - 1, keepdim=keepdim)


def pdist(input, p=2):
    """The p-norm distances between every pair of rows of a 2-d ``input``: the upper
    triangle (i < j, row-major) of the distance matrix, shape ``(N * (N - 1) / 2,)``."""
    _check_tensor("pdist", "input", 1, input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    if i.size == 0:
        from ember._ops.creation import zeros

        return zeros(0, dtype=input.dtype, device=input.device) + input.sum() * 0
    i, j = wrap(i.astype(np.int64)), wrap(j.astype(np.int64))
    diff = input.index_select(0, i) - input.index_select(0, j)
    return diff.norm(p, 1)
