"""dtypes and PyTorch's type-promotion rules.

An ember dtype wraps a NumPy dtype (CuPy uses the same ones). Promotion follows
PyTorch, not NumPy: categories bool < integer < floating < complex; within a category
the wider type wins; a dimensioned tensor outranks a zero-dim tensor, which outranks a
Python number, and the lower-ranked operand only matters when its category is higher
(``int_tensor * 2.5`` is the default float dtype, ``float16_tensor * 2.5`` stays float16).
"""

from __future__ import annotations

import builtins
import sys
import threading

import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
    "float64", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
    "cfloat", "cdouble", "uint16", "uint32", "uint64", "bfloat16", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "get_default_dtype",
    "set_default_dtype", "promote_types", "result_type", "can_cast", "finfo", "iinfo",
]

# NOTE [ ml_dtypes, loaded lazily ]
# bfloat16 and the float8 types are NumPy dtypes from the ml_dtypes package (a dependency
# of ember). Importing it registers its types and ufunc loops with NumPy, which costs more
# than the rest of ``import ember`` together, so it is imported the first time one of
# those dtypes' NumPy type is needed (creating or converting a tensor of that dtype), or
# when an array of such a type arrives from elsewhere (``from_numpy``).
_ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
              "float8_e5m2fnuz", "float8_e8m0fnu")
_ml_state = {"module": None}


def _ml_dtypes():
    """The ml_dtypes module, imported on first use; the ember dtypes it backs are added to
    the lookup by NumPy dtype then."""
    mod = _ml_state["module"]
    if mod is None:
        import ml_dtypes as mod

        _ml_state["module"] = mod
        for name in _ML_DTYPES:
            d = _BY_NAME[name]
            _BY_NUMPY[d.numpy] = d
    return mod


class dtype:
    """The type of a tensor's elements, e.g. ``ember.float32``."""

    __slots__ = ("name", "_np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "__weakref__")

    def __init__(self, name: str, np_dtype, *, kind=None, itemsize=None) -> None:
        self.name = name
        self._np = None if np_dtype is None else np.dtype(np_dtype)
        kind = kind or self._np.kind
        self.itemsize = itemsize or self._np.itemsize
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "ifc"
        self._category = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[kind]

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype of this type's arrays."""
        np_dt = self._np
        if np_dt is None:  # an ml_dtypes type (NOTE [ ml_dtypes, loaded lazily ])
            np_dt = self._np = np.dtype(getattr(_ml_dtypes(), self.name))
        return np_dt

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        return {float16: complex64, float32: complex64, float64: complex128}.get(
            self, complex64 if self.name == "bfloat16" else self)


bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8", np.uint8)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
# PyTorch's "limited support" types: created, converted and saved; their arithmetic is
# NumPy's (PyTorch refuses most of it), their promotion with other integers an error.
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
bfloat16 = dtype("bfloat16", None, kind="f", itemsize=2)
float8_e4m3fn = dtype("float8_e4m3fn", None, kind="f", itemsize=1)
float8_e5m2 = dtype("float8_e5m2", None, kind="f", itemsize=1)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", None, kind="f", itemsize=1)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", None, kind="f", itemsize=1)
# an 8-bit exponent, no sign, no mantissa (powers of two: MX formats' block scales)
float8_e8m0fnu = dtype("float8_e8m0fnu", None, kind="f", itemsize=1)

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, float32, float64,
              complex64, complex128, uint16, uint32, uint64, bfloat16, float8_e4m3fn,
              float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
_BY_NUMPY = {d._np: d for d in ALL_DTYPES if d._np is not None}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_UNSIGNED_WIDE = (uint16, uint32, uint64)
_FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

# PyTorch's ScalarType names, as its messages print them
TORCH_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
    "uint32": "UInt32", "uint64": "UInt64", "bfloat16": "BFloat16",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> dtype:
    """The ember dtype of a NumPy dtype; TypeError for types ember does not have."""
    try:
        return _BY_NUMPY[np_dtype]
    except (KeyError, TypeError):
        pass
    try:
        np_dt = np.dtype(np_dtype)
    except TypeError:
        np_dt = None
    if np_dt is not None:
        if np_dt in _BY_NUMPY:
            return _BY_NUMPY[np_dt]
        if np_dt.kind == "V" and _ml_state["module"] is None and "ml_dtypes" in sys.modules:
            _ml_dtypes()  # an ml_dtypes array from another library
            if np_dt in _BY_NUMPY:
                return _BY_NUMPY[np_dt]
    raise TypeError(
        f"can't convert np.ndarray of type {np_dt}. The only supported types are: float64, "
        "float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, "
        "float8_e5m2fnuz, float8_e8m0fnu, complex64, complex128, int64, int32, int16, int8, "
        "uint64, uint32, uint16, uint8, and bool.")


def to_numpy(d) -> np.dtype:
    """The NumPy dtype for an ember dtype (NumPy dtypes and Python types pass through)."""
    if isinstance(d, dtype):
        return d.numpy
    if d is builtins.float:
        return get_default_dtype().numpy
    if d is builtins.int:
        return np.dtype(np.int64)
    if d is builtins.bool:
        return np.dtype(np.bool_)
    if d is builtins.complex:
        return get_default_dtype().to_complex().numpy
    return from_numpy(d).numpy


