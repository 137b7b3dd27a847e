"""Pooling: max (with indices), average, adaptive, LP pooling and max-unpooling.

Every pooling op is a window op over (planes, D, H, W) arrays (see ``_kernels``): the
windows are computed here, per spatial dim, from the user's arguments, with PyTorch's
output-size rules (ceil_mode, padding, dilation), and cached, since a network asks for
the same few geometries at every step.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, not_implemented, xp_of
from ember.nn._functional import _kernels as K

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d",
]


# ---------------------------------------------------------------------------------------
# windows

def _pool_out_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1  # floor division, as div_rtn
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


_I64 = np.int64
_ONE = (np.zeros(1, _I64), np.ones(1, _I64))


@functools.lru_cache(maxsize=512)
def _max_windows(size, k, s, p, d, out):
    first = np.arange(out, dtype=_I64) * s - p
    return first, np.full(out, k, _I64)


@functools.lru_cache(maxsize=512)
def _avg_windows(size, k, s, p, out, count_include_pad):
    """(first, count, divisor) of average pooling windows clipped to the input."""
    start = np.arange(out, dtype=_I64) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    start = np.maximum(start, 0)
    end = np.minimum(end, size)
    count = np.maximum(end - start, 0)
    div = pool if count_include_pad else count
    div = np.where(count > 0, div, 1)  # an empty window averages to 0, as in PyTorch
    return start, count, div.astype(_I64)


@functools.lru_cache(maxsize=512)
def _adaptive_windows(size, out):
    o = np.arange(out, dtype=_I64)
    start = (o * size) // out
    end = -((-(o + 1) * size) // out)
    return start, end - start


def _lead(nd, windows):
    return (_ONE,) * (3 - nd) + tuple(windows)


def _planes(x, nd):
    """(N, C, *sp) -> contiguous (N*C, D, H, W)."""
    xp = xp_of(x)
    sp = (1,) * (3 - nd) + tuple(x.shape[2:])
    return xp.ascontiguousarray(x).reshape((-1,) + sp)


_HALF = ("float16", "bfloat16")


def _upcast(x):
    return x.astype(np.float32) if x.dtype.name in _HALF else x


# ---------------------------------------------------------------------------------------
# nodes

class _MaxPool(Node):
    """(values, indices) of max pooling; indices are flat positions in each input plane."""

    def forward(self, x, windows, steps, nd, label, regular=None):
        self.nd, self.label = nd, label
        self.in_shape = x.shape
        dt = x.dtype
        planes = _planes(_upcast(x), nd)
        if regular is not None and K.has_compiled("max_pool_regular", planes):
            out, idx = K.max_pool_regular(planes, *regular)
        else:
            out, idx = K.max_pool(planes, windows, steps)
        self.idx, self.keep = idx, None
        if regular is not None and any(p > 0 and d > 1 for p, d in zip(regular[2], regular[3],
                                                                       strict=True)):
            # padding with dilation can leave a window with no input position: its output
            # is -inf with PyTorch's out-of-plane index, and it gets no gradient
            xp = xp_of(idx)
            size = math.prod(planes.shape[1:])
            bad = (idx < 0) | (idx >= size)
            if bool(bad.any()):
                self.idx, self.keep = xp.where(bad, 0, idx), ~bad
        oshape = x.shape[:2] + out.shape[4 - nd:]
        return out.reshape(oshape).astype(dt, copy=False), idx.reshape(oshape)

    def name(self):
        return self.label

    def backward(self, g, _gi=None):
        if self.keep is not None:
            from ember._ops._util import wrap

            g = g * wrap(self.keep.reshape(g.shape).astype(g._data.dtype))
        return apply(_ScatterPlanes, g, self.idx, self.in_shape)


class _ScatterPlanes(Node):
    """Adds g (N, C, *out) at the flat plane positions idx (planes, O) into zeros of
    ``in_shape``: the gradient of max pooling."""

    def forward(self, g, idx, in_shape):
        self.idx, self.g_shape = idx, g.shape
        dt = g.dtype
        planes = idx.shape[0]
        size = math.prod(in_shape[2:])
        per_plane = math.prod(g.shape) // planes if planes else 0  # reshape(0, -1) fails
        gx = K.scatter_add_planes(_upcast(g).reshape(planes, per_plane), idx, size)
        return gx.reshape(in_shape).astype(dt, copy=False)

    def name(self):
        return "MaxPoolBackwardBackward0"

    def backward(self, gg):
        return apply(_Gather, gg, self.idx, self.g_shape)


class _AvgPool(Node):
    def forward(self, x, windows, divisors, override, nd, label):
        self.args = (windows, divisors, override, nd, label)
        self.in_shape = x.shape
        dt = x.dtype
        xs = _upcast(x)
        if xs.dtype.kind in "iub":
            out = _int_avg(xs, windows, divisors, override, nd)
        else:
            out = K.avg_pool(_planes(xs, nd), windows, divisors, override)
        return out.reshape(x.shape[:2] + out.shape[4 - nd:]).astype(dt, copy=False)

    def name(self):
        return self.args[4]

    def backward(self, g):
        return apply(_AvgPoolBackward, g, self.in_shape, *self.args)


def _int_avg(x, windows, divisors, override, nd):
    # integer average pooling divides as C does (truncation), in int64
    xp = xp_of(x)
    planes = _planes(x, nd).astype(np.int64)
    vals, _, _ = K._gather_windows(xp, planes, windows, (1, 1, 1), 0)
    div = K._divisor(xp, divisors, override, np.int64)
    s = vals.sum(-1)
    q = xp.abs(s) // div
    return (xp.sign(s) * q).astype(x.dtype)


class _AvgPoolBackward(Node):
    def forward(self, g, in_shape, windows, divisors, override, nd, label):
        self.args = (windows, divisors, override, nd, label)
        dt = g.dtype
        sp3 = (1,) * (3 - nd) + tuple(in_shape[2:])
        gx = K.avg_pool_backward(_planes(_upcast(g), nd), sp3, windows, divisors, override)
        return gx.reshape(in_shape).astype(dt, copy=False)

    def name(self):
        return self.args[4].replace("Backward0", "BackwardBackward0")

    def backward(self, gg):
        return apply(_AvgPool, gg, *self.args)


class _MaxUnpool(Node):
    """out[p, idx[p, o]] = x[p, o] in zeros of ``out_shape``."""

    def forward(self, x, idx, out_shape):
        xp = xp_of(x)
        planes = x.shape[0] * x.shape[1]
        size = math.prod(out_shape[2:])
        out = xp.zeros((planes, size), x.dtype)
        isize = math.prod(x.shape[2:])
        i2 = xp.ascontiguousarray(idx).reshape(planes, isize)
        xp.put_along_axis(out, i2, x.reshape(planes, isize), axis=1)
        self.idx = i2
        self.in_shape = x.shape
        return out.reshape(out_shape)

    def name(self):
        return f"MaxUnpool{len(self.in_shape) - 2}DBackward0"

    def backward(self, g):
        return apply(_Gather, g, self.idx, self.in_shape)


class _Gather(Node):
    """out (shape) = x (planes, ...)[p, idx[p, o]]; backward scatters (adds) back."""

    def forward(self, x, idx, shape):
        xp = xp_of(x)
        planes = idx.shape[0]
        idx = idx.reshape(planes, math.prod(idx.shape[1:]))
        self.idx, self.x_shape = idx, x.shape
        xsize = x.size // planes if planes else 0
        return xp.take_along_axis(x.reshape(planes, xsize), idx, axis=1).reshape(shape)

    def name(self):
        return "GatherBackward0"

    def backward(self, g):
        return apply(_ScatterPlanes, g, self.idx, self.x_shape)


# ---------------------------------------------------------------------------------------
# argument parsing

def _tuple(value, nd, name, fname):
    if isinstance(value, TensorBase):
        value = value.tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * nd
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        what = {1: "a single int", 2: "a single int, or a tuple of two ints",
                3: "a single int, or a tuple of three ints"}[nd]
        raise RuntimeError(f"{fname}: {name} must either be {what}")
    return value


def _check_dims(input, nd, fname):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(
                f"{fname}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
                f"size for input, but got:{list(input.shape)}")
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if fname == "max_pool1d" and any(s == 0 for s in input.shape[-nd - 1:]):
        raise RuntimeError(
            f"{fname}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
            f"size for input, but got:{list(input.shape)}")


def _batched(input, nd):
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _pool_sizes(input, k, s, p, d, ceil_mode, nd, fname):
    """The output sizes of max/avg pooling, with PyTorch's checks in PyTorch's order
    (its 1-d max pooling has its own messages; 1-d average pooling is 2-d pooling)."""
    shape = tuple(input.shape)
    sizes = shape[-nd:]
    if fname == "max_pool1d":
        for v, what in ((k[0], "kernel_size must be greater than zero"),
                        (s[0], "stride must be greater than zero")):
            if v <= 0:
                raise RuntimeError(f"max_pool1d() {what}, but got {v}")
        if p[0] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
        if p[0] > k[0] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={p[0]} and kernel_size={k[0]}")
        if d[0] <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
        out = _pool_out_size(sizes[0], k[0], s[0], p[0], d[0], ceil_mode)
        if out <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
        return (out,)
    if nd == 1:  # avg_pool1d runs as 2-d pooling of (N, C, 1, L)
        k, s, p, d, sizes, shape = ((1,) + k, (1,) + s, (0,) + p, (1,) + d, (1,) + sizes,
                                    shape[:-1] + (1,) + shape[-1:])
    n = len(k)
    outs = []
    for i, kk, ss, pp, dd in zip(sizes, k, s, p, d, strict=False):  # PyTorch's pooling_output_shape
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")
        outs.append(_pool_out_size(i, kk, ss, pp, dd, ceil_mode) if ss > 0 else 0)
    names = "THW"[3 - n:]
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{a}: {v}" for a, v in zip(names, k, strict=False)))
    if any(v <= 0 for v in s):
        raise RuntimeError("stride should be greater than zero, but got "
                           + " ".join(f"d{a}: {v}" for a, v in zip(names, s, strict=False)))
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{a}: {v}" for a, v in zip(names, d, strict=False)))
    if n == 2:
        if any(v == 0 for v in shape[1:]):
            raise RuntimeError(
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                f"input, but got:{list(shape)}")
        if any(pp > kk // 2 for pp, kk in zip(p, k, strict=False)):
            raise RuntimeError(
                "pad should be smaller than or equal to half of kernel size, but got "
                f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    else:
        if any(v == 0 for v in shape[-4:]):
            who = "max_pool3d_with_indices_out_cpu_template" if fname.startswith("max") \
                else "avg_pool3d"
            raise RuntimeError(
                f"{who}(): Expected input's non-batch dimensions to have positive length, but "
                f"input has a shape of {list(shape)} and non-batch dimension 0 has length "
                f"zero!")
        if fname == "avg_pool3d" and any(i < kk for i, kk in zip(sizes, k, strict=False)):
            raise RuntimeError(
                f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel "
                f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
        if any(pp > kk // 2 for pp, kk in zip(p, k, strict=False)):
            raise RuntimeError(
                "pad should be smaller than or equal to half of kernel size, but got "
                f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    if any(o <= 0 for o in outs):
        c = shape[-n - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c,) + tuple(sizes)))}). Calculated output "
            f"size: ({'x'.join(map(str, (c,) + tuple(outs)))}). Output size is too small")
    return tuple(outs[-nd:])


def _check_pool_dtype(input, kernel, floats_only=False):
    # PyTorch's max/avg pooling kernels also take integers; its 1-d max pooling, adaptive
    # pooling and max-unpooling kernels take floating types only
    if input._data.dtype.kind in ("bc" if not floats_only else "biuc"):
        raise not_implemented(kernel, input._data.dtype)


# ---------------------------------------------------------------------------------------
# max pooling

def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd):
    fname = f"max_pool{nd}d"
    _check_dims(input, nd, fname)
    _check_pool_dtype(input, fname + "_impl" if nd == 1 else fname, floats_only=nd == 1)
    k = _tuple(kernel_size, nd, "kernel_size", fname)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, nd, "stride", fname)
    p = _tuple(padding, nd, "padding", fname)
    d = _tuple(dilation, nd, "dilation", fname)
    outs = _pool_sizes(input, k, s, p, d, bool(ceil_mode), nd, fname)
    x, unbatched = _batched(input, nd)
    sizes = tuple(x.shape[2:])
    windows = _lead(nd, [_max_windows(i, kk, ss, pp, dd, o)
                         for i, kk, ss, pp, dd, o in zip(sizes, k, s, p, d, outs, strict=False)])
    steps = (1,) * (3 - nd) + d
    lead = 3 - nd
    regular = ((1,) * lead + k, (1,) * lead + s, (0,) * lead + p, (1,) * lead + d,
               (1,) * lead + outs)
    out, idx = apply(_MaxPool, x, windows, steps, nd, f"MaxPool{nd}DWithIndicesBackward0",
                     regular)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over a 1D signal; returns (output, indices)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over a 2D input; returns (output, indices)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over a 3D input; returns (output, indices)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 1D max pooling over an input signal composed of several input planes.

    Args:
        input: (N, C, L) or (C, L).
        kernel_size: the size of the window.
        stride: the stride of the window. Default: kernel_size.
        padding: implicit negative infinity padding on both sides (at most half the
            effective kernel size).
        dilation: the spacing between the elements of the window.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the flat positions of the maxima (for max_unpool1d).
    """
    out, idx = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1)
    return (out, idx) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    Args:
        input: (N, C, H, W) or (C, H, W).
        kernel_size, stride, padding, dilation: an int or a tuple (h, w); stride defaults
            to kernel_size.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the flat positions (h * W + w) of the maxima.

    Examples::

        >>> F.max_pool2d(ember.randn(1, 1, 4, 4), 2).shape
        ember.Size([1, 1, 2, 2])
    """
    out, idx = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)
    return (out, idx) if return_indices else out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 3D max pooling over an input signal composed of several input planes.

    Args:
        input: (N, C, D, H, W) or (C, D, H, W).
        kernel_size, stride, padding, dilation: an int or a tuple (d, h, w); stride
            defaults to kernel_size.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the flat positions of the maxima.
    """
    out, idx = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)
    return (out, idx) if return_indices else out


