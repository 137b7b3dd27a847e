"""The kernels of convolution, pooling and fold/unfold: their interface, and their
array-module implementations (NOTE [ Kernels by name ] in ``ember._backend._base``).

Each public function here is a named kernel: it documents the kernel's contract and asks
the array's backend for the implementation, so op code never looks at array types. The
CPU backend registers the compiled kernels of ``ember._C._conv`` for float32/float64
arrays (``ember._backend._cpu_kernels``); every other array (CuPy, float16) takes the
``xp`` implementation registered here for any device, written with slicing and gathers.
Every function takes 3-d spatial data: 1-d and 2-d callers pass views with leading
singleton dims (kernel 1, stride 1, padding 0, dilation 1 there).

NOTE [ Convolution layout ]
im2col writes the patches as a (C*K, N, P) matrix (K kernel taps, P output positions),
so that N samples are one GEMM per group: W (Cout, C*K) @ cols (C*K, N*P). The result
(Cout, N, P) is transposed once into NCHW. The weight gradient is again one GEMM,
grad (Cout, N*P) @ cols^T, and the input gradient W^T @ grad followed by col2im.
The batch goes through this in chunks of samples whose patch matrix is a few MB (the
device's tuning.conv_chunk_bytes), so that the patches are read back by the GEMM from
cache rather than main memory (a quarter less time on ResNet's first layers); the weight
gradient adds up the chunks' GEMMs.
The patch matrix is the biggest array of a convolution (K times the input). When the
whole batch is one chunk of at most tuning.conv_keep_bytes (and the kept ones together
stay under tuning.conv_keep_total_bytes), the forward writes it into a fresh array kept
on the node
for the weight gradient, which the first backward uses and drops (LeNet-sized networks,
where building it again cost as much as the GEMMs). Otherwise it lives only inside one
call: backward recomputes it from the saved input, and it is written into a per-thread
workspace that is reused from call to call, because a fresh allocation of that size is a
fresh mmap whose page faults cost about as much as the GEMM on the small networks this
is for.
"""

from __future__ import annotations

import numpy as np

from ember._backend import backend_of, cpu, register_kernel
from ember._ops._util import xp_of

__all__ = [
    "has_compiled", "workspace", "im2col", "col2im", "max_pool", "max_pool_regular", "avg_pool",
    "avg_pool_backward", "scatter_add_planes", "winograd_input", "winograd_input_adjoint",
    "winograd_output", "winograd_output_adjoint", "conv2d_winograd_forward",
    "conv2d_winograd_backward", "batch_ranges", "run_parts",
]

# Tests set this to run the array-module implementations on NumPy arrays.
FORCE_FALLBACK = False


def _kernel(name, array):
    return backend_of(array).kernel(name, array, generic=FORCE_FALLBACK)


def has_compiled(name, array) -> bool:
    """Whether a device-specific (compiled) implementation of kernel ``name`` takes ``array``
    (ops whose algorithm only pays with one, such as Winograd, ask this)."""
    return not FORCE_FALLBACK and backend_of(array).has_kernel(name, array)


def workspace(shape, dtype, slot=0, like=None):
    """A scratch array of ``shape`` on ``like``'s device (the CPU if None): see
    :meth:`ember._backend.Backend.workspace`."""
    return (cpu if like is None else backend_of(like)).workspace(shape, dtype, slot)


# --- im2col / col2im ---------------------------------------------------------------------------

def _window_slice(k, s, d, o):
    return slice(k * d, k * d + (o - 1) * s + 1, s)


def _padding_for(size, k, s, p, d, o):
    # the zero padding after the input that the windows of o outputs reach
    return max(0, (o - 1) * s - p + (k - 1) * d + 1 - size)


def im2col(x, cols, kernel, stride, padding, dilation, out_size):
    """Fill ``cols`` (C*K, N, P) with the patches of ``x`` (N, C, D, H, W); see
    ``ember._C._conv.im2col``."""
    if cols.size == 0:
        return cols
    return _kernel("im2col", x)(x, cols, kernel, stride, padding, dilation, out_size)


