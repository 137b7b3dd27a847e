"""More pointwise ops: ``addcmul``/``addcdiv``, ``copysign``, ``float_power``, ``frexp``,
``gcd``/``lcm``, ``heaviside``, ``ldexp``, ``logaddexp``/``logaddexp2``, ``nextafter``,
``deg2rad``/``rad2deg``, ``positive`` and ``rsub``, with their Tensor methods.

Operands are handled as in ``elementwise`` (NOTE [ Operands ] in ``_operands``): promoted to
PyTorch's common dtype, numbers kept as weak scalars, PyTorch's messages for dtypes that have
no kernel. Ops that PyTorch writes as compositions (``ldexp`` is ``input * 2 ** other``,
``deg2rad`` a product, ``float_power`` a ``pow`` in double precision) are compositions here
too, so their gradients are those of the parts.
"""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._C._core import Node, apply_inplace
from ember._ops._operands import (
    cast_error,
    check_kernel,
    inplace_binary,
    kind,
    need_tensor,
    operands,
    run,
    to_float,
)
from ember._ops._operands import zeros as _zeros
from ember._ops._util import (
    TensorBase,
    c10_type_name,
    not_implemented,
    scalar_value,
    type_name,
    xp_of,
)
from ember._ops._util import conj as _conj
from ember._ops._util import with_out as _out
from ember._ops.reduction import return_type

__all__ = [
    "addcmul", "addcdiv", "copysign", "float_power", "frexp", "gcd", "lcm", "heaviside",
    "ldexp", "logaddexp", "logaddexp2", "nextafter", "deg2rad", "rad2deg", "positive", "rsub",
]


def _where(cond, a, b):
    from ember._ops.elementwise import where

    return where(cond, a, b)


# ---------------------------------------------------------------------------
# addcmul, addcdiv

class Addcmul(Node):
    """``input + value * tensor1 * tensor2`` (in that order of operations, as PyTorch's
    kernel)."""

    saves_inputs = (1, 2)

    def forward(self, x, t1, t2, value):
        self.value = value
        return x + value * t1 * t2

    def backward(self, g):
        t1, t2 = self.saved_tensors
        need, v = self.needs_input_grad, _conj(self.value)
        return (g, g * _conj(t2) * v if need[1] else None,
                g * _conj(t1) * v if need[2] else None)


class Addcdiv(Node):
    """``input + value * tensor1 / tensor2``."""

    saves_inputs = (1, 2)

    def forward(self, x, t1, t2, value):
        self.value = value
        with np.errstate(all="ignore"):
            return x + value * t1 / t2

    def backward(self, g):
        t1, t2 = self.saved_tensors
        need, v = self.needs_input_grad, _conj(self.value)
        c2 = _conj(t2)
        return (g, g * v / c2 if need[1] else None,
                -g * v * _conj(t1) / (c2 * c2) if need[2] else None)


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


def _addc_value(value, np_dtype):
    """``value`` as the op's kernel takes it for dtype ``np_dtype`` (PyTorch casts it)."""
    v = scalar_value(value)
    if v is None:
        raise TypeError(f"value must be a number, not {type(value).__name__}")
    k = np_dtype.kind
    if isinstance(v, complex) and k != "c":
        raise RuntimeError(f"value cannot be converted to type {c10_type_name(np_dtype)} "
                           "without overflow")
    if k in "iu":
        return int(v.real if isinstance(v, complex) else v)
    return v


def _addc_args(name, input, tensor1, tensor2, value):
    for x, pos, arg in ((input, 1, "input"), (tensor1, 2, "tensor1"), (tensor2, 3, "tensor2")):
        need_tensor(x, name, pos, arg)
    if name == "addcdiv" and kind(tensor1) in "biu" and kind(tensor2) in "biu":
        raise RuntimeError(_ADDCDIV_INT)
    rt = _dtype.result_type(input, tensor1, tensor2).numpy
    if rt.kind == "b":
        raise not_implemented(f"{name}_cpu_out", rt)
    return rt, _addc_value(value, rt)


