"""Normalization: batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
local_response_norm.

Batch, layer and group norm (and instance norm, a group norm with one channel per
group) are dedicated graph nodes over fused kernels (``_norm_kernels``): the forward
computes the statistics and the normalized output in one call and keeps the
statistics; the backward is the closed-form input gradient plus the weight and bias
sums in one call. Under ``create_graph`` the backward is written with ember ops
instead, from the saved input, so that it can be differentiated again.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ember._C._core import Node, is_grad_enabled
from ember._ops._util import apply, not_implemented, wrap, xp_of
from ember.nn._functional import _norm_kernels as K
from ember.nn._functional._low_precision import computes_in_float32

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm"]


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _check_float(input, kernel):
    if input._data.dtype.kind != "f":
        raise not_implemented(kernel, input._data.dtype)


def _check_param(p, input):
    if p is not None and p._data.dtype != input._data.dtype:
        from ember._ops._util import type_name

        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                           f"{type_name(input._data.dtype)}")


def _contiguous(xp, a):
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


def _array(t, dtype=None):
    """A tensor's array (C-contiguous), or None."""
    if t is None:
        return None
    a = t._data
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    return _contiguous(xp_of(a), a)


def _channel_view(t, ndim):
    """A (C,) tensor shaped (1, C, 1, ...) to broadcast against (N, C, *)."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _verify_batch_size(size) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}")


# ---------------------------------------------------------------------------
# batch norm

class BatchNorm(Node):
    """Batch normalization per channel of (N, C, *), with the batch's statistics
    (training) or given ones (evaluation); updates the running statistics given in
    ``stats`` (a tuple of the running mean and variance tensors, or None)."""

    saves_inputs = (0, 1)

    def forward(self, x, weight, bias, stats, training, momentum, eps):
        xp = xp_of(x)
        self.training, self.eps = training, eps
        N, C = x.shape[0], x.shape[1]
        x3 = _contiguous(xp, x).reshape(N, C, math.prod(x.shape[2:]))
        rm = rv = None
        if not training:
            rm = _array(stats[0], x.dtype)
            rv = _array(stats[1], x.dtype)
        y, mean, var, invstd = K.batch_norm_forward(
            x3, _contiguous(xp, weight) if weight is not None else None,
            _contiguous(xp, bias) if bias is not None else None, rm, rv, training, eps)
        # an empty batch leaves the running statistics as they are (PyTorch's rule)
        if training and stats is not None and x3.size:
            _update_running(stats, mean, var, momentum, x3.shape[0] * x3.shape[2])
        # evaluation: keep the statistics used (the buffers may change before backward)
        self.mean = mean if training else mean.copy()
        self.invstd = invstd
        return y.reshape(x.shape)

    def backward(self, g):
        x, weight = self.saved_tensors
        need = self.needs_input_grad
        if is_grad_enabled():
            return _batch_norm_backward_graph(self, g, x, weight, need)
        xp = xp_of(x._data)
        N, C = x.shape[0], x.shape[1]
        x3 = _contiguous(xp, x._data).reshape(N, C, math.prod(x.shape[2:]))
        dy = _contiguous(xp, g._data).reshape(x3.shape)
        w = _contiguous(xp, weight._data) if weight is not None else None
        dx, dw, db = K.batch_norm_backward(dy, x3, self.mean, self.invstd, w, self.training,
                                           need[0], need[1] or need[2])
        if x3.size == 0 and dw is not None:
            # an empty batch: zero sums (the kernel would scale them by a NaN invstd)
            dw, db = xp.zeros_like(dw), xp.zeros_like(db)
        return (wrap(dx.reshape(x.shape)) if need[0] else None,
                wrap(dw) if need[1] else None, wrap(db) if need[2] else None)


def _update_running(stats, mean, var, momentum, count):
    """running = (1 - momentum) * running + momentum * batch statistic (the variance
    unbiased), in double precision and stored in the buffers' dtype, as PyTorch."""
    rm, rv = stats
    for buf, value in ((rm, mean), (rv, var * (count / (count - 1)) if count > 1
                                    else var * math.nan)):
        if buf is None:
            continue
        a = buf._data
        xp = xp_of(a)
        upd = momentum * value.astype(xp.float64) + (1 - momentum) * a.astype(xp.float64)
        a[...] = upd.astype(a.dtype)
        buf._bump_version()


