"""Operands of the elementwise ops (``elementwise``, ``unary``, ``comparison``):
promotion, integer numbers out of range, broadcasting errors, PyTorch's dtype messages,
the in-place driver and the operator wrappers.

NOTE [ Operands ]
Binary ops bring their operands to PyTorch's common dtype with ``promote``: tensors are
cast (a recorded, differentiable cast), Python numbers stay numbers so that NumPy
treats them as weak scalars (``float16_tensor * 2.5`` stays float16). An integer
number out of an integer tensor's range wraps around to that dtype, as PyTorch casts
it (``int8_tensor + 300`` adds 44), where NumPy would raise. Broadcasting errors are
reported with PyTorch's message, naming both sizes and the dim.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._C._core import apply_inplace, is_grad_enabled
from ember._ops._util import (
    TensorBase,
    apply,
    not_implemented,
    promote,
    scalar_value,
    type_name,
    xp_of,
)


def check_kernel(kernel: str, np_dtype, kinds: str) -> None:
    """Raise ``not_implemented`` unless the dtype's kind is one of ``kinds`` ("biufc");
    bfloat16 (ml_dtypes, NumPy kind "V", its ufuncs computing through float32) counts as
    "f"."""
    kind = np_dtype.kind
    if kind not in kinds and not (kind == "V" and "f" in kinds and np_dtype.name == "bfloat16"):
        raise not_implemented(kernel, np_dtype)


def cast_error(result_dtype, out_dtype) -> RuntimeError:
    """PyTorch's error for an in-place result that the tensor's dtype cannot hold."""
    return RuntimeError(f"result type {type_name(result_dtype)} can't be cast to the desired "
                        f"output type {type_name(out_dtype)}")


def to_float(np_dtype):
    """The dtype a float-valued op (true division, atan2) computes in."""
    return _dtype.get_default_dtype().numpy if np_dtype.kind in "biu" else np_dtype


def quiet(fn):
    """``fn(xp, ...)`` with NumPy's floating-point warnings off (PyTorch gives nan and inf
    silently)."""
    def run(xp, *args):
        with np.errstate(all="ignore"):
            return fn(xp, *args)
    return run


def zeros(g):
    """A zero gradient shaped like ``g``."""
    from ember._ops.creation import zeros_like

    return zeros_like(g)


def kind(x) -> str:
    """The dtype kind ("biufc") of a tensor, an array or a Python number."""
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


def xp_of_any(*values):
    """The array module of the first array among ``values`` (numbers are skipped)."""
    for a in values:
        if hasattr(a, "dtype") and hasattr(a, "shape"):
            return xp_of(a)
    return np


# ---------------------------------------------------------------------------
# promotion

INT_RANGES = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max), np.iinfo(t).bits)
              for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)}


def fit_int(s: int, np_dtype):
    """The Python int ``s`` as PyTorch casts it to an integer dtype: wrapped around."""
    rng = INT_RANGES.get(np_dtype)
    if rng is None or rng[0] <= s <= rng[1]:
        return s
    if not -(1 << 63) <= s < (1 << 64):
        raise OverflowError("int too big to convert")
    lo, hi, bits = rng
    s %= 1 << bits
    return s - (1 << bits) if s > hi else s


_OPERAND_TYPES = (TensorBase, int, float, complex, np.ndarray, np.generic, list, tuple)


def need_tensor(x, name, position=2, arg="other"):
    """PyTorch's TypeError for an op that takes no number in this position."""
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


def operands(a, b, name="op"):
    """``a`` and ``b`` promoted to their common dtype (see NOTE [ Operands ])."""
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        for x, pos, arg in ((a, 1, "input"), (b, 2, "other")):
            if not isinstance(x, _OPERAND_TYPES):
                need_tensor(x, name, pos, arg)
        from ember._ops.creation import tensor

        a = tensor(a)
    elif not isinstance(b, _OPERAND_TYPES):
        need_tensor(b, name)
    elif not isinstance(a, _OPERAND_TYPES):
        need_tensor(a, name, 1, "input")
    a, b = promote(a, b)
    if type(b) is int:
        b = fit_int(b, a._data.dtype)
    elif type(a) is int:
        a = fit_int(a, b._data.dtype)
    return a, b


