"""Elementwise ops of several operands: arithmetic, minimum/maximum, clamp, where, lerp,
and the Tensor operators.

This is the one family module of the elementwise ops: it re-exports the unary ops
(``ember._ops.unary``, a table) and the comparisons, logical and bitwise ops
(``ember._ops.comparison``) with their Tensor methods. Operand handling (promotion,
numbers out of range, broadcasting errors, the in-place driver) is in ``_operands``;
see NOTE [ Operands ] there.
"""

from __future__ import annotations

import builtins
import cmath
import contextlib
import math
import warnings

import numpy as np

from ember import _dtype
from ember._backend import bulk_kernel
from ember._C._core import Node, apply_inplace, is_grad_enabled, ufunc2
from ember._ops import comparison as _comparison
from ember._ops import unary as _unary
from ember._ops._operands import (
    INT_RANGES,
    cast_error,
    check_kernel,
    fit_int,
    forward_op,
    inplace_binary,
    inplace_op,
    kind,
    need_tensor,
    operands,
    reflected_op,
    run,
    to_float,
    xp_of_any,
)
from ember._ops._operands import dtype_of as _dtype_of
from ember._ops._operands import zeros as _zeros
from ember._ops._util import (
    TensorBase,
    c10_type_name,
    ensure_float,
    not_implemented,
    scalar_value,
    type_name,
    xp_of,
)
from ember._ops._util import conj as _conj
from ember._ops._util import with_out as _out
from ember._ops.comparison import *  # noqa: F403 - re-exported: ember.eq, ember.isclose ...
from ember._ops.unary import *  # noqa: F403 - re-exported: ember.exp, ember.sin, ...
from ember._ops.unary import Complex, Conj, Imag, Real, Sgn  # noqa: F401 - used elsewhere

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "atan2", "arctan2", "hypot", "maximum",
    "minimum", "fmax", "fmin", "clamp", "clip", "clamp_min", "clamp_max", "where", "lerp",
] + _unary.__all__ + _comparison.__all__


def _where_t(cond, a, b):
    """``where`` for backward formulas (tensors and numbers)."""
    return where(cond, a, b)


# ---------------------------------------------------------------------------
# add, sub, mul, div

# NOTE [ In-place ops write in place ]
# Without autograd, an in-place op (``x += y``, ``x.add_(y)``, ``x.relu_()``) whose Node
# class has ``forward_into`` writes its result straight into x's array (apply_inplace asks
# it first): no result array (for a 100 MB activation, a fresh mmap and its page faults) and
# no copy back, and on the CPU a large one runs on several threads (the "ufunc" and
# "map_blocks" kernels) like the out-of-place op. It declines (returns False), leaving the
# general path, for what would need a cast or another shape: anything but float operands of
# x's dtype (or Python numbers) broadcasting to x's shape. NumPy reads and writes each
# element in turn, so an operand that is x itself is fine; partial overlaps were refused
# before (check_inplace_overlap).

def _ufunc_into(ufunc, a, b) -> bool:
    if a.dtype.kind != "f":
        return False
    if type(b) is np.ndarray:
        if b.dtype != a.dtype or (b.shape != a.shape
                                  and np.broadcast_shapes(a.shape, b.shape) != a.shape):
            return False
    elif type(b) is not float and type(b) is not int:
        return False
    kernel = bulk_kernel("ufunc", a)
    if kernel is not None:
        kernel(ufunc, a, b, out=a)
    else:
        ufunc(a, b, out=a)
    return True


class Add(Node):
    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return ufunc2(np.add, a, b) if alpha == 1 else a + b * alpha

    def forward_into(self, a, b, alpha=1):
        return alpha == 1 and _ufunc_into(np.add, a, b)

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * _conj_number(self.alpha))


class Sub(Node):
    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return ufunc2(np.subtract, a, b) if alpha == 1 else a - b * alpha

    def forward_into(self, a, b, alpha=1):
        return alpha == 1 and _ufunc_into(np.subtract, a, b)

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -_conj_number(self.alpha))


