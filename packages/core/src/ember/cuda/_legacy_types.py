"""``ember.cuda.FloatTensor`` & co. and ``ember.cuda.FloatStorage`` & co.: the legacy
types of CUDA tensors (NOTE [ Legacy tensor types ] in ``ember._legacy``). A type answers
``isinstance`` for a CUDA tensor of its dtype and builds CUDA tensors when called; without
a GPU, constructing a tensor type raises ``TypeError`` and a storage ``AssertionError``, as
PyTorch's CPU builds do."""

from __future__ import annotations

from ember import _dtype, _legacy

__all__ = [
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "FloatStorage", "DoubleStorage",
    "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage", "ShortStorage",
    "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage",
]


def _no_gpu(name):
    from ember.cuda import is_available

    if not is_available():
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA "
                        "enabled.")


class _cudatensortype(_legacy.tensortype):  # noqa: N801
    def __call__(cls, *args, device=None):
        _no_gpu(cls.__name__)
        return super().__call__(*args, device=device)

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _tensor_type(name, dt):
    return _cudatensortype(name, (), {"_legacy_dtype": dt, "_legacy_device": "cuda",
                                      "__module__": "ember.cuda", "__doc__":
                                      f"The legacy tensor type of ember.{dt.name} CUDA "
                                      "tensors."})


FloatTensor = _tensor_type("FloatTensor", _dtype.float32)
DoubleTensor = _tensor_type("DoubleTensor", _dtype.float64)
HalfTensor = _tensor_type("HalfTensor", _dtype.float16)
BFloat16Tensor = _tensor_type("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _tensor_type("LongTensor", _dtype.int64)
IntTensor = _tensor_type("IntTensor", _dtype.int32)
ShortTensor = _tensor_type("ShortTensor", _dtype.int16)
CharTensor = _tensor_type("CharTensor", _dtype.int8)
ByteTensor = _tensor_type("ByteTensor", _dtype.uint8)
BoolTensor = _tensor_type("BoolTensor", _dtype.bool)


class _CudaLegacyStorage(_legacy.TypedStorage):
    """A TypedStorage on the current CUDA device."""

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        from ember.cuda import is_available

        if not is_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        if wrap_storage is None and device is None:
            device = "cuda"
        super().__init__(*args, dtype=dtype, device=device, wrap_storage=wrap_storage)


def _storage_class(name, dt):
    return type(name, (_CudaLegacyStorage,), {"_fixed_dtype": dt, "__module__": "ember.cuda",
                                              "__doc__": f"CUDA TypedStorage of "
                                                         f"ember.{dt.name}."})


FloatStorage = _storage_class("FloatStorage", _dtype.float32)
DoubleStorage = _storage_class("DoubleStorage", _dtype.float64)
HalfStorage = _storage_class("HalfStorage", _dtype.float16)
BFloat16Storage = _storage_class("BFloat16Storage", _dtype.bfloat16)
LongStorage = _storage_class("LongStorage", _dtype.int64)
IntStorage = _storage_class("IntStorage", _dtype.int32)
ShortStorage = _storage_class("ShortStorage", _dtype.int16)
CharStorage = _storage_class("CharStorage", _dtype.int8)
ByteStorage = _storage_class("ByteStorage", _dtype.uint8)
BoolStorage = _storage_class("BoolStorage", _dtype.bool)
ComplexFloatStorage = _storage_class("ComplexFloatStorage", _dtype.complex64)
ComplexDoubleStorage = _storage_class("ComplexDoubleStorage", _dtype.complex128)
