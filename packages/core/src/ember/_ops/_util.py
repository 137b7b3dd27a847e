"""Helpers shared by the op families: operands, promotion, dims."""

from __future__ import annotations

import numbers

import numpy as np

from ember import _dtype
from ember._backend import xp_of
from ember._C._core import TensorBase, apply, make_tensor_from_array, wrap_dim

__all__ = [
    "TensorBase", "apply", "wrap", "xp_of", "is_tensor", "as_tensor_like", "promote",
    "wrap_dim", "wrap_dims", "check_same_device", "scalar_value", "ensure_float",
    "type_name", "cpp_type_name", "c10_type_name", "not_implemented", "with_out", "conj",
]

wrap = make_tensor_from_array
_PY_SCALARS = (int, float, bool, complex)


# PyTorch's names of the dtypes, as its error messages print them: the scalar type names
# ("Float"), the C++ names of some kernels' messages ("long int", as the compiler spells
# them) and c10's names in its conversion messages ("int64_t").
_TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
    "uint32": "UInt32", "uint64": "UInt64", "bfloat16": "BFloat16",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}
_CPP_TYPE_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}
_C10_TYPE_NAMES = {
    "bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
    "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def type_name(np_dtype) -> str:
    """PyTorch's scalar type name of a dtype ("Float", "Long", ...), for error messages."""
    name = np.dtype(np_dtype).name
    return _TYPE_NAMES.get(name, name)


def cpp_type_name(np_dtype) -> str:
    """The C++ name of a dtype as some of PyTorch's messages print it ("long int")."""
    name = np.dtype(np_dtype).name
    return _CPP_TYPE_NAMES.get(name, name)


def c10_type_name(np_dtype) -> str:
    """c10's name of a dtype in PyTorch's conversion messages ("int64_t")."""
    name = np.dtype(np_dtype).name
    return _C10_TYPE_NAMES.get(name, name)


def not_implemented(kernel: str, np_dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no loop for a dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{type_name(np_dtype)}\'')


def with_out(result, out):
    """``result``, or, when an ``out=`` tensor was given, copied into ``out`` (which is
    resized to ``result``'s shape) and ``out`` returned."""
    if out is None:
        return result
    out._data = result._data if out._data.shape != result._data.shape else out._data
    out._data[...] = result._data
    out._bump_version()
    return out


def conj(t):
    """The conjugate of a complex tensor or number; any other value as it is."""
    if isinstance(t, TensorBase):
        return t.conj() if t._data.dtype.kind == "c" else t
    return t.conjugate() if isinstance(t, (complex, np.complexfloating)) else t





def is_tensor(x) -> bool:
    return isinstance(x, TensorBase)


def scalar_value(x):
    """A Python number for a NumPy scalar or a bool/int/float/complex, else None."""
    t = type(x)
    if t in _PY_SCALARS:
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Number):
        return complex(x) if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real) \
            else float(x) if not isinstance(x, numbers.Integral) else int(x)
    return None


def as_tensor_like(x, like: TensorBase) -> TensorBase:
    """``x`` (array, sequence, or tensor) as a tensor on ``like``'s device."""
    if isinstance(x, TensorBase):
        return x
    from ember._ops.creation import tensor

    return tensor(x, device=like.device)


def promote(a, b):
    """Bring two operands of a binary elementwise op to their common dtype.

    Returns (a, b) where tensors are cast (a recorded, differentiable cast) and Python
    numbers stay numbers, so that NumPy treats them as weak scalars.
    """
    ta, tb = isinstance(a, TensorBase), isinstance(b, TensorBase)
    if ta and tb:
        da, db = a._data.dtype, b._data.dtype
        if da == db:
            return a, b
        rt = _dtype.result_type(a, b).numpy
        if da != rt:
            a = a.to(rt)
        if db != rt:
            b = b.to(rt)
        return a, b
    if ta:
        v = scalar_value(b)
        if v is None:
            return promote(a, as_tensor_like(b, a))
        return promote_with_scalar(a, v)
    if tb:
        v = scalar_value(a)
        if v is None:
            return promote(as_tensor_like(a, b), b)
        b, v = promote_with_scalar(b, v)
        return v, b
    raise TypeError(f"expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}")


def promote_with_scalar(t: TensorBase, s):
    """(t', s') for tensor ``t`` and number ``s`` under PyTorch's rules: an integer or
    bool tensor meets a float (complex) number in the default float (complex) dtype."""
    kind = t._data.dtype.kind
    if isinstance(s, bool):
        return t, s
    if isinstance(s, complex) and kind != "c":
        target = _dtype.get_default_dtype().to_complex() if kind in "biu" else \
            _dtype.from_numpy(t._data.dtype).to_complex()
        return t.to(target), s
    if isinstance(s, float) and kind in "biu":
        return t.to(_dtype.get_default_dtype()), s
    if isinstance(s, int) and kind == "b":
        return t.to(_dtype.int64), s
    return t, s


def wrap_dims(dim, ndim: int):
    """None, an int or a sequence of ints as a sorted tuple of non-negative dims."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(dim, ndim),)
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
    return dims


def check_same_device(*tensors) -> None:
    devs = {type(t._data) for t in tensors if isinstance(t, TensorBase) and t._data.ndim}
    if len(devs) > 1:
        names = [str(t.device) for t in tensors if isinstance(t, TensorBase)]
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{names[0]} and {names[1]}!")


def ensure_float(t: TensorBase) -> TensorBase:
    """``t`` in the default float dtype if it is an integer or bool tensor."""
    if t._data.dtype.kind in "biu":
        return t.to(_dtype.get_default_dtype())
    return t


def promote_all(tensors):
    """The tensors cast to their common result dtype (for cat, stack, where, ...)."""
    dts = {t._data.dtype for t in tensors}
    if len(dts) == 1:
        return list(tensors)
    rt = _dtype.result_type(*tensors).numpy
    return [t if t._data.dtype == rt else t.to(rt) for t in tensors]


def varargs_or_keyword(fn, args, value, name):
    """The sizes or dims of ``fn(*args)`` or ``fn(name=value)``: PyTorch takes both
    ``x.view(2, 3)`` and ``x.view(size=(2, 3))``."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{fn}() got multiple values for argument '{name}'")
    return (value,)
