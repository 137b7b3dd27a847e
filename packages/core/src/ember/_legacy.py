"""PyTorch's legacy tensor types and storages: ``FloatTensor``, ``LongTensor``, ...,
``TypedStorage``, ``UntypedStorage``, ``FloatStorage``, ..., and the Tensor methods that
hand them out (``storage()``, ``untyped_storage()``, ``storage_type()``, ``new()``,
``new_empty_strided()``).

NOTE [ Legacy tensor types ]
``torch.FloatTensor`` is no class of any tensor: tensors are all ``torch.Tensor``, and a
legacy type is an object that answers ``isinstance`` by dtype and device, builds tensors of
its dtype when called (``FloatTensor(2, 3)`` uninitialized, ``FloatTensor([1, 2])`` from
data), and names the type for ``Tensor.type``. Storages here are views of a tensor's memory
(the whole buffer its array lives in), enough for programs that ask for a storage's size,
bytes, pointer or elements; ember keeps no storage objects of its own.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from ember import _dtype

__all__ = [
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "TypedStorage", "UntypedStorage",
    "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
    "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
    "ComplexFloatStorage", "ComplexDoubleStorage", "is_storage",
]


class tensortype(type):
    """The metaclass of the legacy tensor types (NOTE [ Legacy tensor types ])."""

    def __instancecheck__(cls, obj):
        from ember._tensor import Tensor

        return (isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype
                and obj.device.type == cls._legacy_device)

    def __call__(cls, *args, device=None):
        from ember._ops.creation import empty, tensor
        from ember._tensor import Size

        dev = cls._legacy_device if device is None else device
        if not args:
            return empty(0, dtype=cls._legacy_dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], Size):
            return empty(tuple(args[0]), dtype=cls._legacy_dtype, device=dev)
        if len(args) == 1 and not isinstance(args[0], builtins.int):
            data = args[0]
            if hasattr(data, "_data"):  # a tensor of this type, as PyTorch: no conversion
                if data.dtype is not cls._legacy_dtype:
                    raise TypeError(f"expected {cls._legacy_dtype} (got {data.dtype})")
                return data
            return tensor(data, dtype=cls._legacy_dtype, device=dev)
        if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
            return empty(*args, dtype=cls._legacy_dtype, device=dev)
        raise TypeError(f"{cls.__name__}(): invalid arguments {args!r}")

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"

    @property
    def dtype(cls):
        return cls._legacy_dtype

    @property
    def is_cuda(cls):
        return cls._legacy_device == "cuda"


def _tensor_type(name, dt):
    return tensortype(name, (), {"_legacy_dtype": dt, "_legacy_device": "cpu",
                                 "__module__": "ember", "__doc__":
                                 f"The legacy tensor type of ember.{dt.name} CPU tensors."})


# The legacy names and their dtypes, in PyTorch's order (ember.cuda builds its own from these).
TENSOR_TYPE_DTYPES = (
    ("FloatTensor", _dtype.float32), ("DoubleTensor", _dtype.float64),
    ("HalfTensor", _dtype.float16), ("BFloat16Tensor", _dtype.bfloat16),
    ("LongTensor", _dtype.int64), ("IntTensor", _dtype.int32), ("ShortTensor", _dtype.int16),
    ("CharTensor", _dtype.int8), ("ByteTensor", _dtype.uint8), ("BoolTensor", _dtype.bool),
)
STORAGE_DTYPES = tuple((n.replace("Tensor", "Storage"), d) for n, d in TENSOR_TYPE_DTYPES) + (
    ("ComplexFloatStorage", _dtype.complex64), ("ComplexDoubleStorage", _dtype.complex128))

(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
 CharTensor, ByteTensor, BoolTensor) = (_tensor_type(n, d) for n, d in TENSOR_TYPE_DTYPES)
LEGACY_TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor,
                                        LongTensor, IntTensor, ShortTensor, CharTensor,
                                        ByteTensor, BoolTensor)}


# ---------------------------------------------------------------------------
# storages

def _buffer(arr):
    """The array owning ``arr``'s memory, as a 1-D array of bytes."""
    from ember._ops.shape import _storage_root

    root = _storage_root(arr)[0]
    if not root.flags.c_contiguous:
        root = arr
    return root.reshape(-1).view(np.uint8) if root.ndim else root.reshape(1).view(np.uint8)


class UntypedStorage:
    """The bytes of a tensor's memory (``Tensor.untyped_storage()``).

    ``UntypedStorage(n)`` makes ``n`` zeroed bytes of its own.
    """

    is_sparse = False

    def __init__(self, size=0, *, device=None):
        if isinstance(size, np.ndarray):
            self._bytes = size
        else:
            from ember._backend import backend_for_device

            xp = backend_for_device(device).xp
            self._bytes = xp.zeros(int(size), dtype=np.uint8)

    @property
    def device(self):
        from ember._backend import backend_of

        return backend_of(self._bytes).device_of(self._bytes)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def size(self) -> int:
        return int(self._bytes.size)

    def nbytes(self) -> int:
        return int(self._bytes.nbytes)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        iface = getattr(self._bytes, "__array_interface__", None) or \
            self._bytes.__cuda_array_interface__
        return iface["data"][0]

    def __getitem__(self, i):
        return int(self._bytes[i])

    def __setitem__(self, i, value):
        self._bytes[i] = value

    def tolist(self) -> list:
        return [int(b) for b in self._bytes.tolist()]

    def fill_(self, value):
        self._bytes[...] = value
        return self

    def untyped(self):
        return self

    def __repr__(self) -> str:
        return (f" {chr(10).join(' ' + str(b) for b in self.tolist()[:20])}\n"
                f"[ember.storage.UntypedStorage(device={self.device}) of size {self.size()}]")


