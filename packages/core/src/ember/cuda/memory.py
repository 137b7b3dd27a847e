"""GPU memory: statistics, the cache and limits, as ``torch.cuda.memory``.

ember's GPU memory comes from CuPy's memory pool, one per device; the statistics are that
pool's (``backend.memory_stats()`` of the device seam). CuPy's pool counts the bytes in use
(``allocated_bytes.all.current``) and the bytes it holds (``reserved_bytes.all.current``)
but keeps no high-water mark: the peaks (``max_memory_allocated``, ``*.peak`` keys) are the
highest values ember has seen when any statistic was asked for since the last
:func:`reset_peak_memory_stats`, so a peak between two calls can be missed.

Without a GPU the counters are 0 and :func:`memory_stats` is ``{}``, as in PyTorch.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ember._backend import backend_for_device
from ember._backend import cupy as _seam
from ember.cuda._utils import get_device_index, is_available, lazy_init

__all__ = [
    "CUDAPluggableAllocator", "MemPool", "caching_allocator_alloc", "caching_allocator_delete",
    "caching_allocator_disabled", "caching_allocator_enable", "change_current_allocator",
    "empty_cache", "get_allocator_backend", "get_per_process_memory_fraction",
    "host_memory_stats", "host_memory_stats_as_nested_dict", "list_gpu_processes",
    "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info",
    "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "reset_accumulated_host_memory_stats",
    "reset_accumulated_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "reset_peak_host_memory_stats", "reset_peak_memory_stats",
    "set_per_process_memory_fraction", "use_mem_pool",
]

_peaks: dict = {}        # device index -> {"allocated": bytes, "reserved": bytes}
_allocations: dict = {}  # caching_allocator_alloc's pointers -> CuPy MemoryPointer


def _index(device) -> int:
    return get_device_index(device)


def memory_stats(device: Any = None) -> dict[str, Any]:
    """The memory statistics of a GPU: ``allocated_bytes.all.current``/``.peak`` and
    ``reserved_bytes.all.current``/``.peak`` (``{}`` without a GPU)."""
    if not is_available():
        return {}
    index = _index(device)
    stats = dict(backend_for_device(f"cuda:{index}").memory_stats())
    peak = _peaks.setdefault(index, {"allocated": 0, "reserved": 0})
    for key in ("allocated", "reserved"):
        current = stats.get(f"{key}_bytes.all.current", 0)
        peak[key] = max(peak[key], current)
        stats[f"{key}_bytes.all.peak"] = peak[key]
    return dict(sorted(stats.items()))


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """:func:`memory_stats` with its dotted keys as nested dicts."""
    out: dict = {}
    for key, value in memory_stats(device).items():
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def memory_allocated(device: Any = None) -> int:
    """The bytes of GPU memory held by tensors (0 without a GPU)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since the last reset (see the module's note)."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    """The bytes of GPU memory held by the memory pool (0 without a GPU)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved` since the last reset."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device: Any = None) -> int:
    """Deprecated: :func:`memory_reserved`."""
    warnings.warn("`ember.cuda.memory_cached` has been renamed to `ember.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """Deprecated: :func:`max_memory_reserved`."""
    warnings.warn("`ember.cuda.max_memory_cached` has been renamed to "
                  "`ember.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks of :func:`memory_stats` again from the current values."""
    lazy_init()
    index = _index(device)
    _peaks.pop(index, None)
    memory_stats(index)


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Reset the accumulated counters. CuPy's pool keeps none (only current values), so only
    the peaks ember tracks are reset."""
    reset_peak_memory_stats(device)


def reset_max_memory_allocated(device: Any = None) -> None:
    """Deprecated: resets all peaks (:func:`reset_peak_memory_stats`)."""
    warnings.warn("ember.cuda.reset_max_memory_allocated now calls "
                  "ember.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Deprecated: resets all peaks (:func:`reset_peak_memory_stats`)."""
    warnings.warn("ember.cuda.reset_max_memory_cached now calls "
                  "ember.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def host_memory_stats() -> dict[str, Any]:
    """Statistics of the pinned host memory allocator. ember's pinned buffers come from
    CuPy's pinned memory pool, which reports none: ``{}``."""
    return {}


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """:func:`host_memory_stats`, nested (``{}``)."""
    return {}


def reset_accumulated_host_memory_stats() -> None:
    """Reset the pinned host memory counters (there are none to reset: see
    :func:`host_memory_stats`)."""


def reset_peak_host_memory_stats() -> None:
    """Reset the pinned host memory peaks (there are none: see :func:`host_memory_stats`)."""


def empty_cache() -> None:
    """Give the GPU memory the pool holds but no tensor uses back to the driver, so that
    other processes (and ``nvidia-smi``) see it free. Nothing to do without a GPU."""
    if is_available():
        _seam.empty_cache()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of a GPU's memory, as the driver reports them."""
    lazy_init()
    return _seam.mem_get_info(_index(device))


def set_per_process_memory_fraction(fraction, device: Any = None) -> None:
    """Limit this process's memory pool on a GPU to ``fraction`` (0 to 1) of its memory;
    an allocation past it raises an out-of-memory error."""
    lazy_init()
    if not isinstance(fraction, float) and not isinstance(fraction, int):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _seam.set_memory_limit(_index(device), float(fraction))


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0: no limit)."""
    lazy_init()
    index = _index(device)
    limit = _seam.memory_limit(index)
    return 1.0 if limit == 0 else limit / _seam.mem_get_info(index)[1]


def caching_allocator_alloc(size, device: Any = None, stream=None) -> int:
    """``size`` bytes from a GPU's memory pool; returns the address (free it with
    :func:`caching_allocator_delete`)."""
    lazy_init()
    if not isinstance(size, int) or size < 0:
        raise TypeError("Invalid type for size argument, must be a non-negative int")
    mem = _seam.alloc(_index(device), size)
    _allocations[int(mem.ptr)] = mem
    return int(mem.ptr)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Return memory from :func:`caching_allocator_alloc` to the pool."""
    if _allocations.pop(int(mem_ptr), None) is None:
        raise RuntimeError(f"caching_allocator_delete: {mem_ptr:#x} was not allocated by "
                           "caching_allocator_alloc")


def caching_allocator_enable(value: bool = True) -> None:
    """Turn GPU memory caching on or off (off: every allocation goes to the driver). CuPy's
    memory pool is ember's cache; nothing to do without a GPU."""
    if not is_available():
        return
    cupy = _seam.module()
    cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc if value else None)


