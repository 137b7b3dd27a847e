"""Unary elementwise ops, as a table: math functions, rounding, tests (isnan, ...).

Each row gives the forward on arrays, ``fn(xp, x) -> y``, and the backward on tensors,
``grad(g, x, y) -> dx``, in terms of the input ``x``, the output ``y`` and the incoming
gradient ``g`` (``needs`` says which of x and y the backward reads, so only those are
saved). ``domain`` says what the op does with integer and bool inputs, as PyTorch does:

- ``FLOAT``: they become the default float dtype first (``exp``, ``sin``, ...);
- ``SAME``: the op keeps the dtype (``neg``, ``abs``, ``relu``);
- ``LONG``: as SAME, but bool becomes int64 (``square``);
- ``ROUND``: integers are returned unchanged, bool is an error (``floor``, ``round``);
- ``FLOAT_ONLY``: integers and bool are errors (``frac``).

Ops with parameters (``round(decimals=)``, ``logit(eps)``, ``nan_to_num``) and the
bool-valued tests are written out below the table. ``elementwise`` re-exports all of
this module's public names and methods.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._backend import _cpu_kernels, backend_of, bulk_kernel, register_kernel
from ember._C._core import Node, apply_inplace
from ember._ops import _special
from ember._ops._operands import cast_error, quiet, to_float
from ember._ops._operands import zeros as _zeros
from ember._ops._util import apply, ensure_float, not_implemented, xp_of
from ember._ops._util import conj as _conj
from ember._ops._util import with_out as _out

__all__ = [
    "neg", "negative", "abs", "absolute", "sign", "sgn", "reciprocal", "square", "sqrt",
    "rsqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
    "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "tanh", "asinh",
    "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "sigmoid", "logit", "erf", "erfc",
    "erfinv", "lgamma", "digamma", "floor", "ceil", "round", "trunc", "fix", "frac", "relu",
    "nan_to_num", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit",
    "logical_not", "bitwise_not", "conj", "real_part", "imag_part",
]

FLOAT, SAME, ROUND, FLOAT_ONLY, LONG = "float", "same", "round", "float_only", "long"


# ---------------------------------------------------------------------------
# the table machinery

class Unary(Node):
    """A unary elementwise op built from a row of the table below."""

    fn = None          # forward: (xp, x) -> y on arrays
    grad = None        # backward: (g, x, y) -> dx on tensors; None: a zero gradient
    needs = ""         # which of x, y the backward uses

    def forward(self, x):
        return self.fn(xp_of(x), x)

    def backward(self, g):
        if type(self).grad is None:
            return _zeros(g)
        saved = self.saved_tensors
        x = saved[0] if "x" in self.needs else None
        y = saved[-1] if "y" in self.needs else None
        return type(self).grad(g, x, y)


class _Spec:
    """How a row treats dtypes: its domain, complex support and error messages."""

    def __init__(self, name, domain, kernel, complex_ok, complex_msg, bool_msg, inplace_msg):
        self.name = name
        self.inplace_msg = inplace_msg
        self.domain = domain
        self.kernel = kernel or f"{name}_cpu"
        self.complex_ok = complex_ok
        self.complex_msg = complex_msg
        self.bool_msg = bool_msg

    def check(self, t):
        """Raise PyTorch's error if the op has no kernel for ``t``'s dtype; return
        'float' (compute in the default float dtype), 'copy' (the result is ``t``'s
        values) or 'run'."""
        kind = t._data.dtype.kind
        if kind == "c" and not self.complex_ok:
            if self.complex_msg:
                raise NotImplementedError(self.complex_msg)
            raise not_implemented(self.kernel, t._data.dtype)
        if kind == "b" and self.bool_msg is not None:
            if self.bool_msg:
                raise RuntimeError(self.bool_msg)
            raise not_implemented(self.kernel, t._data.dtype)
        if kind in "biu":
            if self.domain == FLOAT:
                return "float"
            if self.domain == LONG and kind == "b":
                return "long"
            if self.domain == ROUND:
                return "copy"
            if self.domain == FLOAT_ONLY:
                raise not_implemented(self.kernel, t._data.dtype)
        return "run"


def _defunary(name, fn, grad=None, needs="", *, domain=FLOAT, kernel=None, complex_ok=True,
              complex_msg=None, bool_msg=None, inplace_complex_msg=None, doc=None,
              differentiable=True, into=None):
    """Define op ``name`` from a table row: its Node class, function and in-place method.

    ``bool_msg``: None when bool inputs are fine, "" for the generic not-implemented
    error, else the RuntimeError message.
    ``into``: the Node's ``forward_into(node, x) -> bool``, which writes the in-place
    method's result into ``x`` without autograd (NOTE [ In-place ops write in place ]).
    """
    cls_name = "".join(p.capitalize() for p in name.split("_"))
    cls = type(cls_name, (Unary,), {
        "fn": staticmethod(fn), "grad": staticmethod(grad) if grad else None, "needs": needs,
        "saves_inputs": (0,) if "x" in needs else (), "saves_output": "y" in needs,
        "differentiable": differentiable, "__doc__": f"The elementwise ``{name}`` op.",
        # the in-place method without autograd (NOTE [ In-place ops write in place ])
        "forward_into": into,
    })
    spec = _Spec(name, domain, kernel, complex_ok, complex_msg, bool_msg, inplace_complex_msg)

    def op(input, *, out=None):
        how = spec.check(input)
        if how == "float":
            input = ensure_float(input)
        elif how == "copy":
            return _out(input.clone(), out)
        elif how == "long":
            input = input.to(_dtype.int64)
        return _out(apply(cls, input), out)

    def inplace(self):
        how = spec.check(self)
        if how == "float":
            raise cast_error(to_float(self._data.dtype), self._data.dtype)
        if how == "long":
            raise cast_error(np.int64, self._data.dtype)
        if how == "copy":
            return self
        if spec.inplace_msg and self._data.dtype.kind == "c":
            raise RuntimeError(spec.inplace_msg)
        return apply_inplace(cls, self)

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = doc or f"The elementwise ``{name}`` of ``input``."
    op.op = cls
    op.inplace = inplace
    inplace.__name__ = name + "_"
    return op


def _special_fn(kernel):
    """A forward computing ``kernel`` in float64 and casting back to x's dtype."""
    def fn(xp, x):
        with np.errstate(all="ignore"):
            return kernel(xp, x).astype(x.dtype, copy=False)
    return fn