def dtype_of(a, b):
    """The dtype of a promoted pair (one of them is a tensor of the common dtype)."""
    return a._data.dtype if isinstance(a, TensorBase) else b._data.dtype


# ---------------------------------------------------------------------------
# broadcasting

def broadcast_shape(shapes):
    """The broadcast shape, or PyTorch's error naming the first sizes that differ."""
    out = ()
    for shape in shapes:
        n = max(len(out), len(shape))
        a = (1,) * (n - len(out)) + tuple(out)
        b = (1,) * (n - len(shape)) + tuple(shape)
        res = []
        for i in range(n - 1, -1, -1):
            sa, sb = a[i], b[i]
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {i}")
            res.append(sb if sa == 1 else sa)
        out = tuple(reversed(res))
    return out


def run(op, *args):
    """``apply(op, *args)``, with PyTorch's error when tensor shapes do not broadcast."""
    try:
        return apply(op, *args)
    except ValueError:
        broadcast_shape([a._data.shape for a in args if isinstance(a, TensorBase)])
        raise


# ---------------------------------------------------------------------------
# in-place ops and operators

def inplace_binary(cls, self, other, *, extra=(), result=None, kernel=None, kinds=None,
                   cast_check=True, promote_other=True):
    """Run binary op ``cls`` on (self, other) and write the result into ``self``.

    As in PyTorch, the op computes in the common dtype ``rt`` of both operands and its
    result (of dtype ``result(rt)``, rt by default) is cast to self's dtype, which must be
    able to hold it; then the kernel must exist for ``rt`` (its dtype kind in ``kinds``).
    Under autograd a wider ``other`` is cast to self's dtype first, so that gradients keep
    their inputs' dtypes.
    """
    if not isinstance(other, TensorBase):
        v = scalar_value(other)
        if v is None:
            from ember._ops._util import as_tensor_like

            other = as_tensor_like(other, self)
        else:
            other = v
    if promote_other:
        rt = _dtype.result_type(self, other).numpy
        out_dt = result(rt) if result is not None else rt
        if cast_check and not _dtype.can_cast(out_dt, self._data.dtype):
            raise cast_error(out_dt, self._data.dtype)
        if kinds is not None:
            check_kernel(kernel, rt, kinds)
        if isinstance(other, TensorBase):
            if rt == self._data.dtype or (is_grad_enabled() and (
                    self.requires_grad or other.requires_grad)):
                target = self._data.dtype
            else:
                target = rt
            if other._data.dtype != target:
                other = other.to(target)
        elif type(other) is int:
            other = fit_int(other, self._data.dtype)
    try:
        return apply_inplace(cls, self, other, *extra)
    except ValueError:
        if isinstance(other, TensorBase):
            broadcast_shape([self._data.shape, other._data.shape])
        raise


_OPERATOR_TYPES = (TensorBase, int, float, bool, complex, np.ndarray, np.generic)


def forward_op(fn):
    """``self <op> other`` from function ``fn``; NotImplemented for other types."""
    def f(self, other):
        if not isinstance(other, _OPERATOR_TYPES):
            return NotImplemented
        return fn(self, other)
    return f


def reflected_op(fn):
    """``other <op> self`` (``__radd__`` ...) from function ``fn``."""
    def r(self, other):
        if not isinstance(other, _OPERATOR_TYPES):
            return NotImplemented
        return fn(other, self)
    return r


def inplace_op(method):
    """``self <op>= other`` (``__iadd__`` ...) from in-place method ``method``."""
    def f(self, other):
        if not isinstance(other, _OPERATOR_TYPES):
            return NotImplemented
        return method(self, other)
    return f
