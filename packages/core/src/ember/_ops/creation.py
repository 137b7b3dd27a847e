"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, ranges, eye."""

from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._backend import backend_for_device, backend_of, cpu
from ember._C._core import TensorBase, make_tensor_from_array

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "full",
    "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range",
    "linspace", "logspace", "eye", "scalar_tensor", "empty_strided", "complex", "polar",
]



def _backend(device):
    return backend_for_device(device) if device is not None else cpu


def _sizes(size):
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
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _finish(array, requires_grad):
    t = make_tensor_from_array(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _to_nested_arrays(data):
    """Replace tensors inside nested lists by NumPy arrays (detached)."""
    if isinstance(data, TensorBase):
        return backend_of(data._data).to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        return [_to_nested_arrays(d) for d in data]
    return data


def _infer_array(data):
    """A NumPy array for Python data, with PyTorch's dtype inference."""
    if isinstance(data, np.ndarray):
        return data, False
    if isinstance(data, np.generic):
        return np.asarray(data), False
    if isinstance(data, (list, tuple)):
        data = _to_nested_arrays(data)
    try:
        arr = np.asarray(data)
    except ValueError as e:
        raise ValueError(f"could not build a tensor from ragged nested sequences: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if arr.dtype.kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    return arr, True


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor).

    Python floats give the default dtype (float32), ints int64, bools bool; NumPy
    arrays keep their dtype.

    Examples::

        >>> ember.tensor([[1., 2.], [3., 4.]])
        tensor([[1., 2.],
                [3., 4.]])
    """
    if isinstance(data, TensorBase):
        arr = data._data
        out_backend = _backend(device) if device is not None else backend_of(arr)
        arr = out_backend.to_device(backend_of(arr).to_numpy(arr), None) \
            if out_backend is not backend_of(arr) else arr.copy()
        if dtype is not None:
            arr = arr.astype(_dtype.to_numpy(dtype), copy=False)
        return _finish(arr, requires_grad)
    if hasattr(data, "__cuda_array_interface__") and not isinstance(data, np.ndarray):
        b = backend_of(data)
        arr = data.astype(_dtype.to_numpy(dtype)) if dtype is not None else data.copy()
        if device is not None:
            arr = _backend(device).to_device(b.to_numpy(arr), None)
        return _finish(arr, requires_grad)
    arr, from_python = _infer_array(data)
    if dtype is not None:
        np_dtype = _dtype.to_numpy(dtype)
    elif from_python and arr.dtype == np.float64:
        np_dtype = _dtype.get_default_dtype().numpy
    elif from_python and arr.dtype == np.complex128:
        np_dtype = _dtype.get_default_dtype().to_complex().numpy
    else:
        np_dtype = arr.dtype
        _dtype.from_numpy(np_dtype)  # rejects dtypes ember does not have
    arr = np.array(arr, dtype=np_dtype, copy=True, order="C")
    b = _backend(device)
    if b is not cpu:
        arr = b.to_device(arr, getattr(device, "index", None))
    return _finish(arr, requires_grad)


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


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``as_tensor`` with ``copy`` control, as ``torch.asarray``."""
    if copy:
        t = tensor(obj, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


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


def from_dlpack(ext_tensor):
    """A tensor sharing memory with any object that implements the DLPack protocol."""
    if isinstance(ext_tensor, TensorBase):
        return ext_tensor
    dev_type = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") \
        else 1
    if dev_type == 1:
        arr = np.from_dlpack(ext_tensor)
    else:
        arr = backend_for_device("cuda").xp.from_dlpack(ext_tensor)
    _dtype.from_numpy(arr.dtype)
    return make_tensor_from_array(arr)


def _dtype_or_default(dtype, fallback=None):
    if dtype is not None:
        return _dtype.to_numpy(dtype)
    return fallback if fallback is not None else _dtype.get_default_dtype().numpy


def _filled(kind, size, fill, dtype, device, requires_grad):
    b = _backend(device)
    shape = _sizes(size)
    np_dtype = _dtype_or_default(dtype)
    xp = b.xp
    if kind == "zeros":
        arr = xp.zeros(shape, dtype=np_dtype)
    elif kind == "ones":
        arr = xp.ones(shape, dtype=np_dtype)
    elif kind == "empty":
        arr = xp.empty(shape, dtype=np_dtype)
    else:
        arr = xp.full(shape, fill, dtype=np_dtype)
    return _finish(arr, requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of zeros with shape ``size``."""
    return _with_out(_filled("zeros", size, 0, dtype, device, requires_grad), out)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ones with shape ``size``."""
    return _with_out(_filled("ones", size, 1, dtype, device, requires_grad), out)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialized tensor with shape ``size``."""
    return _with_out(_filled("empty", size, 0, dtype, device, requires_grad), out)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor with shape ``size`` (strides are chosen by ember)."""
    return _filled("empty", (tuple(size),), 0, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value
    (bool, int64 or the default float) unless given."""
    if isinstance(fill_value, TensorBase):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    return _with_out(_filled("full", (tuple(size) if not isinstance(size, int) else (size,),),
                             fill_value, dtype, device, requires_grad), out)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _like(input, dtype, device):
    return (dtype if dtype is not None else input.dtype,
            device if device is not None else input.device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like(input, dtype, device)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    dtype, device = _like(input, dtype, device)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like(input, dtype, device)
    return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    dtype, device = _like(input, dtype, device)
    return full(tuple(input.shape), fill_value, dtype=dtype, device=device,
                requires_grad=requires_grad)


def _with_out(result, out):
    if out is None:
        return result
    out._data = result._data if out._data.shape != result._data.shape else out._data
    out._data[...] = result._data
    out._bump_version()
    return out


def _num(x):
    return x.item() if isinstance(x, TensorBase) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` in steps of ``step``.

    The dtype is int64 when all arguments are integers, else the default float dtype.
    """
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError(
            "upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        np_dtype = np.dtype(np.int64) if ints else _dtype.get_default_dtype().numpy
    else:
        np_dtype = _dtype.to_numpy(dtype)
    n = max(int(math.ceil((end - start) / step)), 0)
    if np_dtype.kind in "iub":
        arr = (start + np.arange(n, dtype=np.int64) * step) if all(
            isinstance(v, (int, np.integer)) for v in (start, step)) else \
            (start + np.arange(n, dtype=np.float64) * step)
    else:
        arr = start + np.arange(n, dtype=np.float64) * step
    arr = arr.astype(np_dtype)
    b = _backend(device)
    if b is not cpu:
        arr = b.to_device(arr, None)
    return _with_out(_finish(arr, requires_grad), out)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """Deprecated in PyTorch: values from ``start`` to ``end`` inclusive."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    arr = (start + np.arange(n, dtype=np.float64) * step).astype(_dtype.to_numpy(dtype))
    return _finish(_backend(device).to_device(arr, None), requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Computed as PyTorch does (from both ends towards the middle), so the values match.
    """
    start, end = _num(start), _num(end)
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _dtype_or_default(dtype) if not (dtype is None and (
        isinstance(start, complex) or isinstance(end, complex))) else \
        _dtype.get_default_dtype().to_complex().numpy
    calc = np.float64 if np_dtype.kind in "iub" else np_dtype
    if steps == 0:
        arr = np.zeros(0, dtype=np_dtype)
    elif steps == 1:
        arr = np.full(1, start, dtype=calc).astype(np_dtype)
    else:
        s, e = np.asarray(start, dtype=calc), np.asarray(end, dtype=calc)
        step = (e - s) / np.asarray(steps - 1, dtype=calc)
        idx = np.arange(steps)
        half = steps // 2
        lo = s + step * idx[:half].astype(calc)
        hi = e - step * (steps - idx[half:] - 1).astype(calc)
        arr = np.concatenate([lo, hi]).astype(np_dtype)
    arr = _backend(device).to_device(arr, None)
    return _with_out(_finish(arr, requires_grad), out)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    np_dtype = _dtype_or_default(dtype)
    calc = np.float64
    lin = linspace(start, end, steps, dtype=_dtype.float64)._data
    arr = np.power(np.asarray(base, dtype=calc), backend_of(lin).to_numpy(lin)).astype(np_dtype)
    return _with_out(_finish(_backend(device).to_device(arr, None), requires_grad), out)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-d tensor with ones on the diagonal and zeros elsewhere."""
    if m is None:
        m = n
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    b = _backend(device)
    arr = b.xp.eye(n, m, dtype=_dtype_or_default(dtype))
    return _with_out(_finish(arr, requires_grad), out)


def complex(real, imag, *, out=None):  # noqa: A001
    """A complex tensor from real and imaginary parts (float tensors of the same dtype)."""
    from ember._ops.elementwise import Complex
    from ember._ops._util import apply

    if real._data.dtype != imag._data.dtype or real._data.dtype.kind != "f":
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{real.dtype} and {imag.dtype}")
    return apply(Complex, real, imag)


def polar(abs, angle, *, out=None):  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    return complex(abs * angle.cos(), abs * angle.sin())


METHODS: dict = {}
