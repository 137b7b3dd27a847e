"""``interpolate`` (and the deprecated ``upsample*``): resampling of 1-3 spatial dims.

Every mode (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area, and
bilinear/bicubic/lanczos with ``antialias=True``) is separable: the result is a chain of
1-d passes, one per spatial dim, each a linear map along one axis,

    out[..., o, ...] = sum_t weight[o, t] * x[..., index[o, t], ...]

with ``T`` taps per output position (1 for nearest, 2 for linear, 4 for cubic, the window
for area and antialiasing). A pass is one ``take`` and a weighted sum per tap. Its
transpose (the backward, a scatter-add) is computed the same way, as a gather over the
transposed tables (for every input position, the outputs it went to): no atomics, no
moved axes, and its own backward is the forward pass again. The tables are computed with
PyTorch's formulas, in the precision its CPU kernels use (float32 coordinates for float32
input, and for nearest always), so that nearest picks the same pixels, and cached: a
network asks for the same few geometries at every step.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np

from ember._C._core import Node, is_grad_enabled
from ember._ops._util import TensorBase, apply, not_implemented, wrap, xp_of

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_I64 = np.int64


# ---------------------------------------------------------------------------------------
# index and weight tables of one 1-d pass: (index (L_out, T) int64, weight (L_out, T))

def _scales_value(scale, n_in, n_out, ct):
    """PyTorch's compute_scales_value: 1 / scale when given, else in / out (in ``ct``)."""
    if scale is not None and scale > 0:
        return ct(1.0 / scale)
    return ct(n_in) / ct(n_out)


def _area_scale(n_in, n_out, align_corners, scale, ct):
    """PyTorch's area_pixel_compute_scale."""
    if align_corners:
        return ct(n_in - 1) / ct(n_out - 1) if n_out > 1 else ct(0)
    return _scales_value(scale, n_in, n_out, ct)


def _source_index(scale, n_out, align_corners, cubic, ct):
    """PyTorch's area_pixel_compute_source_index, for every output position."""
    dst = np.arange(n_out).astype(ct)
    if align_corners:
        return scale * dst
    src = scale * (dst + ct(0.5)) - ct(0.5)
    return src if cubic else np.maximum(src, ct(0))


def _guard(real, n_in, ct):
    """PyTorch's guard_index_and_lambda (it floors in float, as floorf does)."""
    index = np.minimum(np.floor(real.astype(np.float32)).astype(_I64), n_in - 1)
    lam = np.clip(real - index.astype(ct), ct(0), ct(1)).astype(ct)
    return index, lam


def _nearest_table(n_in, n_out, scale, exact, shortcut):
    f32 = np.float32
    # PyTorch's nearest_idx shortcuts for equal and doubled sizes
    if not exact and shortcut and n_out == n_in:
        idx = np.arange(n_out, dtype=_I64)
    elif not exact and shortcut and n_out == 2 * n_in:
        idx = np.arange(n_out, dtype=_I64) >> 1
    else:
        s = _scales_value(scale, n_in, n_out, f32)
        dst = np.arange(n_out).astype(f32)
        src = (dst + f32(0.5)) * s if exact else dst * s
        idx = np.minimum(np.floor(src).astype(_I64), n_in - 1)
    return idx[:, None], None


def _linear_table(n_in, n_out, scale, align_corners, ct):
    if n_out == n_in:
        idx = np.arange(n_out, dtype=_I64)
        return idx[:, None], None
    s = _area_scale(n_in, n_out, align_corners, scale, ct)
    index, lam = _guard(_source_index(s, n_out, align_corners, False, ct), n_in, ct)
    index1 = index + (index < n_in - 1)
    return np.stack([index, index1], 1), np.stack([ct(1) - lam, lam], 1)


def _cubic_coefficients(t, a):
    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    x2 = 1 - t
    return np.stack([conv2(t + 1), conv1(t), conv1(x2), conv2(x2 + 1)], 1)


def _cubic_table(n_in, n_out, scale, align_corners, ct):
    s = _area_scale(n_in, n_out, align_corners, scale, ct)
    index, lam = _guard(_source_index(s, n_out, align_corners, True, ct), n_in, ct)
    idx = np.clip(index[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, _cubic_coefficients(lam, ct(-0.75)).astype(ct)


def _area_table(n_in, n_out):
    o = np.arange(n_out, dtype=_I64)
    start = (o * n_in) // n_out
    end = -((-(o + 1) * n_in) // n_out)
    count = end - start
    taps = np.arange(int(count.max()))
    valid = taps[None, :] < count[:, None]
    idx = np.where(valid, start[:, None] + taps, 0)
    weight = np.where(valid, 1.0 / count[:, None], 0.0)
    return idx, weight


def _aa_filter(mode):
    if mode == "bilinear":
        return 1.0, lambda x: np.maximum(1.0 - np.abs(x), 0.0)
    if mode == "lanczos":  # a = 3
        return 3.0, lambda x: np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)

    def cubic(x):  # Keys' kernel with a = -0.5, as PIL
        x = np.abs(x)
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))

    return 2.0, cubic


