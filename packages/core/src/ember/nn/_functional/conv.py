"""Convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d.

Three array-level operations carry every convolution and all of their derivatives (see
NOTE [ Convolution layout ] in ``_kernels``):

- ``Convolution``          y  = conv(x, W) (+ b)
- ``ConvolutionBackward``  gx = conv^T(g, W) (+ b): the input gradient, which is also the
                                transposed convolution
- ``ConvolutionWeightGrad`` gW = d<g, conv(x, W)>/dW

Each one's backward is written with the other two, so gradients of any order work
(``create_graph=True``), and a transposed convolution is the same machinery read the
other way round. Every spatial size is passed explicitly, so asymmetric padding
('same' with an even kernel) and output_padding need nothing special.
"""

from __future__ import annotations

import math

import numpy as np

from ember._backend import backend_of
from ember._backend._base import batch_chunks
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import TensorBase, apply, type_name, xp_of
from ember.nn._functional import _kernels as K

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]


# ---------------------------------------------------------------------------------------
# geometry

class _Geometry:
    """Kernel, stride, padding (before) and dilation of a convolution, each as a 3-tuple
    (the leading entries 1, 1, 0, 1 for 1-d and 2-d), and the groups."""

    __slots__ = ("nd", "kernel", "stride", "padding", "dilation", "groups")

    def __init__(self, nd, kernel, stride, padding, dilation, groups):
        lead = 3 - nd
        self.nd = nd
        self.kernel = (1,) * lead + tuple(kernel)
        self.stride = (1,) * lead + tuple(stride)
        self.padding = (0,) * lead + tuple(padding)
        self.dilation = (1,) * lead + tuple(dilation)
        self.groups = groups


def _sp3(shape, nd):
    """The spatial size of an array shape as a 3-tuple."""
    return (1,) * (3 - nd) + tuple(shape[2:])


def _as5(a, nd):
    """(N, C, *spatial) as a C-contiguous (N, C, D, H, W) array."""
    xp = xp_of(a)
    a = xp.ascontiguousarray(a)
    return a.reshape(a.shape[:2] + _sp3(a.shape, nd))


_HALF = ("float16", "bfloat16")


def _compute_dtype(dt):
    """Half-precision convolutions run in float32 (then round back)."""
    return np.float32 if dt.name in _HALF else dt


# ---------------------------------------------------------------------------------------
# the array-level kernels

def _group_dot(xp, a, b, out=None):
    """a (G, m, k) times b (G, k, n), one GEMM per group.

    ``dot`` rather than ``matmul``: NumPy's matmul leaves BLAS for a naive loop on
    some transposed operands (a weight-gradient GEMM ran 30x slower), while ``dot``
    hands any 2-d strides to BLAS with its transpose flags.
    """
    if out is None:
        out = xp.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=a.dtype)
    for i in range(a.shape[0]):
        xp.dot(a[i], b[i], out=out[i])
    return out


# The batch is processed in chunks whose patch matrix is about the device's
# tuning.conv_chunk_bytes, so that on the CPU the patches are written and read back by the
# GEMM in cache rather than in main memory (see NOTE [ Convolution layout ] in _kernels);
# every GEMM is still (C*K) x (chunk * P).

def _chunks(n, per_sample_bytes, like):
    return batch_chunks(n, per_sample_bytes, _tuning(like).conv_chunk_bytes)


def _scratch(xp, shape, dtype, slot, like):
    """A scratch array: the device's workspace where the compiled kernels run (the CPU's
    is reused from call to call), a fresh array elsewhere."""
    if K.has_compiled("im2col", like):
        return K.workspace(shape, dtype, slot, like)
    return xp.empty(shape, dtype)


def _patches(x5, geo, out3):
    """The (C*K, N, P) patch matrix of x5 (N, C, D, H, W), in workspace slot 0 on the CPU."""
    xp = xp_of(x5)
    n, c = x5.shape[:2]
    shape = (c * math.prod(geo.kernel), n, math.prod(out3))
    cols = _scratch(xp, shape, x5.dtype, 0, x5)
    return K.im2col(x5, cols, geo.kernel, geo.stride, geo.padding, geo.dilation, out3)


