"""Activation functions of ``ember.nn.functional``: the pointwise nonlinearities, the
softmax family, ``glu``, ``normalize`` and ``one_hot``.

NOTE [ Pointwise activations ]
Each pointwise activation is one graph node (not a chain of five ops): its forward is
one function on arrays, and its backward is a vector-Jacobian product ``vjp(m, g, x,
*params)`` written once against a small math namespace ``m`` that is either the array
module (``numpy``/``cupy``) or ember's Tensor ops. A plain backward runs the formula on
the arrays directly (no Tensor per intermediate value); under ``create_graph=True`` it
runs on Tensors, so higher-order gradients come for free.

The softmax family saves its output and differentiates from it (one pass each way).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember._backend import backend_of, bulk_kernel, register_kernel
from ember._C._core import Node, apply_inplace, is_grad_enabled
from ember._ops import elementwise as _ew
from ember._ops._special import erf as _erf_kernel
from ember._ops._util import (
    TensorBase,
    apply,
    ensure_float,
    not_implemented,
    type_name,
    wrap,
    wrap_dim,
    xp_of,
)
from ember.nn._functional._low_precision import computes_in_float32

__all__ = [
    "threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu",
    "rrelu_", "glu", "gelu", "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus",
    "softmin", "softmax", "log_softmax", "softshrink", "tanh", "sigmoid", "hardsigmoid",
    "silu", "mish", "hardswish", "normalize", "one_hot", "gumbel_softmax",
]

def tanh(input):
    """tanh(input) -> Tensor: the elementwise hyperbolic tangent (:func:`ember.tanh`)."""
    return _ew.tanh(input)


def sigmoid(input):
    """sigmoid(input) -> Tensor: the elementwise logistic function (:func:`ember.sigmoid`)."""
    return _ew.sigmoid(input)


# ---------------------------------------------------------------------------
# the math namespaces the formulas are written against

class _ArrayMath:
    """The array functions the activation formulas use, on one array module."""

    def __init__(self, xp):
        self.xp = xp
        for name in ("where", "exp", "expm1", "log1p", "tanh", "abs", "maximum", "minimum",
                     "logical_and"):
            setattr(self, name, getattr(xp, name))

    def sigmoid(self, x):
        with np.errstate(over="ignore"):
            return 1 / (1 + self.xp.exp(-x))

    def erf(self, x):
        return _erf_kernel(self.xp, x).astype(x.dtype, copy=False)


class _TensorMath:
    """The same functions on ember Tensors (recorded, so differentiable again)."""

    where = staticmethod(_ew.where)
    exp = staticmethod(_ew.exp)
    expm1 = staticmethod(_ew.expm1)
    log1p = staticmethod(_ew.log1p)
    tanh = staticmethod(_ew.tanh)
    abs = staticmethod(_ew.abs)
    maximum = staticmethod(lambda a, b: _ew.clamp_min(a, b))
    minimum = staticmethod(lambda a, b: _ew.clamp_max(a, b))
    logical_and = staticmethod(_ew.logical_and)
    sigmoid = staticmethod(_ew.sigmoid)
    erf = staticmethod(_ew.erf)


_TENSOR_MATH = _TensorMath()
_math_cache: dict = {}


def _array_math(x):
    """The math of ``x``'s array module (one object per module)."""
    xp = xp_of(x)
    m = _math_cache.get(xp)
    if m is None:
        m = _math_cache[xp] = _ArrayMath(xp)
    return m


# ---------------------------------------------------------------------------
# the pointwise node

class _Pointwise(Node):
    """One pointwise activation: ``fn(m, x, *params)`` forward on arrays and
    ``vjp(m, g, x, *params)`` its backward (see NOTE [ Pointwise activations ])."""

    saves_inputs = (0,)
    fn = None
    vjp = None

    def forward(self, x, *params):
        self.params = params
        with np.errstate(all="ignore"):
            y = type(self).fn(_array_math(x), x, *params)
        return y if y.dtype == x.dtype else y.astype(x.dtype)

    def backward(self, g):
        (x,) = self.saved_tensors
        vjp = type(self).vjp
        if is_grad_enabled():
            return vjp(_TENSOR_MATH, g, x, *self.params)
        xa = x._data
        r = vjp(_array_math(xa), g._data, xa, *self.params)
        return wrap(r if r.dtype == xa.dtype else r.astype(xa.dtype))


