"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, ranges, eye."""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence

import numpy as np

from ember import _dtype
from ember._backend import backend_for_device, backend_of, cpu
from ember._C._core import TensorBase, dispatched, make_tensor_from_array
from ember._device import device as _device_cls
from ember._misc import preserve_format
from ember._ops._memory_format import check_format, relaid
from ember._ops._util import (
    apply,
    c10_type_name,
    not_implemented,
    type_name,
    varargs_or_keyword,
    with_out,
)

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "full",
    "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range",
    "linspace", "logspace", "eye", "scalar_tensor", "empty_strided", "complex", "polar",
]

_PY_NUMBERS = (builtins.bool, builtins.int, builtins.float, builtins.complex)

# ember.set_default_device: the device of creation ops given no device (None: the CPU)
DEFAULT_DEVICE = [None]


def _backend(device):
    if device is None:
        device = DEFAULT_DEVICE[0]
    return backend_for_device(device) if device is not None else cpu


def _sizes(size, fn=None):
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])`` all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, TensorBase):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"size must be a sequence of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _require_size(fn, size):
    if not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')


def _finish(array, requires_grad):
    t = make_tensor_from_array(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---------------------------------------------------------------------------
# tensor(): Python data to arrays, with PyTorch's dtype inference

def _to_nested_arrays(data):
    """Replace tensors inside nested lists by NumPy arrays (detached)."""
    if isinstance(data, TensorBase):
        return backend_of(data._data).to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        return [_to_nested_arrays(d) for d in data]
    return data


def _collect_types(data, types: set, dtypes: set) -> None:
    """The element types of nested sequences (into ``types``) and the dtypes of the
    arrays, tensors and NumPy scalars met in them (into ``dtypes``)."""
    kinds = set(map(type, data))
    for k in kinds:
        if k in _PY_NUMBERS:
            types.add(k)
        elif k is list or k is tuple:
            for item in data:
                if type(item) is k:
                    _collect_types(item, types, dtypes)
        elif isinstance(next(x for x in data if type(x) is k), (np.generic, np.ndarray)):
            dtypes.update(x.dtype for x in data if type(x) is k)
        elif issubclass(k, TensorBase):
            dtypes.update(x._data.dtype for x in data if type(x) is k)
        elif issubclass(k, (str, bytes)):
            raise ValueError(f"too many dimensions '{k.__name__}'")
        elif issubclass(k, (list, tuple)):
            for item in data:
                if type(item) is k:
                    _collect_types(list(item), types, dtypes)
        else:
            raise RuntimeError(f"Could not infer dtype of {k.__name__}")


def _python_dtype(types: set, dtypes: set):
    """The dtype PyTorch infers for a sequence holding ``types`` and ``dtypes``."""
    if not dtypes:
        if builtins.complex in types:
            return _dtype.get_default_dtype().to_complex().numpy
        if builtins.float in types:
            return _dtype.get_default_dtype().numpy
        if builtins.int in types:
            return np.dtype(np.int64)
        if builtins.bool in types:
            return np.dtype(np.bool_)
        return _dtype.get_default_dtype().numpy  # empty sequence
    result = None
    for t in types:
        d = _dtype.scalar_dtype(t(0))
        result = d if result is None else _dtype.promote_types(result, d)
    for dt in dtypes:
        d = _dtype.from_numpy(dt)
        result = d if result is None else _dtype.promote_types(result, d)
    return result.numpy


def _ragged_error(data):
    """The error PyTorch raises for nested sequences that do not form an array."""
    shape = []
    probe = data
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]

    def walk(x, dim):
        if dim == len(shape):
            if isinstance(x, (list, tuple)):
                return TypeError(f"'{type(x).__name__}' object cannot be interpreted as a number")
            return None
        if not isinstance(x, (list, tuple)):
            return TypeError("not a sequence")
        if len(x) != shape[dim]:
            return ValueError(
                f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})")
        for item in x:
            err = walk(item, dim + 1)
            if err is not None:
                return err
        return None

    return walk(data, 0) or ValueError("could not build a tensor from ragged nested sequences")


