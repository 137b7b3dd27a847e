"""The current accelerator: CUDA when ember can use a GPU, else none."""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "device_count", "current_accelerator", "no_accelerator",
           "to_cuda_index"]


def is_available() -> bool:
    """True if an accelerator (a CUDA GPU) can be used."""
    from ember import cuda

    return cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices (CUDA GPUs); 0 without one."""
    from ember import cuda

    return cuda.device_count()


def current_accelerator(check_available: bool = False):
    """The accelerator's device type as an ``ember.device`` (``device(type='cuda')``), or
    None where ember has none (CuPy missing); with ``check_available`` also None when no
    GPU is usable."""
    from ember._backend import cupy
    from ember._device import device

    if not cupy.installed() or (check_available and not is_available()):
        return None
    return device("cuda")


def no_accelerator() -> None:
    """PyTorch's RuntimeError when no accelerator device can be used."""
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def to_cuda_index(device: Any):
    """``device`` (None, an index, ``"cuda:N"``, an ``ember.device``) as a CUDA index."""
    from ember._device import device as device_cls

    if isinstance(device, str):
        device = device_cls(device)
    if isinstance(device, device_cls):
        if device.type != "cuda":
            raise ValueError(f"{device.type} doesn't match the current accelerator cuda.")
        return device.index
    return device
