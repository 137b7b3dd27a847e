"""The CUDA backends: CuPy arrays, one backend per GPU. Imported only when a CUDA tensor is
asked for; ``import cupy`` happens here and nowhere else."""

from __future__ import annotations

import functools

from ember._backend._base import Backend, register_kernel


def owns(array) -> bool:
    """Whether ``array`` is a CuPy array."""
    return type(array).__module__.startswith("cupy")


@functools.cache
def _cupy():
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            "CUDA tensors need CuPy: install ember[cuda12] or ember[cuda13]") from None
    return cupy


def device_count() -> int:
    """The number of CUDA GPUs CuPy sees (0 without CuPy or a GPU)."""
    try:
        cupy = _cupy()
        return cupy.cuda.runtime.getDeviceCount() if cupy.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - no CuPy, no driver: no GPUs
        return 0


def current_index() -> int:
    return _cupy().cuda.runtime.getDevice()


@functools.cache
def get(index: int = 0) -> Backend:
    """The backend of GPU ``index``."""
    cupy = _cupy()
    if not cupy.cuda.is_available():
        raise RuntimeError("CuPy is installed but no CUDA GPU is available")
    n = cupy.cuda.runtime.getDeviceCount()
    if not 0 <= index < n:
        raise RuntimeError(
            f"CUDA error: invalid device ordinal (device index {index}, {n} device(s) found)")
    dev = cupy.cuda.Device(index)

    def copy_in(array):
        if owns(array):
            if array.device.id == index:
                return array
            # Device to device: a peer copy, not a round trip through the host.
            src = cupy.ascontiguousarray(array)
            with dev:
                out = cupy.empty(src.shape, src.dtype)
                out.data.copy_from_device(src.data, src.nbytes)
            return out
        with dev:
            return cupy.asarray(array)

    def make_rng(seed: int):
        with dev:
            return cupy.random.Generator(cupy.random.XORWOW(seed))

    def memory_stats():
        pool = cupy.get_default_memory_pool()
        with dev:
            return {"allocated_bytes.all.current": pool.used_bytes(),
                    "reserved_bytes.all.current": pool.total_bytes()}

    def synchronize():
        dev.synchronize()

    return Backend("cuda", index, cupy, to_numpy=cupy.asnumpy, copy_in=copy_in,
                   make_rng=make_rng, memory_stats=memory_stats, synchronize=synchronize,
                   context=lambda: dev)


@register_kernel("index_add_rows", "cuda")
def _index_add_rows(out, index, src, alpha=1.0):
    cupy = _cupy()
    n = out.shape[0]
    idx = cupy.asarray(index).reshape(-1)
    if idx.size and (bool((idx < -n).any()) or bool((idx >= n).any())):
        bad = int(idx[(idx < -n) | (idx >= n)][0])
        raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {n}")
    cupy.add.at(out, idx, alpha * src if alpha != 1 else src)
    return out


# -- what ember.cuda asks of the GPUs (device management, properties, memory) ----------------

def installed() -> bool:
    """Whether CuPy can be imported (GPUs or not)."""
    try:
        _cupy()
    except RuntimeError:
        return False
    return True


def module():
    """The CuPy module (for ember.cuda's streams, events and handles)."""
    return _cupy()


def set_current_index(index: int) -> None:
    """Make GPU ``index`` the current device of the calling thread."""
    get(index)  # checks the index
    _cupy().cuda.Device(index).use()


def device_properties(index: int) -> dict:
    """CUDA's device properties of GPU ``index`` (``cudaGetDeviceProperties``'s fields)."""
    get(index)
    return _cupy().cuda.runtime.getDeviceProperties(index)


def mem_get_info(index: int) -> tuple:
    """(free, total) bytes of GPU ``index``, as ``cudaMemGetInfo`` reports them."""
    with get(index).context():
        free, total = _cupy().cuda.runtime.memGetInfo()
    return int(free), int(total)


def empty_cache() -> None:
    """Give the unused blocks of CuPy's memory pools back to the driver."""
    cupy = _cupy()
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


def set_memory_limit(index: int, fraction: float) -> None:
    """Limit the memory pool of GPU ``index`` to ``fraction`` of its memory."""
    with get(index).context():
        _cupy().get_default_memory_pool().set_limit(fraction=fraction)


def memory_limit(index: int) -> int:
    """The memory pool limit of GPU ``index`` in bytes (0: no limit)."""
    with get(index).context():
        return int(_cupy().get_default_memory_pool().get_limit())


def alloc(index: int, size: int):
    """``size`` bytes from GPU ``index``'s memory pool (a CuPy MemoryPointer)."""
    with get(index).context():
        return _cupy().get_default_memory_pool().malloc(size)


def pinned_empty(nbytes: int):
    """A host buffer of ``nbytes`` in page-locked (pinned) memory (a CuPy
    PinnedMemoryPointer; NumPy arrays can be made over it)."""
    return _cupy().cuda.alloc_pinned_memory(nbytes)


def is_pinned_buffer(obj) -> bool:
    """Whether ``obj`` (the base of a NumPy array) is CuPy pinned memory."""
    return type(obj).__module__.startswith("cupy") and "Pinned" in type(obj).__name__