def _antialias_table(n_in, n_out, scale, align_corners, mode):
    """PyTorch's _compute_index_ranges_weights with antialiasing (PIL's resampling)."""
    half, filt = _aa_filter(mode)
    s = float(_area_scale(n_in, n_out, align_corners, scale, np.float64))
    support = half * s if s >= 1.0 else half
    width = int(math.ceil(support)) * 2 + 1
    invscale = 1.0 / s if s >= 1.0 else 1.0
    delta = 0.0  # PyTorch's align_corners_delta is 0 with antialias: only the scale changes
    center = s * (np.arange(n_out) + 0.5 - delta)
    xmin = np.maximum((center - support + 0.5 + delta).astype(_I64), 0)
    xsize = np.minimum((center + support + 0.5 + delta).astype(_I64), n_in) - xmin
    xsize = np.clip(xsize, 0, width)
    taps = np.arange(width)
    valid = taps[None, :] < xsize[:, None]
    w = filt((taps[None, :] + xmin[:, None] - center[:, None] + 0.5 - delta) * invscale)
    w = np.where(valid, w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0.0, w / np.where(total != 0.0, total, 1.0), w)
    idx = np.where(valid, xmin[:, None] + taps, 0)
    return idx, w


class _Pass:
    """One 1-d pass along ``axis``: n_in -> n_out with (index, weight) tables; weight None
    when every tap weighs 1."""

    __slots__ = ("axis", "n_in", "n_out", "index", "weight", "_dev", "_transpose", "padded")

    def __init__(self, axis, n_in, n_out, index, weight):
        self.axis, self.n_in, self.n_out = axis, n_in, n_out
        if weight is not None:
            keep = np.abs(weight).max(0) > 0  # drop taps that never contribute
            if not keep.all():
                index, weight = index[:, keep], weight[:, keep]
            if bool((weight == 1).all()):
                weight = None
        self.index, self.weight = np.ascontiguousarray(index), weight
        self._dev, self._transpose = {}, None
        self.padded = False  # zero weights that pad windows (area): they must add 0, not 0 * x

    @property
    def identity(self):
        return (self.weight is None and self.n_in == self.n_out and self.index.shape[1] == 1
                and bool((self.index[:, 0] == np.arange(self.n_in)).all()))

    def transpose(self):
        """The transposed pass (n_out -> n_in), as a gather too: for every input position,
        the outputs it went to and their weights, padded with zero weights. The backward
        is thus a scatter-add done as a gather: no atomics, and no moving of the axis."""
        if self._transpose is None:
            taps = self.index.shape[1]
            dest = self.index.reshape(-1)
            src = np.repeat(np.arange(self.n_out, dtype=_I64), taps)
            w = (np.ones(dest.shape) if self.weight is None else self.weight.reshape(-1))
            order = np.argsort(dest, kind="stable")
            dest, src, w = dest[order], src[order], w[order]
            count = np.bincount(dest, minlength=self.n_in)
            width = max(int(count.max()), 1)
            first = np.concatenate([[0], np.cumsum(count)[:-1]])
            slot = np.arange(dest.size) - first[dest]
            index = np.zeros((self.n_in, width), _I64)
            weight = np.zeros((self.n_in, width), w.dtype)
            index[dest, slot] = src
            weight[dest, slot] = w
            self._transpose = _Pass(self.axis, self.n_out, self.n_in, index, weight)
        return self._transpose

    def tables(self, xp, dtype):
        """(index columns, weight columns or None) on xp, the weights in dtype."""
        key = (xp.__name__, np.dtype(dtype).str)
        got = self._dev.get(key)
        if got is None:
            index = [xp.asarray(np.ascontiguousarray(self.index[:, t]))
                     for t in range(self.index.shape[1])]
            weight = None
            if self.weight is not None:
                weight = [xp.asarray(self.weight[:, t].astype(dtype))
                          for t in range(self.weight.shape[1])]
            got = self._dev[key] = (index, weight)
        return got