def _batch_norm_backward_graph(node, g, x, weight, need):
    """The backward of BatchNorm with ember ops (differentiable again)."""
    dims = (0,) + tuple(range(2, x.dim()))
    nd = x.dim()
    if node.training:
        mean = x.mean(dims, keepdim=True)
        xmu = x - mean
        invstd = ((xmu * xmu).mean(dims, keepdim=True) + node.eps).rsqrt()
    else:
        xmu = x - wrap(node.mean).reshape((1, -1) + (1,) * (nd - 2))
        invstd = wrap(node.invstd).reshape((1, -1) + (1,) * (nd - 2))
    xhat = xmu * invstd
    dx = None
    if need[0]:
        gw = g if weight is None else g * _channel_view(weight, nd)
        if node.training:
            dx = invstd * (gw - gw.mean(dims, keepdim=True)
                           - xhat * (gw * xhat).mean(dims, keepdim=True))
        else:
            dx = gw * invstd
    dw = (g * xhat).sum(dims) if need[1] else None
    db = g.sum(dims) if need[2] else None
    return dx, dw, db


@computes_in_float32(updated=("running_mean", "running_var"))
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization of every channel (dim 1) over the batch and spatial dims.

    In training the batch's statistics normalize the input and update ``running_mean``
    and ``running_var`` in place (with the unbiased variance); otherwise the running
    statistics are used.

    See :class:`~ember.nn.BatchNorm1d`, :class:`~ember.nn.BatchNorm2d`,
    :class:`~ember.nn.BatchNorm3d` for details.
    """
    if training:
        if input.dim() < 2:
            from ember._ops._util import wrap_dim

            wrap_dim(1, input.dim())
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _check_float(input, "batch_norm")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    C = input.shape[1] if input.dim() > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    _check_param(weight, input)
    _check_param(bias, input)
    _no_grad_arg(running_mean, "native_batch_norm", "running_mean")
    _no_grad_arg(running_var, "native_batch_norm", "running_var")
    stats = (running_mean, running_var) if (running_mean is not None
                                            or running_var is not None) else None
    return apply(BatchNorm, input, _flat(weight), _flat(bias), stats, bool(training),
                 float(momentum), float(eps))


def _flat(t):
    return t.reshape(-1) if t is not None and t.dim() != 1 else t


def _no_grad_arg(t, fn, name):
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


# ---------------------------------------------------------------------------
# instance norm

def _verify_spatial_size(size) -> None:
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}")


@computes_in_float32(updated=("running_mean", "running_var"))
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalization of every channel of every sample over its spatial dims.

    See :class:`~ember.nn.InstanceNorm1d`, :class:`~ember.nn.InstanceNorm2d`,
    :class:`~ember.nn.InstanceNorm3d` for details.
    """
    if use_input_stats:
        _verify_spatial_size(input.size())
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    _check_float(input, "batch_norm")
    N, C = input.shape[0], input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        # PyTorch runs batch norm on (1, N*C, *) with the parameters repeated N times
        if t is not None and t.numel() * N != N * C:
            raise RuntimeError(f"{name} should contain {N * C} elements not {t.numel() * N}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                          eps)
    _check_param(weight, input)
    _check_param(bias, input)
    stats = (running_mean, running_var) if (running_mean is not None
                                            or running_var is not None) else None
    return apply(GroupNorm, input, weight, bias, C, float(eps), stats, float(momentum))


# ---------------------------------------------------------------------------
# layer norm

class LayerNorm(Node):
    """Layer normalization over the last ``ndim`` dims, affine per element there."""

    saves_inputs = (0, 1)

    def forward(self, x, weight, bias, ndim, eps):
        xp = xp_of(x)
        self.ndim, self.eps = ndim, eps
        K_ = math.prod(x.shape[x.ndim - ndim:])
        x2 = _contiguous(xp, x).reshape(math.prod(x.shape[:x.ndim - ndim]), K_)
        y, self.mean, self.rstd = K.layer_norm_forward(
            x2, _contiguous(xp, weight).reshape(-1) if weight is not None else None,
            _contiguous(xp, bias).reshape(-1) if bias is not None else None, eps)
        return y.reshape(x.shape)

    def backward(self, g):
        x, weight = self.saved_tensors
        need = self.needs_input_grad
        if is_grad_enabled():
            return _layer_norm_backward_graph(self, g, x, weight, need)
        xp = xp_of(x._data)
        wshape = x.shape[x.dim() - self.ndim:]
        x2 = _contiguous(xp, x._data).reshape(math.prod(x.shape[:x.dim() - self.ndim]),
                                                 math.prod(wshape))
        dy = _contiguous(xp, g._data).reshape(x2.shape)
        w = _contiguous(xp, weight._data).reshape(-1) if weight is not None else None
        dx, dw, db = K.layer_norm_backward(dy, x2, self.mean, self.rstd, w, need[0],
                                           need[1] or need[2])
        return (wrap(dx.reshape(x.shape)) if need[0] else None,
                wrap(dw.reshape(wshape)) if need[1] else None,
                wrap(db.reshape(wshape)) if need[2] else None)


def _layer_norm_backward_graph(node, g, x, weight, need):
    nd = x.dim()
    dims = tuple(range(nd - node.ndim, nd))
    lead = tuple(range(nd - node.ndim))
    mean = x.mean(dims, keepdim=True)
    xmu = x - mean
    rstd = ((xmu * xmu).mean(dims, keepdim=True) + node.eps).rsqrt()
    xhat = xmu * rstd
    dx = None
    if need[0]:
        a = g if weight is None else g * weight
        dx = rstd * (a - a.mean(dims, keepdim=True)
                     - xhat * (a * xhat).mean(dims, keepdim=True))
    dw = (g * xhat).sum(lead) if need[1] and lead else (g * xhat) if need[1] else None
    db = (g.sum(lead) if lead else g) if need[2] else None
    return dx, dw, db


def _normalized_shape(normalized_shape, fn):
    if isinstance(normalized_shape, numbers.Integral):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    return tuple(int(s) for s in normalized_shape)


def _check_normalized(input, shape, weight, bias, star):
    if len(shape) == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {_fmt(t.shape)} and normalized_shape = {_fmt(shape)}")
    n = len(shape)
    if input.dim() < n or tuple(input.shape[input.dim() - n:]) != shape:
        expected = ("[*, " if star else "[*") + _fmt(shape)[1:]
        raise RuntimeError(f"Given normalized_shape={_fmt(shape)}, expected input with shape "
                           f"{expected}, but got input of size{_fmt(input.shape)}")


@computes_in_float32
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last ``len(normalized_shape)`` dims of ``input``,
    then ``* weight + bias`` elementwise there.

    See :class:`~ember.nn.LayerNorm` for details.
    """
    shape = _normalized_shape(normalized_shape, "layer_norm")
    _check_normalized(input, shape, weight, bias, True)
    _check_float(input, "LayerNormKernelImpl")
    _check_param(weight, input)
    _check_param(bias, input)
    return apply(LayerNorm, input, weight, bias, len(shape), float(eps))


# ---------------------------------------------------------------------------
# group norm (and instance norm: one channel per group)

class GroupNorm(Node):
    """Group normalization of (N, C, *): statistics per sample and group of channels,
    affine per channel. With ``stats`` (instance norm) the running statistics are
    updated with the batch average of the per-sample ones."""

    saves_inputs = (0, 1)

    def forward(self, x, weight, bias, groups, eps, stats=None, momentum=0.0):
        xp = xp_of(x)
        self.groups, self.eps = groups, eps
        N, C = x.shape[0], x.shape[1]
        x3 = _contiguous(xp, x).reshape(N, C, math.prod(x.shape[2:]))
        y, self.mean, var, self.rstd = K.group_norm_forward(
            x3, groups, _contiguous(xp, weight) if weight is not None else None,
            _contiguous(xp, bias) if bias is not None else None, eps)
        if stats is not None and x3.size:
            # PyTorch's: each sample's statistics update the running ones, then the
            # batch average of the N updated copies is kept.
            _update_running(stats, self.mean.mean(axis=0), var.mean(axis=0), momentum,
                            x3.shape[2])
        return y.reshape(x.shape)

    def backward(self, g):
        x, weight = self.saved_tensors
        need = self.needs_input_grad
        if is_grad_enabled():
            return _group_norm_backward_graph(self, g, x, weight, need)
        xp = xp_of(x._data)
        N, C = x.shape[0], x.shape[1]
        x3 = _contiguous(xp, x._data).reshape(N, C, math.prod(x.shape[2:]))
        dy = _contiguous(xp, g._data).reshape(x3.shape)
        w = _contiguous(xp, weight._data) if weight is not None else None
        dx, dw, db = K.group_norm_backward(dy, x3, self.groups, self.mean, self.rstd, w,
                                           need[0])
        return (wrap(dx.reshape(x.shape)) if need[0] else None,
                wrap(dw) if need[1] else None, wrap(db) if need[2] else None)


def _group_norm_backward_graph(node, g, x, weight, need):
    N, C, G = x.shape[0], x.shape[1], node.groups
    nd = x.dim()
    xg = x.reshape(N, G, C // G * math.prod(x.shape[2:]))
    mean = xg.mean(2, keepdim=True)
    xmu = xg - mean
    rstd = ((xmu * xmu).mean(2, keepdim=True) + node.eps).rsqrt()
    xhat_g = xmu * rstd
    xhat = xhat_g.reshape(tuple(x.shape))
    dx = None
    if need[0]:
        a = (g if weight is None else g * _channel_view(weight, nd)).reshape(tuple(xg.shape))
        dx = (rstd * (a - a.mean(2, keepdim=True)
                      - xhat_g * (a * xhat_g).mean(2, keepdim=True))).reshape(tuple(x.shape))
    dims = (0,) + tuple(range(2, nd))
    dw = (g * xhat).sum(dims) if need[1] else None
    db = g.sum(dims) if need[2] else None
    return dx, dw, db


@computes_in_float32
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: the channels (dim 1) are split into ``num_groups`` groups,
    each normalized per sample over its channels and spatial dims; then the affine
    transform per channel.

    See :class:`~ember.nn.GroupNorm` for details.
    """
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    N, C = input.shape[0], input.shape[1]
    _verify_batch_size([N * C // num_groups, num_groups] + list(input.shape[2:]))
    if C % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {_fmt(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {_fmt(t.shape)} and input of shape "
                f"{_fmt(input.shape)}")
    _check_float(input, "GroupNormKernelImpl")
    _check_param(weight, input)
    _check_param(bias, input)
    return apply(GroupNorm, input, weight, bias, int(num_groups), float(eps))


# ---------------------------------------------------------------------------
# rms norm, local response norm (ember ops)

@computes_in_float32
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims:
    ``x / sqrt(mean(x**2) + eps) * weight``; ``eps`` None is the dtype's machine epsilon.

    See :class:`~ember.nn.RMSNorm` for details.
    """
    shape = _normalized_shape(normalized_shape, "rms_norm")
    _check_normalized(input, shape, weight, None, False)
    if input._data.dtype.kind != "c":  # complex: PyTorch's formula, on complex x * x
        _check_float(input, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels: every element is divided by
    ``(k + alpha * mean of the squares of its ``size`` neighbouring channels) ** beta``.

    See :class:`~ember.nn.LocalResponseNorm` for details.
    """
    from ember._ops.creation import zeros
    from ember._ops.join import cat

    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input "
            f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    C = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    parts = []
    pad_shape = list(input.shape)
    if before:
        pad_shape[1] = before
        parts.append(zeros(pad_shape, dtype=input.dtype, device=input.device))
    parts.append(sq)
    if after:
        pad_shape[1] = after
        parts.append(zeros(pad_shape, dtype=input.dtype, device=input.device))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    div = padded[:, 0:C]
    for i in range(1, size):
        div = div + padded[:, i:i + C]
    div = (div * (1.0 / size) * alpha + k) ** beta
    return input / div
