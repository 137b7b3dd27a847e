"""Elementwise ops: arithmetic, unary math, comparisons, logical and bitwise ops.

Gradients are written once, next to each forward. Unary ops are a table: each row
gives the forward on arrays and the backward on tensors in terms of the input ``x``,
the output ``y`` and the incoming gradient ``g``.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._C._core import Node, apply_inplace
from ember._ops._util import TensorBase, apply, ensure_float, promote, xp_of

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "pow", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "absolute",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "square", "reciprocal", "sin", "cos", "relu",
]


# ---------------------------------------------------------------------------
# binary arithmetic

class Add(Node):
    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a + b if alpha == 1 else a + b * alpha

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)


class Sub(Node):
    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a - b if alpha == 1 else a - b * alpha

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha)


class Mul(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        return a * b

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        return (_conj_mul(g, b) if need[0] else None), (_conj_mul(g, a) if need[1] else None)


class Div(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        return a / b

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        ga = g / _conj(b) if need[0] else None
        gb = -g * _conj(a) / _conj(b * b) if need[1] else None
        return ga, gb


class Pow(Node):
    saves_inputs = (0, 1)
    saves_output = True

    def forward(self, a, b):
        xp = xp_of(a) if not isinstance(a, (int, float, complex)) else xp_of(b)
        if isinstance(b, int) and b < 0 and getattr(a, "dtype", np.float32).kind in "iu":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return xp.power(a, b)

    def backward(self, g):
        a, b, y = self.saved_tensors
        need = self.needs_input_grad
        ga = gb = None
        if need[0]:
            if isinstance(b, (int, float)):
                ga = g * b * a ** (b - 1) if b != 0 else g * 0
            else:
                ga = g * b * where_nonzero_pow(a, b)
        if need[1]:
            # d/db a**b = a**b * log(a); 0 where a == 0 and b >= 0 (PyTorch's convention)
            la = a.log() if isinstance(a, TensorBase) else math.log(a) if a > 0 else float("nan")
            gb = g * y * la
            if isinstance(a, TensorBase):
                gb = gb.masked_fill((a == 0) & (b >= 0), 0)
        return ga, gb


def where_nonzero_pow(a, b):
    """``a ** (b - 1)`` with 0 where b == 0 (so the gradient there is 0, not nan)."""
    r = a ** (b - 1)
    return r.masked_fill(b == 0, 0) if isinstance(b, TensorBase) else r


def _conj(t):
    return t.conj() if isinstance(t, TensorBase) and t._data.dtype.kind == "c" else t


def _conj_mul(g, other):
    return g * _conj(other)


def _binary(op, a, b, *extra):
    a, b = promote(a, b)
    return apply(op, a, b, *extra)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    r = _binary(Add, input, other, alpha) if alpha != 1 else _binary(Add, input, other)
    return _out(r, out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if isinstance(input, TensorBase) and input._data.dtype == np.bool_ and \
            getattr(other, "_data", np.zeros(0, bool)).dtype == np.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead.")
    r = _binary(Sub, input, other, alpha) if alpha != 1 else _binary(Sub, input, other)
    return _out(r, out)


def mul(input, other, *, out=None):
    """``input * other``."""
    return _out(_binary(Mul, input, other), out)


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; with ``rounding_mode`` 'trunc' or 'floor' the rounded quotient."""
    a, b = promote(input, other)
    if rounding_mode is None:
        if _kind(a) in "biu" and _kind(b) in "biu":
            a = ensure_float(a) if isinstance(a, TensorBase) else float(a)
            b = ensure_float(b) if isinstance(b, TensorBase) else float(b)
        return _out(apply(Div, a, b), out)
    if rounding_mode == "trunc":
        return _out(apply(DivTrunc, a, b), out)
    if rounding_mode == "floor":
        return _out(apply(DivFloor, a, b), out)
    raise ValueError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'")


class DivTrunc(Node):
    def forward(self, a, b):
        xp = xp_of(a) if hasattr(a, "dtype") else xp_of(b)
        if _kind(a) in "iu" and _kind(b) in "iu":
            _check_int_div(xp, b)
            q = xp.floor_divide(a, b)
            r = xp.remainder(a, b)
            return q + ((r != 0) & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0)))
        return xp.trunc(xp.true_divide(a, b)).astype(xp.result_type(a, b))

    def backward(self, g):
        return g * 0, g * 0


class DivFloor(Node):
    def forward(self, a, b):
        xp = xp_of(a) if hasattr(a, "dtype") else xp_of(b)
        if _kind(a) in "iu" and _kind(b) in "iu":
            _check_int_div(xp, b)
        return xp.floor_divide(a, b)

    def backward(self, g):
        return g * 0, g * 0


def _check_int_div(xp, b):
    if (isinstance(b, int) and b == 0) or (hasattr(b, "dtype") and bool((b == 0).any())):
        raise RuntimeError("ZeroDivisionError")