def _cast(t, np_dtype):
    return t if t._data.dtype == np_dtype else t.to(np_dtype)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """addcmul(input, tensor1, tensor2, *, value=1, out=None) -> Tensor

    ``input + value * tensor1 * tensor2``, elementwise, with broadcasting and PyTorch's type
    promotion (for integer results ``value`` is truncated to an integer).

    Examples::

        >>> ember.addcmul(ember.ones(3), ember.tensor([1., 2., 3.]), ember.tensor([2.]),
        ...               value=0.5)
        tensor([2., 3., 4.])
    """
    rt, v = _addc_args("addcmul", input, tensor1, tensor2, value)
    return _out(run(Addcmul, *(_cast(t, rt) for t in (input, tensor1, tensor2)), v), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """addcdiv(input, tensor1, tensor2, *, value=1, out=None) -> Tensor

    ``input + value * tensor1 / tensor2``, elementwise, with broadcasting. Integer
    ``tensor1`` and ``tensor2`` together are an error, as in PyTorch.

    Examples::

        >>> ember.addcdiv(ember.zeros(2), ember.tensor([1., 3.]), ember.tensor([2., 4.]))
        tensor([0.5000, 0.7500])
    """
    rt, v = _addc_args("addcdiv", input, tensor1, tensor2, value)
    return _out(run(Addcdiv, *(_cast(t, rt) for t in (input, tensor1, tensor2)), v), out)


def _addc_(cls, name, self, tensor1, tensor2, value):
    rt, v = _addc_args(name, self, tensor1, tensor2, value)
    dt = self._data.dtype
    if not _dtype.can_cast(_dtype.from_numpy(rt), _dtype.from_numpy(dt)):
        raise cast_error(rt, dt)
    # computed in self's dtype, so that the gradients keep their inputs' dtypes
    t1, t2 = _cast(tensor1, dt), _cast(tensor2, dt)
    try:
        return apply_inplace(cls, self, t1, t2, _addc_value(value, dt))
    except ValueError:
        from ember._ops._operands import broadcast_shape

        shape = broadcast_shape([self._data.shape, t1._data.shape, t2._data.shape])
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}") from None


def _addcmul_(self, tensor1, tensor2, *, value=1):
    return _addc_(Addcmul, "addcmul", self, tensor1, tensor2, value)


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    return _addc_(Addcdiv, "addcdiv", self, tensor1, tensor2, value)


# ---------------------------------------------------------------------------
# copysign

class Copysign(Node):
    """``|input|`` with the sign of ``other``; the gradient is ``result / input`` (0 where
    input is 0), and 0 for ``other``."""

    saves_inputs = (0,)
    saves_output = True

    def forward(self, a, b):
        return xp_of(a).copysign(a, b)

    def backward(self, g):
        a, y = self.saved_tensors
        ga = _where(a == 0, 0, g * y / _where(a == 0, 1, a)) if self.needs_input_grad[0] \
            else None
        gb = _zeros(g) if self.needs_input_grad[1] else None
        return ga, gb


def _float_operands(name, input, other, kernel_kinds="biuf"):
    """(a, b) promoted and brought to a floating dtype (integers: the default float)."""
    need_tensor(input, name, 1, "input")
    a, b = operands(input, other, name)
    rt = a._data.dtype if isinstance(a, TensorBase) else b._data.dtype
    check_kernel(f"{name}_cpu", rt, kernel_kinds)
    ft = to_float(rt)
    if ft != rt:
        a = a.to(ft) if isinstance(a, TensorBase) else float(a)
        b = b.to(ft) if isinstance(b, TensorBase) else float(b)
    return a, b


def copysign(input, other, *, out=None):
    """copysign(input, other, *, out=None) -> Tensor

    A floating-point tensor with the magnitudes of ``input`` and the signs of ``other``
    (a tensor or a number), elementwise; integers become the default float dtype. The sign
    of ``-0.0`` is negative.

    Examples::

        >>> ember.copysign(ember.tensor([1., -2., 3.]), -1)
        tensor([-1., -2., -3.])
    """
    a, b = _float_operands("copysign", input, other)
    return _out(run(Copysign, a, b), out)


def _copysign_(self, other):
    return inplace_binary(Copysign, self, other, result=to_float, kernel="copysign_cpu",
                          kinds="biuf")


# ---------------------------------------------------------------------------
# float_power

def _float_power_dtype(input, exponent):
    complex_ = any(isinstance(v, complex) or (isinstance(v, TensorBase)
                                              and v._data.dtype.kind == "c")
                   for v in (input, exponent))
    return _dtype.complex128 if complex_ else _dtype.float64