def _grad_columns(xp, g3, groups):
    """g3 (m, Cout, P) as a contiguous (groups, Cout/groups, m*P), in workspace slot 1."""
    m, cout, p = g3.shape
    gt = _scratch(xp, (cout, m, p), g3.dtype, 1, g3)
    gt[...] = g3.transpose(1, 0, 2)
    return gt.reshape(groups, cout // groups, m * p)


# ---------------------------------------------------------------------------------------
# NOTE [ Pointwise convolutions ]
# A 1x1 convolution with stride 1 and no padding is a matrix product per sample,
# y[n] = W (Cout, C) @ x[n] (C, P), with x[n] read as it lies in memory: no patch matrix.
# (im2col copies x into (C, N, P), and the GEMM's (Cout, N, P) result is copied back into
# NCHW: two passes over arrays that in ResNet-50 are 100 MB.) The input gradient is
# W^T @ g[n] per sample, the weight gradient the sum over n of g[n] @ x[n]^T. Per-sample
# GEMMs win from about 192 positions a sample; below, one GEMM over a chunk's samples does.
# Measured on one thread, batch 16, float32, forward, per-sample time / im2col time: 64->256
# channels at 56x56 0.40, 256->64 at 56x56 0.68, 128->512 at 28x28 0.65, 512->128 at 28x28
# 0.76, 1024->256 at 14x14 0.88, 256->1024 at 14x14 0.99, 2048->512 at 7x7 1.08.
_POINTWISE_MIN_POSITIONS = 192


def _pointwise(geo, p):
    """Whether a convolution of ``p`` output positions a sample is computed per sample
    (NOTE [ Pointwise convolutions ])."""
    return (geo.groups == 1 and geo.kernel == (1, 1, 1) and geo.stride == (1, 1, 1)
            and geo.padding == (0, 0, 0) and p >= _POINTWISE_MIN_POSITIONS)


# ---------------------------------------------------------------------------------------
# Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions: a kernel of the CPU backend
# (ember._backend._cpu_conv, which also holds its tuning). Op code decides only whether
# the convolution is of the kind it computes and whether the device has it.

def _use_winograd(a, geo, c, cout, out_sp):
    """Whether the convolution of ``a`` (the input or output gradient, in compute dtype)
    takes the Winograd kernel: 2-d, 3x3, stride 1, dilation 1, one group, an array the
    device's Winograd kernel takes, and shapes where the device's tuning says it pays."""
    if not (geo.nd == 2 and geo.groups == 1 and geo.kernel == (1, 3, 3)
            and geo.stride == (1, 1, 1) and geo.dilation == (1, 1, 1)
            and K.has_compiled("conv2d_winograd_forward", a)):
        return False
    tuning = _tuning(a)
    return tuning.winograd and tuning.winograd_pays(c, cout, out_sp)


def _tuning(a):
    """The convolution tuning of ``a``'s device (``Backend.tuning``: chunk sizes, kept
    patch matrices, Winograd thresholds)."""
    return backend_of(a).tuning


# A forward whose patch matrix is one chunk of at most the device's tuning.conv_keep_bytes
# keeps it for the weight gradient (see Convolution), so that backward does not build it
# again; all the patch matrices kept at one time are held to tuning.conv_keep_total_bytes.
_kept_bytes = 0


class _KeptCols:
    """A patch matrix kept from forward for backward, counted in _kept_bytes while it lives."""

    __slots__ = ("cols", "nbytes")

    def __init__(self, cols):
        global _kept_bytes
        self.cols = cols
        self.nbytes = cols.nbytes
        _kept_bytes += self.nbytes

    def __del__(self):
        global _kept_bytes
        _kept_bytes -= self.nbytes


def conv_forward(x, w, b, geo, out_sp, keep=None):
    """y (N, Cout, *out) = conv(x, w) + b, arrays in (N, C, *spatial) layout.

    With ``keep`` (a list), a patch matrix small enough to keep (see tuning.conv_keep_bytes) is
    appended to it as a _KeptCols, for :func:`conv_backward`'s ``cols``.
    """
    xp = xp_of(x)
    if _use_winograd(x, geo, x.shape[1], w.shape[0], out_sp):
        return K.conv2d_winograd_forward(x, w, b, geo.padding[1:], out_sp)
    nd, groups = geo.nd, geo.groups
    out_dtype = x.dtype
    cd = _compute_dtype(x.dtype)
    if cd != x.dtype:
        x, w = x.astype(cd), w.astype(cd)
        b = b.astype(cd) if b is not None else None
    x5 = _as5(x, nd)
    n, c = x5.shape[:2]
    cout = w.shape[0]
    cg, og = c // groups, cout // groups
    kk = math.prod(geo.kernel)
    out3 = (1,) * (3 - nd) + tuple(out_sp)
    p = math.prod(out3)
    w3 = xp.ascontiguousarray(w).reshape(groups, og, cg * kk)
    y = xp.empty((n, cout, p), dtype=cd)
    ranges = K.batch_ranges(x5, n, n * cout * cg * kk * p, min(og, cg * kk))
    if _pointwise(geo, p):
        x3, w2 = x5.reshape(n, c, p), w3[0]
        b2 = b.reshape(cout, 1) if b is not None else None

        def sample_part(lo, hi):
            for i in range(lo, hi):
                xp.dot(w2, x3[i], out=y[i])
                if b2 is not None:
                    y[i] += b2

        K.run_parts(x5, sample_part, ranges)
        y = y.reshape((n, cout) + tuple(out_sp))
        return y.astype(out_dtype) if y.dtype != out_dtype else y
    per_sample = c * kk * p * x5.itemsize
    tuning = _tuning(x5)
    if keep is not None and (len(ranges) != 1 or len(_chunks(n, per_sample, x5)) != 1
                             or n * per_sample > tuning.conv_keep_bytes
                             or _kept_bytes + n * per_sample > tuning.conv_keep_total_bytes):
        keep = None

    def part(lo, hi):
        for s, e in _chunks(hi - lo, per_sample, x5):
            s, e, m = lo + s, lo + e, e - s
            if keep is not None:
                cols = K.im2col(x5, xp.empty((c * kk, n, p), cd), geo.kernel, geo.stride,
                                geo.padding, geo.dilation, out3)
                keep.append(_KeptCols(cols))
            else:
                cols = _patches(x5[s:e], geo, out3)
            y2 = _group_dot(xp, w3, cols.reshape(groups, cg * kk, m * p),
                            out=_scratch(xp, (groups, og, m * p), cd, 1, x5))
            yt = y2.reshape(cout, m, p).transpose(1, 0, 2)
            if b is not None:
                xp.add(yt, b.reshape(cout, 1), out=y[s:e])
            else:
                y[s:e] = yt

    # NOTE [ Convolutions on several threads ]: each range's rows of y are its own
    K.run_parts(x5, part, ranges)
    y = y.reshape((n, cout) + tuple(out_sp))
    return y.astype(out_dtype) if y.dtype != out_dtype else y


def conv_backward(x, g, w, geo, in_sp, need_input=True, need_weight=True, cols=None):
    """(gx, gW): the input and weight gradients of conv_forward for the output gradient g,
    in one pass over the batch (gx = conv^T(g, w); either may be skipped, giving None).

    ``x`` is only read for the weight gradient (pass None without it), ``w`` only for
    the input gradient. ``cols``: the whole patch matrix of ``x`` that conv_forward kept,
    or None.
    """
    xp = xp_of(g)
    nd, groups = geo.nd, geo.groups
    out_dtype = g.dtype
    cd = _compute_dtype(g.dtype)
    if cd != g.dtype:
        g = g.astype(cd)
        x = x.astype(cd) if x is not None else None
        w = w.astype(cd) if w is not None else None
    if _use_winograd(g, geo, x.shape[1] if w is None else w.shape[1], g.shape[1],
                     g.shape[2:]):
        gx, gw = K.conv2d_winograd_backward(x, g, w, geo.padding[1:], in_sp, need_input,
                                             need_weight)
        return tuple(a.astype(out_dtype) if a is not None and a.dtype != out_dtype else a
                     for a in (gx, gw))
    n, cout = g.shape[:2]
    og = cout // groups
    kk = math.prod(geo.kernel)
    out3 = _sp3(g.shape, nd)
    in3 = (1,) * (3 - nd) + tuple(in_sp)
    p = math.prod(out3)
    g3 = xp.ascontiguousarray(g).reshape(n, cout, p)
    if need_weight:
        x5 = _as5(x, nd)
        c = x5.shape[1]
    else:
        x5 = None
    if need_input:
        c = w.shape[1] * groups
        w3 = xp.ascontiguousarray(w).reshape(groups, og, (c // groups) * kk)
        w3t = w3.transpose(0, 2, 1)
        # col2im adds into gx; the per-sample 1x1 path writes every element of it
        gx = (xp.empty if _pointwise(geo, p) else xp.zeros)((n, c) + in3, dtype=cd)
    else:
        gx = None
    cg = c // groups
    per_sample = max(c * kk, cout) * p * g3.itemsize
    ranges = K.batch_ranges(g3, n, (need_input + need_weight) * n * cout * cg * kk * p,
                            min(og, cg * kk))
    if cols is not None and (len(ranges) != 1 or len(_chunks(n, per_sample, g3)) != 1
                             or cols.dtype != cd or cols.shape != (c * kk, n, p)):
        cols = None
    # NOTE [ Convolutions on several threads ]: one weight-gradient sum per range, added up in
    # range order below; zeros, not empty: an empty batch runs no chunk and must give zeros
    gws = [(xp.zeros if n == 0 else xp.empty)((groups, og, cg * kk), dtype=cd)
           if need_weight else None for _ in ranges]
    pointwise = _pointwise(geo, p)

    def sample_part(index, lo, hi):  # NOTE [ Pointwise convolutions ]
        gw = gws[index]
        for i in range(lo, hi):
            if need_weight:
                if i == lo:
                    xp.dot(g3[i], x3[i].T, out=gw[0])
                else:
                    gw[0] += xp.dot(g3[i], x3[i].T, out=_scratch(xp, gw.shape[1:], cd, 2, g3))
            if need_input:
                xp.dot(w3t[0], g3[i], out=gx3[i])

    def part(index, lo, hi):
        gw, kept = gws[index], cols
        first = True
        for s, e in _chunks(hi - lo, per_sample, g3):
            s, e, m = lo + s, lo + e, e - s
            gt = _grad_columns(xp, g3[s:e], groups)
            if need_weight:
                pc = kept if kept is not None else _patches(x5[s:e], geo, out3)
                pc = pc.reshape(groups, cg * kk, m * p)
                if first:
                    _group_dot(xp, gt, pc.transpose(0, 2, 1), out=gw)
                else:
                    gw += _group_dot(xp, gt, pc.transpose(0, 2, 1),
                                     out=_scratch(xp, gw.shape, cd, 2, g3))
                kept = pc = None
            if need_input:
                dcols = _group_dot(xp, w3t, gt,
                                   out=_scratch(xp, (groups, cg * kk, m * p), cd, 0, g3))
                K.col2im(dcols.reshape(c * kk, m, p), gx[s:e], geo.kernel, geo.stride,
                         geo.padding, geo.dilation, out3)
            first = False

    if pointwise:
        x3 = x5.reshape(n, c, p) if need_weight else None
        gx3 = gx.reshape(n, c, p) if need_input else None
    K.run_parts(g3, sample_part if pointwise else part,
                [(i, lo, hi) for i, (lo, hi) in enumerate(ranges)])
    gw = None
    if need_weight:
        gw = gws[0]
        for other in gws[1:]:
            gw += other
    if gw is not None:
        gw = gw.reshape((cout, cg) + tuple(geo.kernel[3 - nd:]))
        gw = gw.astype(out_dtype) if gw.dtype != out_dtype else gw
    if gx is not None:
        gx = gx.reshape((n, c) + tuple(in_sp))
        gx = gx.astype(out_dtype) if gx.dtype != out_dtype else gx
    return gx, gw


def conv_input_grad(g, w, b, geo, in_sp):
    """gx (N, C, *in_sp) = conv^T(g, w) (+ b): the adjoint of conv_forward in x."""
    gx, _ = conv_backward(None, g, w, geo, in_sp, need_input=True, need_weight=False)
    if b is not None:
        n, c = gx.shape[:2]
        gx.reshape(n, c, math.prod(gx.shape[2:]))[...] += b.reshape(c, 1).astype(gx.dtype,
                                                                                copy=False)
    return gx


def conv_weight_grad(x, g, geo):
    """gW (Cout, C/groups, *kernel) = d<g, conv(x, W)>/dW."""
    _, gw = conv_backward(x, g, None, geo, tuple(x.shape[2:]), need_input=False,
                          need_weight=True)
    return gw


def _bias_grad(g):
    return g.sum(dim=[0] + list(range(2, g.ndim)))


# ---------------------------------------------------------------------------------------
# the autograd nodes

class Convolution(Node):
    """y = conv(x, W) + b."""

    saves_inputs = (0, 1)

    def forward(self, x, w, b, geo, out_sp):
        self.geo = geo
        # The patch matrix, when small, is kept for the weight gradient (dropped by the
        # first backward; x itself is saved and version-checked, so it is still x's).
        keep = [] if is_grad_enabled() else None
        y = conv_forward(x, w, b, geo, out_sp, keep)
        self._cols = keep[0] if keep else None
        return y

    def backward(self, g):
        x, w = self.saved_tensors
        need = self.needs_input_grad
        geo = self.geo
        kept, self._cols = self._cols, None
        gb = _bias_grad(g) if len(need) > 2 and need[2] else None
        if not is_grad_enabled() and need[1]:
            # both gradients in one pass over the batch (one transpose of the gradient)
            gx, gw = conv_backward(x._data, g._data, w._data if need[0] else None, geo,
                                   tuple(x.shape[2:]), need_input=need[0],
                                   cols=kept.cols if kept is not None else None)
            return _wrap(gx) if gx is not None else None, _wrap(gw), gb
        gx = apply(ConvolutionBackward, g, w, None, geo, tuple(x.shape[2:])) \
            if need[0] else None
        gw = apply(ConvolutionWeightGrad, x, g, geo) if need[1] else None
        return gx, gw, gb


class ConvolutionBackward(Node):
    """gx = conv^T(g, W) + b: the input gradient of a convolution, and the transposed
    convolution."""

    saves_inputs = (0, 1)

    def forward(self, g, w, b, geo, in_sp):
        self.geo = geo
        return conv_input_grad(g, w, b, geo, in_sp)

    def name(self):
        return "ConvolutionBackward0"

    def backward(self, gg):
        g, w = self.saved_tensors
        need = self.needs_input_grad
        geo = self.geo
        gb = _bias_grad(gg) if len(need) > 2 and need[2] else None
        dg = apply(Convolution, gg, w, None, geo, tuple(g.shape[2:])) if need[0] else None
        # <conv^T(g, W), gg> = <g, conv(gg, W)>: the weight gradient of conv at input gg
        dw = apply(ConvolutionWeightGrad, gg, g, geo) if need[1] else None
        return dg, dw, gb


class ConvolutionWeightGrad(Node):
    """gW = d<g, conv(x, W)>/dW."""

    saves_inputs = (0, 1)

    def forward(self, x, g, geo):
        self.geo = geo
        return conv_weight_grad(x, g, geo)

    def backward(self, gg):
        x, g = self.saved_tensors
        need = self.needs_input_grad
        geo = self.geo
        dx = apply(ConvolutionBackward, g, gg, None, geo, tuple(x.shape[2:])) \
            if need[0] else None
        dg = apply(Convolution, x, gg, None, geo, tuple(g.shape[2:])) if need[1] else None
        return dx, dg


def _wrap(a):
    from ember._ops._util import wrap

    return wrap(a)


# ---------------------------------------------------------------------------------------
# argument parsing, as PyTorch's

def _expand(value, nd, name, dim=None):
    """An int-list argument as PyTorch parses ``int[nd]`` and then expands it to the
    ``dim`` spatial dims of the weight (default nd)."""
    dim = nd if dim is None else dim
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int or a tuple of ints, not bool")
    if isinstance(value, (int, np.integer)):
        value = (int(value),) * nd
    else:
        if isinstance(value, TensorBase):
            value = value.tolist()
        value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * dim
    if len(value) != dim:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dim} values to match "
            f"the convolution dimensions, but got {name}={list(value)}")
    return value


def _check_input(input, weight, nd, fname):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fname}() argument 'input' must be Tensor, not {type(input).__name__}")
    if not isinstance(weight, TensorBase):
        raise TypeError(
            f"{fname}() argument 'weight' must be Tensor, not {type(weight).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got "
            f"input of size: {list(input.shape)}")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")


