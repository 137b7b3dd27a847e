"""Reductions: sum, mean and the rest, over one dim, several dims or all of them."""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._C._core import Node
from ember._ops._util import TensorBase, apply, wrap_dims, xp_of

__all__ = ["sum", "mean", "sum_to"]


def expand_reduced(g, shape, dims, keepdim):
    """The gradient ``g`` of a reduction over ``dims`` broadcast back to ``shape``."""
    if not keepdim and dims is not None and len(shape):
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(kept)
    elif not keepdim and len(shape):
        g = g.reshape((1,) * len(shape))
    return g.expand(shape)


def _reduce_dtype(x, dtype):
    if dtype is not None:
        return _dtype.to_numpy(dtype)
    if x.dtype.kind in "biu":
        return np.dtype(np.int64)
    return None


class Sum(Node):
    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        out_dtype = _reduce_dtype(x, dtype)
        if x.dtype == np.float16 and out_dtype is None:
            return x.sum(axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
        return x.sum(axis=dims, keepdims=keepdim, dtype=out_dtype)

    def backward(self, g):
        return expand_reduced(g, self.shape, self.dims, self.keepdim)


class Mean(Node):
    def forward(self, x, dims, keepdim, dtype):
        self.shape, self.dims, self.keepdim = x.shape, dims, keepdim
        if dtype is not None:
            x = x.astype(_dtype.to_numpy(dtype))
        if x.dtype.kind in "biu":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_dtype.from_numpy(x.dtype).name.capitalize()}")
        n = 1
        for d in (dims if dims is not None else range(x.ndim)):
            n *= x.shape[d]
        self.count = n
        if x.dtype == np.float16:
            return x.mean(axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
        return x.mean(axis=dims, keepdims=keepdim)

    def backward(self, g):
        return expand_reduced(g, self.shape, self.dims, self.keepdim) / max(self.count, 1) \
            if self.count else expand_reduced(g, self.shape, self.dims, self.keepdim) * float("nan")


def _dims_arg(input, dim):
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return None
    return wrap_dims(dim, input._data.ndim)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    """The sum of ``input`` over ``dim`` (an int, a tuple, or None for all dims).

    Integer and bool inputs sum to int64, as in PyTorch.
    """
    return apply(Sum, input, _dims_arg(input, dim), keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of ``input`` over ``dim``; floating and complex inputs only."""
    return apply(Mean, input, _dims_arg(input, dim), keepdim, dtype)


class SumTo(Node):
    def forward(self, x, shape):
        self.shape = x.shape
        lead = x.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
        out = x.sum(axis=axes, keepdims=True) if axes else x
        return out.reshape(shape)

    def backward(self, g):
        return g.expand(self.shape)


def sum_to(grad, shape):
    """``grad`` summed over the broadcast dims so that it has ``shape``."""
    shape = tuple(shape)
    if tuple(grad._data.shape) == shape:
        return grad
    return apply(SumTo, grad, shape)


def _numel_of(x: TensorBase) -> int:
    return int(x._data.size)


METHODS = {"sum": sum, "mean": mean, "sum_to_size": lambda self, *size: sum_to(
    self, size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size)}
_ = xp_of