def _kind(x):
    if isinstance(x, TensorBase):
        return x._data.dtype.kind
    if hasattr(x, "dtype"):
        return x.dtype.kind
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, complex):
        return "c"
    return "f"


def pow(input, exponent, *, out=None):  # noqa: A001 - PyTorch's name
    """``input ** exponent``, elementwise; either may be a number."""
    a, b = promote(input, exponent)
    return _out(apply(Pow, a, b), out)


def _out(result, out):
    if out is None:
        return result
    from ember._ops.creation import _with_out

    return _with_out(result, out)


# ---------------------------------------------------------------------------
# unary ops, as a table

class Unary(Node):
    """A unary elementwise op built from a row of the table below."""

    fn = None          # forward: (xp, x) -> y on arrays
    grad = None        # backward: (g, x, y) -> dx on tensors
    needs = ""         # which of x, y the backward uses

    def forward(self, x):
        return self.fn(xp_of(x), x)

    def backward(self, g):
        saved = self.saved_tensors
        x = saved[0] if "x" in self.needs else None
        y = saved[-1] if "y" in self.needs else None
        return type(self).grad(g, x, y)


def _unary_op(name, fn, grad, needs, float_only=True):
    cls = type(name, (Unary,), {
        "fn": staticmethod(fn), "grad": staticmethod(grad), "needs": needs,
        "saves_inputs": (0,) if "x" in needs else (), "saves_output": "y" in needs,
        "__doc__": f"The elementwise {name.lower()} op.",
    })
    return cls


def _defunary(name, fn, grad, needs, float_only=True, doc=None):
    cls = _unary_op(name, fn, grad, needs)

    def op(input, *, out=None):
        if float_only:
            input = ensure_float(input)
        return _out(apply(cls, input), out)

    op.__name__ = name.lower()
    op.__doc__ = doc or f"The elementwise ``{name.lower()}`` of ``input``."
    op.op = cls
    return op


def _sigmoid_fw(xp, x):
    # stable for large |x| in both directions
    return xp.exp(-xp.logaddexp(0, -x)).astype(x.dtype, copy=False)


exp = _defunary("Exp", lambda xp, x: xp.exp(x), lambda g, x, y: g * _conj(y), "y")
log = _defunary("Log", lambda xp, x: xp.log(x), lambda g, x, y: g / _conj(x), "x")
sqrt = _defunary("Sqrt", lambda xp, x: xp.sqrt(x), lambda g, x, y: g / (2 * _conj(y)), "y")
rsqrt = _defunary("Rsqrt", lambda xp, x: 1 / xp.sqrt(x),
                  lambda g, x, y: g * -0.5 * _conj(y) ** 3, "y")
tanh = _defunary("Tanh", lambda xp, x: xp.tanh(x), lambda g, x, y: g * (1 - _conj(y) * _conj(y)),
                 "y")
sigmoid = _defunary("Sigmoid", _sigmoid_fw, lambda g, x, y: g * y * (1 - y), "y")
sin = _defunary("Sin", lambda xp, x: xp.sin(x), lambda g, x, y: g * _conj(x.cos()), "x")
cos = _defunary("Cos", lambda xp, x: xp.cos(x), lambda g, x, y: -g * _conj(x.sin()), "x")
neg = _defunary("Neg", lambda xp, x: xp.negative(x), lambda g, x, y: -g, "", float_only=False)
abs = _defunary("Abs", lambda xp, x: xp.abs(x), lambda g, x, y: g * x.sgn(), "x",  # noqa: A001
                float_only=False)
square = _defunary("Square", lambda xp, x: xp.square(x), lambda g, x, y: g * 2 * _conj(x), "x",
                   float_only=False)
reciprocal = _defunary("Reciprocal", lambda xp, x: xp.reciprocal(x),
                       lambda g, x, y: -g * _conj(y * y), "y")
relu = _defunary("Relu", lambda xp, x: xp.maximum(x, 0),
                 lambda g, x, y: g * (y > 0), "y", float_only=False)

negative, absolute = neg, abs
subtract, multiply, divide, true_divide = sub, mul, div, div


class Sgn(Node):
    def forward(self, x):
        xp = xp_of(x)
        if x.dtype.kind == "c":
            a = xp.abs(x)
            return xp.where(a == 0, 0, x / xp.where(a == 0, 1, a)).astype(x.dtype)
        return xp.sign(x)

    def backward(self, g):
        return g * 0


def sgn(input):
    return apply(Sgn, input)


def sign(input, *, out=None):
    if input._data.dtype.kind == "c":
        raise RuntimeError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                           "Please use torch.sgn instead.")
    return _out(apply(Sgn, input), out)


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
        return g.to(_complex_of(g))


class Imag(Node):
    def forward(self, x):
        return x.imag.copy()

    def backward(self, g):
        from ember._ops.creation import complex as _complex

        return _complex(g * 0, g)


