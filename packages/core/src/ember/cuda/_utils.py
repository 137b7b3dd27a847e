"""What every part of ember.cuda shares: the device-index rules and the errors without a GPU.

NOTE [ ember.cuda without a GPU ]
PyTorch's answers on a machine without CUDA are kept: ``is_available()`` is False,
``device_count()`` 0, seeding and the memory counters are harmless (0, ``{}``), and the calls
that need a GPU raise. Without CuPy (ember installed without the ``cuda12``/``cuda13``
extra) they raise ``AssertionError``, as a PyTorch built without CUDA does ("Torch not
compiled with CUDA enabled"); with CuPy but no usable GPU, ``RuntimeError`` ("No CUDA GPUs
are available"), as a CUDA build of PyTorch on such a machine does. With a GPU, every call
goes through the CUDA backends of the device seam (``ember._backend.cupy``).
"""

from __future__ import annotations

from ember._backend import cupy as _seam

__all__ = ["lazy_init", "get_device_index", "is_available", "device_count", "no_cuda_error"]


def device_count() -> int:
    return _seam.device_count()


def is_available() -> bool:
    return _seam.device_count() > 0


def no_cuda_error() -> Exception:
    """The exception PyTorch raises for a CUDA call where CUDA cannot run."""
    if not _seam.installed():
        return AssertionError(
            "ember was installed without CUDA support (CuPy is missing): install "
            "ember[cuda12] or ember[cuda13]")
    return RuntimeError("No CUDA GPUs are available")


def lazy_init() -> None:
    """Raise :func:`no_cuda_error` unless a GPU can be used."""
    if not is_available():
        raise no_cuda_error()


def get_device_index(device, optional: bool = False) -> int:
    """The CUDA device index of ``device`` (int, ``"cuda:1"``, ``ember.device``); None or
    ``"cuda"`` is the current device (-1 when ``optional`` and there is no GPU)."""
    from ember._device import device as device_cls

    if isinstance(device, str):
        device = device_cls(device)
    if isinstance(device, device_cls):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index
    if device is None:
        if optional and not is_available():
            return -1
        lazy_init()
        return _seam.current_index()
    if isinstance(device, bool) or not isinstance(device, int):
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    return device