@functools.lru_cache(maxsize=512)
def _make_pass(mode, axis, n_in, n_out, scale, align_corners, antialias, ct_name, nd):
    ct = np.dtype(ct_name).type
    if mode in ("nearest", "nearest-exact"):
        # PyTorch's 2-d kernel takes the shortcuts always, its 1-d and 3-d kernels only when
        # no scale is given (their backward takes them always: its gradient is then not
        # the forward's; ours is)
        shortcut = nd == 2 or scale is None
        idx, w = _nearest_table(n_in, n_out, scale, mode == "nearest-exact", shortcut)
    elif mode == "area":
        idx, w = _area_table(n_in, n_out)
    elif antialias:
        idx, w = _antialias_table(n_in, n_out, scale, align_corners, mode)
    elif mode == "bicubic":
        idx, w = _cubic_table(n_in, n_out, scale, align_corners, ct)
    else:
        idx, w = _linear_table(n_in, n_out, scale, align_corners, ct)
    p = _Pass(axis, n_in, n_out, idx, w)
    p.padded = mode == "area"
    return p


# ---------------------------------------------------------------------------------------
# the passes on arrays, and their autograd node

def _gather(x, p):
    """out[..., o, ...] = sum_t weight[o, t] * x[..., index[o, t], ...] along p.axis."""
    xp = xp_of(x)
    index, weight = p.tables(xp, x.dtype)
    out = xp.take(x, index[0], axis=p.axis)
    bshape = (p.n_out,) + (1,) * (x.ndim - p.axis - 1)
    if weight is not None:
        out *= weight[0].reshape(bshape)
    for t in range(1, len(index)):
        tap = xp.take(x, index[t], axis=p.axis)
        if weight is not None:
            tap *= weight[t].reshape(bshape)
            if p.padded:  # an inf or NaN outside the window must not leak in as 0 * inf
                pad = weight[t] == 0
                if pad.any():
                    tap[(slice(None),) * p.axis + (pad,)] = 0
        out += tap
    return out


def _compute(fn, x, passes):
    dtype = x.dtype
    if dtype.kind == "f" and dtype.itemsize >= 4:
        return fn(x, passes)
    if fn is _resample_array and all(p.weight is None for p in passes):
        return fn(x, passes)  # pure gathers work on any dtype
    if dtype == np.uint8 and fn is _resample_array:
        # PyTorch resamples images as PIL does: the last dim first, rounding to uint8
        # after each pass
        xp = xp_of(x)
        x = x.astype(np.float32)
        for p in sorted(passes, key=lambda p: -p.axis):
            x = xp.clip(xp.rint(_gather(x, p)), 0, 255)
        return x.astype(dtype)
    return fn(x.astype(np.float32), passes).astype(dtype)  # float16 through float32


def _resample_array(x, passes):
    for p in passes:
        x = _gather(x, p)
    return x


def _resample_transpose_array(g, passes):
    for p in reversed(passes):
        g = _gather(g, p.transpose())
    return g


class _Resample(Node):
    """A chain of 1-d passes (a linear map); its backward is the transposed chain."""

    def forward(self, x, passes, name):
        self.passes, self._name = passes, name
        return _compute(_resample_array, x, passes)

    def name(self):
        return self._name

    def backward(self, g):
        if is_grad_enabled():
            return apply(_ResampleTranspose, g, self.passes, self._name)
        return wrap(_compute(_resample_transpose_array, g._data, self.passes))


class _ResampleTranspose(Node):
    def forward(self, g, passes, name):
        self.passes, self._name = passes, name
        return _compute(_resample_transpose_array, g, passes)

    def name(self):
        return self._name.replace("Backward0", "BackwardBackward0")

    def backward(self, gg):
        return apply(_Resample, gg, self.passes, self._name)


# ---------------------------------------------------------------------------------------
# the public functions

_MODES_MSG = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_MODE_DIM = {"linear": 1, "bilinear": 2, "trilinear": 3}  # (bicubic has no message)
_NODE_NAMES = {
    "nearest": "UpsampleNearest{d}DBackward0", "nearest-exact": "UpsampleNearestExact{d}DBackward0",
    "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
    "bicubic": "UpsampleBicubic2DBackward0", "trilinear": "UpsampleTrilinear3DBackward0",
    "area": "AdaptiveAvgPool{d}DBackward0", "lanczos": "UpsampleLanczos2DAaBackward0",
}
_AXES = ("D", "H", "W")


def _is_integer(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, TensorBase) and x.ndim == 0
                                               and x._data.dtype.kind in "iu")


def _kernel_name(mode, nd, dtype):
    if mode in ("nearest", "nearest-exact"):
        return "upsample_nearest2d_channels_last" if nd == 2 else "compute_indices_weights_nearest"
    if mode == "area":
        return "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
    if mode == "bilinear":
        return "upsample_bilinear2d_channels_last"
    if mode == "bicubic":
        return "compute_indices_weights_cubic"
    return "compute_indices_weights_linear"