def _infer_array(data, dtype=None):
    """A NumPy array for ``data`` and the dtype PyTorch gives it (``dtype`` if given)."""
    if isinstance(data, np.ndarray):
        return data, (data.dtype if dtype is None else dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), (data.dtype if dtype is None else dtype)
    if isinstance(data, (str, bytes)):
        raise TypeError("new(): invalid data type 'str'")
    types, dtypes = set(), set()
    if type(data) in _PY_NUMBERS:
        types.add(type(data))
    elif isinstance(data, (list, tuple)):
        _collect_types(data, types, dtypes)
        if dtypes:
            data = _to_nested_arrays(data)
    elif hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        arr = np.asarray(data)
        return arr, (arr.dtype if dtype is None else dtype)
    elif isinstance(data, Sequence):
        return _infer_array(list(data), dtype)
    else:
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    target = dtype if dtype is not None else _python_dtype(types, dtypes)
    try:
        arr = np.asarray(data)
    except ValueError:
        raise _ragged_error(data) from None
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if arr.dtype == object:
        if types <= {builtins.int, builtins.bool} and not dtypes and arr.ndim <= 1:
            raise ValueError("Overflow when unpacking long long")
        raise _ragged_error(data)
    if arr.dtype == np.uint64 and not dtypes and np.dtype(target).kind in "iub":
        raise ValueError("Overflow when unpacking long long")
    return arr, target


@dispatched
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor).

    Python floats give the default dtype (float32), ints int64, bools bool; NumPy
    arrays and scalars keep their dtype; mixed sequences promote as PyTorch does.

    Examples::

        >>> ember.tensor([[1., 2.], [3., 4.]])
        tensor([[1., 2.],
                [3., 4.]])
    """
    if isinstance(data, TensorBase):
        arr = data._data
        out_backend = _backend(device) if device is not None else backend_of(arr)
        arr = out_backend.to_device(arr) \
            if out_backend is not backend_of(arr) else arr.copy()
        if dtype is not None:
            arr = arr.astype(_dtype.to_numpy(dtype), copy=False)
        return _finish(arr, requires_grad)
    if hasattr(data, "__cuda_array_interface__") and not isinstance(data, np.ndarray):
        b = backend_of(data)
        arr = data.astype(_dtype.to_numpy(dtype)) if dtype is not None else data.copy()
        if device is not None:
            arr = _backend(device).to_device(arr)
        return _finish(arr, requires_grad)
    arr, np_dtype = _infer_array(data, _dtype.to_numpy(dtype) if dtype is not None else None)
    _dtype.from_numpy(np_dtype)  # rejects dtypes ember does not have
    arr = np.array(arr, dtype=np_dtype, copy=True, order="C")
    b = _backend(device)
    if b is not cpu:
        arr = b.to_device(arr)
    return _finish(arr, requires_grad)


@dispatched
def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor` but shares memory with ``data`` when it can (a tensor or a
    NumPy array of the same dtype and device)."""
    if isinstance(data, TensorBase):
        if dtype is None and device is None:
            return data
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (device is None or str(device) == "cpu"):
        if dtype is None or _dtype.to_numpy(dtype) == data.dtype:
            _dtype.from_numpy(data.dtype)
            return make_tensor_from_array(data)
    return tensor(data, dtype=dtype, device=device)


@dispatched
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``as_tensor`` with ``copy`` control, as ``torch.asarray``."""
    if copy:
        t = tensor(obj, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


@dispatched
def from_numpy(ndarray: np.ndarray):
    """A tensor sharing memory with ``ndarray``: changes to either show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around "
            "this by making a copy of your array  with array.copy().)")
    return make_tensor_from_array(ndarray)


