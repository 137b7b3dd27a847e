"""PyTorch's names in a checkpoint and what ember builds from them on load.

A checkpoint's pickle names PyTorch objects (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``...). This module maps each of those names to an
ember object, and holds the functions that rebuild tensors from loaded storages.
"""

from __future__ import annotations

import sys
from collections import Counter, OrderedDict

import numpy as np

from ember import _dtype
from ember._backend import backend_for_device, backend_of
from ember._C import _core
from ember._device import device as _device_cls

# ---------------------------------------------------------------------------
# dtypes and storage types

# ember dtype name -> the legacy storage class PyTorch pickles for it
STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
    "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
    "bfloat16": "BFloat16Storage", "complex128": "ComplexDoubleStorage",
    "complex64": "ComplexFloatStorage",
}
# PyTorch dtypes that ember has no counterpart for (they can appear in a file, not in a tensor)
UNSUPPORTED_DTYPES = (
    ["complex32", "float4_e2m1fn_x2", "qint8",
     "qint32", "quint8", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8",
     "bits16"]
    + [f"int{i}" for i in range(1, 8)] + [f"uint{i}" for i in range(1, 8)])
UNSUPPORTED_STORAGES = ["QInt8Storage", "QInt32Storage", "QUInt8Storage", "QUInt4x2Storage",
                        "QUInt2x4Storage"]