def as_dtype(d) -> dtype:
    """Accept an ember dtype, a NumPy dtype or a Python type; return the ember dtype."""
    if isinstance(d, dtype):
        return d
    return from_numpy(to_numpy(d))


# ---------------------------------------------------------------------------
# default dtype

_state = threading.local()
_global_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors made from Python floats (float32 at start)."""
    return _global_default[0]


def set_default_dtype(d, /) -> None:
    """Set the default floating-point dtype; only float32 and float64 (and float16)."""
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(
            f"only floating-point types are supported as the default type, got {d}")
    _global_default[0] = d


# ---------------------------------------------------------------------------
# promotion

_promote_cache: dict = {}


def promote_types(type1, type2) -> dtype:
    """The smallest dtype to which both ``type1`` and ``type2`` can be cast, by PyTorch's
    rules."""
    a, b = as_dtype(type1), as_dtype(type2)
    key = (a, b)
    r = _promote_cache.get(key)
    if r is None:
        r = _promote(a, b)
        _promote_cache[key] = r
    return r


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{TORCH_NAMES[a.name]} and {TORCH_NAMES[b.name]}")
    if (a in _UNSIGNED_WIDE or b in _UNSIGNED_WIDE) and a._category < 2 and b._category < 2:
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
            f"promote {TORCH_NAMES[a.name]} and {TORCH_NAMES[b.name]}")
    if "bfloat16" in (a.name, b.name):  # NumPy has no rule for ml_dtypes' bfloat16
        other = b if a.name == "bfloat16" else a
        if other._category < 2:
            return a if a.name == "bfloat16" else b
        return other if other.itemsize > 2 else float32
    if a._category == b._category:
        return from_numpy(np.promote_types(a.numpy, b.numpy))
    hi, lo = (a, b) if a._category > b._category else (b, a)
    if hi.is_complex and lo.is_floating_point:
        return from_numpy(np.promote_types(hi.numpy, lo.numpy))
    return hi


def _combine_categories(higher, lower):
    """c10's rule for mixing a higher-priority result with a lower-priority one."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(x) -> dtype:
    """The dtype a Python number takes in promotion."""
    if isinstance(x, builtins.bool):
        return bool
    if isinstance(x, builtins.int):
        return int64
    if isinstance(x, builtins.float):
        return get_default_dtype()
    if isinstance(x, builtins.complex):
        return get_default_dtype().to_complex()
    if isinstance(x, np.generic):
        return from_numpy(x.dtype)
    raise TypeError(f"expected a number, got {type(x).__name__}")


def result_type(*operands) -> dtype:
    """The dtype of an elementwise op's result on ``operands`` (tensors and numbers)."""
    dim_r = zero_r = wrapped_r = None
    for x in operands:
        data = getattr(x, "_data", None)
        if data is not None:
            d = from_numpy(data.dtype)
            if data.ndim == 0:
                zero_r = d if zero_r is None else promote_types(zero_r, d)
            else:
                dim_r = d if dim_r is None else promote_types(dim_r, d)
        elif isinstance(x, dtype):
            dim_r = x if dim_r is None else promote_types(dim_r, x)
        else:
            d = scalar_dtype(x)
            wrapped_r = d if wrapped_r is None else promote_types(wrapped_r, d)
    return _combine_categories(dim_r, _combine_categories(zero_r, wrapped_r))


def can_cast(from_, to) -> builtins.bool:
    """True if casting ``from_`` to ``to`` is allowed by PyTorch's casting rules."""
    return as_dtype(from_)._category <= as_dtype(to)._category


# ---------------------------------------------------------------------------
# finfo / iinfo

class finfo:
    """Machine limits of a floating-point dtype (``ember.finfo(ember.float32).eps``)."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        d = get_default_dtype() if type is None else as_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError(f"finfo expects a floating point dtype, got {d}")
        info = (_ml_dtypes().finfo if d.name in _ML_DTYPES else np.finfo)(d.numpy)
        self.dtype = d.to_real().name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        if d.name == "float8_e5m2fnuz":  # PyTorch's c10 limits say 2**-3 (ml_dtypes: 2**-2)
            self.eps = 0.125
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = builtins.float(info.tiny)
        self.smallest_normal = self.tiny
        self.resolution = builtins.float(info.resolution)
        if d.name == "float8_e8m0fnu":  # no mantissa: c10 says resolution 1 (ml_dtypes 1/8)
            self.resolution = 1.0

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (``ember.iinfo(ember.int32).max``)."""

    def __init__(self, type):  # noqa: A002
        d = as_dtype(type)
        if d.is_floating_point or d.is_complex:
            raise TypeError(f"iinfo expects an integer dtype, got {d}")
        info = np.iinfo(np.int8 if d is bool else d.numpy) if d is not bool else None
        self.dtype = d.name
        if d is bool:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            self.bits = info.bits
            self.min, self.max = builtins.int(info.min), builtins.int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