def float_power(input, exponent, *, out=None):
    """float_power(input, exponent, *, out=None) -> Tensor

    ``input ** exponent`` computed in double precision: the result is float64, or
    complex128 if either operand is complex. Either operand may be a number.

    Examples::

        >>> ember.float_power(ember.tensor([1, 2, 3]), 2)
        tensor([1., 4., 9.], dtype=ember.float64)
    """
    from ember._ops.elementwise import pow

    if not isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        need_tensor(exponent, "float_power", 2, "exponent")
    dt = _float_power_dtype(input, exponent)
    a = input.to(dt) if isinstance(input, TensorBase) else _scalar_as(input, dt)
    b = exponent.to(dt) if isinstance(exponent, TensorBase) else _scalar_as(exponent, dt)
    return pow(a, b, out=out)


def _scalar_as(v, dt):
    v = scalar_value(v)
    return complex(v) if dt.is_complex else float(v)


def _float_power_(self, exponent):
    from ember._ops.elementwise import _pow_

    dt = _float_power_dtype(self, exponent)
    if self._data.dtype != dt.numpy:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{type_name(self._data.dtype)} but the operation's result "
                           f"requires dtype {type_name(dt.numpy)}")
    b = exponent.to(dt) if isinstance(exponent, TensorBase) else _scalar_as(exponent, dt)
    return _pow_(self, b)


# ---------------------------------------------------------------------------
# frexp, ldexp

class Frexp(Node):
    """The mantissa of ``frexp``; its gradient is ``g / 2 ** exponent``."""

    def forward(self, x):
        xp = xp_of(x)
        m, e = xp.frexp(x)
        self.exponent = xp.asarray(e)
        return xp.asarray(m, dtype=x.dtype)

    def backward(self, g):
        from ember._ops._util import wrap

        return g / wrap(xp_of(self.exponent).exp2(self.exponent).astype(g._data.dtype))


def frexp(input, *, out=None):
    """frexp(input, *, out=None) -> (Tensor mantissa, Tensor exponent)

    Splits ``input`` into mantissas in ``(-1, 1)`` (magnitude at least 0.5, or 0) and int32
    exponents with ``input == mantissa * 2 ** exponent``. Zeros, infinities and nan have
    exponent 0 and are their own mantissa.

    Examples::

        >>> ember.frexp(ember.tensor([8., 0.75]))
        ember.return_types.frexp(
        mantissa=tensor([0.5000, 0.7500]),
        exponent=tensor([4, 0], dtype=ember.int32))
    """
    from ember._ops._util import apply, wrap

    if input._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input._data
    mantissa = apply(Frexp, input)
    e = xp_of(x).asarray(xp_of(x).frexp(x)[1], dtype=np.int32)
    result = return_type("frexp", ("mantissa", "exponent"))(
        (mantissa, wrap(e)))
    if out is not None:
        _out(result[0], out[0])
        _out(result[1], out[1])
        return return_type("frexp", ("mantissa", "exponent"))(tuple(out))
    return result


def ldexp(input, other, *, out=None):
    """ldexp(input, other, *, out=None) -> Tensor

    ``input * 2 ** other``, elementwise, in the floating dtype of both operands (integers:
    the default float dtype).

    Examples::

        >>> ember.ldexp(ember.tensor([1.]), ember.tensor([1, 2, 3]))
        tensor([2., 4., 8.])
    """
    need_tensor(input, "ldexp", 1, "input")
    need_tensor(other, "ldexp")
    a, b = _float_operands("ldexp", input, other, "biufc")
    return _out(a * (2.0 ** b), out)


def _ldexp_(self, other):
    need_tensor(other, "ldexp_")
    rt = to_float(_dtype.result_type(self, other).numpy)
    if not _dtype.can_cast(_dtype.from_numpy(rt), _dtype.from_numpy(self._data.dtype)):
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{type_name(self._data.dtype)}")
    return self.mul_(2.0 ** other.to(self._data.dtype))


# ---------------------------------------------------------------------------
# gcd, lcm (integers only, not differentiable)

class Gcd(Node):
    differentiable = False

    def forward(self, a, b):
        return xp_of(a).gcd(a, b)

    def backward(self, g):
        raise RuntimeError("derivative for aten::gcd is not implemented")


class Lcm(Node):
    differentiable = False

    def forward(self, a, b):
        xp = xp_of(a)
        with np.errstate(all="ignore"):
            return xp.abs(xp.lcm(a, b))  # PyTorch: abs(a / gcd * b), also where it wraps

    def backward(self, g):
        raise RuntimeError("derivative for aten::lcm is not implemented")


def _int_pair(name, input, other):
    need_tensor(input, name, 1, "input")
    need_tensor(other, name)
    a, b = operands(input, other, name)
    check_kernel(f"{name}_cpu", a._data.dtype, "iu")
    return a, b


