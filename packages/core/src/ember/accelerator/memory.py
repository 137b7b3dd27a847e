"""``ember.accelerator.memory``: the current accelerator's memory, as
``torch.accelerator.memory`` (``ember.cuda``'s memory functions, behind PyTorch's
RuntimeError when there is no accelerator)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ember.accelerator._device import no_accelerator, to_cuda_index

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def _cuda_memory():
    no_accelerator()
    from ember.cuda import memory

    return memory


def empty_cache() -> None:
    """Return the unused cached memory of the accelerator to the driver."""
    _cuda_memory().empty_cache()


def empty_host_cache() -> None:
    """Return the unused cached pinned host memory to the system."""
    _cuda_memory()
    from ember._backend import cupy

    cupy.module().get_default_pinned_memory_pool().free_all_blocks()


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """(free, total) bytes of an accelerator device."""
    return _cuda_memory().mem_get_info(to_cuda_index(device_index))


def memory_stats(device_index: Any = None, /) -> OrderedDict:
    """The memory statistics of an accelerator device (``ember.cuda.memory_stats``)."""
    return OrderedDict(_cuda_memory().memory_stats(to_cuda_index(device_index)))


def memory_allocated(device_index: Any = None, /) -> int:
    return _cuda_memory().memory_allocated(to_cuda_index(device_index))


def max_memory_allocated(device_index: Any = None, /) -> int:
    return _cuda_memory().max_memory_allocated(to_cuda_index(device_index))


def memory_reserved(device_index: Any = None, /) -> int:
    return _cuda_memory().memory_reserved(to_cuda_index(device_index))


def max_memory_reserved(device_index: Any = None, /) -> int:
    return _cuda_memory().max_memory_reserved(to_cuda_index(device_index))


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    _cuda_memory().reset_accumulated_memory_stats(to_cuda_index(device_index))


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    _cuda_memory().reset_peak_memory_stats(to_cuda_index(device_index))
