"""``ember.backends``: PyTorch's backend switches and queries (``ember.backends.cudnn``,
``cuda``, ``mps``, ``cpu``, ``mkl``, ``mkldnn``, ``openmp``, ``opt_einsum``). The switches
live in ``ember._flags.FLAGS`` (NOTE [ Global flags ]), so the CUDA backend and kernels read
them from one place."""

from __future__ import annotations

import functools

from ember.backends import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]


@functools.cache
def _blas_names() -> tuple:
    """The internal names of the BLAS libraries loaded in the process (threadpoolctl)."""
    import numpy  # noqa: F401 - NumPy's BLAS is loaded with it
    from threadpoolctl import threadpool_info

    return tuple(lib.get("internal_api", "") for lib in threadpool_info()
                 if lib["user_api"] == "blas")
