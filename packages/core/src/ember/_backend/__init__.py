"""The device seam: the only package that knows which array library holds the data.

A backend is a device (NOTE [ Backends are devices ] in ``_base``): ``cpu``, or one per GPU.
Op code asks a tensor's backend for its array module (``xp``), its generator and its
kernels by name (NOTE [ Kernels by name ]); it never imports numpy or cupy for data itself.
"""

from __future__ import annotations

import numpy as np

from ember._backend import numpy as _numpy_backend
from ember._backend._base import Backend, register_kernel

__all__ = ["Backend", "backend_of", "backend_for_device", "bulk_kernel", "cpu",
           "register_kernel", "check_same_device", "xp_of"]

cpu: Backend = _numpy_backend.backend


def backend_of(array) -> Backend:
    """The backend (device) that holds ``array``."""
    if type(array) is np.ndarray:
        return cpu
    from ember._backend import cupy as _cupy_backend

    if _cupy_backend.owns(array):
        return _cupy_backend.get(array.device.id)
    if isinstance(array, np.ndarray):  # a NumPy subclass (np.matrix, memmap)
        return cpu
    raise TypeError(f"no ember backend holds arrays of type {type(array).__name__}")


def bulk_kernel(name: str, array):
    """Kernel ``name`` of ``array``'s device when ``array`` is large (at least the device's
    ``tuning.parallel_min`` elements) and a kernel of the device takes it, else None: op
    code then makes the array module's own call. Small arrays pay one size check."""
    b = cpu if type(array) is np.ndarray else backend_of(array)
    if array.size < b.tuning.parallel_min or not b.has_kernel(name, array):
        return None
    return b.kernel(name, array)


def xp_of(array):
    """The array module (numpy or cupy) that holds ``array``."""
    if type(array) is np.ndarray:  # the CPU's, without a call
        return np
    return backend_of(array).xp


def backend_for_device(dev) -> Backend:
    """The backend of a device (``ember.device``, string, CUDA ordinal; None: the CPU).

    ``"cuda"`` without an index is the current CUDA device, as in PyTorch.
    """
    from ember._device import device

    if dev is None:
        return cpu
    if isinstance(dev, Backend):
        return dev
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return cpu
    from ember._backend import cupy as _cupy_backend

    return _cupy_backend.get(_cupy_backend.current_index() if dev.index is None else dev.index)


def check_same_device(arrays) -> Backend:
    """The one device of ``arrays`` (numbers and None skipped); PyTorch's RuntimeError when
    they are on different devices. As in PyTorch, a 0-dim CPU array goes with any device."""
    first = None
    for a in arrays:
        if a is None or isinstance(a, np.generic) or not hasattr(a, "dtype"):
            continue
        if type(a) is np.ndarray and a.ndim == 0:
            continue
        b = backend_of(a)
        if first is None:
            first = b
        elif b is not first:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, {first.device} and {b.device}!")
    return first if first is not None else cpu
