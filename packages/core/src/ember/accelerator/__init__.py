"""``ember.accelerator``: the device-agnostic face of the current accelerator, as
``torch.accelerator``. ember's only accelerator is CUDA (through CuPy); without a GPU,
:func:`is_available` is False, :func:`current_accelerator` None, and the calls that need a
device raise PyTorch's ``RuntimeError``.

Example::

    >>> device = ember.accelerator.current_accelerator() or ember.device("cpu")
"""

from __future__ import annotations

import warnings
from typing import Any

from ember.accelerator import memory
from ember.accelerator._device import (
    current_accelerator,
    device_count,
    is_available,
    no_accelerator,
    to_cuda_index,
)
from ember.accelerator.memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)

__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index",
    "get_device_capability", "current_stream", "device_count", "device_index", "empty_cache",
    "empty_host_cache", "get_memory_info", "is_available", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize", "memory",
]


def current_device_index() -> int:
    """The index of the current accelerator device."""
    no_accelerator()
    from ember import cuda

    return cuda.current_device()


def current_device_idx() -> int:
    """Deprecated: :func:`current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device: Any, /) -> None:
    """Make ``device`` the current accelerator device."""
    no_accelerator()
    from ember import cuda

    cuda.set_device(to_cuda_index(device))


def set_device_idx(device: Any, /) -> None:
    """Deprecated: :func:`set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # noqa: N801 - PyTorch's name
    """Context manager making accelerator device ``device`` current inside it (None: no
    change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            no_accelerator()
            from ember import cuda

            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)
        return self

    def __exit__(self, *exc) -> bool:
        if self.idx is not None:
            from ember import cuda

            cuda.set_device(self.prev_idx)
        return False


def synchronize(device: Any = None, /) -> None:
    """Wait for all work queued on an accelerator device (the current one by default)."""
    no_accelerator()
    from ember import cuda

    cuda.synchronize(to_cuda_index(device))


def current_stream(device: Any = None, /):
    """The current stream of an accelerator device."""
    no_accelerator()
    from ember import cuda

    return cuda.current_stream(to_cuda_index(device))


def set_stream(stream) -> None:
    """Make ``stream`` the current stream of its device."""
    no_accelerator()
    from ember import cuda

    cuda.set_stream(stream)


def get_device_capability(device: Any = None, /) -> dict[str, Any]:
    """What an accelerator device supports: ``{"supported_dtypes": [...]}`` (CuPy's GPU
    dtypes: no bfloat16)."""
    no_accelerator()
    from ember import _dtype

    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64", "complex64", "complex128")
    return {"supported_dtypes": [getattr(_dtype, n) for n in names]}


class Graph:
    """A captured accelerator graph: ``ember.cuda.CUDAGraph`` (see ``ember.cuda.graphs``:
    graph capture is not available yet)."""

    def __init__(self, keep_graph: bool = False, *, pool=None,
                 capture_error_mode: str = "default"):
        no_accelerator()
        from ember.cuda import CUDAGraph

        self._graph = CUDAGraph(keep_graph)