def _check_weight_dim(input, weight):
    # after the arguments were expanded to the weight's dims, as PyTorch
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead")


def _check_dtypes(input, weight, bias):
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {type_name(input._data.dtype)} but found "
            f"{type_name(weight._data.dtype)}")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_c_name(input)}) and bias type ({_c_name(bias)}) should be the same")
    if input._data.dtype.kind == "b":
        from ember._ops._util import not_implemented

        raise not_implemented("slow_conv2d_cpu", input._data.dtype)


def _complex_conv(real_conv, input, weight, bias, nd):
    """A complex convolution from three real ones (Gauss's product: ``k1 = (xr + xi) * wr``,
    ``k2 = xr * (wi - wr)``, ``k3 = xi * (wr + wi)``; real part ``k1 - k3``, imaginary part
    ``k1 + k2``), so that its gradients are those of the real convolutions, under PyTorch's
    conjugate convention. ``real_conv(x, w)`` is the real convolution without bias."""
    from ember._ops.creation import complex as _complex

    xr, xi, wr, wi = input.real, input.imag, weight.real, weight.imag
    k1 = real_conv(xr + xi, wr)
    k2 = real_conv(xr, wi - wr)
    k3 = real_conv(xi, wr + wi)
    out = _complex(k1 - k3, k1 + k2)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out


