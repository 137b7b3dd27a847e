"""The repr of a tensor, in PyTorch's format."""

from __future__ import annotations

import numpy as np

from ember._backend import backend_of


def tensor_repr(t) -> str:
    arr = backend_of(t._data).to_numpy(t._data)
    body = np.array2string(arr, separator=", ", prefix="tensor(")
    extras = []
    if arr.dtype not in (np.float32, np.int64, np.bool_, np.complex64) or arr.size == 0:
        if not (arr.size == 0 and arr.dtype == np.float32):
            extras.append(f"dtype=ember.{arr.dtype.name}")
    if t.is_cuda:
        extras.append(f"device='{t.device}'")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