@dispatched
def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with any object that implements the DLPack protocol
    (a NumPy or CuPy array, a PyTorch tensor, another ember tensor, ...).

    Args:
        device: the device of the result; a copy is made if it is not the object's.
        copy: True always copies, False never does (an error if ``device`` needs one),
            None (the default) copies only for another device.
    """
    t = _from_dlpack(ext_tensor)
    if device is not None and t.device != _device_cls(device):
        if copy is False:
            raise ValueError(f"from_dlpack: copy=False, but the tensor is on {t.device}, "
                             f"not {_device_cls(device)}")
        return t.to(device)
    return t.clone() if copy else t


def _from_dlpack(ext_tensor):
    if isinstance(ext_tensor, TensorBase):
        return make_tensor_from_array(ext_tensor._data)
    dev_type = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") \
        else 1
    if dev_type == 1:
        arr = np.from_dlpack(ext_tensor)
    else:
        arr = backend_for_device("cuda").xp.from_dlpack(ext_tensor)
    _dtype.from_numpy(arr.dtype)
    return make_tensor_from_array(arr)


# ---------------------------------------------------------------------------
# filled tensors

def _dtype_or_default(dtype, fallback=None):
    if dtype is not None:
        return _dtype.to_numpy(dtype)
    return fallback if fallback is not None else _dtype.get_default_dtype().numpy


def _overflow(np_dtype):
    return RuntimeError(
        f"value cannot be converted to type {c10_type_name(np_dtype)} "
        "without overflow")


def _checked_scalar(value, np_dtype):
    """``value`` (a Python number) as a NumPy scalar of ``np_dtype``, with PyTorch's
    overflow checks (c10's ``checked_convert``: integers may wrap into unsigned types
    from [-max, max]; floats convert by truncation and must lie in the type's range)."""
    np_dtype = np.dtype(np_dtype)
    kind = np_dtype.kind
    if isinstance(value, builtins.complex) and kind != "c":
        if value.imag != 0:
            raise _overflow(np_dtype)
        value = value.real
    if kind == "b":
        return np.bool_(value)
    if kind in "iu":
        info = np.iinfo(np_dtype)
        if isinstance(value, builtins.float):
            if not info.min <= value <= info.max:  # also catches nan
                raise _overflow(np_dtype)
            value = builtins.int(value)
        value = builtins.int(value)
        lo = -builtins.int(info.max) if kind == "u" else builtins.int(info.min)
        if not lo <= value <= builtins.int(info.max):
            raise _overflow(np_dtype)
        return np.asarray(value, dtype=np.int64).astype(np_dtype)[()]
    if kind == "f":
        value = builtins.float(value)
        if math.isfinite(value) and abs(value) > builtins.float(np.finfo(np_dtype).max):
            raise _overflow(np_dtype)
        return np_dtype.type(value)
    return np_dtype.type(value)


def _filled(kind, size, fill, dtype, device, requires_grad, fn=None):
    b = _backend(device)
    shape = _sizes(size, fn)
    np_dtype = _dtype_or_default(dtype)
    xp = b.xp
    with b.context():
        if kind == "zeros":
            arr = xp.zeros(shape, dtype=np_dtype)
        elif kind == "ones":
            arr = xp.ones(shape, dtype=np_dtype)
        elif kind == "empty":
            arr = xp.empty(shape, dtype=np_dtype)
        else:
            arr = xp.full(shape, _checked_scalar(fill, np_dtype), dtype=np_dtype)
    return _finish(arr, requires_grad)


@dispatched
def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """A tensor of zeros with shape ``size`` (ints, or one tuple or list of ints)."""
    size = varargs_or_keyword("zeros", args, size, "size")
    _require_size("zeros", size)
    return with_out(_filled("zeros", size, 0, dtype, device, requires_grad, "zeros"), out)


@dispatched
def ones(*args, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor of ones with shape ``size``."""
    size = varargs_or_keyword("ones", args, size, "size")
    _require_size("ones", size)
    return with_out(_filled("ones", size, 1, dtype, device, requires_grad), out)


@dispatched
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialized tensor with shape ``size`` (laid out in ``memory_format``)."""
    t = _filled("empty", size, 0, dtype, device, requires_grad)
    if memory_format is not None:
        t = relaid(t, check_format(memory_format, "empty"))
    return with_out(t, out)


@dispatched
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialized tensor with shape ``size`` and strides ``stride`` (in elements)."""
    shape = _sizes((tuple(size),))
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(
            f"mismatch in length of strides and shape: {len(stride)} vs {len(shape)}")
    np_dtype = _dtype_or_default(dtype)
    b = _backend(device)
    xp = b.xp
    if any(s == 0 for s in shape):
        with b.context():
            return _finish(xp.empty(shape, dtype=np_dtype), requires_grad)
    extent = 1 + builtins.sum((n - 1) * s for n, s in zip(shape, stride))
    with b.context():
        buf = xp.empty(extent, dtype=np_dtype)
    item = np_dtype.itemsize
    arr = xp.lib.stride_tricks.as_strided(buf, shape, tuple(s * item for s in stride))
    return _finish(arr, requires_grad)


@dispatched
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value
    (bool, int64, the default float or complex dtype) unless given."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    if isinstance(fill_value, TensorBase):
        fill_value = fill_value.item()
    elif isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    return with_out(_filled("full", (tuple(size),), fill_value, dtype, device,
                             requires_grad), out)


@dispatched
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``s``, of the default dtype unless ``dtype`` is given."""
    if isinstance(s, TensorBase):
        s = s.item()
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _like_format(t, input, memory_format):
    """``t``, made like ``input``, in ``memory_format`` (default ``preserve_format``: a
    channels-last ``input`` gives a channels-last ``t``; NOTE [ Memory formats ])."""
    if memory_format is None and input._data.flags.c_contiguous:
        return t
    return relaid(t, check_format(memory_format or preserve_format, "empty_like"), input)


def _like(input, dtype, device):
    return (dtype if dtype is not None else input.dtype,
            device if device is not None else input.device)


@dispatched
def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """A tensor of zeros with the shape (and dtype and device, unless given) of ``input``."""
    dtype, device = _like(input, dtype, device)
    t = zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)
    return _like_format(t, input, memory_format)


@dispatched
def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """A tensor of ones shaped like ``input``."""
    dtype, device = _like(input, dtype, device)
    t = ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)
    return _like_format(t, input, memory_format)