# ---------------------------------------------------------------------------------------
# average pooling

def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd):
    fname = f"avg_pool{nd}d"
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if nd == 1 and input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for avg_pool1d)")
    _check_dims(input, nd, fname)
    _check_pool_dtype(input, fname)
    k = _tuple(kernel_size, nd, "kernel_size", fname)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, nd, "stride", fname)
    p = _tuple(padding, nd, "padding", fname)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    outs = _pool_sizes(input, k, s, p, (1,) * nd, bool(ceil_mode), nd, fname)
    x, unbatched = _batched(input, nd)
    sizes = tuple(x.shape[2:])
    wins = [_avg_windows(i, kk, ss, pp, o, bool(count_include_pad))
            for i, kk, ss, pp, o in zip(sizes, k, s, p, outs, strict=False)]
    windows = _lead(nd, [(w[0], w[1]) for w in wins])
    divisors = (np.ones(1, _I64),) * (3 - nd) + tuple(w[2] for w in wins)
    override = int(divisor_override) if divisor_override is not None else 0
    out = apply(_AvgPool, x, windows, divisors, override, nd, f"AvgPool{nd}DBackward0")
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Applies a 1D average pooling over an input signal composed of several input planes.

    Args:
        input: (N, C, L) or (C, L).
        kernel_size: the size of the window.
        stride: the stride of the window. Default: kernel_size.
        padding: implicit zero padding on both sides.
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: include the zero padding in the averaging count.
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Applies 2D average-pooling over kH x kW regions by step size sH x sW.

    Args:
        input: (N, C, H, W) or (C, H, W).
        kernel_size, stride, padding: an int or a tuple (h, w); stride defaults to
            kernel_size.
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: include the zero padding in the averaging count.
        divisor_override: if given, the divisor instead of the window size.
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Applies 3D average-pooling over kT x kH x kW regions by step size sT x sH x sW.

    Args:
        input: (N, C, D, H, W) or (C, D, H, W).
        kernel_size, stride, padding: an int or a tuple (t, h, w); stride defaults to
            kernel_size.
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: include the zero padding in the averaging count.
        divisor_override: if given, the divisor instead of the window size.
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3)