@register_kernel("im2col", "any")
def _im2col(x, cols, kernel, stride, padding, dilation, out_size):
    xp = xp_of(x)
    n, c = x.shape[:2]
    pads = [(0, 0), (0, 0)] + [
        (p, _padding_for(sz, k, s, p, d, o))
        for sz, k, s, p, d, o in zip(x.shape[2:], kernel, stride, padding, dilation, out_size,
                                     strict=False)]
    xpad = xp.pad(x, pads) if any(a or b for a, b in pads) else x
    view = cols.reshape((c,) + tuple(kernel) + (n,) + tuple(out_size))
    for kd in range(kernel[0]):
        for kh in range(kernel[1]):
            for kw in range(kernel[2]):
                sl = xpad[(slice(None), slice(None),
                           *(_window_slice(k, s, d, o) for k, s, d, o in
                             zip((kd, kh, kw), stride, dilation, out_size, strict=False)))]
                view[:, kd, kh, kw] = sl.transpose(1, 0, 2, 3, 4)
    return cols


def col2im(cols, x, kernel, stride, padding, dilation, out_size):
    """Add the patches in ``cols`` into ``x`` (N, C, D, H, W): the adjoint of im2col."""
    if cols.size == 0:
        return x
    return _kernel("col2im", x)(cols, x, kernel, stride, padding, dilation, out_size)


@register_kernel("col2im", "any")
def _col2im(cols, x, kernel, stride, padding, dilation, out_size):
    xp = xp_of(x)
    n, c = x.shape[:2]
    pads = [(p, _padding_for(sz, k, s, p, d, o))
            for sz, k, s, p, d, o in zip(x.shape[2:], kernel, stride, padding, dilation,
                                         out_size, strict=False)]
    shape = (n, c) + tuple(sz + a + b for sz, (a, b) in zip(x.shape[2:], pads, strict=False))
    gpad = xp.zeros(shape, x.dtype)
    view = cols.reshape((c,) + tuple(kernel) + (n,) + tuple(out_size))
    for kd in range(kernel[0]):
        for kh in range(kernel[1]):
            for kw in range(kernel[2]):
                idx = (slice(None), slice(None),
                       *(_window_slice(k, s, d, o) for k, s, d, o in
                         zip((kd, kh, kw), stride, dilation, out_size, strict=False)))
                gpad[idx] += view[:, kd, kh, kw].transpose(1, 0, 2, 3, 4)
    crop = (slice(None), slice(None), *(slice(a, a + sz) for (a, _), sz in
                                        zip(pads, x.shape[2:], strict=False)))
    x += gpad[crop]
    return x


# --- Winograd F(2x2, 3x3) transforms (compiled only: callers check has_compiled) -------------
#
# See NOTE [ Winograd convolution ] in ember._C._conv: tiles are (16, C, N, TH*TW) arrays
# (any strides on their first three dims, contiguous along the last), planes C-contiguous
# (N, C, H, W) arrays of the same dtype.

def winograd_input(x, v, padding, tiles):
    """Write the transformed input tiles of ``x`` (N, C, H, W) into ``v``."""
    return _kernel("winograd_input", x)(x, v, padding, tiles)


def winograd_input_adjoint(v, x, padding, tiles):
    """Add the input tiles ``v`` transformed back into ``x`` (N, C, H, W)."""
    return _kernel("winograd_input_adjoint", v)(v, x, padding, tiles)


def winograd_output(m, y):
    """Write the output transform of the tiles ``m`` into ``y`` (N, C, OH, OW)."""
    return _kernel("winograd_output", m)(m, y)


def winograd_output_adjoint(g, m):
    """Write the adjoint output transform of ``g`` (N, C, OH, OW) into the tiles ``m``."""
    return _kernel("winograd_output_adjoint", g)(g, m)


def conv2d_winograd_forward(x, w, b, padding, out_sp):
    """y (N, Cout, OH, OW) = conv2d(x, w (Cout, C, 3, 3), stride 1, ``padding`` (ph, pw)) + b
    by Winograd F(2x2, 3x3), in x's dtype. A device-specific kernel only (the CPU's is
    ``ember._backend._cpu_conv``): callers ask :func:`has_compiled` first."""
    return _kernel("conv2d_winograd_forward", x)(x, w, b, padding, out_sp)