def _sigmoid_fw(xp, x):
    """``1 / (1 + exp(-x))``, PyTorch's formula (exp overflowing to inf gives 0, the
    limit), through the device's "sigmoid" kernel."""
    return backend_of(x).kernel("sigmoid", x)(x)


@register_kernel("sigmoid", "any")
def _sigmoid_any(x):
    with np.errstate(all="ignore"):
        return 1 / (1 + xp_of(x).exp(-x))


def _relu_block(x, out):
    np.maximum(x, 0, out=out)


def _relu_fw(xp, x):
    kernel = bulk_kernel("map_blocks", x)
    if kernel is not None:
        return kernel(_relu_block, x)
    return xp.maximum(x, 0)


def _relu_into(node, x) -> bool:
    # NOTE [ In-place ops write in place ] (ember._ops.elementwise): relu_ on a float array
    if x.dtype.kind != "f":
        return False
    kernel = bulk_kernel("map_blocks", x)
    if kernel is not None:
        kernel(_relu_block, x, x)
    else:
        np.maximum(x, 0, out=x)
    return True


def _frac_fw(xp, x):
    return x - xp.trunc(x)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


# ---------------------------------------------------------------------------
# the table

# arithmetic
neg = _defunary("neg", lambda xp, x: xp.negative(x), lambda g, x, y: -g, domain=SAME,
                bool_msg=_BOOL_NEG, doc="``-input``, elementwise.")