# ---------------------------------------------------------------------------------------
# adaptive pooling

def _adaptive_sizes(input, output_size, nd, fname):
    if isinstance(output_size, TensorBase):
        output_size = output_size.tolist()
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) == 1 and nd > 1:
        output_size = output_size * nd
    if len(output_size) != nd:
        if nd == 1:
            raise RuntimeError(f"{fname}() argument 'output_size' should contain one int "
                               f"(got {len(output_size)})")
        if "avg" in fname:
            raise RuntimeError(f"{fname}: output_size must be {nd}")
        raise RuntimeError(f"{fname}(): internal error: output_size.size() must be {nd}")
    sizes = tuple(input.shape[-nd:])
    outs = tuple(i if o is None else int(o) for o, i in zip(output_size, sizes, strict=False))
    if any(o < 0 for o in outs):
        raise RuntimeError(
            f"{fname}: elements of output_size must be greater than or equal to 0 but "
            f"received {{{', '.join(map(str, outs))}}}")
    return outs


def _adaptive_check(input, nd, fname):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if nd == 1:
        if input.ndim not in (2, 3):
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for "
                f"argument #1 'self' (while checking arguments for {fname})")
        if fname == "adaptive_avg_pool1d":  # runs as 2-d pooling of (N, C, 1, L)
            if input.shape[-1] == 0:
                shape = list(input.shape[:-1]) + [1, 0]
                raise RuntimeError(
                    f"adaptive_avg_pool2d(): Expected input to have non-zero size for "
                    f"non-batch dimensions, but input has sizes {shape} with dimension "
                    f"{len(shape) - 1} being empty")
            return
        nd = 1
    if input.ndim not in (nd + 1, nd + 2):
        sep = ": " if "max" in fname else " "
        raise RuntimeError(
            f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}"
            f"{list(input.shape)}")
    # adaptive average pooling in 2-d (and 1-d, which runs as 2-d) allows zero channels
    first = input.ndim - 2 if fname == "adaptive_avg_pool2d" else 1
    for i in range(first, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fname}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {list(input.shape)} with dimension {i} being empty")