@dispatched
def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """An uninitialized tensor shaped like ``input``."""
    dtype, device = _like(input, dtype, device)
    t = empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)
    return _like_format(t, input, memory_format)


@dispatched
def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype
    unless ``dtype`` is given)."""
    dtype, device = _like(input, dtype, device)
    return _like_format(full(tuple(input.shape), fill_value, dtype=dtype, device=device,
                             requires_grad=requires_grad), input, memory_format)


# ---------------------------------------------------------------------------
# ranges
#
# NOTE [ Ranges match PyTorch bit for bit ]
# PyTorch's CPU kernels compute ranges with fused multiply-adds (the compiler
# contracts ``start + step * i``), arange in a wider accumulator type and, for arange,
# in SIMD blocks of 32 bytes whose lanes add ``k * step`` to the block's first value.
# The helpers below reproduce that arithmetic with error-free transformations in
# NumPy, so ``linspace`` (all sizes) and ``arange`` (up to 32768 elements, PyTorch's
# grain size for splitting work between threads) give the same values as PyTorch.

_VEC_BYTES = 32
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitter for float64


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma64(a, b, c):
    """``a * b + c`` rounded once, in float64 (arrays broadcast)."""
    a, b, c = np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ca, cb = _SPLIT * a, _SPLIT * b
        ah, bh = ca - (ca - a), cb - (cb - b)
        al, bl = a - ah, b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s, t = _two_sum(p, c)
        r = s + (t + e)
    return np.where(np.isfinite(r), r, p + c)


def _fma32(a, b, c):
    """``a * b + c`` rounded once to float32, for float32 values (arrays broadcast)."""
    a, b, c = np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        s, t = _two_sum(a * b, c)  # a * b is exact in float64
        r = s.astype(np.float32)
        d = s - r.astype(np.float64)
        toward = np.nextafter(r, np.where(d > 0, np.float32(np.inf), np.float32(-np.inf)))
        half_gap = (toward.astype(np.float64) - r.astype(np.float64)) / 2
        # s exactly between two float32 values: the sign of t decides, not ties-to-even
        tie = (d != 0) & (d == half_gap) & (t != 0)
        fix = tie & ((t > 0) == (d > 0))
    return np.where(fix, toward, r)


def _trunc_int(x, np_dtype):
    """A Python number as the integer ``Scalar.to<T>()`` gives (truncation, checked)."""
    return builtins.int(_checked_scalar(x, np_dtype).astype(np.int64)) \
        if np.dtype(np_dtype).kind == "u" else builtins.int(_checked_scalar(x, np_dtype))


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, builtins.float) else str(x)


def _check_range(start, end, step):
    dstart, dend, dstep = builtins.float(start), builtins.float(end), builtins.float(step)
    if not (dstep > 0 or dstep < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(dstart) and math.isfinite(dend)):
        raise RuntimeError(f"unsupported range: {_fmt(dstart)} -> {_fmt(dend)}")
    if not ((dstep > 0 and dend >= dstart) or (dstep < 0 and dend <= dstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _range_number(x, name):
    if isinstance(x, TensorBase):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if not isinstance(x, _PY_NUMBERS):
        raise TypeError(f"{name} must be a number, not {type(x).__name__}")
    return x


def _arange_values(start, step, n, np_dtype):
    idx = np.arange(n, dtype=np.int64)
    if np_dtype.kind in "iu":
        s, st = _trunc_int(start, np.int64), _trunc_int(step, np.int64)
        with np.errstate(over="ignore"):
            return (np.int64(s) + np.int64(st) * idx).astype(np_dtype)
    if np_dtype == np.float16:
        acc, fma = np.float32, _fma32
    else:
        acc, fma = np.float64, _fma64
    out_t = np_dtype.type
    s, st = acc(start), acc(step)
    width = _VEC_BYTES // np_dtype.itemsize
    n_vec = (n // (2 * width)) * 2 * width
    scalar = fma(st, idx.astype(acc), s).astype(np_dtype)
    if n_vec == 0:
        return scalar
    lane = idx[:n_vec] % width
    base = fma(st, (idx[:n_vec] - lane).astype(acc), s).astype(np_dtype)
    # Vectorized<T>::arange(base, step) keeps step in the accumulator type
    vec_fma = _fma64 if np_dtype == np.float32 else fma
    vec = vec_fma(st, lane.astype(acc), base.astype(acc)).astype(out_t)
    scalar[:n_vec] = vec
    return scalar


@dispatched
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` in steps of ``step``.

    The dtype is int64 when all arguments are integers, else the default float dtype.
    The values are computed as PyTorch's CPU kernel does, so they match it exactly.

    Examples::

        >>> ember.arange(5)
        tensor([0, 1, 2, 3, 4])
        >>> ember.arange(1, 2.5, 0.5)
        tensor([1.0000, 1.5000, 2.0000])
    """
    start = _range_number(start, "start")
    step = _range_number(step, "step")
    if end is None:
        start, end = 0, start
    else:
        end = _range_number(end, "end")
    if dtype is None:
        ints = all(isinstance(v, builtins.int) for v in (start, end, step))
        np_dtype = np.dtype(np.int64) if ints else _dtype.get_default_dtype().numpy
    else:
        np_dtype = _dtype.to_numpy(dtype)
    if np_dtype.kind in "bc":
        raise not_implemented("arange_cpu", np_dtype)
    if any(isinstance(v, builtins.complex) for v in (start, end, step)):
        start, end, step = (v.real if isinstance(v, builtins.complex) else v
                            for v in (start, end, step))
    _check_range(start, end, step)
    if np_dtype == np.int64:
        xs, xe, xst = (_trunc_int(v, np.int64) for v in (start, end, step))
        if xst == 0:
            raise ValueError("step must be nonzero")
        num = xe - xs + xst - (1 if xst > 0 else -1)
        n = abs(num) // abs(xst) if (num >= 0) == (xst > 0) else 0
    else:
        size = math.ceil((builtins.float(end) - builtins.float(start)) / builtins.float(step))
        if not 0 <= size <= np.iinfo(np.int64).max:
            raise RuntimeError("invalid size, possible overflow?")
        n = builtins.int(size)
    arr = _arange_values(start, step, n, np_dtype)
    b = _backend(device)
    if b is not cpu:
        arr = b.to_device(arr)
    return with_out(_finish(arr, requires_grad), out)


