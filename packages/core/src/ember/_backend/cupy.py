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