class UnsupportedDtype:
    """A PyTorch dtype that ember does not have, as read from a checkpoint."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name} (no ember dtype)"

    def __eq__(self, other) -> bool:
        return isinstance(other, UnsupportedDtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("UnsupportedDtype", self.name))


def dtype_by_name(name: str):
    """The ember dtype named ``name`` (PyTorch's name); bfloat16 needs ml_dtypes."""
    d = getattr(_dtype, name, None)
    if isinstance(d, _dtype.dtype):
        return d
    if name == "bfloat16":
        raise RuntimeError(
            "this checkpoint holds bfloat16 tensors, which need the ml_dtypes package: "
            "pip install ml_dtypes")
    raise RuntimeError(f"this checkpoint holds a tensor of dtype torch.{name}, which ember "
                       "does not support")


def numpy_dtype(d) -> np.dtype:
    if isinstance(d, UnsupportedDtype):
        raise RuntimeError(f"this checkpoint holds a tensor of dtype torch.{d.name}, which "
                           "ember does not support")
    return d.numpy


class StorageType:
    """A storage class named in a checkpoint (``torch.FloatStorage``): it carries a dtype."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name: str, dtype_name: str | None) -> None:
        self.name = name
        self.dtype_name = dtype_name  # None for UntypedStorage (bytes)

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_STORAGE_TYPES = {name: StorageType(name, dt) for dt, name in STORAGE_NAMES.items()}
_STORAGE_TYPES["UntypedStorage"] = StorageType("UntypedStorage", "uint8")


# ---------------------------------------------------------------------------
# storages as loaded, and where they go (map_location)

class LoadedStorage:
    """The bytes of one storage of a checkpoint, as ``map_location`` callables receive them.

    ``map_location(storage, location)`` may return ``storage`` itself, ``storage.cpu()``,
    ``storage.cuda(index)`` or ``storage.to(device)``, or None for the default placement.
    """

    __slots__ = ("_bytes", "dtype", "_location")

    def __init__(self, data, dtype) -> None:
        self._bytes = data   # 1-D uint8 array (NumPy or CuPy)
        self.dtype = dtype   # ember dtype, or None for untyped storages
        self._location = None

    @property
    def device(self) -> _device_cls:
        return backend_of(self._bytes).device_of(self._bytes)

    def nbytes(self) -> int:
        return int(self._bytes.size)

    def size(self) -> int:
        return self.nbytes() // (self.dtype.itemsize if self.dtype is not None else 1)

    def to(self, device) -> LoadedStorage:
        dev = _device_cls(device) if not isinstance(device, _device_cls) else device
        target = _backend_for(dev)
        if target is backend_of(self._bytes):
            return self
        return LoadedStorage(target.to_device(self._bytes), self.dtype)

    def cpu(self) -> LoadedStorage:
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False) -> LoadedStorage:
        if isinstance(device, int):
            device = _device_cls("cuda", device)
        return self.to(device or "cuda")

    def __repr__(self) -> str:
        return f"LoadedStorage(nbytes={self.nbytes()}, dtype={self.dtype}, device={self.device})"


def _backend_for(dev: _device_cls):
    if dev.type == "cuda":
        try:
            return backend_for_device(dev)
        except RuntimeError as e:
            raise RuntimeError(
                f"Attempting to deserialize a tensor on {dev}, but {e}. If you are running on "
                "a CPU-only machine, use ember.load(..., map_location='cpu') to map the "
                "storages to the CPU.") from None
    return backend_for_device(dev)


def _default_restore(storage: LoadedStorage, location: str) -> LoadedStorage:
    try:
        dev = _device_cls(location)
    except (RuntimeError, TypeError):
        raise RuntimeError(
            f"don't know how to restore data location '{location}' in ember (it has cpu and "
            "cuda); use ember.load(..., map_location='cpu')") from None
    return storage.to(dev)


def restorer(map_location):
    """``restore(storage, location) -> LoadedStorage`` for ``map_location`` as in torch.load."""
    if map_location is None:
        return _default_restore
    if isinstance(map_location, bytes):
        map_location = map_location.decode()
    if isinstance(map_location, (str, _device_cls)) or (
            hasattr(map_location, "type") and not callable(map_location)
            and not isinstance(map_location, dict)):
        target = str(map_location)
        return lambda storage, location: _default_restore(storage, target)
    if isinstance(map_location, dict):
        mapping = {str(k): str(v) for k, v in map_location.items()}
        return lambda storage, location: _default_restore(
            storage, mapping.get(location, location))
    if callable(map_location):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                return _default_restore(storage, location)
            if not isinstance(result, LoadedStorage):
                raise TypeError(
                    "map_location callable must return the storage it was given (or "
                    f"storage.cpu() / storage.cuda(i) / None), got {type(result).__name__}")
            return result
        return restore
    raise TypeError(f"map_location must be None, a str, a device, a dict or a callable, got "
                    f"{type(map_location).__name__}")


# ---------------------------------------------------------------------------
# rebuilding tensors

def _as_shape(value, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or not all(
            type(v) is int or isinstance(v, np.integer) for v in value):
        raise RuntimeError(f"corrupt checkpoint: tensor {what} {value!r} is not a tuple of ints")
    return tuple(int(v) for v in value)


def _strided(storage: LoadedStorage, dtype, offset, size, stride):
    """The array viewing ``storage`` as ``dtype`` with PyTorch's offset/size/stride (elements)."""
    if not isinstance(storage, LoadedStorage):
        raise RuntimeError(
            f"corrupt checkpoint: a tensor's storage is a {type(storage).__name__}")
    np_dtype = numpy_dtype(dtype)
    size = _as_shape(size, "size")
    stride = _as_shape(stride, "stride")
    if type(offset) is not int or len(size) != len(stride):
        raise RuntimeError("corrupt checkpoint: tensor offset/size/stride do not agree")
    raw = storage._bytes
    item = np_dtype.itemsize
    numel = raw.size // item
    xp = backend_of(raw).xp
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"corrupt checkpoint: negative size, stride or offset "
                           f"(size={size}, stride={stride}, offset={offset})")
    if 0 in size:
        return xp.empty(size, dtype=np_dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= numel:
        raise RuntimeError(
            f"corrupt checkpoint: a tensor of size {list(size)}, stride {list(stride)} and "
            f"offset {offset} reaches element {last} of a storage of {numel} elements")
    flat = raw[:numel * item].view(np_dtype)
    byte_strides = tuple(s * item for s in stride)
    if xp is np:
        return np.ndarray(size, np_dtype, buffer=flat, offset=offset * item, strides=byte_strides)
    return xp.ndarray(size, np_dtype, memptr=flat.data + offset * item, strides=byte_strides)


def _make_tensor(array, requires_grad, metadata=None):
    if metadata:
        if metadata.get("conj"):
            array = array.conj()
        if metadata.get("neg"):
            array = -array
    if type(requires_grad) is not bool:
        raise RuntimeError("corrupt checkpoint: requires_grad is not a bool")
    if requires_grad and array.dtype.kind not in "fcV":
        raise RuntimeError("corrupt checkpoint: an integer tensor requires grad")
    return _core.make_tensor_from_array(array, requires_grad)


def _storage_dtype(storage):
    if not isinstance(storage, LoadedStorage):
        raise RuntimeError(
            f"corrupt checkpoint: a tensor's storage is a {type(storage).__name__}")
    if storage.dtype is None:
        raise RuntimeError("corrupt checkpoint: an untyped storage without a tensor dtype")
    return storage.dtype


def rebuild_tensor(storage, storage_offset, size, stride):
    """torch._utils._rebuild_tensor."""
    return _make_tensor(_strided(storage, _storage_dtype(storage), storage_offset, size, stride),
                        False)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      metadata=None):
    """torch._utils._rebuild_tensor_v2 (backward hooks are not restored, as in PyTorch)."""
    array = _strided(storage, _storage_dtype(storage), storage_offset, size, stride)
    return _make_tensor(array, requires_grad, metadata)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      dtype, metadata=None):
    """torch._utils._rebuild_tensor_v3: an untyped storage and the tensor's dtype."""
    if not isinstance(dtype, (_dtype.dtype, UnsupportedDtype)):
        raise RuntimeError(f"corrupt checkpoint: {dtype!r} is not a dtype")
    array = _strided(storage, dtype, storage_offset, size, stride)
    return _make_tensor(array, requires_grad, metadata)


