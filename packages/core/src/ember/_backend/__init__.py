"""The device seam: the only package that knows which array library holds the data.

Op code asks a tensor's backend for its array module (``xp``) and for the few kernels
that differ between the CPU (NumPy) and CUDA (CuPy); it never imports numpy or cupy
for data itself.
"""

from __future__ import annotations

import numpy as np

from ember._backend import numpy as _numpy_backend
from ember._backend._base import Backend

__all__ = ["Backend", "backend_of", "backend_for_device", "cpu"]

cpu: Backend = _numpy_backend.backend


def backend_of(array) -> Backend:
    """The backend that owns ``array``."""
    if type(array) is np.ndarray:
        return cpu
    from ember._backend import cupy as _cupy_backend

    if _cupy_backend.owns(array):
        return _cupy_backend.get()
    raise TypeError(f"no ember backend holds arrays of type {type(array).__name__}")


def backend_for_device(dev) -> Backend:
    """The backend for a device (``ember.device``, string or None for the CPU)."""
    from ember._device import device

    dev = device(dev) if dev is not None else None
    if dev is None or dev.type == "cpu":
        return cpu
    from ember._backend import cupy as _cupy_backend

    return _cupy_backend.get()