def conv2d_winograd_backward(x, g, w, padding, in_sp, need_input, need_weight):
    """(gx, gw) of :func:`conv2d_winograd_forward` for the output gradient ``g`` (either
    skipped as None where not needed); ``in_sp`` is the input's (H, W)."""
    return _kernel("conv2d_winograd_backward", g)(x, g, w, padding, in_sp, need_input,
                                                  need_weight)


# --- a batch on the device's threads ----------------------------------------------------------
#
# A convolution whose batch may be computed in ranges of samples at once asks the device for
# the ranges and hands it one function per range (the CPU: NOTE [ Convolutions on several
# threads ] in ember._backend._cpu_conv). The ranges' outputs must be independent, or
# combined by the caller afterwards in range order.

def batch_ranges(like, n, work, channels):
    """[(start, stop)]: the ranges a batch of ``n`` samples is computed in, for a convolution
    of ``work`` multiply-adds whose smallest GEMM dimension (other than the batch's) is
    ``channels``, on ``like``'s device; ``[(0, n)]`` where the device does not split."""
    return _kernel("batch_ranges", like)(n, work, channels)


def run_parts(like, fn, parts):
    """Call ``fn(*args)`` for every ``args`` of ``parts``, at the same time where ``like``'s
    device can; return when all are done (a worker's exception is raised here)."""
    return _kernel("run_parts", like)(fn, parts)


@register_kernel("batch_ranges", "any")
def _batch_ranges(n, work, channels):
    return [(0, n)]


@register_kernel("run_parts", "any")
def _run_parts(fn, parts):
    for args in parts:
        fn(*args)


# --- pooling ----------------------------------------------------------------------------------
#
# Windows are given per spatial dim as (first, count) int64 arrays over that dim's outputs
# plus a step: window o covers first[o] + k*step for k < count[o], skipping positions
# outside the input (see ember._C._conv).

def _gather_windows(xp, x, windows, steps, fill):
    """x (P, D, H, W) -> (values (P, OD, OH, OW, KK), flat input index, valid mask)."""
    p = x.shape[0]
    sizes = x.shape[1:]
    idx, valid = [], []
    for (first, count), step, size in zip(windows, steps, sizes, strict=False):
        first = xp.asarray(first)
        count = xp.asarray(count)
        kmax = int(count.max()) if count.size else 0
        ks = xp.arange(kmax)
        i = first[:, None] + ks[None, :] * step
        v = (ks[None, :] < count[:, None]) & (i >= 0) & (i < size)
        idx.append(xp.where(v, i, 0))
        valid.append(v)
    (i0, i1, i2), (v0, v1, v2) = idx, valid
    o0, k0 = i0.shape
    o1, k1 = i1.shape
    o2, k2 = i2.shape
    h, w = sizes[1], sizes[2]
    flat = (i0[:, None, None, :, None, None] * h + i1[None, :, None, None, :, None]) * w \
        + i2[None, None, :, None, None, :]
    mask = v0[:, None, None, :, None, None] & v1[None, :, None, None, :, None] \
        & v2[None, None, :, None, None, :]
    flat = flat.reshape(o0, o1, o2, k0 * k1 * k2)
    mask = mask.reshape(o0, o1, o2, k0 * k1 * k2)
    vals = xp.take(x.reshape(p, -1), flat.reshape(-1), axis=1).reshape((p,) + flat.shape)
    if x.dtype.kind in "iub" and fill != 0:
        fill = np.iinfo(x.dtype).min if x.dtype.kind != "b" else False
    vals = xp.where(mask, vals, xp.asarray(fill, dtype=x.dtype))
    return vals, flat, mask


def max_pool(x, windows, steps):
    """(values, flat indices) of max pooling ``x`` (P, D, H, W)."""
    return _kernel("max_pool", x)(x, windows, steps)