def _node(name, fn, vjp):
    return type(name, (_Pointwise,), {"fn": staticmethod(fn), "vjp": staticmethod(vjp),
                                      "__doc__": f"The ``{name.lower()}`` activation."})


def _check_float(input, kernel):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{kernel.split('_')[0]}(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    if input._data.dtype.kind != "f":
        raise not_implemented(kernel, input._data.dtype)


def _run(cls, input, params, inplace):
    if inplace:
        return apply_inplace(cls, input, *params)
    return apply(cls, input, *params)


# ---------------------------------------------------------------------------
# threshold, relu, hardtanh, relu6

Threshold = _node(
    "Threshold",
    lambda m, x, th, v: m.where(x > th, x, v),
    lambda m, g, x, th, v: m.where(x > th, g, 0))


def _check_threshold(input):
    if not isinstance(input, TensorBase):
        raise TypeError(f"threshold(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._data.dtype.kind not in "iuf":
        raise not_implemented("threshold_cpu", input._data.dtype)


@computes_in_float32
def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``.

    See :class:`~ember.nn.Threshold`.
    """
    _check_threshold(input)
    return _run(Threshold, input, (threshold, value), inplace)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    _check_threshold(input)
    return apply_inplace(Threshold, input, threshold, value)


class Relu(Node):
    """``max(x, 0)``, differentiated from its output."""

    saves_output = True

    def forward(self, x):
        return xp_of(x).maximum(x, 0)

    def backward(self, g):
        (y,) = self.saved_tensors
        if is_grad_enabled():
            return g * (y > 0)
        ga = g._data
        return wrap(ga * (y._data > 0).astype(ga.dtype, copy=False))


def relu(input, inplace=False):
    """Rectified linear unit, ``max(input, 0)``, elementwise.

    See :class:`~ember.nn.ReLU`.
    """
    if isinstance(input, TensorBase) and input._data.dtype.kind == "f" and not inplace:
        return apply(Relu, input)
    if inplace:
        return input.relu_()
    return _ew.relu(input)


def relu_(input):
    """In-place :func:`relu`."""
    return input.relu_()


Hardtanh = _node(
    "Hardtanh",
    lambda m, x, lo, hi: m.minimum(m.maximum(x, lo), hi),
    lambda m, g, x, lo, hi: m.where(m.logical_and(x > lo, x < hi), g, 0))


def _check_hardtanh(input):
    kind = input._data.dtype.kind
    if kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(input, min_val, max_val)``, elementwise; gradient 1 strictly inside.

    See :class:`~ember.nn.Hardtanh`.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    _check_hardtanh(input)
    return _run(Hardtanh, input, (min_val, max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(0, input), 6)``, elementwise.

    See :class:`~ember.nn.ReLU6`.
    """
    _check_hardtanh(input)
    return _run(Hardtanh, input, (0.0, 6.0), inplace)


# ---------------------------------------------------------------------------
# elu, selu, celu, leaky_relu

def _elu_fn(m, x, alpha, scale, input_scale):
    neg = m.expm1(m.minimum(x, 0) * input_scale) * (alpha * scale)
    return m.where(x > 0, x * scale if scale != 1 else x, neg)


def _elu_vjp(m, g, x, alpha, scale, input_scale):
    neg = g * (m.exp(m.minimum(x, 0) * input_scale) * (alpha * scale * input_scale))
    return m.where(x > 0, g * scale if scale != 1 else g, neg)


Elu = _node("Elu", _elu_fn, _elu_vjp)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@computes_in_float32
def elu(input, alpha=1.0, inplace=False):
    """Exponential linear unit: ``input`` if positive, else ``alpha * (exp(input) - 1)``.

    See :class:`~ember.nn.ELU`.
    """
    _check_float(input, "elu_cpu")
    return _run(Elu, input, (alpha, 1.0, 1.0), inplace)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return elu(input, alpha, inplace=True)


@computes_in_float32
def selu(input, inplace=False):
    """Scaled ELU, ``scale * elu(input, alpha)`` with the self-normalizing constants
    ``alpha = 1.6732...`` and ``scale = 1.0507...``.

    See :class:`~ember.nn.SELU`.
    """
    _check_float(input, "elu_cpu")
    return _run(Elu, input, (_SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input):
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


@computes_in_float32
def celu(input, alpha=1.0, inplace=False):
    """Continuously differentiable ELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    See :class:`~ember.nn.CELU`.
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check_float(input, "elu_cpu")
    return _run(Elu, input, (alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


LeakyRelu = _node(
    "LeakyRelu",
    lambda m, x, slope: m.where(x > 0, x, x * slope),
    lambda m, g, x, slope: m.where(x > 0, g, g * slope))


@computes_in_float32
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` if positive, else ``negative_slope * input``.

    See :class:`~ember.nn.LeakyReLU`.
    """
    _check_float(input, "leaky_relu_cpu")
    return _run(LeakyRelu, input, (negative_slope,), inplace)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, inplace=True)


# ---------------------------------------------------------------------------
# prelu, rrelu

@computes_in_float32
def prelu(input, weight):
    """``input`` if positive, else ``weight * input``, with one learnable slope per
    channel (dim 1) or one for all.

    See :class:`~ember.nn.PReLU`.
    """
    _check_float(input, "prelu_cpu")
    wd = weight._data
    if wd.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {wd.ndim}")
    n = wd.size
    x = input._data
    if n != 1:
        channels = x.shape[1] if x.ndim >= 2 else 1
        if channels != n:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {n} and channel size = {channels}.")
        w = weight.reshape((1, n) + (1,) * (x.ndim - 2))
    else:
        w = weight.reshape(())
    return _ew.where(input > 0, input, w * input)


class RRelu(Node):
    """Randomized leaky ReLU (training): a slope drawn from U(lower, upper) for every
    non-positive element."""

    def forward(self, x, lower, upper, rng):
        xp = xp_of(x)
        r = rng.random(x.shape)
        r = (r * (upper - lower) + lower).astype(x.dtype)
        if xp is not np:
            r = xp.asarray(r)
        noise = xp.where(x <= 0, r, xp.ones((), x.dtype))
        self.noise = noise
        return x * noise

    def backward(self, g):
        if is_grad_enabled():
            return g * wrap(self.noise)
        return wrap(g._data * self.noise)


@computes_in_float32
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training a random slope from U(lower, upper) for every
    non-positive element, else the fixed slope ``(lower + upper) / 2``.

    See :class:`~ember.nn.RReLU`.
    """
    if not training:
        _check_float(input, "leaky_relu_cpu")
        return _run(LeakyRelu, input, ((lower + upper) / 2,), inplace)
    _check_float(input, "rrelu_with_noise_out_cpu")
    if lower > upper:
        raise RuntimeError(
            f"Lower bound should be less than or equal to the upper bound. Found lower bound: "
            f"{lower} and upper bound: {upper}.")
    from ember._ops.random import _generator

    rng = _generator(None, input.device)._rng
    return _run(RRelu, input, (lower, upper, rng), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


# ---------------------------------------------------------------------------
# smooth activations: gelu, silu, mish, softplus, logsigmoid, softsign, tanhshrink

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_K = math.sqrt(2 / math.pi)
_GELU_C = 0.044715


def _gelu_fn(m, x, approximate):
    if approximate == "tanh":
        t = m.tanh((x + x * x * x * _GELU_C) * _GELU_K)
        return x * 0.5 * (t + 1)
    return x * 0.5 * (m.erf(x * _SQRT1_2) + 1)


def _gelu_vjp(m, g, x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = m.tanh((x + x2 * x * _GELU_C) * _GELU_K)
        d = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * ((x2 * (3 * _GELU_C) + 1) * _GELU_K)
        return g * d
    cdf = (m.erf(x * _SQRT1_2) + 1) * 0.5
    pdf = m.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


class Gelu(_Pointwise):
    """The ``gelu`` activation: the exact form (``approximate='none'``) runs the named
    kernels ``gelu_forward`` / ``gelu_backward`` (compiled on the CPU for contiguous float
    arrays), the tanh form and a recorded backward the formulas above."""

    fn = staticmethod(_gelu_fn)
    vjp = staticmethod(_gelu_vjp)

    def forward(self, x, approximate):
        if approximate != "none":
            return super().forward(x, approximate)
        self.params = (approximate,)
        return backend_of(x).kernel("gelu_forward", x)(x)

    def backward(self, g):
        (x,) = self.saved_tensors
        if self.params[0] != "none" or is_grad_enabled():
            return super().backward(g)
        xa = x._data
        return wrap(backend_of(xa).kernel("gelu_backward", xa)(g._data, xa))


@register_kernel("gelu_forward", "any")
def _gelu_forward_arrays(x):
    with np.errstate(all="ignore"):
        y = _gelu_fn(_array_math(x), x, "none")
    return y if y.dtype == x.dtype else y.astype(x.dtype)


@register_kernel("gelu_backward", "any")
def _gelu_backward_arrays(g, x):
    with np.errstate(all="ignore"):
        r = _gelu_vjp(_array_math(x), g, x, "none")
    return r if r.dtype == x.dtype else r.astype(x.dtype)


@computes_in_float32
def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``; with ``approximate='tanh'`` the tanh
    approximation ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``.

    See :class:`~ember.nn.GELU`.
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check_float(input, "GeluKernelImpl")
    return apply(Gelu, input, approximate)


def _silu_vjp(m, g, x):
    s = m.sigmoid(x)
    return g * (s * (x * (1 - s) + 1))


Silu = _node("Silu", lambda m, x: x * m.sigmoid(x), _silu_vjp)


@computes_in_float32
def silu(input, inplace=False):
    """Sigmoid linear unit (swish), ``x * sigmoid(x)``.

    See :class:`~ember.nn.SiLU`.
    """
    if isinstance(input, TensorBase) and input._data.dtype.kind == "c":
        return _complex_composite(input, input * input.sigmoid(), inplace)
    _check_float(input, "silu_cpu")
    return _run(Silu, input, (), inplace)


def _complex_composite(input, out, inplace=False):
    """A complex input's result computed from ember ops (their gradients follow PyTorch's
    conjugate convention); ``inplace`` copies it into ``input``."""
    return input.copy_(out) if inplace else out


def _softplus1(m, x):
    """``log(1 + exp(x))`` without overflow."""
    return m.maximum(x, 0) + m.log1p(m.exp(-m.abs(x)))


def _mish_vjp(m, g, x):
    t = m.tanh(_softplus1(m, x))
    return g * (t + x * m.sigmoid(x) * (1 - t * t))


Mish = _node("Mish", lambda m, x: x * m.tanh(_softplus1(m, x)), _mish_vjp)


@computes_in_float32
def mish(input, inplace=False):
    """``x * tanh(softplus(x))``, elementwise.

    See :class:`~ember.nn.Mish`.
    """
    _check_float(input, "mish_cpu")
    return _run(Mish, input, (), inplace)


def _softplus_fn(m, x, beta, threshold):
    bx = x * beta if beta != 1 else x
    soft = _softplus1(m, bx)
    return m.where(bx > threshold, x, soft / beta if beta != 1 else soft)


def _softplus_vjp(m, g, x, beta, threshold):
    bx = x * beta if beta != 1 else x
    return m.where(bx > threshold, g, g * m.sigmoid(bx))


Softplus = _node("Softplus", _softplus_fn, _softplus_vjp)


@computes_in_float32
def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``.

    See :class:`~ember.nn.Softplus`.
    """
    _check_float(input, "softplus_cpu")
    return apply(Softplus, input, beta, threshold)


LogSigmoid = _node(
    "LogSigmoid",
    lambda m, x: m.minimum(x, 0) - m.log1p(m.exp(-m.abs(x))),
    lambda m, g, x: g * m.sigmoid(-x))


@computes_in_float32
def logsigmoid(input):
    """``log(sigmoid(x))``, computed stably.

    See :class:`~ember.nn.LogSigmoid`.
    """
    _check_float(input, "log_sigmoid_cpu")
    return apply(LogSigmoid, input)


def _softsign_vjp(m, g, x):
    d = m.abs(x) + 1
    return g / (d * d)


Softsign = _node("Softsign", lambda m, x: x / (m.abs(x) + 1), _softsign_vjp)


def _float_input(input, kernel, bool_msg=None):
    kind = input._data.dtype.kind
    if kind == "b":
        if bool_msg:
            raise RuntimeError(bool_msg)
        raise not_implemented(kernel, input._data.dtype)
    if kind == "c":
        raise not_implemented(kernel, input._data.dtype)
    return ensure_float(input)


def softsign(input):
    """``x / (1 + |x|)``, elementwise.

    See :class:`~ember.nn.Softsign`.
    """
    if input._data.dtype.kind == "c":
        return _complex_composite(input, input / (input.abs() + 1))
    return apply(Softsign, _float_input(input, "abs_cpu"))


def _tanhshrink_vjp(m, g, x):
    t = m.tanh(x)
    return g * (t * t)


Tanhshrink = _node("Tanhshrink", lambda m, x: x - m.tanh(x), _tanhshrink_vjp)


def tanhshrink(input):
    """``x - tanh(x)``, elementwise.

    See :class:`~ember.nn.Tanhshrink`.
    """
    if input._data.dtype.kind == "c":
        return _complex_composite(input, input - input.tanh())
    return apply(Tanhshrink, _float_input(
        input, "tanh", "Subtraction, the `-` operator, with a bool tensor is not supported. "
        "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."))


# ---------------------------------------------------------------------------
# hard activations: hardswish, hardsigmoid, hardshrink, softshrink

def _hardswish_vjp(m, g, x):
    mid = g * (x / 3 + 0.5)
    return m.where(x < -3, 0, m.where(x <= 3, mid, g))


Hardswish = _node(
    "Hardswish",
    lambda m, x: x * m.minimum(m.maximum(x + 3, 0), 6) / 6,
    _hardswish_vjp)


@computes_in_float32
def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``, elementwise.

    See :class:`~ember.nn.Hardswish`.
    """
    _check_float(input, "hardswish_cpu")
    return _run(Hardswish, input, (), inplace)


Hardsigmoid = _node(
    "Hardsigmoid",
    lambda m, x: m.minimum(m.maximum(x + 3, 0), 6) / 6,
    lambda m, g, x: m.where(m.logical_and(x > -3, x < 3), g / 6, 0))


@computes_in_float32
def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``, elementwise.

    See :class:`~ember.nn.Hardsigmoid`.
    """
    _check_float(input, "hardsigmoid_cpu")
    return _run(Hardsigmoid, input, (), inplace)


Hardshrink = _node(
    "Hardshrink",
    lambda m, x, lambd: m.where(m.logical_and(x >= -lambd, x <= lambd), 0, x),
    lambda m, g, x, lambd: m.where(m.logical_and(x >= -lambd, x <= lambd), 0, g))


@computes_in_float32
def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    See :class:`~ember.nn.Hardshrink`.
    """
    _check_float(input, "hardshrink_cpu")
    return apply(Hardshrink, input, lambd)


def _softshrink_fn(m, x, lambd):
    return m.where(x > lambd, x - lambd, m.where(x < -lambd, x + lambd, 0))


Softshrink = _node(
    "Softshrink", _softshrink_fn,
    lambda m, g, x, lambd: m.where(m.logical_and(x >= -lambd, x <= lambd), 0, g))


@computes_in_float32
def softshrink(input, lambd=0.5):
    """``x - lambd`` where ``x > lambd``, ``x + lambd`` where ``x < -lambd``, else 0.

    See :class:`~ember.nn.Softshrink`.
    """
    _check_float(input, "softshrink_check")
    dt = input._data.dtype
    fmax = float(np.finfo(dt).max)
    if not 0 <= lambd <= fmax:
        raise RuntimeError(f"lambda must be in range [0, {fmax:g}] for input dtype "
                           f"{type_name(dt)}, but found {lambd:g}")
    return apply(Softshrink, input, lambd)


# ---------------------------------------------------------------------------
# glu

@computes_in_float32
def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of
    ``input`` along ``dim``.

    See :class:`~ember.nn.GLU`.
    """
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    _check_float(input, "glu_cpu")
    h = n // 2
    return input.narrow(d, 0, h) * input.narrow(d, h, h).sigmoid()


# ---------------------------------------------------------------------------
# softmax, log_softmax, softmin

class Softmax(Node):
    """``exp(x) / sum(exp(x))`` along ``dim``; backward from the saved output."""

    saves_output = True

    def forward(self, x, dim):
        self.dim = dim
        xp = xp_of(x)
        if x.size == 0:
            return x.copy()
        if dim == x.ndim - 1:
            kernel = bulk_kernel("softmax_lastdim", x)
            if kernel is not None:
                return kernel(x, False)
        e = x - x.max(axis=dim, keepdims=True)
        xp.exp(e, out=e)
        e /= e.sum(axis=dim, keepdims=True)
        return e

    def backward(self, g):
        (y,) = self.saved_tensors
        dim = self.dim
        if is_grad_enabled():
            return y * (g - (g * y).sum(dim, keepdim=True))
        ya = y._data
        gy = g._data * ya
        s = gy.sum(axis=dim, keepdims=True)
        gy -= ya * s
        return wrap(gy)


class LogSoftmax(Node):
    """``x - log(sum(exp(x)))`` along ``dim``; backward from the saved output."""

    saves_output = True

    def forward(self, x, dim):
        self.dim = dim
        xp = xp_of(x)
        if x.size == 0:
            return x.copy()
        if dim == x.ndim - 1:
            kernel = bulk_kernel("softmax_lastdim", x)
            if kernel is not None:
                return kernel(x, True)
        z = x - x.max(axis=dim, keepdims=True)
        s = xp.exp(z).sum(axis=dim, keepdims=True)
        z -= xp.log(s)
        return z

    def backward(self, g):
        (y,) = self.saved_tensors
        dim = self.dim
        if is_grad_enabled():
            return g - y.exp() * g.sum(dim, keepdim=True)
        ga, ya = g._data, y._data
        xp = xp_of(ya)
        r = xp.exp(ya)
        r *= ga.sum(axis=dim, keepdims=True)
        return wrap(ga - r)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(fn, kernel, input, dim, dtype, stacklevel):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    ndim = input._data.ndim
    if dim is None:
        dim = _get_softmax_dim(fn, ndim, stacklevel + 1)
    d = wrap_dim(dim, ndim)
    if dtype is not None:
        input = input.to(dtype)
    dt = input._data.dtype
    if dt.kind != "f":
        last = d == ndim - 1 or ndim == 0
        raise not_implemented(f"{kernel}_lastdim_kernel_impl" if last and dtype is None
                              else f"{kernel}_kernel_impl", dt)
    return input, (d if ndim else None)


@computes_in_float32
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / exp(x).sum(dim)``: along ``dim`` the values become probabilities.

    Args:
        input: the input tensor.
        dim: the dimension along which softmax is computed.
        dtype: if given, ``input`` is cast to it first (to avoid overflow in float16).

    See :class:`~ember.nn.Softmax`.
    """
    x, d = _softmax_input("softmax", "softmax", input, dim, dtype, _stacklevel)
    if d is None:  # a 0-d tensor: softmax over its single element
        return apply(Softmax, x.reshape(1), 0).reshape(())
    return apply(Softmax, x, d)


@computes_in_float32
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log(softmax(x))``, computed stably in one pass.

    See :class:`~ember.nn.LogSoftmax`.
    """
    x, d = _softmax_input("log_softmax", "log_softmax", input, dim, dtype, _stacklevel)
    if d is None:
        return apply(LogSoftmax, x.reshape(1), 0).reshape(())
    return apply(LogSoftmax, x, d)


@computes_in_float32
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)``.

    See :class:`~ember.nn.Softmin`.
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"softmin(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dim = _get_softmax_dim("softmin", input._data.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