abs = _defunary("abs", lambda xp, x: xp.abs(x), lambda g, x, y: g * x.sgn(), "x",  # noqa: A001
                domain=SAME, bool_msg="",
                inplace_complex_msg="In-place abs is not supported for complex tensors.",
                doc="``|input|``, elementwise; 0 gradient at 0.")
reciprocal = _defunary("reciprocal", quiet(lambda xp, x: xp.reciprocal(x)),
                       lambda g, x, y: -g * _conj(y * y), "y", doc="``1 / input``.")
square = _defunary("square", lambda xp, x: xp.square(x), lambda g, x, y: g * 2 * _conj(x), "x",
                   domain=LONG, doc="``input ** 2``, elementwise (bool: int64).")
sqrt = _defunary("sqrt", quiet(lambda xp, x: xp.sqrt(x)),
                 lambda g, x, y: g / (2 * _conj(y)), "y", doc="The square root of ``input``.")
rsqrt = _defunary("rsqrt", quiet(lambda xp, x: 1 / xp.sqrt(x)),
                  lambda g, x, y: g * -0.5 * _conj(y) ** 3, "y",
                  doc="The reciprocal of the square root of ``input``.")

# exponentials and logarithms
exp = _defunary("exp", quiet(lambda xp, x: xp.exp(x)), lambda g, x, y: g * _conj(y), "y")
exp2 = _defunary("exp2", quiet(lambda xp, x: xp.exp2(x)), lambda g, x, y: g * _conj(y) * _LN2,
                 "y", doc="``2 ** input``, elementwise.")
expm1 = _defunary("expm1", quiet(lambda xp, x: xp.expm1(x)),
                  lambda g, x, y: g * (_conj(y) + 1), "y", doc="``exp(input) - 1``, accurately.")
log = _defunary("log", quiet(lambda xp, x: xp.log(x)), lambda g, x, y: g / _conj(x), "x",
                doc="The natural logarithm of ``input``.")
log1p = _defunary("log1p", quiet(lambda xp, x: xp.log1p(x)),
                  lambda g, x, y: g / (_conj(x) + 1), "x", doc="``log(1 + input)``, accurately.")
log2 = _defunary("log2", quiet(lambda xp, x: xp.log2(x)),
                 lambda g, x, y: g / (_conj(x) * _LN2), "x")
log10 = _defunary("log10", quiet(lambda xp, x: xp.log10(x)),
                  lambda g, x, y: g / (_conj(x) * _LN10), "x")

# trigonometric and hyperbolic functions
sin = _defunary("sin", quiet(lambda xp, x: xp.sin(x)), lambda g, x, y: g * _conj(x.cos()), "x")
cos = _defunary("cos", quiet(lambda xp, x: xp.cos(x)), lambda g, x, y: -g * _conj(x.sin()), "x")
tan = _defunary("tan", quiet(lambda xp, x: xp.tan(x)),
                lambda g, x, y: g * (1 + _conj(y) * _conj(y)), "y")
asin = _defunary("asin", quiet(lambda xp, x: xp.arcsin(x)),
                 lambda g, x, y: g * _conj((1 - x * x).rsqrt()), "x")
acos = _defunary("acos", quiet(lambda xp, x: xp.arccos(x)),
                 lambda g, x, y: -g * _conj((1 - x * x).rsqrt()), "x")
atan = _defunary("atan", quiet(lambda xp, x: xp.arctan(x)),
                 lambda g, x, y: g / _conj(1 + x * x), "x")
sinh = _defunary("sinh", quiet(lambda xp, x: xp.sinh(x)), lambda g, x, y: g * _conj(x.cosh()),
                 "x")
cosh = _defunary("cosh", quiet(lambda xp, x: xp.cosh(x)), lambda g, x, y: g * _conj(x.sinh()),
                 "x")
tanh = _defunary("tanh", quiet(lambda xp, x: xp.tanh(x)),
                 lambda g, x, y: g * (1 - _conj(y) * _conj(y)), "y")
asinh = _defunary("asinh", quiet(lambda xp, x: xp.arcsinh(x)),
                  lambda g, x, y: g * _conj((x * x + 1).rsqrt()), "x")
