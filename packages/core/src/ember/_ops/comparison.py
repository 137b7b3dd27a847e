"""Comparisons, closeness tests, logical and bitwise ops: elementwise ops that are never
differentiable (their results are bool or integer).

Their in-place forms (``x.lt_(y)``, ``x.logical_and_(y)``) write the result in the
tensor's own dtype; as in PyTorch, a float tensor changed so keeps its history with a
zero gradient. ``elementwise`` re-exports this module's names and methods.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._C._core import Node, dispatched
from ember._ops._operands import (
    check_kernel,
    forward_op,
    inplace_binary,
    inplace_op,
    need_tensor,
    operands,
    reflected_op,
    run,
    xp_of_any,
)
from ember._ops._operands import dtype_of as _dtype_of
from ember._ops._operands import zeros as _zeros
from ember._ops._util import type_name, xp_of
from ember._ops._util import with_out as _out

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "isclose", "allclose", "equal", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
]


class _Zero(Node):
    """Base of the in-place forms: the result in self's dtype, a zero gradient."""

    def backward(self, g):
        return _zeros(g), _zeros(g)


class Predicate(Node):
    """A bool-valued binary ufunc (a comparison or a logical op); subclasses set it."""

    differentiable = False
    ufunc = None

    def forward(self, a, b):
        return type(self).ufunc(a, b)


class PredicateInplace(_Zero):
    """The in-place form of the ``Predicate`` subclass ``op``: the result in a's dtype."""

    op = None

    def forward(self, a, b):
        return type(self).op.ufunc(a, b).astype(a.dtype, copy=False)


def _predicate_nodes(cls_name, ufunc):
    """The ``Predicate`` subclass ``cls_name`` for ``ufunc`` and its in-place form."""
    cls = type(cls_name, (Predicate,), {"ufunc": staticmethod(ufunc)})
    return cls, type(cls_name + "Inplace", (PredicateInplace,), {"op": cls})


# ---------------------------------------------------------------------------
# comparisons