def _parameter_class():
    nn = sys.modules.get("ember.nn")
    if nn is None:
        try:
            import ember.nn as nn
        except ImportError:
            return None
    return getattr(nn, "Parameter", None)


def make_parameter(data=None, requires_grad=True):
    """ember.nn.Parameter(data, requires_grad), or a leaf tensor while ember.nn is missing."""
    if not isinstance(data, _core.TensorBase):
        raise RuntimeError(f"corrupt checkpoint: a Parameter of a {type(data).__name__}")
    cls = _parameter_class()
    if cls is not None:
        return cls(data, requires_grad)
    return _core.make_tensor_from_array(data._data, bool(requires_grad))


def rebuild_parameter(data, requires_grad, backward_hooks):
    """torch._utils._rebuild_parameter."""
    return make_parameter(data, requires_grad)


def _set_state(obj, state):
    """Python attributes of a tensor from a file, into its ``__dict__`` only: a file can never
    reach the compiled fields (``_data``, ``_base``...), which are data descriptors."""
    if not state:
        return obj
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    else:
        slots = None
    for mapping in (state, slots):
        if mapping:
            if not isinstance(mapping, dict) or not all(type(k) is str for k in mapping):
                raise RuntimeError("corrupt checkpoint: tensor state is not a dict of names")
            obj.__dict__.update(mapping)
    return obj


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: a Parameter with Python attributes."""
    return _set_state(make_parameter(data, requires_grad), state)


def rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor subclass, or a tensor with attributes."""
    if not callable(func) or not isinstance(args, tuple):
        raise RuntimeError("corrupt checkpoint: bad arguments to _rebuild_from_type_v2")
    ret = func(*args)
    if new_type is make_parameter:
        if type(ret) is not _parameter_class():
            ret = make_parameter(ret, ret.requires_grad)
    elif isinstance(new_type, type) and issubclass(new_type, _core.TensorBase):
        if type(ret) is not new_type:
            ret.__class__ = new_type
    else:
        raise RuntimeError(f"corrupt checkpoint: {new_type!r} is not a tensor type")
    setstate = getattr(ret, "__setstate__", None)  # a subclass's own (Tensor has none)
    if state and setstate is not None:
        setstate(state)
        return ret
    return _set_state(ret, state)