@register_kernel("max_pool", "any")
def _max_pool(x, windows, steps):
    xp = xp_of(x)
    vals, flat, mask = _gather_windows(xp, x, windows, steps, -np.inf)
    if vals.shape[-1] == 0:
        shape = vals.shape[:-1]
        return xp.empty(shape, x.dtype), xp.zeros(shape, xp.int64)
    # as PyTorch's loop: the last NaN wins, else the first maximum, and a window of
    # -inf only points at its first valid position
    kk = vals.shape[-1]
    nan = xp.isnan(vals) & mask
    last_nan = kk - 1 - xp.argmax(nan[..., ::-1], axis=-1)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    best = xp.argmax(xp.where(nan, xp.asarray(lowest, x.dtype), vals), axis=-1)
    top = xp.take_along_axis(vals, best[..., None], axis=-1)[..., 0]
    k = xp.where(top == lowest, xp.argmax(mask, axis=-1), best)
    k = xp.where(xp.any(nan, axis=-1), last_nan, k)
    out = xp.take_along_axis(vals, k[..., None], axis=-1)[..., 0]
    idx = xp.take_along_axis(xp.broadcast_to(flat, vals.shape), k[..., None], axis=-1)[..., 0]
    return out, idx.astype(xp.int64)


def max_pool_regular(x, kernel, stride, padding, dilation, out_size):
    """(values, flat indices) of max pooling ``x`` (P, D, H, W) with 3-tuples of kernel,
    stride, padding and dilation (compiled only: callers check :func:`has_compiled` and
    otherwise use :func:`max_pool`)."""
    return _kernel("max_pool_regular", x)(x, kernel, stride, padding, dilation, out_size)


def scatter_add_planes(g, idx, size):
    """A new (P, size) array with ``g`` (P, O) added at the flat indices ``idx`` (P, O)."""
    xp = xp_of(g)
    p = g.shape[0]
    gx = xp.zeros((p, size), g.dtype)
    if gx.size == 0 or g.size == 0:  # nothing to add (and reshape(0, -1) is ambiguous)
        return gx
    g2 = xp.ascontiguousarray(g.reshape(p, -1))
    i2 = xp.ascontiguousarray(idx.reshape(p, -1))
    return _kernel("scatter_add_planes", g2)(g2, i2, gx)


@register_kernel("scatter_add_planes", "any")
def _scatter_add_planes(g2, i2, gx):
    xp = xp_of(g2)
    p, size = gx.shape
    rows = xp.arange(p)[:, None] * size + i2
    xp.add.at(gx.reshape(-1), rows.reshape(-1), g2.reshape(-1))
    return gx


def avg_pool(x, windows, divisors, divisor_override=0):
    """Average pooling of ``x`` (P, D, H, W) over windows clipped to the input."""
    return _kernel("avg_pool", x)(x, windows, divisors, divisor_override)


@register_kernel("avg_pool", "any")
def _avg_pool(x, windows, divisors, divisor_override=0):
    xp = xp_of(x)
    vals, _, _ = _gather_windows(xp, x, windows, (1, 1, 1), 0)
    return vals.sum(-1) / _divisor(xp, divisors, divisor_override, x.dtype)


def _divisor(xp, divisors, override, dtype):
    if override:
        return xp.asarray(override, dtype=dtype)
    v0, v1, v2 = (xp.asarray(v) for v in divisors)
    return (v0[:, None, None] * v1[None, :, None] * v2[None, None, :]).astype(dtype)


def avg_pool_backward(g, in_size, windows, divisors, divisor_override=0):
    """The adjoint of :func:`avg_pool`: a new (P, *in_size) array."""
    return _kernel("avg_pool_backward", g)(g, in_size, windows, divisors, divisor_override)


@register_kernel("avg_pool_backward", "any")
def _avg_pool_backward(g, in_size, windows, divisors, divisor_override=0):
    xp = xp_of(g)
    p = g.shape[0]
    size = in_size[0] * in_size[1] * in_size[2]
    probe = xp.zeros((1,) + tuple(in_size), g.dtype)
    _, flat, mask = _gather_windows(xp, probe, windows, (1, 1, 1), 0)
    share = g / _divisor(xp, divisors, divisor_override, g.dtype)
    contrib = xp.where(mask, share[..., None], 0)
    gx = xp.zeros((p, size), g.dtype)
    rows = xp.arange(p)[:, None] * size + xp.broadcast_to(flat, contrib.shape).reshape(p, -1)
    xp.add.at(gx.reshape(-1), rows.reshape(-1), contrib.reshape(-1))
    return gx.reshape((p,) + tuple(in_size))
