"""The kernels of cross-entropy and the normalization layers: their interface, and their
array-module implementations (NOTE [ Kernels by name ] in ``ember._backend._base``).

Each public function here is a named kernel that asks the backend of its ``x`` for the
implementation: the CPU backend registers the compiled kernels of ``ember._C._loss_norm``
for float32/float64 arrays (``ember._backend._cpu_kernels``); any other array (CuPy, or
float16) takes the pure ``xp`` implementation registered here for any device, so the same
op code runs on both. The layouts are the kernels' (see that module): cross-entropy on
logits ``(N, C, S)`` with targets ``(N, S)``, batch norm and group norm on ``(N, C, S)``,
layer norm on ``(M, K)``. Callers pass C-contiguous arrays of one float dtype.

The ``xp`` path computes in float32 at least (float16 data is widened) and returns the
statistics in that precision, as PyTorch keeps them for half inputs.
"""

from __future__ import annotations

import numpy as np

from ember._backend import backend_of, register_kernel
from ember._ops._util import xp_of

__all__ = [
    "check_targets", "cross_entropy_forward", "cross_entropy_backward",
    "batch_norm_forward", "batch_norm_backward", "layer_norm_forward", "layer_norm_backward",
    "group_norm_forward", "group_norm_backward",
]

# Tests set this to run the array-module implementations on NumPy arrays.
FORCE_FALLBACK = False


def _kernel(name, array):
    return backend_of(array).kernel(name, array, generic=FORCE_FALLBACK)


def _wide(xp, a):
    """``a`` in float32 at least (the xp path's working precision)."""
    return a.astype(xp.float32) if a is not None and a.dtype == np.float16 else a


# ---------------------------------------------------------------------------
# cross-entropy with class indices

def check_targets(target, num_classes, ignore_index):
    """PyTorch's IndexError for a class index that is neither ``ignore_index`` nor in
    ``[0, num_classes)``."""
    impl = _kernel("check_targets", target) if target.ndim == 2 else _check_targets
    impl(target, num_classes, ignore_index)