acosh = _defunary("acosh", quiet(lambda xp, x: xp.arccosh(x)),
                  lambda g, x, y: g * _conj((x + 1).rsqrt() * (x - 1).rsqrt()), "x")
atanh = _defunary("atanh", quiet(lambda xp, x: xp.arctanh(x)),
                  lambda g, x, y: g / _conj(1 - x * x), "x")
sigmoid = _defunary("sigmoid", _sigmoid_fw, lambda g, x, y: g * _conj(y * (1 - y)), "y",
                    doc="``1 / (1 + exp(-input))``, computed stably for large ``|input|``.")

# special functions (float64 kernels of our own; see _special.py)
erf = _defunary("erf", _special_fn(_special.erf),
                lambda g, x, y: g * _TWO_OVER_SQRT_PI * (-x * x).exp(), "x",
                kernel="erf_vml_cpu", complex_ok=False, doc="The error function.")
erfc = _defunary("erfc", _special_fn(_special.erfc),
                 lambda g, x, y: g * -_TWO_OVER_SQRT_PI * (-x * x).exp(), "x",
                 kernel="erfc_vml_cpu", complex_ok=False,
                 doc="The complementary error function ``1 - erf(input)``.")
erfinv = _defunary("erfinv", _special_fn(_special.erfinv),
                   lambda g, x, y: g * _SQRT_PI_OVER_2 * (y * y).exp(), "y",
                   kernel="erfinv_vml_cpu", complex_ok=False,
                   doc="The inverse error function; nan outside [-1, 1].")
lgamma = _defunary("lgamma", _special_fn(_special.lgamma),
                   lambda g, x, y: g * digamma(x), "x", kernel="lgamma_vml_cpu",
                   complex_ok=False, doc="``log|gamma(input)|``.")
digamma = _defunary("digamma", _special_fn(_special.digamma),
                    lambda g, x, y: g * _trigamma(x), "x", kernel="digamma", complex_ok=False,
                    doc="The logarithmic derivative of the gamma function.")
_trigamma = _defunary("_trigamma", _special_fn(_special.trigamma), complex_ok=False)
_trigamma.op.backward = lambda self, g: _raise_no_derivative("polygamma(2, x)")

# rounding: integer inputs come back unchanged; the gradient is 0
floor = _defunary("floor", lambda xp, x: xp.floor(x), domain=ROUND, kernel="floor_vml_cpu",
                  bool_msg="", complex_ok=False,
                  complex_msg="floor is not supported for complex inputs")
ceil = _defunary("ceil", lambda xp, x: xp.ceil(x), domain=ROUND, kernel="ceil_vml_cpu",
                 bool_msg="", complex_ok=False,
                 complex_msg="ceil is not supported for complex inputs")
trunc = _defunary("trunc", lambda xp, x: xp.trunc(x), domain=ROUND, kernel="trunc_vml_cpu",
                  bool_msg="", complex_ok=False,
                  complex_msg="trunc is not supported for complex inputs")
_round = _defunary("round", lambda xp, x: xp.rint(x), domain=ROUND, kernel="round_vml_cpu",
                   bool_msg="", complex_ok=False)
frac = _defunary("frac", _frac_fw, lambda g, x, y: g, domain=FLOAT_ONLY, kernel="frac_cpu",
                 bool_msg="", complex_ok=False,
                 doc="The fractional part ``input - trunc(input)``; its sign is input's.")
relu = _defunary("relu", _relu_fw, lambda g, x, y: g * (y > 0), "y", into=_relu_into,
                 domain=SAME, bool_msg="Boolean inputs not supported for relu",
                 complex_ok=False, complex_msg="clamp is not supported for complex types",
                 doc="``max(input, 0)``, elementwise.")


def _raise_no_derivative(what):
    raise RuntimeError(f"the derivative {what} is not implemented in ember")


# sign and sgn: bool stays bool; complex sign is an error, complex sgn is z / |z|