# ---------------------------------------------------------------------------
# normalize, one_hot

@computes_in_float32
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Args:
        input: the input tensor.
        p: the exponent of the norm. Default: 2.
        dim: the dimension (or dimensions) to normalize over. Default: 1.
        eps: the smallest norm divided by. Default: 1e-12.
        out: the output tensor (gradients do not flow into it).
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _ew.div(input, denom, out=out)


class OneHot(Node):
    differentiable = False

    def forward(self, x, num_classes):
        xp = xp_of(x)
        out = xp.zeros(x.shape + (num_classes,), dtype=np.int64)
        if x.size:
            flat = out.reshape(-1, num_classes)
            flat[xp.arange(x.size), x.reshape(-1)] = 1
        return out


def one_hot(tensor, num_classes=-1):
    """Int64 one-hot encoding of an int64 tensor of class indices: shape
    ``tensor.shape + (num_classes,)``; ``num_classes=-1`` takes ``tensor.max() + 1``.

    Examples::

        >>> F.one_hot(ember.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    x = tensor._data
    if x.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if x.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    if num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return apply(OneHot, tensor, int(num_classes))


# ---------------------------------------------------------------------------
# Tensor methods (installed from the op registry): torch.Tensor's signatures, which
# differ from the functional forms' (``x.softmax(dim, dtype=None)``).

def _softmax_method(self, dim, dtype=None):
    """``softmax(self, dim, dtype=dtype)``: see :func:`ember.nn.functional.softmax`."""
    return softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    """``log_softmax(self, dim, dtype=dtype)``: see :func:`ember.nn.functional.log_softmax`."""
    return log_softmax(self, dim, dtype=dtype)


_softmax_method.__op__ = "softmax"
_log_softmax_method.__op__ = "log_softmax"

METHODS = {"softmax": _softmax_method, "log_softmax": _log_softmax_method,
           "hardshrink": hardshrink, "prelu": prelu}


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    r"""Samples from the Gumbel-Softmax distribution (`Jang et al., 2016
    <https://arxiv.org/abs/1611.01144>`__; `Maddison et al., 2016
    <https://arxiv.org/abs/1611.00712>`__), optionally discretized.

    ``softmax((logits + g) / tau, dim)`` with ``g = -log(E)``, ``E ~ Exponential(1)``
    i.i.d. (standard Gumbel noise), as PyTorch draws it. With ``hard`` the result is the
    one-hot of its argmax in the forward pass and has the soft sample's gradient
    (straight-through: ``y_hard - y_soft.detach() + y_soft``).

    Args:
        logits: ``[..., num_features]`` unnormalized log-probabilities.
        tau: the non-negative temperature.
        hard: return one-hot samples (differentiated as the soft ones).
        eps: deprecated, has no effect (as in PyTorch).
        dim: the dimension along which the softmax is taken. Default: -1.

    Returns:
        A tensor of ``logits``' shape: samples of the Gumbel-Softmax distribution (one-hot
        with ``hard``).

    Examples::

        >>> logits = ember.randn(20, 32)
        >>> F.gumbel_softmax(logits, tau=1, hard=True).sum(-1).unique()
        tensor([1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    from ember._ops.creation import empty_like, zeros_like

    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
