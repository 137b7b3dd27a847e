"""The CPU backend: NumPy arrays and ember's compiled CPU kernels."""

from __future__ import annotations

import numpy as np

from ember._backend import _cpu_conv, _cpu_kernels, _cpu_matmul, _cpu_threads
from ember._backend._base import Backend, register_kernel
from ember._C import _kernels


def _copy_in(array):
    """Any backend's array as a NumPy array (device arrays are copied to the host)."""
    if type(array) is np.ndarray:
        return array
    get = getattr(array, "get", None)  # a CuPy array
    return get() if get is not None else np.asarray(array)


def _make_rng(seed: int):
    # NOTE [ Generators ] in ember._ops.random: the CPU streams are PCG64.
    return np.random.Generator(np.random.PCG64(seed))


backend = Backend("cpu", None, np, to_numpy=lambda array: array, copy_in=_copy_in,
                  make_rng=_make_rng, workspace=_cpu_kernels.workspace,
                  tuning=_cpu_conv.TUNING)
_cpu_threads.install(backend)
_cpu_matmul.install()


# -- kernels ----------------------------------------------------------------------------------

@register_kernel("index_add_rows", "cpu", dtypes=(np.float32, np.float64), contiguous=True)
def _index_add_rows_compiled(out, index, src, alpha=1.0):
    return _kernels.index_add_rows(out, index, src, alpha)


@register_kernel("index_add_rows", "cpu")
def _index_add_rows(out, index, src, alpha=1.0):
    _kernels.check_indices(np.asarray(index).reshape(-1), out.shape[0])
    np.add.at(out, index, alpha * src if alpha != 1 else src)
    return out
