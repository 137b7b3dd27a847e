"""The CUDA backend: CuPy arrays. Imported only when a CUDA tensor is asked for."""

from __future__ import annotations

import functools

from ember._backend._base import Backend


def owns(array) -> bool:
    mod = type(array).__module__
    return mod.startswith("cupy")


@functools.cache
def get() -> Backend:
    try:
        import cupy
    except ImportError:
        raise RuntimeError(
            "CUDA tensors need CuPy: install ember[cuda12] or ember[cuda13]") from None
    if not cupy.cuda.is_available():
        raise RuntimeError("CuPy is installed but no CUDA GPU is available")
    from ember._device import device

    def device_of(array):
        return device("cuda", array.device.id)

    def to_device(array, index=None):
        with cupy.cuda.Device(0 if index is None else index):
            return cupy.asarray(array)

    def index_add_rows(out, index, src, alpha=1.0):
        n = out.shape[0]
        idx = cupy.asarray(index).reshape(-1)
        if idx.size and (bool((idx < -n).any()) or bool((idx >= n).any())):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        cupy.add.at(out, idx, alpha * src if alpha != 1 else src)
        return out

    return Backend(
        name="cuda",
        xp=cupy,
        device_of=device_of,
        to_device=to_device,
        to_numpy=cupy.asnumpy,
        kernels={"index_add_rows": index_add_rows},
    )