class Sgn(Node):
    saves_inputs = (0,)
    saves_output = True

    def forward(self, x):
        xp = xp_of(x)
        if x.dtype.kind == "c":
            a = xp.abs(x)
            with np.errstate(all="ignore"):
                return xp.where(a == 0, 0, x / xp.where(a == 0, 1, a)).astype(x.dtype)
        if x.dtype.kind == "b":
            return x.copy()
        s = xp.sign(x)
        if x.dtype.kind == "f":  # PyTorch: the sign of nan is 0
            s = xp.where(xp.isnan(x), 0, s).astype(x.dtype, copy=False)
        return s

    def backward(self, g):
        x, s = self.saved_tensors
        if x._data.dtype.kind != "c":
            return _zeros(g)
        # PyTorch's sgn_backward: (g - s^2 conj(g)) / (2 |x|), 0 where x == 0
        a = x.abs()
        r = (g - s * s * g.conj()) / (2 * a)
        from ember._ops.elementwise import where

        return where(a == 0, 0, r)


def sgn(input, *, out=None):
    """``input / |input|`` for complex inputs (0 at 0), else the sign."""
    return _out(apply(Sgn, input), out)


def sign(input, *, out=None):
    """-1, 0 or 1 by the sign of each element; the gradient is 0."""
    _check_sign(input)
    return _out(apply(Sgn, input), out)


def _check_sign(t):
    if t._data.dtype.kind == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
            "use torch.sgn instead.")


def _sgn_(self):
    return apply_inplace(Sgn, self)


def _sign_(self):
    _check_sign(self)
    return apply_inplace(Sgn, self)


# round with decimals

class RoundDecimals(Node):
    """PyTorch's round(decimals=d): rint(x * 10**d) / 10**d (d < 0: rint(x / 10**-d) * ...)."""

    def forward(self, x, decimals):
        xp = xp_of(x)
        work = x.astype(np.float32) if x.dtype == np.float16 else x
        if decimals < 0:
            p = 10.0 ** -decimals
            r = xp.rint(work / p) * p
        else:
            p = 10.0 ** decimals
            with np.errstate(all="ignore"):
                r = xp.rint(work * p) / p
        return r.astype(x.dtype, copy=False)

    def backward(self, g):
        return _zeros(g)


def round(input, *, decimals=0, out=None):  # noqa: A001 - PyTorch's name
    """Rounds half to even; with ``decimals``, to that many decimal digits."""
    if decimals == 0:
        return _round(input, out=out)
    _check_round_decimals(input)
    return _out(apply(RoundDecimals, input, int(decimals)), out)


def _check_round_decimals(t):
    if t._data.dtype.kind not in "f":
        raise not_implemented("round_cpu", t._data.dtype)


def _round_(self, *, decimals=0):
    if decimals == 0:
        return _round.inplace(self)
    _check_round_decimals(self)
    return apply_inplace(RoundDecimals, self, int(decimals))


# logit with eps

class Logit(Node):
    saves_inputs = (0,)

    def forward(self, x, eps):
        xp = xp_of(x)
        self.eps = eps
        if eps is not None:
            x = xp.clip(x, eps, 1.0 - eps).astype(x.dtype, copy=False)
        with np.errstate(all="ignore"):
            return xp.log(x / (1 - x))

    def backward(self, g):
        (x,) = self.saved_tensors
        r = g / (x * (1 - x))
        from ember._ops.elementwise import where

        if self.eps is None:  # PyTorch: nan outside [0, 1]
            return where((x < 0) | (x > 1), math.nan, r)
        return where((x < self.eps) | (x > 1.0 - self.eps), 0, r)


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``; with ``eps``, p is first clamped to [eps, 1 - eps] (and the
    gradient is 0 outside that range)."""
    _check_logit(input)
    return _out(apply(Logit, ensure_float(input), None if eps is None else float(eps)), out)


def _check_logit(t):
    if t._data.dtype.kind == "c":
        raise not_implemented("logit_cpu", t._data.dtype)


def _logit_(self, eps=None):
    _check_logit(self)
    if self._data.dtype.kind in "biu":
        raise cast_error(to_float(self._data.dtype), self._data.dtype)
    return apply_inplace(Logit, self, None if eps is None else float(eps))


# nan_to_num

class NanToNum(Node):
    saves_inputs = (0,)

    def forward(self, x, nan, posinf, neginf):
        if x.dtype.kind in "biu":
            return x.copy()
        return xp_of(x).nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * x.isfinite()


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces nan, +inf and -inf by ``nan``, ``posinf`` and ``neginf`` (by default 0
    and the dtype's largest and lowest finite values)."""
    return _out(apply(NanToNum, input, nan, posinf, neginf), out)


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return apply_inplace(NanToNum, self, nan, posinf, neginf)