def _conj_number(v):
    return v.conjugate() if isinstance(v, complex) else v


class Mul(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        return ufunc2(np.multiply, a, b)

    def forward_into(self, a, b):  # NOTE [ In-place ops write in place ]
        return _ufunc_into(np.multiply, a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        return (g * _conj(b) if need[0] else None), (g * _conj(a) if need[1] else None)


class Div(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        with np.errstate(all="ignore"):
            return ufunc2(np.true_divide, a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        ga = g / _conj(b) if need[0] else None
        gb = -g * _conj(a) / _conj(b * b) if need[1] else None
        return ga, gb


def _check_alpha(result, alpha):
    k = kind(result)
    if isinstance(alpha, bool):
        if k != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and k in "biu":
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    elif isinstance(alpha, complex) and k != "c":
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number.")


def _alpha_args(a, alpha):
    if type(alpha) is int and alpha == 1:
        return ()
    _check_alpha(a, alpha)
    if kind(a) == "b":
        return (bool(alpha),)
    return (alpha,)


_NO_CONTEXT = contextlib.nullcontext()


def _into(ufunc, a, b, out):
    """``out`` with ``ufunc(a, b)`` written into it in place, without a temporary, where
    that is what the general path would do (``out`` has the result's dtype and shape and
    no gradient is recorded); else None."""
    if not isinstance(out, TensorBase) or is_grad_enabled() and (
            out.requires_grad or any(isinstance(v, TensorBase) and v.requires_grad
                                     for v in (a, b))):
        return None
    od = out._data
    ad = a._data if isinstance(a, TensorBase) else a
    bd = b._data if isinstance(b, TensorBase) else b
    arrays = [v for v in (ad, bd) if hasattr(v, "dtype")]
    if (not arrays or any(v.dtype != od.dtype for v in arrays)
            or builtins.any(v.shape != od.shape for v in arrays if v.ndim)):
        return None
    kernel = bulk_kernel("ufunc", od)
    with np.errstate(all="ignore") if ufunc is np.true_divide else _NO_CONTEXT:
        if kernel is not None:
            kernel(ufunc, ad, bd, out=od)
        else:
            ufunc(ad, bd, out=od)
    out._bump_version()
    return out


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    a, b = operands(input, other, "add")
    if out is not None and type(alpha) is int and alpha == 1:
        done = _into(np.add, a, b, out)
        if done is not None:
            return done
    return _out(run(Add, a, b, *_alpha_args(a, alpha)), out)


def _check_sub_bool(a, b):
    ka, kb = kind(a), kind(b)
    if ka == "b" and kb == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead.")
    if ka == "b" or kb == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    _check_sub_bool(input, other)
    a, b = operands(input, other, "sub")
    if out is not None and type(alpha) is int and alpha == 1:
        done = _into(np.subtract, a, b, out)
        if done is not None:
            return done
    return _out(run(Sub, a, b, *_alpha_args(a, alpha)), out)


def mul(input, other, *, out=None):
    """``input * other``."""
    a, b = operands(input, other, "mul")
    if out is not None:
        done = _into(np.multiply, a, b, out)
        if done is not None:
            return done
    return _out(run(Mul, a, b), out)


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; with ``rounding_mode`` 'trunc' or 'floor' the rounded quotient
    (integers stay integers then; plain division of integers gives the default float)."""
    a, b = operands(input, other, "div")
    if rounding_mode is None:
        if kind(a) in "biu" and kind(b) in "biu":
            a = ensure_float(a) if isinstance(a, TensorBase) else float(a)
            b = ensure_float(b) if isinstance(b, TensorBase) else float(b)
        if out is not None:
            done = _into(np.true_divide, a, b, out)
            if done is not None:
                return done
        return _out(run(Div, a, b), out)
    if rounding_mode == "trunc":
        check_kernel("div_trunc_cpu", _dtype_of(a, b), "iuf")
        return _out(run(DivTrunc, a, b), out)
    if rounding_mode == "floor":
        check_kernel("div_floor_cpu", _dtype_of(a, b), "iuf")
        return _out(run(DivFloor, a, b), out)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'")


subtract, multiply, divide, true_divide = sub, mul, div, div


def _check_int_div(a, b):
    if kind(a) in "iu" and kind(b) in "iu":
        if (isinstance(b, int) and b == 0) or (hasattr(b, "dtype") and bool((b == 0).any())):
            raise RuntimeError("ZeroDivisionError")
        return True
    return False


class DivTrunc(Node):
    """Division rounded toward zero; the gradient is 0."""

    def forward(self, a, b):
        xp = xp_of_any(a, b)
        with np.errstate(all="ignore"):
            if _check_int_div(a, b):
                q = xp.floor_divide(a, b)
                fix = (xp.remainder(a, b) != 0) & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0))
                return q + fix.astype(q.dtype)
            return xp.trunc(xp.true_divide(a, b))

    def backward(self, g):
        return _zeros(g), _zeros(g)


class DivFloor(Node):
    """Division rounded toward -inf (Python's ``//``); the gradient is 0."""

    def forward(self, a, b):
        _check_int_div(a, b)
        with np.errstate(all="ignore"):
            return xp_of_any(a, b).floor_divide(a, b)

    def backward(self, g):
        return _zeros(g), _zeros(g)


class FloorDivide(DivFloor):
    """``floor_divide``: as PyTorch, it has no derivative."""

    def backward(self, g):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


def floor_divide(input, other, *, out=None):
    """``input // other``: the quotient rounded toward -inf."""
    a, b = operands(input, other, "floor_divide")
    check_kernel("div_floor_cpu", _dtype_of(a, b), "iuf")
    return _out(run(FloorDivide, a, b), out)


# ---------------------------------------------------------------------------
# remainder, fmod, pow

class Remainder(Node):
    """Python's ``%``: the result has the sign of the divisor."""

    saves_inputs = (0, 1)

    def forward(self, a, b):
        _check_int_div(a, b)
        with np.errstate(all="ignore"):
            return xp_of_any(a, b).remainder(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        if not isinstance(a, TensorBase):  # as PyTorch's remainder(Scalar, Tensor)
            raise RuntimeError("derivative for aten::remainder is not implemented")
        gb = -g * div(a, b, rounding_mode="floor") if self.needs_input_grad[1] else None
        return g, gb


class Fmod(Node):
    """C's ``fmod``: the result has the sign of the dividend."""

    saves_inputs = (0, 1)

    def forward(self, a, b):
        _check_int_div(a, b)
        with np.errstate(all="ignore"):
            return xp_of_any(a, b).fmod(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        gb = -g * div(a, b, rounding_mode="trunc") if self.needs_input_grad[1] else None
        return g, gb


def remainder(input, other, *, out=None):
    """The remainder of ``input / other`` with the sign of ``other`` (Python's ``%``)."""
    a, b = operands(input, other, "remainder")
    check_kernel("remainder_cpu", _dtype_of(a, b), "iuf")
    return _out(run(Remainder, a, b), out)


def fmod(input, other, *, out=None):
    """The remainder of ``input / other`` with the sign of ``input`` (C's ``fmod``)."""
    need_tensor(input, "fmod", 1, "input")
    a, b = operands(input, other, "fmod")
    check_kernel("fmod_cpu", _dtype_of(a, b), "iuf")
    return _out(run(Fmod, a, b), out)


class Pow(Node):
    saves_inputs = (0, 1)
    saves_output = True

    def forward(self, a, b):
        xp = xp_of_any(a, b)
        if kind(a) in "iu" and kind(b) in "iu" and hasattr(b, "dtype") and (b < 0).any():
            return _int_pow_negative(xp, a, b)
        with np.errstate(all="ignore"):
            return xp.power(a, b)

    def backward(self, g):
        a, b, y = self.saved_tensors
        need = self.needs_input_grad
        ga = gb = None
        if need[0]:
            if isinstance(b, TensorBase):
                # PyTorch: 0 where the exponent is 0 (no 0 * inf = nan at a == 0)
                ga = _where_t(b == 0, 0, g * _conj(b * a ** (b - 1)))
            else:
                ga = _zeros(g) if b == 0 else g * _conj(b * a ** (b - 1))
        if need[1]:
            # d/db a**b = a**b log(a), taken as 0 where a == 0 and b >= 0
            if isinstance(a, TensorBase):
                gb = _where_t((a == 0) & _nonnegative_real(b), 0, g * _conj(y * a.log()))
            else:
                if isinstance(a, (complex, np.complexfloating)) or (
                        a < 0 and y._data.dtype.kind == "c"):
                    la = cmath.log(a) if a != 0 else -math.inf  # complex: the principal log
                else:
                    la = math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
                gb = g * _conj(y * la)
                if a == 0:
                    gb = _where_t(_nonnegative_real(b), 0, gb)
        return ga, gb


def _nonnegative_real(b):
    if isinstance(b, TensorBase) and b._data.dtype.kind == "c":
        return (b.imag_part() == 0) & (b.real_part() >= 0)
    return b >= 0


def _int_pow_negative(xp, a, b):
    """Integer powers with negative exponents as PyTorch computes them: 1 ** -n = 1,
    (-1) ** -n = +-1 and 0 otherwise (NumPy raises instead)."""
    neg = b < 0
    r = xp.power(a, xp.where(neg, 0, b))
    odd = (b % 2) != 0
    at_neg = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
    return xp.where(neg, at_neg, r).astype(r.dtype, copy=False)


def pow(input, exponent, *, out=None):  # noqa: A001 - PyTorch's name
    """``input ** exponent``, elementwise; either may be a number."""
    a, b = operands(input, exponent, "pow")
    _check_pow(a, b)
    return _out(run(Pow, a, b), out)


def _check_pow(a, b):
    if kind(a) == "b" and kind(b) == "b":
        raise not_implemented("pow", np.bool_)
    if kind(a) in "iu" and isinstance(b, int) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


# ---------------------------------------------------------------------------
# atan2, hypot

class Atan2(Node):
    saves_inputs = (0, 1)

    def forward(self, a, b):
        with np.errstate(all="ignore"):
            return xp_of(a).arctan2(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        d = a * a + b * b
        zero = d == 0
        recip = _where_t(zero, 0, 1 / _where_t(zero, 1, d))
        need = self.needs_input_grad
        return (g * b * recip if need[0] else None), (g * -a * recip if need[1] else None)


def _float_pair(name, input, other):
    need_tensor(input, name, 1, "input")
    need_tensor(other, name)
    a, b = operands(input, other, name)
    check_kernel(f"{name}_cpu", _dtype_of(a, b), "biuf")
    return ensure_float(a), ensure_float(b)


def atan2(input, other, *, out=None):
    """The angle of the point (other, input): ``atan(input / other)`` in the right quadrant."""
    a, b = _float_pair("atan2", input, other)
    return _out(run(Atan2, a, b), out)


class Hypot(Node):
    saves_inputs = (0, 1)
    saves_output = True

    def forward(self, a, b):
        with np.errstate(all="ignore"):
            return xp_of(a).hypot(a, b)

    def backward(self, g):
        a, b, y = self.saved_tensors
        need = self.needs_input_grad
        return (g * a / y if need[0] else None), (g * b / y if need[1] else None)


def hypot(input, other, *, out=None):
    """``sqrt(input ** 2 + other ** 2)`` without overflow; floating-point inputs."""
    need_tensor(input, "hypot", 1, "input")
    need_tensor(other, "hypot")
    a, b = operands(input, other, "hypot")
    if kind(a) not in "f":
        raise not_implemented("hypot_cpu", a._data.dtype)
    return _out(run(Hypot, a, b), out)


arctan2 = atan2


# ---------------------------------------------------------------------------
# maximum, minimum, fmax, fmin

class Maximum(Node):
    """Elementwise max, propagating nan; ties split the gradient half and half."""

    saves_inputs = (0, 1)
    ufunc = staticmethod(np.maximum)
    name_ = "maximum"

    def forward(self, a, b):
        return getattr(xp_of(a), self.name_)(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        shared = _where_t(a == b, g / 2, g)
        lose_a, lose_b = (a < b, a > b) if self.name_ == "maximum" else (a > b, a < b)
        need = self.needs_input_grad
        return (_where_t(lose_a, 0, shared) if need[0] else None,
                _where_t(lose_b, 0, shared) if need[1] else None)


class Minimum(Maximum):
    name_ = "minimum"


class Fmax(Node):
    """Elementwise max ignoring nan; ties give the whole gradient to ``input``."""

    saves_inputs = (0, 1)
    name_ = "fmax"

    def forward(self, a, b):
        return getattr(xp_of(a), self.name_)(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        to_a = (a >= b) if self.name_ == "fmax" else (a <= b)
        to_a = to_a | b.isnan()
        need = self.needs_input_grad
        return (_where_t(to_a, g, 0) if need[0] else None,
                _where_t(to_a, 0, g) if need[1] else None)


class Fmin(Fmax):
    name_ = "fmin"


def _minmax(cls, name, input, other, out):
    need_tensor(input, name, 1, "input")
    need_tensor(other, name)
    a, b = operands(input, other, name)
    if kind(a) == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return _out(run(cls, a, b), out)


def maximum(input, other, *, out=None):
    """The elementwise maximum; nan if either is nan."""
    return _minmax(Maximum, "maximum", input, other, out)


def minimum(input, other, *, out=None):
    """The elementwise minimum; nan if either is nan."""
    return _minmax(Minimum, "minimum", input, other, out)


def fmax(input, other, *, out=None):
    """The elementwise maximum, ignoring nan (nan only where both are nan)."""
    return _minmax(Fmax, "fmax", input, other, out)


def fmin(input, other, *, out=None):
    """The elementwise minimum, ignoring nan (nan only where both are nan)."""
    return _minmax(Fmin, "fmin", input, other, out)


# ---------------------------------------------------------------------------
# clamp

class ClampScalar(Node):
    """``min(max(x, lo), hi)`` with number bounds; the gradient flows where lo <= x <= hi."""

    saves_inputs = (0,)

    def forward(self, x, lo, hi):
        xp = xp_of(x)
        self.lo, self.hi = lo, hi
        if lo is not None:
            x = xp.maximum(x, lo)
        if hi is not None:
            x = xp.minimum(x, hi)
        return x

    def backward(self, g):
        (x,) = self.saved_tensors
        lo, hi = self.lo, self.hi
        if lo is not None and hi is not None:
            mask = (x >= lo) & (x <= hi)
        else:
            mask = x >= lo if lo is not None else x <= hi
        return _where_t(mask, g, 0)


class ClampTensor(Node):
    """``min(max(x, lo), hi)`` with tensor bounds (either may be None)."""

    saves_inputs = (0, 1, 2)

    def forward(self, x, lo, hi):
        xp = xp_of(x)
        if lo is not None:
            x = xp.maximum(x, lo)
        if hi is not None:
            x = xp.minimum(x, hi)
        return x

    def backward(self, g):
        # PyTorch's clamp_backward_min_max
        x, lo, hi = self.saved_tensors
        need = self.needs_input_grad
        gx = glo = ghi = None
        if lo is not None and hi is not None:
            if need[0]:
                gx = _where_t((x >= lo) & (x <= hi), g, 0)
            if need[1]:
                glo = _where_t((x < lo) & (lo < hi), g, 0)
            if need[2]:
                ghi = _where_t((x > hi) | (hi < lo), g, 0)
        elif lo is not None:
            gx = _where_t(x >= lo, g, 0) if need[0] else None
            glo = _where_t(x < lo, g, 0) if need[1] else None
        else:
            gx = _where_t(x <= hi, g, 0) if need[0] else None
            ghi = _where_t(x > hi, g, 0) if need[2] else None
        return gx, glo, ghi


_PLAIN = (float, int, type(None))


def _clamp_args(input, min, max):
    """(input, min, max, op class) after PyTorch's checks and promotion."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input._data.dtype.kind == "f" and type(min) in _PLAIN and type(max) in _PLAIN:
        return input, min, max, ClampScalar  # the common case: nothing to promote
    t_lo, t_hi = isinstance(min, TensorBase), isinstance(max, TensorBase)
    if (t_lo or t_hi) and ((min is not None and not t_lo) or (max is not None and not t_hi)):
        raise TypeError(
            f"clamp() received an invalid combination of arguments - got (Tensor, "
            f"{type(min).__name__}, {type(max).__name__}): min and max must both be "
            "Tensors (or None) or both numbers (or None)")
    bounds = [v for v in (min, max) if v is not None]
    bounds = [scalar_value(v) if not isinstance(v, TensorBase) else v for v in bounds]
    rt = _dtype.result_type(input, *bounds)
    if input._data.dtype.kind == "c" or (rt.is_complex and not (t_lo or t_hi)):
        raise NotImplementedError("clamp is not supported for complex types")
    if t_lo or t_hi:
        check_kernel("clamp_cpu", rt.numpy, "iuf")
    elif rt.numpy.kind == "b":
        which = "clamp" if min is not None and max is not None else \
            "clamp_min" if min is not None else "clamp_max"
        raise not_implemented(f"{which}_scalar_cpu", rt.numpy)
    if input._data.dtype != rt.numpy:
        input = input.to(rt)
    if t_lo or t_hi:
        min, max = (None if v is None else v if v._data.dtype == rt.numpy else v.to(rt)
                    for v in (min, max))
        return input, min, max, ClampTensor
    min, max = (None if v is None else _fit_bound(scalar_value(v), rt) for v in (min, max))
    return input, min, max, ClampScalar


def _fit_bound(v, rt):
    if rt.numpy.kind in "iub" and type(v) is int:
        rng = INT_RANGES.get(rt.numpy)
        if rng is not None and not rng[0] <= v <= rng[1]:
            if not -(1 << 63) <= v < (1 << 64):
                raise OverflowError("int too big to convert")
            raise RuntimeError(f"value cannot be converted to type "
                               f"{c10_type_name(rt.numpy)} without overflow")
    return v


def clamp(input, min=None, max=None, *, out=None):
    """Clamps ``input`` into [min, max]: ``minimum(maximum(input, min), max)``.

    ``min`` and ``max`` are both numbers or both tensors; either may be None. Where
    ``min > max`` the result is ``max``. The gradient flows where ``min <= input <= max``.
    """
    input, lo, hi, cls = _clamp_args(input, min, max)
    return _out(run(cls, input, lo, hi), out)


def clamp_min(input, min, *, out=None):
    """``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input, max, *, out=None):
    """``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


clip = clamp


# ---------------------------------------------------------------------------
# where, lerp

_MISSING = object()


class Where(Node):
    saves_inputs = (0,)

    def forward(self, cond, a, b, np_dtype):
        xp = xp_of_any(cond, a, b)
        if cond.dtype != np.bool_:
            cond = cond.astype(bool)
        r = xp.where(cond, a, b)
        return r if r.dtype == np_dtype else r.astype(np_dtype)

    def backward(self, g):
        (cond,) = self.saved_tensors
        need = self.needs_input_grad
        return (None, _where_t(cond, g, 0) if need[1] else None,
                _where_t(cond, 0, g) if need[2] else None)


def where(condition, input=_MISSING, other=_MISSING, *, out=None):
    """``input`` where ``condition`` is True, else ``other`` (either may be a number).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.
    """
    if input is _MISSING and other is _MISSING:
        from ember._ops.indexing import nonzero

        return nonzero(condition, as_tuple=True)
    if input is _MISSING or other is _MISSING:
        raise TypeError("where() missing required argument 'input' or 'other'")
    cd = condition._data.dtype
    if cd == np.uint8:
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will "
            "be removed in a future version of PyTorch. Use a boolean condition instead.",
            UserWarning, stacklevel=2)
    elif cd != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {type_name(cd)}")
    a = input if isinstance(input, TensorBase) else scalar_value(input)
    b = other if isinstance(other, TensorBase) else scalar_value(other)
    if a is None or b is None:
        from ember._ops.creation import tensor

        a = tensor(input) if a is None else a
        b = tensor(other) if b is None else b
    rt = _dtype.result_type(a, b).numpy
    a = a.to(rt) if isinstance(a, TensorBase) and a._data.dtype != rt else a
    b = b.to(rt) if isinstance(b, TensorBase) and b._data.dtype != rt else b
    if type(a) is int:
        a = fit_int(a, rt)
    if type(b) is int:
        b = fit_int(b, rt)
    return _out(run(Where, condition, a, b, rt), out)


def _where_method(self, condition, other):
    return where(condition, self, other)


class Lerp(Node):
    """``start + weight * (end - start)``, as PyTorch computes it (from the nearer end)."""

    saves_inputs = (0, 1, 2)

    def forward(self, a, b, w):
        xp = xp_of(a)
        dt = a.dtype
        if dt == np.float16:  # PyTorch computes half in float
            a, b = a.astype(np.float32), b.astype(np.float32)
            w = w.astype(np.float32) if hasattr(w, "dtype") else w
        diff = b - a
        if not hasattr(w, "dtype"):
            r = a + w * diff if builtins.abs(w) < 0.5 else b - diff * (1 - w)
        else:
            r = xp.where(xp.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))
        return r.astype(dt, copy=False)

    def backward(self, g):
        a, b, w = self.saved_tensors
        need = self.needs_input_grad
        return (g * _conj(1 - w) if need[0] else None, g * _conj(w) if need[1] else None,
                g * _conj(b - a) if need[2] and isinstance(w, TensorBase) else None)


def _c_name(np_dtype):
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}[np.dtype(np_dtype).name]


def _lerp_args(input, end, weight):
    """(input, end, weight) after PyTorch's dtype checks; a 0-dim weight of another dtype
    takes part in type promotion."""
    need_tensor(end, "lerp", 2, "end")
    dt = input._data.dtype
    if end._data.dtype != dt:
        raise RuntimeError(f"expected dtype {_c_name(dt)} for `end` but got dtype "
                           f"{_c_name(end._data.dtype)}")
    if not isinstance(weight, TensorBase):
        check_kernel("lerp_kernel_scalar", dt, "fc")
        return input, end, scalar_value(weight)
    if weight._data.dtype != dt:
        if weight._data.ndim:
            raise RuntimeError(f"expected dtype {_c_name(dt)} for `weight` but got dtype "
                               f"{_c_name(weight._data.dtype)}")
        rt = _dtype.result_type(input, weight).numpy
        check_kernel("lerp_kernel_tensor", rt, "fc")
        input, end, weight = (t if t._data.dtype == rt else t.to(rt)
                              for t in (input, end, weight))
    check_kernel("lerp_kernel_tensor", input._data.dtype, "fc")
    return input, end, weight


def lerp(input, end, weight, *, out=None):
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or a
    tensor (broadcast)."""
    input, end, weight = _lerp_args(input, end, weight)
    return _out(run(Lerp, input, end, weight), out)


# ---------------------------------------------------------------------------
# in-place forms

def _add_(self, other, *, alpha=1):
    return inplace_binary(Add, self, other, extra=_alpha_args(self, alpha))


def _sub_(self, other, *, alpha=1):
    _check_sub_bool(self, other)
    return inplace_binary(Sub, self, other, extra=_alpha_args(self, alpha))


def _mul_(self, other):
    return inplace_binary(Mul, self, other)


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return inplace_binary(Div, self, other, result=to_float)
    cls, kernel = {"trunc": (DivTrunc, "div_trunc_cpu"),
                   "floor": (DivFloor, "div_floor_cpu")}.get(rounding_mode, (None, None))
    if cls is None:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'")
    return inplace_binary(cls, self, other, kernel=kernel, kinds="iuf")


def _floor_divide_(self, other):
    return inplace_binary(FloorDivide, self, other, kernel="div_floor_cpu", kinds="iuf")


def _remainder_(self, other):
    return inplace_binary(Remainder, self, other, kernel="remainder_cpu", kinds="iuf")


def _fmod_(self, other):
    return inplace_binary(Fmod, self, other, kernel="fmod_cpu", kinds="iuf")


def _pow_(self, exponent):
    _check_pow(self, exponent)
    return inplace_binary(Pow, self, exponent, kernel="pow", kinds="iufc")


def _atan2_(self, other):
    need_tensor(other, "atan2_", 1, "other")
    return inplace_binary(Atan2, self, other, result=to_float, kernel="atan2_cpu",
                          kinds="biuf")


def _hypot_(self, other):
    need_tensor(other, "hypot_", 1, "other")
    return inplace_binary(Hypot, self, other, kernel="hypot_cpu", kinds="f")


def _clamp_(self, min=None, max=None):
    if min is not None or max is not None:
        rt = _dtype.result_type(self, *[v if isinstance(v, TensorBase) else scalar_value(v)
                                        for v in (min, max) if v is not None])
        if not _dtype.can_cast(rt, _dtype.from_numpy(self._data.dtype)):
            raise cast_error(rt.numpy, self._data.dtype)
    _, lo, hi, cls = _clamp_args(self.detach(), min, max)
    if cls is ClampTensor:
        lo, hi = (None if v is None else v.to(self._data.dtype) for v in (min, max))
    return apply_inplace(cls, self, lo, hi)


def _clamp_min_(self, min):
    return _clamp_(self, min, None)


def _clamp_max_(self, max):
    return _clamp_(self, None, max)


def _lerp_(self, end, weight):
    _, end, weight = _lerp_args(self, end, weight)
    if isinstance(weight, TensorBase) and weight._data.dtype != self._data.dtype:
        raise cast_error(weight._data.dtype, self._data.dtype)
    return apply_inplace(Lerp, self, end, weight)


# ---------------------------------------------------------------------------
# Tensor methods: operators (with reflected and in-place forms) and named methods

METHODS = {**_unary.METHODS, **_comparison.METHODS}
METHODS.update({
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "floor_divide": floor_divide, "remainder": remainder,
    "fmod": fmod, "pow": pow, "atan2": atan2, "arctan2": atan2, "hypot": hypot,
    "maximum": maximum, "minimum": minimum, "fmax": fmax, "fmin": fmin, "clamp": clamp,
    "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max, "where": _where_method,
    "lerp": lerp,
    "add_": _add_, "sub_": _sub_, "subtract_": _sub_, "mul_": _mul_, "multiply_": _mul_,
    "div_": _div_, "divide_": _div_, "true_divide_": _div_, "floor_divide_": _floor_divide_,
    "remainder_": _remainder_, "fmod_": _fmod_, "pow_": _pow_, "atan2_": _atan2_,
    "arctan2_": _atan2_, "hypot_": _hypot_, "clamp_": _clamp_, "clip_": _clamp_,
    "clamp_min_": _clamp_min_, "clamp_max_": _clamp_max_, "lerp_": _lerp_,
    "__add__": forward_op(add), "__radd__": reflected_op(add), "__iadd__": inplace_op(_add_),
    "__sub__": forward_op(sub), "__rsub__": reflected_op(sub), "__isub__": inplace_op(_sub_),
    "__mul__": forward_op(mul), "__rmul__": reflected_op(mul), "__imul__": inplace_op(_mul_),
    "__truediv__": forward_op(div), "__rtruediv__": reflected_op(div),
    "__itruediv__": inplace_op(_div_),
    "__floordiv__": forward_op(floor_divide), "__rfloordiv__": reflected_op(floor_divide),
    "__ifloordiv__": inplace_op(_floor_divide_),
    "__mod__": forward_op(remainder), "__rmod__": reflected_op(remainder),
    "__imod__": inplace_op(_remainder_),
    "__pow__": forward_op(pow), "__rpow__": reflected_op(pow), "__ipow__": inplace_op(_pow_),
})
