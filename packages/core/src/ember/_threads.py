"""CPU thread counts: ``ember.set_num_threads`` and friends, through threadpoolctl.

NOTE [ Thread pools ]
ember's CPU work runs on two kinds of thread pools: the BLAS that NumPy is built with
(OpenBLAS in NumPy's wheels: matmul, linear, the im2col convolutions) and the OpenMP runtime
of ember's compiled kernels (``prange`` loops in ``ember._C``: pooling, norms, fused
optimizer steps, im2col). PyTorch's intra-op thread count is one number for both, and so is
ember's: :func:`set_num_threads` limits every BLAS and OpenMP library loaded in the process
through threadpoolctl (the library scikit-learn uses for the same job). OpenMP's count is a
per-thread setting: it applies to the calling thread and to threads started after it
(:func:`init_num_threads` applies it to another, already running thread).

ember runs one op at a time on the calling thread: there is no inter-op pool. The
inter-op count is recorded for :func:`get_num_interop_threads`, and, as in PyTorch, it can
be set once.
"""

from __future__ import annotations

import os

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "init_num_threads"]

_state = {"num_threads": None, "interop": None, "interop_set": False}


def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _check_positive(n, fn: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{fn} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{fn} expects a positive integer")
    return n


def _default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the number of threads used for intra-op parallelism on the CPU: the BLAS
    (matrix products) and ember's OpenMP kernels (see NOTE [ Thread pools ]).

    Args:
        int (int): the number of threads, at least 1.

    Example::

        >>> ember.set_num_threads(1)
        >>> ember.get_num_threads()
        1
    """
    n = _check_positive(int, "set_num_threads")
    _controller().limit(limits=n)
    _state["num_threads"] = n
    from ember._backend import _blas

    _blas.threads_changed(n)  # NOTE [ Serial BLAS is process-wide ]


def intra_op_threads() -> int:
    """The intra-op thread count for ember's own multi-threaded calls (SciPy's FFT workers):
    :func:`set_num_threads`'s value, else the CPUs this process may run on; cheap (no
    threadpoolctl query)."""
    return _state["num_threads"] or _default_threads()


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism on the CPU: the last value given
    to :func:`set_num_threads`, else the OpenMP (or BLAS) default."""
    if _state["num_threads"] is not None:
        return _state["num_threads"]
    info = _controller().info()
    for api in ("openmp", "blas"):
        counts = [lib["num_threads"] for lib in info if lib["user_api"] == api]
        if counts:
            return max(counts)
    return _default_threads()


def init_num_threads() -> None:
    """Apply the thread count of :func:`set_num_threads` to the calling thread's OpenMP
    runtime (OpenMP's count is per thread): call it first in a thread started before
    the count was set."""
    if _state["num_threads"] is not None:
        _controller().limit(limits=_state["num_threads"])


def set_num_interop_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the number of threads used for inter-op parallelism. ember runs ops one at a time
    on the calling thread (no inter-op pool), so the value is recorded and reported by
    :func:`get_num_interop_threads`; as in PyTorch, it can be set only once.

    Args:
        int (int): the number of threads, at least 1.
    """
    n = _check_positive(int, "set_num_interop_threads")
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop"] = n
    _state["interop_set"] = True


def get_num_interop_threads() -> int:
    """The number of inter-op threads (see :func:`set_num_interop_threads`); by default the
    number of CPUs this process may run on, as in PyTorch."""
    return _state["interop"] if _state["interop"] is not None else _default_threads()
