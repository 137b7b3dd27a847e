"""Serial BLAS: run a block with the calling thread's OpenBLAS on one thread.

NOTE [ Serial BLAS ]
Recurrent steps and per-head attention products are many small GEMMs. OpenBLAS splits each
across its threads, so every call is a thread hand-off; on a loaded 2-core machine a
hand-off can wait a scheduler quantum (next to spinning OpenMP threads), and an LSTM forward
that takes 20 ms took 0.4-2.9 s, one batched attention product 1-2 s instead of 1-3 ms
(measured). Those ops run their products under ``serial_blas``, which limits OpenBLAS to
one thread (``openblas_set_num_threads_local``, OpenBLAS >= 0.3.27, found in NumPy's
bundled OpenBLAS). With another BLAS or with CuPy it does nothing.

NOTE [ Serial BLAS is process-wide ]
Despite its name, ``openblas_set_num_threads_local`` in the pthreads OpenBLAS of NumPy's
wheels sets the process's count (measured: a worker thread's call changes what the main
thread's next GEMM uses; only OpenMP builds keep a count per thread). ember's pool runs
pieces under ``serial_blas`` on several threads at once, and each entering and leaving on
its own would race: a thread that leaves restores two threads while another's piece still
runs, and one that entered second "restores" the one its partner had set, leaving OpenBLAS
on one thread for good (a Swin-T forward then gave other digits on its second call, since
OpenBLAS's one- and two-thread GEMMs round differently). So where the count is the
process's, serial mode is counted: the first thread in sets one thread, the last one out
restores the count it found. A probe on the first use (a thread sets the count, the caller
reads it) tells which kind of OpenBLAS this is.
"""

from __future__ import annotations

import threading

import numpy as np

from ember._backend._base import register_kernel

__all__ = ["matmul", "serial_blas", "serial_blas_below", "SERIAL_MAX_WORK"]

# Multiply-adds of one GEMM below which it runs on one thread (``serial_blas_below``): on 2
# cores a single-threaded GEMM of this size takes tens of microseconds, about what one
# thread hand-off can cost on a quiet machine, and far less than one on a loaded machine.
SERIAL_MAX_WORK = 1 << 22
# Multiply-adds from which a GEMM is cut into pieces on ember's threads (the device's
# ``matmul`` kernel, NOTE [ Threaded GEMM ]); between the two, the BLAS's own threads. On a
# quiet 2-core machine (float32, medians of 45 calls) OpenBLAS's 2 threads beat the pieces
# below about 64M multiply-adds (128x784 @ 784x512: 0.69 ms against 1.11; 1024x64 @ 64x256:
# 0.18 against 0.43), and lose above (128x1024 @ 1024x512: 1.34 against 0.95; 700x256 @
# 256x10000: 33 against 18), where its threads hardly gain on one.
THREADED_MIN_WORK = 1 << 26


def _find_set_threads_local():
    import ctypes
    import glob
    import os

    try:
        base = os.path.dirname(os.path.dirname(np.__file__))
        for path in sorted(glob.glob(os.path.join(base, "numpy.libs", "*openblas*"))):
            fn = getattr(ctypes.CDLL(path), "openblas_set_num_threads_local", None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = ctypes.c_int
                return fn
    except OSError:  # pragma: no cover - a NumPy without a loadable bundled OpenBLAS
        pass
    return None


_set_threads_local = _find_set_threads_local()


def _probe_process_wide() -> bool:
    """Whether ``_set_threads_local`` sets the process's count (NOTE [ Serial BLAS is
    process-wide ]): this thread sets one thread, another thread sets two, and this thread
    reads its count back."""
    old = _set_threads_local(1)
    t = threading.Thread(target=_set_threads_local, args=(2,))
    t.start()
    t.join()
    return _set_threads_local(old) == 2


_serial = {"lock": threading.Lock(), "depth": 0, "saved": None, "shared": None}


def _enter_serial():
    """Serial mode on (NOTE [ Serial BLAS is process-wide ]); the count to restore, or None
    where the count is the process's (restored by the last one out)."""
    state = _serial
    if state["shared"] is None:
        with state["lock"]:
            if state["shared"] is None:
                state["shared"] = _probe_process_wide()
    if not state["shared"]:
        return _set_threads_local(1)
    with state["lock"]:
        if state["depth"] == 0:
            state["saved"] = _set_threads_local(1)
        state["depth"] += 1
    return None


def _leave_serial(old):
    if old is not None:
        _set_threads_local(old)
        return
    state = _serial
    with state["lock"]:
        state["depth"] -= 1
        if state["depth"] == 0:
            _set_threads_local(state["saved"])


def threads_changed(n: int) -> None:
    """``ember.set_num_threads(n)`` has set the BLAS count: while some thread is in serial
    mode, keep one thread and restore ``n`` when the last one leaves."""
    state = _serial
    if _set_threads_local is None or not state["shared"]:
        return
    with state["lock"]:
        if state["depth"]:
            state["saved"] = n
            _set_threads_local(1)


class serial_blas:  # noqa: N801 - used like a function: ``with serial_blas(xp):``
    """``with serial_blas(xp, enabled):`` runs the block with OpenBLAS on one thread when
    ``xp`` is NumPy and ``enabled``; the count is restored when the block (and every other
    thread's serial block: NOTE [ Serial BLAS is process-wide ]) has ended."""

    __slots__ = ("on", "old")

    def __init__(self, xp, enabled: bool = True):
        self.on = enabled and xp is np and _set_threads_local is not None
        self.old = None

    def __enter__(self):
        if self.on:
            self.old = _enter_serial()
        return self

    def __exit__(self, *exc):
        if self.on:
            _leave_serial(self.old)
        return False


def serial_blas_below(xp, work: int) -> serial_blas:
    """``serial_blas(xp)`` when ``work`` (multiply-adds of the block's largest GEMM) is below
    ``SERIAL_MAX_WORK``; a block that changes nothing otherwise."""
    return serial_blas(xp, work < SERIAL_MAX_WORK)


def _work(a, b) -> int:
    """The multiply-adds of ``a @ b`` (arrays of at least 2 dims; batch dims broadcast)."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    return max(a.size * n, (b.size // max(1, k)) * m * k)


def matmul(a, b, bias=None):
    """``a @ b`` (+ ``bias``, a row added to every row of the result) for two arrays of one
    device, on the BLAS threads its size calls for: one thread below ``SERIAL_MAX_WORK``
    multiply-adds (NOTE [ Serial BLAS ]), the device's ``matmul`` kernel from there on (on
    the CPU: pieces on ember's threads, NOTE [ Threaded GEMM ] in ``_cpu_matmul``)."""
    work = 0 if a.ndim < 2 or b.ndim < 2 else _work(a, b)
    if a.ndim < 2 or b.ndim < 2:  # a product with a vector: the BLAS's own choice
        out = a @ b
    elif work >= THREADED_MIN_WORK:
        from ember._backend import backend_of

        return backend_of(a).kernel("matmul", a)(a, b, bias)
    elif work >= SERIAL_MAX_WORK:
        out = a @ b  # the BLAS's own threads
    else:
        with serial_blas(np if type(a) is np.ndarray else None):
            out = a @ b
    if bias is not None:
        out += bias
    return out


@register_kernel("matmul", "any")
def _matmul_arrays(a, b, bias=None):
    out = a @ b
    if bias is not None:
        out += bias
    return out
