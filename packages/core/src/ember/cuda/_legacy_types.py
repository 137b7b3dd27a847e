"""``ember.cuda.FloatTensor`` & co. and ``ember.cuda.FloatStorage`` & co.: the legacy
types of CUDA tensors (NOTE [ Legacy tensor types ] in ``ember._legacy``). A type answers
``isinstance`` for a CUDA tensor of its dtype and builds CUDA tensors when called; without
a GPU, constructing a tensor type raises ``TypeError`` and a storage ``AssertionError``, as
PyTorch's CPU builds do."""

from __future__ import annotations

from ember import _legacy

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


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
 CharTensor, ByteTensor, BoolTensor) = (_tensor_type(n, d)
                                        for n, d in _legacy.TENSOR_TYPE_DTYPES)


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


(FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,
 ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
 ComplexDoubleStorage) = (_storage_class(n, d) for n, d in _legacy.STORAGE_DTYPES)
