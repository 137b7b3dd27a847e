"""fold and unfold: sliding local blocks to columns (im2col) and back (col2im)."""

from __future__ import annotations

import math

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, not_implemented, xp_of
from ember.nn._functional import _kernels as K

__all__ = ["fold", "unfold"]


def _pair(value, name):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return value


def _check_args(k, d, p, s):
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{s[0]} stride_width: {s[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")


def _blocks(size, k, d, p, s):
    return tuple((i + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                 for i, kk, dd, pp, ss in zip(size, k, d, p, s, strict=False))


def _geometry(k, d, p, s, blocks):
    return ((1,) + k, (1,) + s, (0,) + p, (1,) + d, (1,) + blocks)


def _unfold_array(x, geo):
    """x (N, C, H, W) -> (N, C*kh*kw, L)."""
    xp = xp_of(x)
    n, c, h, w = x.shape
    kernel, stride, padding, dilation, blocks = geo
    kk = kernel[1] * kernel[2]
    big = math.prod(blocks)
    out = xp.empty((n, c * kk, big), x.dtype)
    x5 = xp.ascontiguousarray(x).reshape(n, c, 1, h, w)
    K.im2col(x5, out.transpose(1, 0, 2), kernel, stride, padding, dilation, blocks)
    return out


def _fold_array(cols, out_size, geo):
    """cols (N, C*kh*kw, L) -> (N, C, H, W), overlapping blocks summed."""
    xp = xp_of(cols)
    n = cols.shape[0]
    kernel, stride, padding, dilation, blocks = geo
    c = cols.shape[1] // (kernel[1] * kernel[2])
    x = xp.zeros((n, c, 1) + tuple(out_size), cols.dtype)
    K.col2im(xp.ascontiguousarray(cols).transpose(1, 0, 2), x, kernel, stride, padding,
             dilation, blocks)
    return x.reshape((n, c) + tuple(out_size))


def _compute(fn, a, *args):
    # the compiled kernels take float32/float64; other dtypes go through them in float32
    if a.dtype.name in ("float16", "bfloat16"):
        return fn(a.astype(np.float32), *args).astype(a.dtype)
    if a.dtype.kind == "c":  # a real-linear map: the real and imaginary parts apart
        re, im = fn(a.real, *args), fn(a.imag, *args)
        out = xp_of(a).empty(re.shape, a.dtype)
        out.real, out.imag = re, im
        return out
    return fn(a, *args)


class _Unfold(Node):
    def forward(self, x, geo):
        self.geo, self.size = geo, x.shape[2:]
        return _compute(_unfold_array, x, geo)

    def name(self):
        return "Im2ColBackward0"

    def backward(self, g):
        return apply(_Fold, g, self.size, self.geo)


class _Fold(Node):
    def forward(self, cols, out_size, geo):
        self.geo = geo
        return _compute(_fold_array, cols, out_size, geo)

    def name(self):
        return "Col2ImBackward0"

    def backward(self, g):
        return apply(_Unfold, g, self.geo)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks from a batched input tensor (im2col).

    Args:
        input: (N, C, H, W) or (C, H, W).
        kernel_size, dilation, padding, stride: an int or a pair.

    Returns:
        (N, C * prod(kernel_size), L), L the number of blocks.

    Examples::

        >>> F.unfold(ember.randn(2, 5, 3, 4), kernel_size=(2, 3)).shape
        ember.Size([2, 30, 4])
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"unfold(): argument 'input' must be Tensor, not {type(input).__name__}")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_args(k, d, p, s)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got "
                         f"{input.ndim})")
    if input.ndim != 4 and input.ndim != 3 or any(v == 0 for v in input.shape[-3:]):
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {list(input.shape)}")
    if input._data.dtype.kind not in "fc":
        raise not_implemented("im2col_out_cpu", input._data.dtype)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    size = tuple(x.shape[2:])
    blocks = _blocks(size, k, d, p, s)
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size {size}, kernel_size={k}, dilation={d}, "
            f"padding={p}, calculated shape of the array of sliding blocks as {blocks}, but "
            f"its components must be at least one.")
    out = apply(_Unfold, x, _geometry(k, d, p, s, blocks))
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine an array of sliding local blocks into a large containing tensor (col2im);
    overlapping values are summed.

    Args:
        input: (N, C * prod(kernel_size), L) or (C * prod(kernel_size), L).
        output_size: the spatial shape (H, W) of the output.
        kernel_size, dilation, padding, stride: an int or a pair.

    Returns:
        (N, C, H, W).
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"fold(): argument 'input' must be Tensor, not {type(input).__name__}")
    o = _pair(output_size, "output_size")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_args(k, d, p, s)
    if input.ndim not in (2, 3) or any(v == 0 for v in input.shape[-2:]):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}")
    if input._data.dtype.kind not in "fc":
        raise not_implemented("col2im_out_cpu", input._data.dtype)
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    if x.shape[1] % (k[0] * k[1]):
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size={k}.")
    blocks = _blocks(o, k, d, p, s)
    if blocks[0] * blocks[1] != x.shape[2] or blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={x.shape[2]}.")
    out = apply(_Fold, x, o, _geometry(k, d, p, s, blocks))
    return out.squeeze(0) if unbatched else out
