"""Tensors in the safetensors format, through the ``safetensors`` package (optional).

The format holds a flat ``{name: tensor}`` dict and a ``{str: str}`` metadata dict, and no
code: loading a file cannot run anything. Files written here load with
``safetensors.torch.load_file`` and ``safetensors.numpy.load_file``, and theirs load here.
The functions mirror ``safetensors.torch``; install the package with
``pip install safetensors`` (and ``ml_dtypes`` for bfloat16 tensors).

Example::

    >>> from ember.utils.safetensors import save_file, load_file
    >>> save_file({"weight": ember.ones(2, 3)}, "model.safetensors")
    >>> load_file("model.safetensors")["weight"].shape
    ember.Size([2, 3])
"""

from __future__ import annotations

import os

import numpy as np

from ember._backend import backend_of
from ember._C import _core

__all__ = ["save", "save_file", "load", "load_file"]

# the format's dtype codes that ember has (bfloat16 only with ml_dtypes)
_CODES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
          "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
          "BOOL": "bool", "C64": "complex64"}


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy  # noqa: F401
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the safetensors package: "
                          "pip install safetensors") from None
    return safetensors


def _to_numpy(tensors) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of name -> Tensor, got {type(tensors).__name__}")
    arrays = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__} ({name!r})")
        if not isinstance(t, _core.TensorBase):
            raise TypeError(f"Key `{name}` is invalid, expected ember.Tensor but received "
                            f"{type(t).__name__}")
        arr = backend_of(t._data).to_numpy(t._data)
        if arr.dtype == np.complex128:
            raise ValueError(f"tensor '{name}' is complex128, which the safetensors format "
                             "does not have (complex64 is the only complex dtype)")
        # the format stores dense row-major bytes; views are saved as copies of their elements
        arrays[name] = arr if arr.flags.c_contiguous else arr.copy(order="C")
    return arrays


def _check_metadata(metadata):
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("metadata must be a dict of str -> str")


def _to_tensors(arrays: dict, device) -> dict:
    out = {}
    for name, arr in arrays.items():
        if not arr.flags.writeable:
            arr = arr.copy()
        t = _core.make_tensor_from_array(arr)
        out[name] = t if device in (None, "cpu") else t.to(device)
    return out


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (a dict of name -> Tensor) and ``metadata``."""
    _check_metadata(metadata)
    arrays = _to_numpy(tensors)
    return _safetensors().numpy.save(arrays, metadata=metadata)


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write ``tensors`` (a dict of name -> Tensor) to ``filename`` in the safetensors format.

    The file is replaced atomically (written next to it, then renamed), like ember.save.
    """
    from ember._serialization._save import atomic_path, is_special_file

    _check_metadata(metadata)
    arrays = _to_numpy(tensors)
    safetensors = _safetensors()
    if is_special_file(filename):
        safetensors.numpy.save_file(arrays, os.fspath(filename), metadata=metadata)
        return
    with atomic_path(filename) as tmp:
        safetensors.numpy.save_file(arrays, tmp, metadata=metadata)


def load(data: bytes) -> dict:
    """The tensors (name -> Tensor) in safetensors bytes ``data``."""
    from ember._serialization._format import dtype_by_name

    arrays = {}
    for name, info in _safetensors().deserialize(bytes(data)):
        code = info["dtype"]
        if code not in _CODES:
            raise RuntimeError(f"tensor '{name}' has safetensors dtype {code}, which ember "
                               "does not support")
        np_dtype = dtype_by_name(_CODES[code]).numpy
        arrays[name] = np.frombuffer(info["data"], dtype=np_dtype).reshape(info["shape"])
    return _to_tensors(arrays, None)


def load_file(filename, device="cpu") -> dict:
    """The tensors (name -> Tensor) in the safetensors file ``filename``, on ``device``."""
    safetensors = _safetensors()
    arrays = {}
    with safetensors.safe_open(os.fspath(filename), framework="np") as f:
        for name in f.keys():  # safe_open is not a mapping: keys() is its API
            arrays[name] = f.get_tensor(name)
    return _to_tensors(arrays, str(device) if device is not None else None)