def _check_sizes(input, out_size, mode, nd):
    in_size = tuple(input.shape[2:])
    names = _AXES[3 - nd:]
    if mode == "area":
        for d, n in enumerate(input.shape):
            if d >= 1 and n == 0 and not (nd < 3 and d == 1):
                shape = list(input.shape) if nd > 1 else list(input.shape[:2]) + [1, n]
                dim = d if nd > 1 else 3
                raise RuntimeError(
                    f"adaptive_avg_pool{max(nd, 2)}d(): Expected input to have non-zero size "
                    f"for non-batch dimensions, but input has sizes {shape} with dimension "
                    f"{dim} being empty")
        if any(n < 0 for n in out_size):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(out_size)}: {list(input.shape[:2]) + list(out_size)}")
        return
    if min(in_size) <= 0 or min(out_size) <= 0:
        i = ", ".join(f"{a}: {n}" for a, n in zip(names, in_size, strict=True))
        o = ", ".join(f"{a}: {n}" for a, n in zip(names, out_size, strict=True))
        sep = " and output" if nd == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got "
                           f"input ({i}){sep} ({o})")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Down/up sample the input to the given ``size`` or by the given ``scale_factor``.

    The algorithm is chosen by ``mode``: ``nearest``, ``nearest-exact``, ``linear``
    (3-D input), ``bilinear``, ``bicubic`` (4-D), ``trilinear`` (5-D) and ``area``.
    The input is ``(N, C, *spatial)`` with 1 to 3 spatial dims.

    Args:
        input: the input tensor.
        size: the output spatial size (an int or a tuple of ints).
        scale_factor: the multiplier for the spatial size (a float or a tuple).
        mode: the algorithm used for upsampling. Default: ``'nearest'``.
        align_corners: for the linear and cubic modes, whether the corner pixels of input
            and output are aligned (their centers) rather than their edges.
        recompute_scale_factor: compute the output size from ``scale_factor`` and then
            interpolate with the scale that size implies instead of ``scale_factor``.
        antialias: apply an anti-aliasing filter when downsampling (bilinear and bicubic
            on 4-D input only).

    Examples::

        >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
        >>> F.interpolate(x, scale_factor=2, mode='bilinear').shape
        ember.Size([1, 1, 4, 4])
    """
    if not isinstance(input, TensorBase):
        raise TypeError(
            f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * max(nd, 0)
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * max(nd, 0)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(nd)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _MODE_DIM and input.ndim in (3, 4, 5) and _MODE_DIM[mode] != nd:
        need = _MODE_DIM[mode] + 2
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need}D input")
    if input.ndim not in (3, 4, 5) or mode not in _NODE_NAMES or (
            mode in ("lanczos", "bicubic") and input.ndim != 4):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_MODES_MSG} (got {mode})")
    return _interpolate(input, output_size, scale_factors, mode, align_corners, antialias, nd)


def _interpolate(input, output_size, scale_factors, mode, align_corners, antialias, nd):
    in_size = tuple(input.shape[2:])
    if output_size is None:
        output_size = [int(n * s) for n, s in zip(in_size, scale_factors, strict=True)]
    _check_sizes(input, output_size, mode, nd)
    dtype = input._data.dtype
    uint8_ok = dtype == np.uint8 and (mode in ("nearest", "nearest-exact")
                                      or mode in ("bilinear", "bicubic"))
    if dtype.kind != "f" and not uint8_ok:
        raise not_implemented(_kernel_name(mode, nd, dtype), dtype)
    if any(n == 0 for n in output_size):
        from ember._ops.creation import zeros

        shape = tuple(input.shape[:2]) + tuple(output_size)
        out = zeros(shape, dtype=input.dtype, device=input.device)
        return out + input.sum() * 0 if input.requires_grad else out
    ct = "float64" if dtype == np.float64 else "float32"
    passes = []
    for d in range(nd):
        scale = None if scale_factors is None or mode == "area" else scale_factors[d]
        p = _make_pass(mode, d + 2, in_size[d], output_size[d], scale, bool(align_corners),
                       bool(antialias), ct, nd)
        if not p.identity:
            passes.append(p)
    # shrinking passes first: each pass costs taps x the size of its output
    passes.sort(key=lambda p: p.n_out / p.n_in)
    name = _NODE_NAMES[mode].format(d=nd)
    if antialias and mode != "lanczos":
        name = name.replace("Backward0", "AaBackward0")
    if not passes:
        return input.clone()
    return apply(_Resample, input, tuple(passes), name)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Upsample input (deprecated: use :func:`interpolate`, which this calls)."""
    warnings.warn("`nn.functional.upsample` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Upsample with nearest neighbours (deprecated: use ``interpolate(mode='nearest')``)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Upsample bilinearly with ``align_corners=True`` (deprecated: use
    ``interpolate(mode='bilinear', align_corners=True)``)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