# ---------------------------------------------------------------------------
# tests: bool results, never differentiable

class Test(Node):
    differentiable = False
    fn = None

    def forward(self, x):
        return type(self).fn(xp_of(x), x)


def _deftest(name, fn, complex_msg=None, doc=None):
    cls = type(name.capitalize(), (Test,), {"fn": staticmethod(fn)})

    def op(input):
        if complex_msg and input._data.dtype.kind == "c":
            raise complex_msg[0](complex_msg[1])
        return apply(cls, input)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.op = cls
    return op


def _isreal_fw(xp, x):
    if x.dtype.kind == "c":
        return x.imag == 0
    return xp.ones(x.shape, dtype=bool)


def _signbit_fw(xp, x):
    if x.dtype.kind == "b":
        return xp.zeros(x.shape, dtype=bool)
    return xp.signbit(x)


isnan = _deftest("isnan", lambda xp, x: xp.isnan(x), doc="True where ``input`` is nan.")
isinf = _deftest("isinf", lambda xp, x: xp.isinf(x), doc="True where ``input`` is +-inf.")
isfinite = _deftest("isfinite", lambda xp, x: xp.isfinite(x),
                    doc="True where ``input`` is neither nan nor infinite.")
isposinf = _deftest("isposinf", lambda xp, x: xp.isposinf(x),
                    (RuntimeError, "isposinf does not support complex inputs."),
                    doc="True where ``input`` is +inf.")
isneginf = _deftest("isneginf", lambda xp, x: xp.isneginf(x),
                    (RuntimeError, "isneginf does not support complex inputs."),
                    doc="True where ``input`` is -inf.")
isreal = _deftest("isreal", _isreal_fw,
                  doc="True where ``input`` is real (all True for non-complex dtypes).")
signbit = _deftest("signbit", _signbit_fw,
                   (NotImplementedError, "signbit is not implemented for complex tensors."),
                   doc="True where the sign bit is set (also for -0.0).")
logical_not = _deftest("logical_not", lambda xp, x: xp.logical_not(x),
                       doc="The logical NOT of ``input`` (nonzero is True); a bool tensor.")


class BitwiseNot(Node):
    differentiable = False

    def forward(self, x):
        return xp_of(x).invert(x)


def bitwise_not(input, *, out=None):
    """The bitwise NOT of an integer or bool tensor (logical NOT for bool)."""
    if input._data.dtype.kind not in "biu":
        raise not_implemented("bitwise_not_cpu", input._data.dtype)
    return _out(apply(BitwiseNot, input), out)


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return apply(BitwiseNot, self)


class _TestInplace(Node):
    """A test or logical_not written into its input's dtype (``x.logical_not_()``)."""

    test = None

    def forward(self, x):
        return type(self).test.fn(xp_of(x), x).astype(x.dtype, copy=False)

    def backward(self, g):
        return _zeros(g)


def _test_inplace(op_cls):
    cls = type(op_cls.__name__ + "Inplace", (_TestInplace,), {"test": op_cls})

    def method(self):
        return apply_inplace(cls, self)
    return method


def _bitwise_not_(self):
    if self._data.dtype.kind not in "biu":
        raise not_implemented("bitwise_not_cpu", self._data.dtype)
    return apply_inplace(BitwiseNot, self)


