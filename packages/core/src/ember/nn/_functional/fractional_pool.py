"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d/3d`` and their
``_with_indices`` forms.

The pooling regions follow PyTorch's pseudo-random sequence: for each plane and spatial
dim, one sample ``u`` in [0, 1) places the windows at
``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (in - k) / (out - 1)`` (computed
in the input's dtype, as PyTorch's kernel does), the last window ending at the input's
edge. ``_random_samples`` (N, C, nd) fixes them; PyTorch's sample order is (W, H) in 2-d and
(T, H, W) in 3-d. With the same samples the outputs and indices are PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, xp_of
from ember.nn._functional.pooling import _ScatterPlanes, _upcast

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

# which sample of a plane sets the windows of each spatial dim (PyTorch's order)
_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _interval_starts(xp, samples, in_size, out_size, pool):
    """The first input position of every window: (planes, out_size) int64, from the
    planes' samples (planes,), in the samples' dtype."""
    planes = samples.shape[0]
    starts = xp.full((planes, out_size), in_size - pool, dtype=np.int64)
    if out_size > 1:
        dt = samples.dtype.type
        alpha = dt(in_size - pool) / dt(out_size - 1)
        i = xp.arange(out_size - 1, dtype=samples.dtype)
        u = samples[:, None]
        starts[:, :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    return starts


class _FractionalMaxPool(Node):
    """(values, indices) of fractional max pooling; indices are flat positions in each
    input plane (PyTorch's)."""

    def forward(self, x, samples, kernel, out_size, nd):
        xp = xp_of(x)
        self.in_shape = x.shape
        self.nd = nd
        dt = x.dtype
        N, C = x.shape[:2]
        sp = x.shape[2:]
        planes = N * C
        xw = _upcast(x)
        su = samples[:N].astype(xw.dtype, copy=False).reshape(planes, nd)
        # flat plane index of every (output position, window offset), dims interleaved
        # as (o_0, ..., o_nd-1, k_0, ..., k_nd-1)
        idx = xp.zeros((planes,) + tuple(out_size) + tuple(kernel), dtype=np.int64)
        stride = 1
        for d in reversed(range(nd)):
            starts = _interval_starts(xp, su[:, _SAMPLE_OF_DIM[nd][d]], sp[d], out_size[d],
                                      kernel[d])
            pos = starts[:, :, None] + xp.arange(kernel[d], dtype=np.int64)[None, None, :]
            shape = [planes] + [1] * (2 * nd)
            shape[1 + d] = out_size[d]
            shape[1 + nd + d] = kernel[d]
            idx = idx + pos.reshape(shape) * stride
            stride *= sp[d]
        K = math.prod(kernel)
        n_out = math.prod(out_size)
        idx = idx.reshape(planes, n_out, K)
        vals = xp.take_along_axis(xp.ascontiguousarray(xw).reshape(planes, -1),
                                  idx.reshape(planes, n_out * K), axis=1).reshape(planes, n_out, K)
        # PyTorch's scan: the first maximum, or the last NaN of the window
        nan = xp.isnan(vals)
        first_max = xp.argmax(xp.where(nan, -xp.inf, vals), axis=-1)
        last_nan = K - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        sel = xp.where(nan.any(axis=-1), last_nan, first_max)[..., None]
        out = xp.take_along_axis(vals, sel, axis=-1)[..., 0]
        self.idx = xp.take_along_axis(idx, sel, axis=-1)[..., 0]
        oshape = (N, C) + tuple(out_size)
        return out.reshape(oshape).astype(dt, copy=False), self.idx.reshape(oshape)

    def name(self):
        return f"FractionalMaxPool{self.nd}DBackward0"

    def backward(self, g, _gi=None):
        return apply(_ScatterPlanes, g, self.idx, self.in_shape)


def _fractional(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    fname = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an "
                         "output_ratio")
    kernel = _ntuple(kernel_size, nd)
    if len(kernel) != nd:
        raise RuntimeError(f"{fname}(): kernel_size must either be a single Int or tuple of "
                           f"{'two' if nd == 2 else 'three'} Ints")
    if output_size is None:
        ratio = _ntuple(output_ratio, nd)
        if len(ratio) != nd:
            raise ValueError(f"{fname} requires output_ratio to either be a single Int or "
                             "tuple of Ints.")
        output_size = [int(input.size(d - nd) * r) for d, r in enumerate(ratio)]
    out_size = _ntuple(output_size, nd)
    if len(out_size) != nd:
        raise RuntimeError(f"{fname}: output_size must either be a single Int or tuple of Ints")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if not input.is_floating_point():
        raise RuntimeError(f"{fname}(): expected a floating point input, got {input.dtype}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        from ember._ops.random import rand

        _random_samples = rand(N, C, nd, dtype=input.dtype, device=input.device)
    s = _random_samples
    if s.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, but got {s.dim()}")
    if s.size(0) < N:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if s.size(1) != C:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if s.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {s.size(2)}.")
    for d in range(nd):
        size, k, o = x.shape[2 + d], kernel[d], out_size[d]
        if o + k - 1 > size:
            what = _DIM_NAMES[nd][d]
            raise RuntimeError(f"{fname}(): pool {what} {k} too large relative to input "
                               f"{what} {size}")
    data = s._data if isinstance(s, TensorBase) else s
    out, idx = apply(_FractionalMaxPool, x, data, kernel, out_size, nd)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def _ntuple(value, n):
    if isinstance(value, (list, tuple)):
        return tuple(int(v) if not isinstance(v, float) else v for v in value)
    return (value,) * n


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    r"""Fractional max pooling over a 2-d input (N, C, H, W) or (C, H, W); returns
    ``(output, indices)``.

    Args:
        input: the input.
        kernel_size: the window size, ``k`` or ``(kH, kW)``.
        output_size: the output size ``oH x oW`` (an int for a square), or
        output_ratio: the output size as a fraction of the input's (in (0, 1)).
        return_indices: ignored here (the indices are always returned).
        _random_samples: (N, C, 2) samples in [0, 1) placing the windows (PyTorch's order:
            width, then height); drawn with ``ember.rand`` when None.

    Examples::

        >>> out, idx = F.fractional_max_pool2d_with_indices(ember.randn(1, 2, 9, 9), 2,
        ...                                                 output_size=4)
        >>> out.shape
        ember.Size([1, 2, 4, 4])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over a 2-d input (Graham, 2014): the output, or
    ``(output, indices)`` with ``return_indices``. See
    :func:`fractional_max_pool2d_with_indices` for the arguments.

    Examples::

        >>> F.fractional_max_pool2d(ember.randn(1, 2, 9, 9), 3, output_ratio=0.5).shape
        ember.Size([1, 2, 4, 4])
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (out, idx) if return_indices else out


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over a 3-d input (N, C, T, H, W) or (C, T, H, W); returns
    ``(output, indices)``. The arguments are those of
    :func:`fractional_max_pool2d_with_indices` with triples; ``_random_samples`` is
    (N, C, 3), in the order time, height, width.
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over a 3-d input: the output, or ``(output, indices)`` with
    ``return_indices``. See :func:`fractional_max_pool3d_with_indices`.

    Examples::

        >>> F.fractional_max_pool3d(ember.randn(1, 2, 6, 6, 6), 2, output_size=3).shape
        ember.Size([1, 2, 3, 3, 3])
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (out, idx) if return_indices else out