def _adaptive_windows_for(x, outs, nd):
    return _lead(nd, [_adaptive_windows(i, o) for i, o in zip(x.shape[2:], outs, strict=False)])


def _adaptive_avg(input, output_size, nd):
    fname = f"adaptive_avg_pool{nd}d"
    _adaptive_check(input, nd, fname)
    # (1-d adaptive pooling runs as 2-d; 3-d average pooling names its CPU kernel)
    kernel = {"adaptive_avg_pool1d": "adaptive_avg_pool2d",
              "adaptive_max_pool1d": "adaptive_max_pool2d",
              "adaptive_avg_pool3d": "adaptive_avg_pool3d_cpu"}.get(fname, fname)
    _check_pool_dtype(input, kernel, floats_only=True)
    outs = _adaptive_sizes(input, output_size, nd, fname)
    x, unbatched = _batched(input, nd)
    if nd == 1:
        x, unbatched = (input.unsqueeze(0), True) if input.ndim == 2 else (input, False)
    windows = _adaptive_windows_for(x, outs, nd)
    divisors = tuple(w[1] for w in windows)
    out = apply(_AvgPool, x, windows, divisors, 0, nd, f"AdaptiveAvgPool{nd}DBackward0")
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input, output_size):
    """Applies a 1D adaptive average pooling over an input signal composed of several
    input planes: the output has ``output_size`` entries whatever the input length."""
    return _adaptive_avg(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    """Applies a 2D adaptive average pooling over an input signal composed of several
    input planes.

    Args:
        output_size: the target output size (single integer or (H, W); None keeps that
            dim's input size).
    """
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    """Applies a 3D adaptive average pooling over an input signal composed of several
    input planes (output_size: an int or (D, H, W), None keeping a dim)."""
    return _adaptive_avg(input, output_size, 3)


def _adaptive_max(input, output_size, nd):
    fname = f"adaptive_max_pool{nd}d"
    _adaptive_check(input, nd, fname)
    # (1-d adaptive pooling runs as 2-d; 3-d average pooling names its CPU kernel)
    kernel = {"adaptive_avg_pool1d": "adaptive_avg_pool2d",
              "adaptive_max_pool1d": "adaptive_max_pool2d",
              "adaptive_avg_pool3d": "adaptive_avg_pool3d_cpu"}.get(fname, fname)
    _check_pool_dtype(input, kernel, floats_only=True)
    outs = _adaptive_sizes(input, output_size, nd, fname)
    x, unbatched = _batched(input, nd)
    windows = _adaptive_windows_for(x, outs, nd)
    out, idx = apply(_MaxPool, x, windows, (1, 1, 1), nd, f"AdaptiveMaxPool{nd}DBackward0")
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over a 1D signal; returns (output, indices)."""
    return _adaptive_max(input, output_size, 1)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over a 2D input; returns (output, indices)."""
    return _adaptive_max(input, output_size, 2)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over a 3D input; returns (output, indices)."""
    return _adaptive_max(input, output_size, 3)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Applies a 1D adaptive max pooling over an input signal composed of several input
    planes (with ``return_indices``, also the positions of the maxima)."""
    out, idx = _adaptive_max(input, output_size, 1)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Applies a 2D adaptive max pooling over an input signal composed of several input
    planes (output_size: an int or (H, W), None keeping a dim)."""
    out, idx = _adaptive_max(input, output_size, 2)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Applies a 3D adaptive max pooling over an input signal composed of several input
    planes (output_size: an int or (D, H, W), None keeping a dim)."""
    out, idx = _adaptive_max(input, output_size, 3)
    return (out, idx) if return_indices else out


# ---------------------------------------------------------------------------------------
# max unpooling

def _unpool_output_size(input, kernel_size, stride, padding, output_size, nd):
    sizes = tuple(input.shape[-nd:])
    default = tuple((i - 1) * s - 2 * p + k for i, k, s, p in
                    zip(sizes, kernel_size, stride, padding, strict=False))
    if output_size is None:
        return default
    output_size = tuple(int(v) for v in output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    elif len(output_size) == nd + 1 and input.ndim == nd + 1:
        output_size = output_size[1:]
    if len(output_size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but "
            f"it has a length of '{len(output_size)}'")
    for dim, (o, dflt, s) in enumerate(zip(output_size, default, stride, strict=False)):
        lo, hi = dflt - s, dflt + s
        if not lo < o < hi:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {dim} must be between {lo} and '
                f'{hi})')
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    fname = f"max_unpool{nd}d"
    k = _tuple(kernel_size, nd, "kernel_size", fname)
    s = k if stride is None else _tuple(stride, nd, "stride", fname)
    p = _tuple(padding, nd, "padding", fname)
    if not isinstance(indices, TensorBase):
        raise TypeError(f"{fname}(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    _check_pool_dtype(input, "max_unpool2d" if nd == 1 else fname, floats_only=True)
    if indices._data.dtype != np.int64:
        from ember._ops._util import type_name

        raise RuntimeError(
            f"elements in indices should be type int64 but got: "
            f"{type_name(indices._data.dtype)}")
    outs = _unpool_output_size(input, k, s, p, output_size, nd)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {input.ndim} dimensions.")
    x, unbatched = _batched(input, nd)
    idx = indices.unsqueeze(0) if unbatched else indices
    if nd == 1:
        x = x.unsqueeze(-1)
        idx = idx.unsqueeze(-1)
        outs = outs + (1,)
    if tuple(idx.shape) != tuple(x.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(x.shape[1:] if unbatched else x.shape)}) but got indices tensor with "
            f"shape: {list(idx.shape[1:] if unbatched else idx.shape)}")
    size = math.prod(outs)
    ia = idx._data
    if ia.size and (int(ia.min()) < 0 or int(ia.max()) >= size):
        flat = ia.reshape(-1)
        bad = int(flat[int(((flat < 0) | (flat >= size)).argmax())])
        raise RuntimeError(
            f"Found an invalid max index: {bad} (output volumes are of size "
            f"{'x'.join(map(str, outs))})")
    out = apply(_MaxUnpool, x, ia, x.shape[:2] + tuple(outs))
    if nd == 1:
        out = out.squeeze(-1)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool1d: the maxima go back to their positions
    (``indices`` from max_pool1d(..., return_indices=True)), zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool2d: the maxima go back to their positions
    (``indices`` from max_pool2d(..., return_indices=True)), zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Computes a partial inverse of MaxPool3d (see max_unpool2d)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# ---------------------------------------------------------------------------------------
# LP pooling

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    k = _tuple(kernel_size, nd, "kernel_size", f"lp_pool{nd}d")
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        mpool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return mpool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -mpool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    if stride is not None:
        out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 1D power-average pooling: (sum over the window of x^p)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 2D power-average pooling: (sum over the window of x^p)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Applies a 3D power-average pooling: (sum over the window of x^p)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