def gcd(input, other, *, out=None):
    """gcd(input, other, *, out=None) -> Tensor

    The elementwise greatest common divisor of two integer tensors (non-negative;
    ``gcd(0, 0) == 0``).

    Examples::

        >>> ember.gcd(ember.tensor([5, 10, 15]), ember.tensor([3, 4, 5]))
        tensor([1, 2, 5])
    """
    return _out(run(Gcd, *_int_pair("gcd", input, other)), out)


def lcm(input, other, *, out=None):
    """lcm(input, other, *, out=None) -> Tensor

    The elementwise least common multiple of two integer tensors (non-negative; 0 if
    either is 0).

    Examples::

        >>> ember.lcm(ember.tensor([5, 10, 15]), ember.tensor([3, 4, 5]))
        tensor([15, 20, 15])
    """
    return _out(run(Lcm, *_int_pair("lcm", input, other)), out)


def _gcd_(self, other):
    need_tensor(other, "gcd_")
    return inplace_binary(Gcd, self, other, kernel="gcd_cpu", kinds="iu")


def _lcm_(self, other):
    need_tensor(other, "lcm_")
    return inplace_binary(Lcm, self, other, kernel="lcm_cpu", kinds="iu")


# ---------------------------------------------------------------------------
# heaviside

class Heaviside(Node):
    """0 where input < 0 (and at nan), ``values`` where input == 0, 1 where input > 0."""

    def forward(self, x, values):
        xp = xp_of(x)
        return xp.where(x == 0, values, x > 0).astype(x.dtype, copy=False)

    def backward(self, g):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def _heaviside_args(input, values):
    need_tensor(values, "heaviside", 2, "values")
    if input._data.dtype.kind == "c" or values._data.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")