def _defcompare(name, ufunc, ordered):
    cls, cls_ = _predicate_nodes(name.capitalize(), ufunc)
    kinds = "biuf" if ordered else "biufc"

    def check_none(other):
        if other is None:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            "(Tensor, NoneType)")

    def op(input, other, *, out=None):
        check_none(other)
        a, b = operands(input, other, name)
        check_kernel(f"{name}_cpu", _dtype_of(a, b), kinds)
        return _out(run(cls, a, b), out)

    def inplace(self, other):
        check_none(other)
        return inplace_binary(cls_, self, other, cast_check=False, kernel=f"{name}_cpu",
                              kinds=kinds)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` comparison; a bool tensor."
    op.op = cls
    op.inplace = inplace
    return op


eq = _defcompare("eq", np.equal, False)
ne = _defcompare("ne", np.not_equal, False)
lt = _defcompare("lt", np.less, True)
le = _defcompare("le", np.less_equal, True)
gt = _defcompare("gt", np.greater, True)
ge = _defcompare("ge", np.greater_equal, True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


# ---------------------------------------------------------------------------
# closeness

class IsClose(Node):
    differentiable = False

    def forward(self, a, b, rtol, atol, equal_nan):
        xp = xp_of(a)
        kind = a.dtype.kind
        close = a == b
        if equal_nan and kind in "fc":
            close |= xp.isnan(a) & xp.isnan(b)
        if rtol == 0 and atol == 0:
            return close
        if kind in "biu":  # PyTorch measures integer differences in the default float
            fdt = _dtype.get_default_dtype().numpy
            a, b = a.astype(fdt), b.astype(fdt)
        with np.errstate(all="ignore"):
            allowed = atol + xp.abs(rtol * b)
            actual = xp.abs(a - b)
            return close | (xp.isfinite(actual) & (actual <= allowed))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|input - other| <= atol + rtol * |other|`` (or equal; nan equal to
    nan with ``equal_nan``). Both tensors must have the same dtype."""
    need_tensor(other, "isclose")
    da, db = input._data.dtype, other._data.dtype
    if da != db:
        raise RuntimeError(f"{type_name(da)} did not match {type_name(db)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return run(IsClose, input, other, rtol, atol, bool(equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True if ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


@dispatched
def equal(input, other) -> bool:
    """True if both tensors have the same shape and the same values (a Python bool; nan is
    never equal to nan)."""
    need_tensor(input, "equal", 1, "input")
    need_tensor(other, "equal")
    if input._data.shape != other._data.shape:
        return False
    rt = _dtype.promote_types(_dtype.from_numpy(input._data.dtype),
                              _dtype.from_numpy(other._data.dtype)).numpy
    a, b = input._data, other._data
    return bool((a.astype(rt, copy=False) == b.astype(rt, copy=False)).all())


# ---------------------------------------------------------------------------
# logical ops: any dtypes, nonzero is True

def _deflogical(name, ufunc):
    cls, cls_ = _predicate_nodes(name.title().replace("_", ""), ufunc)

    def op(input, other, *, out=None):
        need_tensor(other, name)
        return _out(run(cls, input, other), out)

    def inplace(self, other):
        need_tensor(other, name + "_", 1, "other")
        return inplace_binary(cls_, self, other, cast_check=False, promote_other=False)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The elementwise ``{name}`` of the truth values (nonzero is True)."
    op.op = cls
    op.inplace = inplace
    return op


logical_and = _deflogical("logical_and", np.logical_and)
logical_or = _deflogical("logical_or", np.logical_or)
logical_xor = _deflogical("logical_xor", np.logical_xor)


# ---------------------------------------------------------------------------
# bitwise ops and shifts: integer and bool tensors

def _shift_left(xp, a, b, np_dtype):
    a = xp.asarray(a, dtype=np_dtype)
    b = xp.asarray(b, dtype=np_dtype)
    bits = np_dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)  # PyTorch: 0
    r = xp.left_shift(a, xp.where(out_of_range, 0, b))
    return xp.where(out_of_range, 0, r)


def _shift_right(xp, a, b, np_dtype):
    a = xp.asarray(a, dtype=np_dtype)
    b = xp.asarray(b, dtype=np_dtype)
    # PyTorch: shifts past the width keep only the sign
    max_shift = np_dtype.itemsize * 8 - (1 if np_dtype.kind == "i" else 0)
    out_of_range = (b < 0) | (b >= max_shift)
    r = xp.right_shift(a, xp.where(out_of_range, 0, b))
    fill = xp.right_shift(a, max_shift) if np_dtype.kind == "i" else 0
    return xp.where(out_of_range, fill, r)


class Bitwise(Node):
    differentiable = False
    fn = None

    def forward(self, a, b, np_dtype):
        r = type(self).fn(xp_of_any(a, b), a, b, np_dtype)
        return r if r.dtype == np_dtype else r.astype(np_dtype)


def _defbitwise(name, fn, kernel, kinds="biu"):
    cls = type(name.title().replace("_", ""), (Bitwise,), {"fn": staticmethod(fn)})

    def op(input, other, *, out=None):
        a, b = operands(input, other, name)
        rt = _dtype_of(a, b)
        check_kernel(kernel, rt, kinds)
        return _out(run(cls, a, b, rt), out)

    def inplace(self, other):
        return inplace_binary(cls, self, other, extra=(self._data.dtype,), kernel=kernel,
                              kinds=kinds)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The elementwise ``{name}`` of integer or bool tensors."
    op.op = cls
    op.inplace = inplace
    return op


bitwise_and = _defbitwise("bitwise_and", lambda xp, a, b, dt: xp.bitwise_and(a, b),
                          "bitwise_and_cpu")
bitwise_or = _defbitwise("bitwise_or", lambda xp, a, b, dt: xp.bitwise_or(a, b),
                         "bitwise_or_cpu")
bitwise_xor = _defbitwise("bitwise_xor", lambda xp, a, b, dt: xp.bitwise_xor(a, b),
                          "bitwise_xor_cpu")
bitwise_left_shift = _defbitwise("bitwise_left_shift", _shift_left, "lshift_cpu", "iu")
bitwise_right_shift = _defbitwise("bitwise_right_shift", _shift_right, "rshift_cpu", "iu")


# ---------------------------------------------------------------------------
# Tensor methods

METHODS = {"isclose": isclose, "allclose": allclose, "equal": equal}
for _name, _fn in (("eq", eq), ("ne", ne), ("lt", lt), ("le", le), ("gt", gt), ("ge", ge),
                   ("greater", gt), ("greater_equal", ge), ("less", lt), ("less_equal", le),
                   ("not_equal", ne), ("logical_and", logical_and),
                   ("logical_or", logical_or), ("logical_xor", logical_xor),
                   ("bitwise_and", bitwise_and), ("bitwise_or", bitwise_or),
                   ("bitwise_xor", bitwise_xor), ("bitwise_left_shift", bitwise_left_shift),
                   ("bitwise_right_shift", bitwise_right_shift)):
    METHODS[_name] = _fn
    METHODS[_name + "_"] = _fn.inplace
for _dunder, _fn in (("eq", eq), ("ne", ne), ("lt", lt), ("le", le), ("gt", gt), ("ge", ge)):
    METHODS[f"__{_dunder}__"] = forward_op(_fn)
for _dunder, _fn in (("and", bitwise_and), ("or", bitwise_or), ("xor", bitwise_xor),
                     ("lshift", bitwise_left_shift), ("rshift", bitwise_right_shift)):
    METHODS[f"__{_dunder}__"] = forward_op(_fn)
    METHODS[f"__r{_dunder}__"] = reflected_op(_fn)
    METHODS[f"__i{_dunder}__"] = inplace_op(_fn.inplace)