def _complex_of(g):
    return _dtype.from_numpy(g._data.dtype).to_complex()


def real_part(input):
    return apply(Real, input) if input._data.dtype.kind == "c" else input


def imag_part(input):
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(Imag, input)


# ---------------------------------------------------------------------------
# comparisons (never differentiable)

class Compare(Node):
    differentiable = False
    ufunc = None

    def forward(self, a, b):
        return type(self).ufunc(a, b)


def _defcompare(name, ufunc):
    cls = type(name, (Compare,), {"ufunc": staticmethod(ufunc)})

    def op(input, other, *, out=None):
        a, b = promote(input, other)
        return _out(apply(cls, a, b), out)

    op.__name__ = name.lower()
    op.__doc__ = f"Elementwise ``{name.lower()}`` comparison; a bool tensor."
    return op


eq = _defcompare("Eq", np.equal)
ne = _defcompare("Ne", np.not_equal)
lt = _defcompare("Lt", np.less)
le = _defcompare("Le", np.less_equal)
gt = _defcompare("Gt", np.greater)
ge = _defcompare("Ge", np.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


# ---------------------------------------------------------------------------
# Tensor methods: operators (with reflected and in-place forms) and named methods

def _is_operand(x):
    return isinstance(x, (TensorBase, int, float, bool, complex, np.ndarray, np.generic))


def _reflected(fn):
    def r(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(other, self)
    return r


def _forward_op(fn):
    def f(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(self, other)
    return f


def _inplace(op_cls_or_fn, binary=True):
    """The in-place method form (``add_``) of an op class."""
    def method(self, *args, **kwargs):
        if binary:
            other = args[0]
            alpha = kwargs.get("alpha", 1)
            if isinstance(other, TensorBase) and other._data.dtype != self._data.dtype:
                rt = _dtype.result_type(self, other)
                if rt.numpy != self._data.dtype and not _dtype.can_cast(rt, self.dtype):
                    raise RuntimeError(
                        f"result type {rt.name.capitalize()} can't be cast to the desired "
                        f"output type {self.dtype.name.capitalize()}")
                other = other.to(self._data.dtype) if rt.numpy == self._data.dtype or \
                    _dtype.can_cast(rt, self.dtype) else other
            if alpha != 1:
                return apply_inplace(op_cls_or_fn, self, other, alpha)
            return apply_inplace(op_cls_or_fn, self, other)
        return apply_inplace(op_cls_or_fn, self, *args)
    return method


def _iop(inplace):
    def f(self, other):
        if not _is_operand(other):
            return NotImplemented
        return inplace(self, other)
    return f


def _div_(self, other, *, rounding_mode=None):
    if self._data.dtype.kind in "biu" and rounding_mode is None:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{self.dtype.name.capitalize()}")
    cls = {None: Div, "trunc": DivTrunc, "floor": DivFloor}[rounding_mode]
    return _inplace(cls)(self, other)


_add_, _sub_, _mul_ = _inplace(Add), _inplace(Sub), _inplace(Mul)
_pow_ = _inplace(Pow)


def _unary_inplace(fn):
    cls = fn.op

    def method(self):
        return apply_inplace(cls, self)
    return method


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "pow": pow, "neg": neg, "negative": neg,
    "exp": exp, "log": log, "sqrt": sqrt, "rsqrt": rsqrt, "tanh": tanh, "sigmoid": sigmoid,
    "sin": sin, "cos": cos, "abs": abs, "absolute": abs, "square": square,
    "reciprocal": reciprocal, "relu": relu, "sgn": sgn, "sign": sign, "conj": conj,
    "real_part": real_part, "imag_part": imag_part,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "greater": gt,
    "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne,
    "add_": _add_, "sub_": _sub_, "mul_": _mul_, "div_": _div_, "pow_": _pow_,
    "__add__": _forward_op(add), "__radd__": _reflected(add), "__iadd__": _iop(_add_),
    "__sub__": _forward_op(sub), "__rsub__": _reflected(sub), "__isub__": _iop(_sub_),
    "__mul__": _forward_op(mul), "__rmul__": _reflected(mul), "__imul__": _iop(_mul_),
    "__truediv__": _forward_op(div), "__rtruediv__": _reflected(div),
    "__itruediv__": _iop(_div_),
    "__pow__": _forward_op(pow), "__rpow__": _reflected(pow), "__ipow__": _iop(_pow_),
    "__neg__": neg, "__abs__": abs, "__pos__": lambda self: self,
    "__eq__": _forward_op(eq), "__ne__": _forward_op(ne), "__lt__": _forward_op(lt),
    "__le__": _forward_op(le), "__gt__": _forward_op(gt), "__ge__": _forward_op(ge),
}
for _fn in (exp, log, sqrt, rsqrt, tanh, sigmoid, sin, cos, neg, abs, square, reciprocal, relu):
    METHODS[_fn.__name__ + "_"] = _unary_inplace(_fn)