# ---------------------------------------------------------------------------
# complex parts

class Conj(Node):
    def forward(self, x):
        return xp_of(x).conj(x)

    def backward(self, g):
        return g.conj()


def conj(input):
    """The complex conjugate (a copy here; ember has no lazy conjugate bit)."""
    if input._data.dtype.kind != "c":
        return input
    return apply(Conj, input)


class Complex(Node):
    """``real + 1j * imag`` from two float arrays (``ember.complex``)."""

    def forward(self, re, im):
        out = xp_of(re).empty(np.broadcast_shapes(re.shape, im.shape),
                              dtype=np.result_type(re.dtype, np.complex64))
        out.real = re
        out.imag = im
        return out

    def backward(self, g):
        return g.real_part(), g.imag_part()


class Real(Node):
    def forward(self, x):
        return x.real.copy()

    def backward(self, g):
        return g.to(_dtype.from_numpy(g._data.dtype).to_complex())


class Imag(Node):
    def forward(self, x):
        return x.imag.copy()

    def backward(self, g):
        from ember._ops.creation import complex as _complex

        return _complex(g * 0, g)


def real_part(input):
    return apply(Real, input) if input._data.dtype.kind == "c" else input


def imag_part(input):
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(Imag, input)


# ---------------------------------------------------------------------------
# Tensor methods

fix = trunc
negative, absolute = neg, abs
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh

_TABLE = (neg, abs, reciprocal, square, sqrt, rsqrt, exp, exp2, expm1, log, log1p, log2,
          log10, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh,
          sigmoid, erf, erfc, erfinv, lgamma, digamma, floor, ceil, trunc, frac, relu)
_ALIASES = {"negative": neg, "absolute": abs, "fix": trunc, "arcsin": asin, "arccos": acos,
            "arctan": atan, "arcsinh": asinh, "arccosh": acosh, "arctanh": atanh}

METHODS = {}
for _fn in _TABLE:
    METHODS[_fn.__name__] = _fn
    METHODS[_fn.__name__ + "_"] = _fn.inplace
for _alias, _fn in _ALIASES.items():
    METHODS[_alias] = _fn
    METHODS[_alias + "_"] = _fn.inplace
METHODS.update({
    "round": round, "round_": _round_, "sign": sign, "sign_": _sign_, "sgn": sgn,
    "sgn_": _sgn_, "logit": logit, "logit_": _logit_, "nan_to_num": nan_to_num,
    "nan_to_num_": _nan_to_num_, "isnan": isnan, "isinf": isinf, "isposinf": isposinf,
    "isneginf": isneginf, "isfinite": isfinite, "isreal": isreal, "signbit": signbit,
    "logical_not": logical_not, "logical_not_": _test_inplace(logical_not.op),
    "bitwise_not": bitwise_not, "bitwise_not_": _bitwise_not_, "__invert__": _invert,
    "conj": conj, "real_part": real_part, "imag_part": imag_part,
    "__neg__": neg, "__abs__": abs, "__pos__": lambda self: self,
})


# The compiled fast paths of ember._C._core (Tensor.exp, ember.exp, ... on NumPy arrays):
# per op, the one-call NumPy ufunc computing its forward (None: the node's own forward),
# the dtype kinds it takes, and whether the ufunc can warn where the forward is silent
# (tanh, neg and abs never warn: they run without the error-state switch).
# ember/__init__.py hands them to the core from the op registry; the fast path records the
# same node, so it cannot disagree with the op.
for _fn, _ufunc, _kinds, _quiet in (
        (exp, np.exp, "fc", True), (log, np.log, "fc", True), (tanh, np.tanh, "fc", False),
        (sigmoid, _cpu_kernels.sigmoid, "f", False), (neg, np.negative, "fciu", False),
        (relu, None, "fiu", False), (sqrt, np.sqrt, "fc", True),
        (abs, np.absolute, "fiu", False), (sin, np.sin, "fc", True), (cos, np.cos, "fc", True)):
    _fn.op.fast_path = (_ufunc, _kinds, _quiet)