@register_kernel("check_targets", "any")
def _check_targets(target, num_classes, ignore_index):
    bad = (target != ignore_index) & ((target < 0) | (target >= num_classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")


def _target_terms(xp, target, weight, ignore_index, dtype):
    valid = target != ignore_index
    tc = xp.where(valid, target, 0)
    wt = weight[tc] if weight is not None else xp.ones(target.shape, dtype=dtype)
    return valid, tc, xp.where(valid, wt, 0).astype(dtype, copy=False)


def cross_entropy_forward(x, target, weight, ignore_index, label_smoothing):
    """``(loss, lse, total_weight)`` of log-softmax + NLL on logits ``x`` (N, C, S):
    per-row losses (N, S) (0 where ignored), the rows' log-sum-exp and the sum of the
    targets' weights over the rows not ignored."""
    return _kernel("cross_entropy_forward", x)(x, target, weight, ignore_index, label_smoothing)


@register_kernel("cross_entropy_forward", "any")
def _cross_entropy_forward(x, target, weight, ignore_index, label_smoothing):
    check_targets(target, x.shape[1], ignore_index)
    xp = xp_of(x)
    xw, w = _wide(xp, x), _wide(xp, weight)
    valid, tc, wt = _target_terms(xp, target, w, ignore_index, xw.dtype)
    m = xw.max(axis=1, keepdims=True)
    lse = xp.log(xp.exp(xw - m).sum(axis=1)) + m[:, 0]
    picked = xp.take_along_axis(xw, tc[:, None, :], axis=1)[:, 0]
    loss = -wt * (picked - lse)
    if label_smoothing:
        C = x.shape[1]
        if w is None:
            uniform = C * lse - xw.sum(axis=1)
        else:
            uniform = w.sum() * lse - (xw * w[None, :, None]).sum(axis=1)
        loss = (1 - label_smoothing) * loss + label_smoothing / C * uniform
    loss = xp.where(valid, loss, 0).astype(x.dtype, copy=False)
    lse = xp.where(valid, lse, 0)
    return loss, lse, float(wt.sum(dtype=xp.float64))


def cross_entropy_backward(x, target, weight, ignore_index, label_smoothing, lse, grad, scale):
    """The gradient w.r.t. ``x`` of :func:`cross_entropy_forward`'s losses: each row's
    loss has gradient ``grad[n, s] * scale``, or ``scale`` when ``grad`` is None."""
    return _kernel("cross_entropy_backward", x)(x, target, weight, ignore_index,
                                                label_smoothing, lse, grad, scale)


@register_kernel("cross_entropy_backward", "any")
def _cross_entropy_backward(x, target, weight, ignore_index, label_smoothing, lse, grad, scale):
    xp = xp_of(x)
    xw, w = _wide(xp, x), _wide(xp, weight)
    valid, tc, wt = _target_terms(xp, target, w, ignore_index, xw.dtype)
    g = (_wide(xp, grad) * scale) if grad is not None else xp.full(target.shape, scale,
                                                                    dtype=xw.dtype)
    g = xp.where(valid, g, 0).astype(xw.dtype, copy=False)[:, None, :]
    p = xp.exp(xw - lse[:, None, :])
    onehot = xp.arange(x.shape[1])[None, :, None] == tc[:, None, :]
    keep = 1 - label_smoothing
    dx = keep * wt[:, None, :] * (p - onehot)
    if label_smoothing:
        C = x.shape[1]
        if w is None:
            dx = dx + label_smoothing / C * (p * C - 1)
        else:
            dx = dx + label_smoothing / C * (p * w.sum() - w[None, :, None])
    return (dx * g).astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------
# batch norm on (N, C, S)

def batch_norm_forward(x, weight, bias, running_mean, running_var, training, eps):
    """``(y, mean, var, invstd)``: the batch's statistics per channel in training (var
    biased, in float64), else the running ones given."""
    return _kernel("batch_norm_forward", x)(x, weight, bias, running_mean, running_var,
                                            training, eps)


@register_kernel("batch_norm_forward", "any")
def _batch_norm_forward(x, weight, bias, running_mean, running_var, training, eps):
    xp = xp_of(x)
    xw = _wide(xp, x)
    if training:
        # two passes with float64 sums, as the compiled kernel (and PyTorch); the variance
        # stays in float64 for the running statistics' update
        mean = xw.mean(axis=(0, 2), dtype=xp.float64).astype(xw.dtype)
        d = xw - mean[None, :, None]
        var = (d * d).mean(axis=(0, 2), dtype=xp.float64)
    else:
        mean, var = _wide(xp, running_mean), _wide(xp, running_var)
    invstd = (1 / xp.sqrt(var + eps)).astype(xw.dtype, copy=False)
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    y = xw * scale[None, :, None] + shift[None, :, None]
    return y.astype(x.dtype, copy=False), mean, var, invstd


def batch_norm_backward(dy, x, mean, invstd, weight, training, need_dx=True, need_sums=True):
    """``(dx, dweight, dbias)`` of :func:`batch_norm_forward` (None where not needed)."""
    return _kernel("batch_norm_backward", x)(dy, x, mean, invstd, weight, training, need_dx,
                                             need_sums)


@register_kernel("batch_norm_backward", "any")
def _batch_norm_backward(dy, x, mean, invstd, weight, training, need_dx=True, need_sums=True):
    xp = xp_of(x)
    xw, dyw = _wide(xp, x), _wide(xp, dy)
    xmu = xw - mean[None, :, None]
    sum_dy = dyw.sum(axis=(0, 2))
    sum_dy_xmu = (dyw * xmu).sum(axis=(0, 2))
    dx = None
    if need_dx:
        a = invstd if weight is None else invstd * weight
        if training:
            count = x.shape[0] * x.shape[2]
            k = sum_dy_xmu * invstd * invstd / count
            dx = (dyw - (sum_dy / count)[None, :, None] - xmu * k[None, :, None]) \
                * a[None, :, None]
        else:
            dx = dyw * a[None, :, None]
        dx = dx.astype(x.dtype, copy=False)
    if not need_sums:
        return dx, None, None
    return dx, (sum_dy_xmu * invstd).astype(x.dtype), sum_dy.astype(x.dtype)


# ---------------------------------------------------------------------------
# layer norm on (M, K)

def layer_norm_forward(x, weight, bias, eps):
    """``(y, mean, rstd)``: every row of ``x`` normalized, then ``* weight + bias``."""
    return _kernel("layer_norm_forward", x)(x, weight, bias, eps)


@register_kernel("layer_norm_forward", "any")
def _layer_norm_forward(x, weight, bias, eps):
    xp = xp_of(x)
    xw = _wide(xp, x)
    mean = xw.mean(axis=1)
    d = xw - mean[:, None]
    rstd = 1 / xp.sqrt((d * d).mean(axis=1) + eps)
    y = d * rstd[:, None]
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype, copy=False), mean, rstd


def layer_norm_backward(dy, x, mean, rstd, weight, need_dx=True, need_sums=True):
    """``(dx, dweight, dbias)`` of :func:`layer_norm_forward` (None where not needed)."""
    return _kernel("layer_norm_backward", x)(dy, x, mean, rstd, weight, need_dx, need_sums)


@register_kernel("layer_norm_backward", "any")
def _layer_norm_backward(dy, x, mean, rstd, weight, need_dx=True, need_sums=True):
    xp = xp_of(x)
    xw, dyw = _wide(xp, x), _wide(xp, dy)
    xhat = (xw - mean[:, None]) * rstd[:, None]
    dx = None
    if need_dx:
        a = dyw if weight is None else dyw * weight
        c1 = (a * xhat).mean(axis=1, keepdims=True)
        c2 = a.mean(axis=1, keepdims=True)
        dx = (rstd[:, None] * (a - c2 - xhat * c1)).astype(x.dtype, copy=False)
    if not need_sums:
        return dx, None, None
    return dx, (dyw * xhat).sum(axis=0).astype(x.dtype), dyw.sum(axis=0).astype(x.dtype)


# ---------------------------------------------------------------------------
# group norm on (N, C, S)

def group_norm_forward(x, num_groups, weight, bias, eps):
    """``(y, mean, var, rstd)`` with the statistics of every (sample, group), (N, G)."""
    return _kernel("group_norm_forward", x)(x, num_groups, weight, bias, eps)


@register_kernel("group_norm_forward", "any")
def _group_norm_forward(x, num_groups, weight, bias, eps):
    xp = xp_of(x)
    xw = _wide(xp, x)
    N, C, S = x.shape
    xg = xw.reshape(N, num_groups, -1)
    mean = xg.mean(axis=2)
    d = xg - mean[:, :, None]
    var = (d * d).mean(axis=2)
    rstd = 1 / xp.sqrt(var + eps)
    y = (d * rstd[:, :, None]).reshape(N, C, S)
    if weight is not None:
        y = y * weight[None, :, None]
    if bias is not None:
        y = y + bias[None, :, None]
    return y.astype(x.dtype, copy=False), mean, var, rstd


def group_norm_backward(dy, x, num_groups, mean, rstd, weight, need_dx=True):
    """``(dx or None, dweight, dbias)`` of :func:`group_norm_forward`."""
    return _kernel("group_norm_backward", x)(dy, x, num_groups, mean, rstd, weight, need_dx)


@register_kernel("group_norm_backward", "any")
def _group_norm_backward(dy, x, num_groups, mean, rstd, weight, need_dx=True):
    xp = xp_of(x)
    xw, dyw = _wide(xp, x), _wide(xp, dy)
    N, C, S = x.shape
    G, Cg = num_groups, C // num_groups
    ds = (dyw * xw).sum(axis=2)   # (N, C)
    db = dyw.sum(axis=2)
    m = xp.repeat(mean, Cg, axis=1)
    r = xp.repeat(rstd, Cg, axis=1)
    dweight = ((ds - db * m) * r).sum(axis=0).astype(x.dtype)
    dbias = db.sum(axis=0).astype(x.dtype)
    if not need_dx:
        return None, dweight, dbias
    w = weight if weight is not None else xp.ones(C, dtype=xw.dtype)
    ds_g = (ds * w).reshape(N, G, Cg).sum(axis=2)
    db_g = (db * w).reshape(N, G, Cg).sum(axis=2)
    inv = 1.0 / (Cg * S)
    c2 = (db_g * mean - ds_g) * rstd ** 3 * inv
    c3 = -c2 * mean - db_g * rstd * inv
    c2c = xp.repeat(c2, Cg, axis=1)[:, :, None]
    c3c = xp.repeat(c3, Cg, axis=1)[:, :, None]
    dx = (r[:, :, None] * w[None, :, None]) * dyw + c2c * xw + c3c
    return dx.astype(x.dtype, copy=False), dweight, dbias