class TypedStorage:
    """A tensor's memory as elements of its dtype (``Tensor.storage()``; deprecated in
    PyTorch in favour of :meth:`Tensor.untyped_storage`).

    ``FloatStorage(n)`` (and the other typed classes) makes ``n`` zeroed elements.
    """

    is_sparse = False
    _fixed_dtype = None

    # torch's two orders: __new__ (what inspect shows for the class) and __init__
    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        return super().__new__(cls)

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        dt = self._fixed_dtype or _dtype.as_dtype(dtype or _dtype.get_default_dtype())
        self.dtype = dt
        if wrap_storage is not None:
            self._untyped = wrap_storage
            return
        n = args[0] if args else 0
        if isinstance(n, (list, tuple)):
            data = np.asarray(n, dtype=dt.numpy)
            self._untyped = UntypedStorage(data.reshape(-1).view(np.uint8).copy())
            return
        self._untyped = UntypedStorage(int(n) * dt.itemsize, device=device)

    def _elements(self):
        return self._untyped._bytes.view(self.dtype.numpy)

    @property
    def device(self):
        return self._untyped.device

    @property
    def is_cuda(self) -> bool:
        return self._untyped.is_cuda

    def size(self) -> int:
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def _untyped_storage(self) -> UntypedStorage:
        return self._untyped

    def __getitem__(self, i):
        return self._elements()[i].item()

    def __setitem__(self, i, value):
        self._elements()[i] = value

    def tolist(self) -> list:
        return self._elements().tolist()

    def fill_(self, value):
        self._elements()[...] = value
        return self

    def pickle_storage_type(self) -> str:
        from ember._serialization._format import STORAGE_NAMES

        return STORAGE_NAMES[self.dtype.name]

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist()[:20])
        return f"{body}\n[ember.storage.TypedStorage(dtype={self.dtype}, device={self.device})" \
               f" of size {self.size()}]"


def _storage_class(name, dt):
    return type(name, (TypedStorage,), {"_fixed_dtype": dt, "__module__": "ember",
                                        "__doc__": f"TypedStorage of ember.{dt.name}."})


(FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,
 ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
 ComplexDoubleStorage) = (_storage_class(n, d) for n, d in STORAGE_DTYPES)
_STORAGE_BY_DTYPE = {c._fixed_dtype.name: c for c in (
    FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,
    ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
    ComplexDoubleStorage)}


def is_storage(obj, /) -> builtins.bool:
    """True if ``obj`` is a storage (typed or untyped)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


# ---------------------------------------------------------------------------
# the Tensor methods (installed from ember/__init__.py)

def _untyped_storage(self) -> UntypedStorage:
    """The bytes of the memory this tensor's data lives in (shared, not copied)."""
    return UntypedStorage(_buffer(self._data))


def _storage(self) -> TypedStorage:
    """This tensor's memory as a :class:`TypedStorage` of its dtype (deprecated in PyTorch:
    use :meth:`untyped_storage`)."""
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter "
                  "to you if you are using storages directly.  To access UntypedStorage "
                  "directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning, stacklevel=2)
    cls = _STORAGE_BY_DTYPE.get(self.dtype.name, TypedStorage)
    return cls(dtype=self.dtype, wrap_storage=_untyped_storage(self))


def _storage_type(self):
    """The legacy storage class of this tensor's dtype (``ember.FloatStorage``)."""
    try:
        return _STORAGE_BY_DTYPE[self.dtype.name]
    except KeyError:
        raise RuntimeError(f"no legacy storage type for {self.dtype}") from None


def _new(self, *args, device=None):
    """``x.new(*sizes)``, ``x.new(data)``, ``x.new(tensor)``: a tensor of ``x``'s dtype and
    device (the legacy constructor; prefer ``new_empty`` / ``new_tensor``)."""
    from ember._ops.creation import empty, tensor

    dev = self.device if device is None else device
    if not args:
        return empty(0, dtype=self.dtype, device=dev)
    if len(args) == 1 and hasattr(args[0], "_data"):
        if args[0].dtype is not self.dtype:
            raise TypeError(f"expected {self.dtype} (got {args[0].dtype})")
        return args[0]
    if len(args) == 1 and not isinstance(args[0], builtins.int) and \
            not _is_size(args[0]):
        return tensor(args[0], dtype=self.dtype, device=dev)
    return empty(*args, dtype=self.dtype, device=dev)


def _is_size(x):
    from ember._tensor import Size

    return isinstance(x, Size)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       pin_memory=False, requires_grad=False):
    """An uninitialized tensor with ``size`` and ``stride``, of ``self``'s dtype and device
    unless given."""
    from ember._ops.creation import empty_strided

    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def install(tensor_cls) -> None:
    """Put the storage and legacy-constructor methods on ``Tensor``."""
    tensor_cls.storage = _storage
    tensor_cls.untyped_storage = _untyped_storage
    tensor_cls.storage_type = _storage_type
    tensor_cls.new = _new
    tensor_cls.new_empty_strided = _new_empty_strided