@dispatched
def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """Deprecated in PyTorch: values from ``start`` to ``end`` inclusive."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).", UserWarning, stacklevel=2)
    start, step = _range_number(start, "start"), _range_number(step, "step")
    if end is None:
        start, end = 0, start
    else:
        end = _range_number(end, "end")
    np_dtype = _dtype_or_default(dtype)
    if np_dtype.kind in "bc":
        raise not_implemented("range_cpu", np_dtype)
    _check_range(start, end, step)
    if np_dtype.kind in "iu":
        s, st, e = (_trunc_int(v, np.int64) for v in (start, step, end))
        n = builtins.int((e - s) / st + 1)
        arr = (np.int64(s) + np.int64(st) * np.arange(n, dtype=np.int64)).astype(np_dtype)
    else:
        acc = np.float32 if np_dtype == np.float16 else np.float64
        n = builtins.int((acc(end) - acc(start)) / acc(step) + 1)
        arr = (acc(start) + np.arange(n, dtype=acc) * acc(step)).astype(np_dtype)
    arr = _backend(device).to_device(arr)
    return with_out(_finish(arr, requires_grad), out)


def _steps_arg(steps, fn):
    if isinstance(steps, TensorBase):
        steps = steps.item()
    if not isinstance(steps, (builtins.int, np.integer)) or isinstance(steps, builtins.bool):
        raise TypeError(f"{fn}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return builtins.int(steps)


def _endpoint(x, name, fn):
    if isinstance(x, TensorBase):
        if x._data.ndim != 0:
            raise RuntimeError(
                f"{fn} only supports 0-dimensional start and end tensors, but got {name} "
                f"with {x._data.ndim} dimension(s).")
        return x.item()
    return _range_number(x, name)


def _range_dtype(start, end, dtype, fn):
    is_complex = isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
    if dtype is None:
        default = _dtype.get_default_dtype()
        return (default.to_complex() if is_complex else default).numpy
    np_dtype = _dtype.to_numpy(dtype)
    if is_complex and np_dtype.kind != "c":
        inferred = _dtype.get_default_dtype().to_complex().numpy
        raise RuntimeError(
            f"torch.{fn}(): inferred dtype {c10_type_name(inferred)} can't be safely "
            f"cast to passed dtype {type_name(np_dtype)}")
    return np_dtype


def _half(x):
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def _linspace_values(start, end, steps, np_dtype):
    idx = np.arange(steps, dtype=np.int64)
    halfway = steps // 2
    lo, hi = idx < halfway, steps - idx - 1
    kind = np_dtype.kind
    if kind in "iu":
        s = _trunc_int(start, np_dtype)
        e = _trunc_int(end, np_dtype)
        if kind == "u":  # the kernel works on the wrapped values
            s, e = (builtins.int(np.int64(v).astype(np_dtype)) for v in (s, e))
        step = (builtins.float(e) - builtins.float(s)) / (steps - 1)
        v = np.where(lo, _fma64(step, idx, builtins.float(s)),
                     _fma64(-step, hi, builtins.float(e)))
        with np.errstate(invalid="ignore"):
            return np.trunc(v).astype(np.int64).astype(np_dtype)
    if np_dtype == np.float16:
        s, e = _half(start), _half(end)
        step = _half(_half(e - s) / _half(steps - 1))
        v = np.where(lo, s + _half(step * _half(idx)), e - _half(step * _half(hi)))
        return v.astype(np.float16)
    if kind == "c":  # c10::complex arithmetic with a real step count is componentwise
        real = np.dtype(np_dtype.char.lower())
        s, e = builtins.complex(start), builtins.complex(end)
        out = np.empty(steps, np_dtype)
        out.real = _linspace_values(s.real, e.real, steps, real)
        out.imag = _linspace_values(s.imag, e.imag, steps, real)
        return out
    t = np_dtype.type
    s, e = _checked_scalar(start, np_dtype), _checked_scalar(end, np_dtype)
    step = t((e - s) / t(steps - 1))
    fma = _fma32 if np_dtype == np.float32 else _fma64
    fidx, fhi = idx.astype(np_dtype), hi.astype(np_dtype)  # C++ converts the index first
    return np.where(lo, fma(step, fidx, s), fma(-step, fhi, e)).astype(np_dtype)


@dispatched
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Computed as PyTorch does (from both ends towards the middle, with fused
    multiply-adds), so the values match PyTorch's exactly.

    Examples::

        >>> ember.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    start = _endpoint(start, "start", "linspace")
    end = _endpoint(end, "end", "linspace")
    steps = _steps_arg(steps, "linspace")
    np_dtype = _range_dtype(start, end, dtype, "linspace")
    if np_dtype.kind == "b":
        raise not_implemented("linspace_cpu", np_dtype)
    if steps == 0:
        arr = np.zeros(0, dtype=np_dtype)
    elif steps == 1:
        arr = np.full(1, _checked_scalar(start, np_dtype), dtype=np_dtype)
    else:
        arr = _linspace_values(start, end, steps, np_dtype)
    arr = _backend(device).to_device(arr)
    return with_out(_finish(arr, requires_grad), out)


@dispatched
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced on a
    log scale (computed as PyTorch does).

    Examples::

        >>> ember.logspace(0, 3, 4)
        tensor([   1.,   10.,  100., 1000.])
    """
    start = _endpoint(start, "start", "logspace")
    end = _endpoint(end, "end", "logspace")
    steps = _steps_arg(steps, "logspace")
    np_dtype = _range_dtype(start, end, dtype, "logspace")
    if np_dtype.kind == "b":
        raise not_implemented("logspace_cpu", np_dtype)
    base = builtins.float(base)
    kind = np_dtype.kind
    if steps == 0:
        arr = np.zeros(0, dtype=np_dtype)
    elif steps == 1:
        v = np.power(np.complex128(base), np.complex128(start)) if kind == "c" else \
            np.power(base, builtins.float(start.real if isinstance(start, builtins.complex)
                                          else start))
        arr = np.full(1, v).astype(np_dtype)
    elif kind == "c":
        t = np_dtype.type
        s, e = t(start), t(end)
        step = (e - s) / t(steps - 1)
        idx = np.arange(steps)
        lo = idx < steps // 2
        expo = np.where(lo, s + step * idx.astype(np_dtype),
                        e - step * (steps - idx - 1).astype(np_dtype))
        arr = np.power(t(base), expo).astype(np_dtype)
    else:
        if kind in "iu":
            s, e = _trunc_int(start, np_dtype), _trunc_int(end, np_dtype)
            diff = builtins.float(e - s)
        elif np_dtype == np.float16:
            s, e = _half(start), _half(end)
            diff = builtins.float(_half(e - s))
        else:
            s, e = _checked_scalar(start, np_dtype), _checked_scalar(end, np_dtype)
            diff = builtins.float(e - s)
        step = diff / (steps - 1)
        idx = np.arange(steps, dtype=np.int64)
        # plain multiply-add here: PyTorch's logspace is not built with FMA contraction
        expo = np.where(idx < steps // 2, builtins.float(s) + step * idx.astype(np.float64),
                        builtins.float(e) - step * (steps - idx - 1).astype(np.float64))
        # C's pow (correctly rounded in glibc), as PyTorch uses: NumPy's SIMD power
        # may differ in the last bit
        v = np.array([_c_pow(base, x) for x in expo.tolist()], dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            if np_dtype == np.float16:  # c10::Half is made from a float
                v = v.astype(np.float32)
            arr = (np.trunc(v).astype(np.int64) if kind in "iu" else v).astype(np_dtype)
    arr = _backend(device).to_device(arr)
    return with_out(_finish(arr, requires_grad), out)


def _c_pow(x, y):
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf if x > 0 or builtins.float(y).is_integer() and y % 2 == 0 else -math.inf
    except ValueError:
        return math.nan


@dispatched
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-d tensor with ones on the diagonal and zeros elsewhere (``n`` rows, ``m``
    columns, ``m = n`` by default)."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and (not isinstance(v, (builtins.int, np.integer))
                              or isinstance(v, builtins.bool)):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is None:
        m = n
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    b = _backend(device)
    with b.context():
        arr = b.xp.eye(builtins.int(n), builtins.int(m), dtype=_dtype_or_default(dtype))
    return with_out(_finish(arr, requires_grad), out)


def _check_float_pair(a, b):
    """PyTorch's checks of complex() and polar(): two float tensors of one dtype."""
    da, db = a._data.dtype, b._data.dtype
    if da.kind != "f" or db.kind != "f":
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{type_name(da)} and {type_name(db)}")
    if da != db:
        raise RuntimeError(
            f"Expected object of scalar type {type_name(da)} but got scalar type "
            f"{type_name(db)} for second argument")


def complex(real, imag, *, out=None):  # noqa: A001
    """A complex tensor from real and imaginary parts (float tensors of one dtype)."""
    from ember._ops.elementwise import Complex

    _check_float_pair(real, imag)
    return with_out(apply(Complex, real, imag), out)


def polar(abs, angle, *, out=None):  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    _check_float_pair(abs, angle)
    return with_out(complex(abs * angle.cos(), abs * angle.sin()), out)


METHODS: dict = {}