def rebuild_from_type(func, new_type, args, state):
    """torch._tensor._rebuild_from_type (PyTorch 1.x)."""
    return rebuild_from_type_v2(func, new_type, args, state)


def rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    """torch._utils._rebuild_device_tensor_from_cpu_tensor (tensors of devices ember lacks)."""
    if not isinstance(data, _core.TensorBase):
        raise RuntimeError("corrupt checkpoint: bad tensor data")
    out = data.to(dtype=dtype)
    out.requires_grad_(bool(requires_grad) and out.is_floating_point())
    return out


def _unsupported(what: str):
    def fail(*args, **kwargs):
        raise RuntimeError(f"this checkpoint holds {what}, which ember does not support")
    fail.__name__ = f"unsupported_{what.replace(' ', '_')}"
    return fail


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """_codecs.encode, limited to what pickle protocol 2 uses for bytes (latin1)."""
    import codecs

    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise RuntimeError(f"_codecs.encode({type(obj).__name__}, {encoding!r}) is not allowed "
                           "in weights-only loading")
    return codecs.encode(obj, encoding, errors)


def _get_layout(name):
    """torch.serialization._get_layout: layouts are kept as their names."""
    if not isinstance(name, str):
        raise RuntimeError("corrupt checkpoint: a layout name is not a str")
    return name


def _torch_device(type_or_str, index=None):
    return _device_cls(type_or_str, index)


def _torch_size(seq=()):
    from ember._tensor import Size

    return Size(_as_shape(tuple(seq), "size"))


def torch_globals() -> dict:
    """``"module.name"`` of PyTorch's file vocabulary -> what ember builds for it.

    Everything here is safe to call with any arguments (the weights-only allow-list).
    """
    from ember._tensor import Tensor

    table = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch._tensor._rebuild_from_type": rebuild_from_type,
        "torch.serialization._get_layout": _get_layout,
        "torch.nn.parameter.Parameter": make_parameter,
        "torch.Tensor": Tensor,
        "torch.Size": _torch_size,
        "torch.device": _torch_device,
        "_codecs.encode": _codecs_encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.frozenset": frozenset,
        "builtins.complex": complex,
    }
    for what, names in [
        ("quantized tensors", ["_rebuild_qtensor"]),
        ("sparse tensors", ["_rebuild_sparse_tensor", "_rebuild_sparse_csr"]),
        ("nested tensors", ["_rebuild_nested_tensor"]),
        ("tensor subclasses without storage", ["_rebuild_wrapper_subclass"]),
        ("meta tensors", ["_rebuild_meta_tensor_no_storage"]),
        ("NumPy-backed device tensors", ["_rebuild_device_tensor_from_numpy",
                                         "_rebuild_xla_tensor"]),
    ]:
        for name in names:
            table[f"torch._utils.{name}"] = _unsupported(what)
    for name in STORAGE_NAMES:
        if isinstance(getattr(_dtype, name, None), _dtype.dtype):
            table[f"torch.{name}"] = getattr(_dtype, name)
        else:
            table[f"torch.{name}"] = UnsupportedDtype(name)
    for name in UNSUPPORTED_DTYPES:
        table[f"torch.{name}"] = UnsupportedDtype(name)
    for name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
                 "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):  # untyped storages
        table[f"torch.{name}"] = getattr(_dtype, name)
    for storage_name in [*STORAGE_NAMES.values(), "UntypedStorage"]:
        for module in ("torch", "torch.cuda"):
            table[f"{module}.{storage_name}"] = _STORAGE_TYPES[storage_name]
    table["torch.storage.UntypedStorage"] = _STORAGE_TYPES["UntypedStorage"]
    for storage_name in UNSUPPORTED_STORAGES:
        table[f"torch.{storage_name}"] = _unsupported(f"quantized tensors (torch.{storage_name})")
    return table