@contextlib.contextmanager
def caching_allocator_disabled():
    """Context manager: GPU allocations bypass the cache inside it."""
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(True)


def get_allocator_backend() -> str:
    """``"native"``: ember's GPU memory comes from CuPy's caching memory pool."""
    return "native"


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A table of a GPU's memory statistics."""
    lazy_init()
    stats = memory_stats(device)

    def mb(n):
        return f"{n / 2**20:12.1f} MiB"

    lines = [f"ember.cuda memory summary, device {_index(device)}", "-" * 50,
             f"{'':20}{'current':>16}{'peak':>16}"]
    for key, label in (("allocated", "Allocated memory"), ("reserved", "Reserved memory")):
        lines.append(f"{label:20}{mb(stats[f'{key}_bytes.all.current']):>16}"
                     f"{mb(stats[f'{key}_bytes.all.peak']):>16}")
    return "\n".join(lines)


def memory_snapshot(mempool_id=None, include_traces=True):
    """A snapshot of the allocator's segments. CuPy's pool does not report its segments, so
    ember cannot give one: raises ``RuntimeError`` (without a GPU, the no-CUDA error)."""
    lazy_init()
    raise RuntimeError("ember.cuda.memory_snapshot: CuPy's memory pool does not report its "
                       "segments; use memory_stats()")


def list_gpu_processes(device: Any = None) -> str:
    """The processes running on a GPU and their memory, as text (needs nvidia-ml-py)."""
    try:
        import pynvml
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    lazy_init()
    pynvml.nvmlInit()
    index = _index(device)
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = [f"GPU:{index}"]
    if not procs:
        lines.append("no processes are running")
    for p in procs:
        lines.append(f"process {p.pid:>10d} uses {p.usedGpuMemory / 2**20:12.3f} MB GPU memory")
    return "\n".join(lines)


class CUDAPluggableAllocator:
    """A GPU allocator loaded from a shared library. ember allocates through CuPy's memory
    pool; a custom allocator is installed with ``cupy.cuda.set_allocator``, so this raises
    ``RuntimeError``."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str):
        raise RuntimeError("ember.cuda.CUDAPluggableAllocator: ember allocates GPU memory "
                           "through CuPy; install a custom allocator with "
                           "cupy.cuda.set_allocator")


def change_current_allocator(allocator) -> None:
    """Replace the GPU allocator (see :class:`CUDAPluggableAllocator`: raises)."""
    raise RuntimeError("ember.cuda.change_current_allocator: ember allocates GPU memory "
                       "through CuPy; install a custom allocator with cupy.cuda.set_allocator")


class MemPool:
    """A private GPU memory pool. ember's GPU memory has one CuPy pool per device; private
    pools are not available, so this raises ``RuntimeError`` (without a GPU, the no-CUDA
    error)."""

    def __init__(self, allocator=None, use_on_oom: bool = False):
        lazy_init()
        raise RuntimeError("ember.cuda.MemPool: ember's GPU memory comes from one CuPy memory "
                           "pool per device; private pools are not available")


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device: Any = None):
    """Allocate from ``pool`` inside the block (pools cannot be made: see :class:`MemPool`)."""
    if not isinstance(pool, MemPool):
        raise TypeError(f"use_mem_pool expects a MemPool, got {type(pool).__name__}")
    yield