def heaviside(input, values, *, out=None):
    """heaviside(input, values, *, out=None) -> Tensor

    The Heaviside step function: 0 where ``input < 0``, ``values`` where ``input == 0``,
    1 where ``input > 0`` (0 at nan, as PyTorch). ``values`` is a tensor of input's dtype
    that broadcasts with it.

    Examples::

        >>> ember.heaviside(ember.tensor([-1., 0., 2.]), ember.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _heaviside_args(input, values)
    return _out(run(Heaviside, input, values), out)


def _heaviside_(self, values):
    _heaviside_args(self, values)
    return inplace_binary(Heaviside, self, values)


# ---------------------------------------------------------------------------
# logaddexp, logaddexp2

def _complex_logaddexp(xp, a, b):
    big = xp.where(a.real >= b.real, a, b)
    small = xp.where(a.real >= b.real, b, a)
    return big + xp.log1p(xp.exp(small - big))


class Logaddexp(Node):
    """``log(exp(input) + exp(other))`` without overflow."""

    saves_inputs = (0, 1)
    base2 = False

    def forward(self, a, b):
        xp = xp_of(a)
        with np.errstate(all="ignore"):
            if a.dtype.kind == "c":
                return _complex_logaddexp(xp, a, b)
            return xp.logaddexp2(a, b) if self.base2 else xp.logaddexp(a, b)

    def backward(self, g):
        # PyTorch's formulas: g / (1 + exp(other - input)) and its mirror
        a, b = self.saved_tensors
        need = self.needs_input_grad
        up = (lambda d: 2.0 ** d) if self.base2 else (lambda d: d.exp())
        return (g / _conj(1 + up(b - a)) if need[0] else None,
                g / _conj(1 + up(a - b)) if need[1] else None)


class Logaddexp2(Logaddexp):
    """``log2(2 ** input + 2 ** other)`` without overflow."""

    base2 = True


def _log_pair(name, input, other, kinds):
    need_tensor(input, name, 1, "input")
    need_tensor(other, name)
    a, b = operands(input, other, name)
    check_kernel(f"{name}_cpu", a._data.dtype, kinds)
    return a, b


def logaddexp(input, other, *, out=None):
    """logaddexp(input, other, *, out=None) -> Tensor

    ``log(exp(input) + exp(other))``, elementwise, computed without overflow; floating
    and complex tensors.

    Examples::

        >>> ember.logaddexp(ember.tensor([-100., 0.]), ember.tensor([-100., 0.]))
        tensor([-99.3069,   0.6931])
    """
    return _out(run(Logaddexp, *_log_pair("logaddexp", input, other, "fc")), out)


def logaddexp2(input, other, *, out=None):
    """logaddexp2(input, other, *, out=None) -> Tensor

    ``log2(2 ** input + 2 ** other)``, elementwise, computed without overflow.

    Examples::

        >>> ember.logaddexp2(ember.tensor([1., 3.]), ember.tensor([1., 3.]))
        tensor([2., 4.])
    """
    return _out(run(Logaddexp2, *_log_pair("logaddexp2", input, other, "f")), out)


# ---------------------------------------------------------------------------
# nextafter

class Nextafter(Node):
    """The next representable value after ``input`` towards ``other``. As PyTorch, the
    gradient is ``g`` for input (0 where input == other, the result being input itself) and
    0 for other."""

    saves_inputs = (0, 1)

    def forward(self, a, b):
        return xp_of(a).nextafter(a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        need = self.needs_input_grad
        return (_where(a == b, 0, g) if need[0] else None), (_zeros(g) if need[1] else None)


def nextafter(input, other, *, out=None):
    """nextafter(input, other, *, out=None) -> Tensor

    The next floating-point value after ``input`` towards ``other``, elementwise.

    Examples::

        >>> ember.nextafter(ember.tensor([1.0], dtype=ember.float64),
        ...                 ember.tensor([2.0], dtype=ember.float64)) - 1
        tensor([2.2204e-16], dtype=ember.float64)
    """
    return _out(run(Nextafter, *_log_pair("nextafter", input, other, "f")), out)


def _nextafter_(self, other):
    need_tensor(other, "nextafter_")
    return inplace_binary(Nextafter, self, other, kernel="nextafter_cpu", kinds="f")


# ---------------------------------------------------------------------------
# deg2rad, rad2deg, positive, rsub

_DEG_TO_RAD = math.pi / 180.0
_RAD_TO_DEG = 180.0 / math.pi


def _angle_input(name, input):
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    if input._data.dtype.kind in "biu":
        return input.to(_dtype.get_default_dtype())
    return input


def deg2rad(input, *, out=None):
    """deg2rad(input, *, out=None) -> Tensor

    ``input`` (angles in degrees) in radians; integers become the default float dtype.

    Examples::

        >>> ember.deg2rad(ember.tensor([180., 90.]))
        tensor([3.1416, 1.5708])
    """
    return _out(_angle_input("deg2rad", input) * _DEG_TO_RAD, out)


def rad2deg(input, *, out=None):
    """rad2deg(input, *, out=None) -> Tensor

    ``input`` (angles in radians) in degrees; integers become the default float dtype.

    Examples::

        >>> ember.rad2deg(ember.tensor([3.141592653589793]))
        tensor([180.])
    """
    return _out(_angle_input("rad2deg", input) * _RAD_TO_DEG, out)


def _angle_(name, factor):
    def inplace(self):
        _angle_input(name, self)
        if self._data.dtype.kind in "biu":
            raise cast_error(to_float(self._data.dtype), self._data.dtype)
        return self.mul_(factor)
    inplace.__name__ = inplace.__qualname__ = name + "_"
    return inplace


def positive(input):
    """positive(input) -> Tensor

    ``input`` itself (``+input``); an error for bool tensors, as in PyTorch.
    """
    need_tensor(input, "positive", 1, "input")
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, *, alpha=1):
    """rsub(input, other, *, alpha=1) -> Tensor

    ``other - alpha * input``: subtraction with the operands reversed (``other`` may be
    a number).

    Examples::

        >>> ember.rsub(ember.tensor([1., 2.]), 10)
        tensor([9., 8.])
    """
    from ember._ops.elementwise import sub

    need_tensor(input, "rsub", 1, "input")
    return sub(other, input, alpha=alpha)


METHODS = {
    "addcmul": addcmul, "addcdiv": addcdiv, "addcmul_": _addcmul_, "addcdiv_": _addcdiv_,
    "copysign": copysign, "copysign_": _copysign_, "float_power": float_power,
    "float_power_": _float_power_, "frexp": frexp, "ldexp": ldexp, "ldexp_": _ldexp_,
    "gcd": gcd, "gcd_": _gcd_, "lcm": lcm, "lcm_": _lcm_, "heaviside": heaviside,
    "heaviside_": _heaviside_, "logaddexp": logaddexp, "logaddexp2": logaddexp2,
    "nextafter": nextafter, "nextafter_": _nextafter_, "deg2rad": deg2rad,
    "deg2rad_": _angle_("deg2rad", _DEG_TO_RAD), "rad2deg": rad2deg,
    "rad2deg_": _angle_("rad2deg", _RAD_TO_DEG), "positive": positive,
}