def _c_name(t):
    from ember._ops._util import cpp_type_name

    return cpp_type_name(t._data.dtype)


def _check_bias(weight, bias, out_channels):
    if bias is None:
        return
    if not isinstance(bias, TensorBase):
        raise TypeError(f"bias must be Tensor, not {type(bias).__name__}")
    if bias.ndim != 1 or bias.shape[0] != out_channels:
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {out_channels} elements, but got bias of size {list(bias.shape)} instead")


def _check_common(stride, padding, dilation, groups):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    fname = f"conv{nd}d"
    _check_input(input, weight, nd, fname)
    _check_dtypes(input, weight, bias)
    if input._data.dtype.kind == "c":
        return _complex_conv(lambda x, w: _conv(x, w, None, stride, padding, dilation, groups,
                                                nd), input, weight, bias, nd)
    groups = int(groups)
    dim = weight.ndim - 2
    stride = _expand(stride, nd, "stride", dim)
    if not isinstance(padding, str):
        _expand(padding, nd, "padding", dim)
    dilation = _expand(dilation, nd, "dilation", dim)
    _check_weight_dim(input.unsqueeze(0) if input.ndim == nd + 1 else input, weight)
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pad_lo = pad_hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, ksize, strict=False)]
            pad_lo = tuple(t // 2 for t in total)
            pad_hi = tuple(t - lo for t, lo in zip(total, pad_lo, strict=False))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pad_lo = pad_hi = _expand(padding, nd, "padding")
    _check_common(stride, pad_lo, dilation, groups)
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    cout = weight.shape[0]
    if cout % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(weight.shape)}] instead")
    if input.shape[1] != weight.shape[1] * groups:
        shape = list(input.shape)
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{shape} to have {weight.shape[1] * groups} channels, but got "
            f"{input.shape[1]} channels instead")
    _check_bias(weight, bias, cout)
    in_sp = tuple(input.shape[2:])
    padded = [i + lo + hi for i, lo, hi in zip(in_sp, pad_lo, pad_hi, strict=False)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, ksize, strict=False)]
    if any(p < e for p, e in zip(padded, eff, strict=False)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            f"actual input size")
    _check_empty(input)
    out_sp = tuple((p - e) // s + 1 for p, e, s in zip(padded, eff, stride, strict=False))
    geo = _Geometry(nd, ksize, stride, pad_lo, dilation, groups)
    out = apply(Convolution, input, weight, bias, geo, out_sp)
    return out.squeeze(0) if unbatched else out


def _check_empty(input):
    # PyTorch's rule: an empty batch or no channels gives an empty output, other
    # zero-size inputs (an empty spatial dim) are refused
    if input.numel() == 0 and input.shape[0] and input.shape[1]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {list(input.shape)}")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1D convolution over an input signal composed of several input planes.

    Args:
        input: (minibatch, in_channels, iW) or (in_channels, iW).
        weight: (out_channels, in_channels / groups, kW).
        bias: optional (out_channels,).
        stride, padding, dilation: an int or a one-element tuple; padding may also be
            'valid' or 'same'.
        groups: split the input into groups; in_channels and out_channels must both be
            divisible by it.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2D convolution over an input image composed of several input planes.

    Args:
        input: (minibatch, in_channels, iH, iW) or (in_channels, iH, iW).
        weight: (out_channels, in_channels / groups, kH, kW).
        bias: optional (out_channels,).
        stride, padding, dilation: an int or a tuple (sH, sW); padding may also be
            'valid' or 'same'.
        groups: split the input into groups.

    Examples::

        >>> x = ember.randn(20, 16, 50, 100)
        >>> w = ember.randn(8, 4, 3, 3)
        >>> F.conv2d(x, w, padding=1, groups=4).shape
        ember.Size([20, 8, 50, 100])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3D convolution over an input image composed of several input planes.

    Args:
        input: (minibatch, in_channels, iT, iH, iW) or (in_channels, iT, iH, iW).
        weight: (out_channels, in_channels / groups, kT, kH, kW).
        bias: optional (out_channels,).
        stride, padding, dilation: an int or a tuple (sT, sH, sW); padding may also be
            'valid' or 'same'.
        groups: split the input into groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd):
    fname = f"conv_transpose{nd}d"
    if isinstance(padding, str):
        raise TypeError(
            f"{fname}(): argument 'padding' must be tuple of ints, not str")
    _check_input(input, weight, nd, fname)
    _check_dtypes(input, weight, bias)
    if input._data.dtype.kind == "c":
        return _complex_conv(lambda x, w: _conv_transpose(
            x, w, None, stride, padding, output_padding, groups, dilation, nd),
            input, weight, bias, nd)
    groups = int(groups)
    dim = weight.ndim - 2
    stride = _expand(stride, nd, "stride", dim)
    padding = _expand(padding, nd, "padding", dim)
    output_padding = _expand(output_padding, nd, "output_padding", dim)
    dilation = _expand(dilation, nd, "dilation", dim)
    _check_weight_dim(input.unsqueeze(0) if input.ndim == nd + 1 else input, weight)
    _check_common(stride, padding, dilation, groups)
    if any(op < 0 for op in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=False)):
        names = ("depth", "height", "width")[3 - nd:] if nd > 1 else ("width",)
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding, strict=False)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride, strict=False)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation, strict=False)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    cin = weight.shape[0]
    if input.shape[1] != cin:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {cin} channels, but got {input.shape[1]} channels "
            f"instead")
    if cin % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(weight.shape)}] instead")
    cout = weight.shape[1] * groups
    _check_bias(weight, bias, cout)
    ksize = tuple(weight.shape[2:])
    in_sp = tuple(input.shape[2:])
    out_sp = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                   zip(in_sp, stride, padding, dilation, ksize, output_padding, strict=False))
    _check_empty(input)
    if any(o <= 0 for o in out_sp) and not (input.numel() == 0 and min(out_sp) == 0):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, in_sp))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, out_sp))}). Output size is too small")
    geo = _Geometry(nd, ksize, stride, padding, dilation, groups)
    out = apply(ConvolutionBackward, input, weight, bias, geo, out_sp)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Applies a 1D transposed convolution operator over an input signal composed of
    several input planes, sometimes also called "deconvolution".

    Args:
        input: (minibatch, in_channels, iW) or (in_channels, iW).
        weight: (in_channels, out_channels / groups, kW).
        bias: optional (out_channels,).
        stride, padding, output_padding, dilation: an int or a one-element tuple.
        groups: split the input into groups.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Applies a 2D transposed convolution operator over an input image composed of
    several input planes, sometimes also called "deconvolution".

    Args:
        input: (minibatch, in_channels, iH, iW) or (in_channels, iH, iW).
        weight: (in_channels, out_channels / groups, kH, kW).
        bias: optional (out_channels,).
        stride, padding, output_padding, dilation: an int or a tuple (h, w).
        groups: split the input into groups.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """Applies a 3D transposed convolution operator over an input image composed of
    several input planes, sometimes also called "deconvolution".

    Args:
        input: (minibatch, in_channels, iT, iH, iW) or (in_channels, iT, iH, iW).
        weight: (in_channels, out_channels / groups, kT, kH, kW).
        bias: optional (out_channels,).
        stride, padding, output_padding, dilation: an int or a tuple (t, h, w).
        groups: split the input into groups.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


def conv_tbc(input, weight, bias, pad=0):
    r"""A 1-d convolution over a (time, batch, channels) sequence.

    ``out[t] = bias + sum_k input[t + k - pad] @ weight[k]``: a cross-correlation as
    :func:`conv1d`, with the layouts of fairseq's ``ConvTBC``.

    Args:
        input: :math:`(T, B, C_{in})`.
        weight: :math:`(k, C_{in}, C_{out})`.
        bias: :math:`(C_{out})`.
        pad: zero padding at both ends of the time dim. Default: 0.

    Returns:
        :math:`(T + 2\,\text{pad} - k + 1, B, C_{out})`.

    Examples::

        >>> F.conv_tbc(ember.randn(10, 2, 3), ember.randn(3, 3, 4), ember.zeros(4), 1).shape
        ember.Size([10, 2, 4])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.size(2) != weight.size(1):
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.size(2) != bias.size(0):
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
