"""Large matrix products on ember's threads, each thread's OpenBLAS on one thread.

NOTE [ Threaded GEMM ]
OpenBLAS's own threads synchronize inside every GEMM (each waits for the panels the others
pack), so on a shared machine a thread that loses its core stalls its partner for a
scheduler quantum, again and again within one product. Measured on a loaded 2-core machine
(load 3-5): a BERT-base forward (batch 8, sequence 128) took 1.1-12 s, median 4.5 s, with
OpenBLAS on 2 threads, against 2.1-2.4 s on one thread; a 1024x768 @ 768x768 product ran at
55 GFLOP/s on OpenBLAS's 2 threads and at 93 cut as below.

Here a large product is cut into independent pieces, two per thread, which ember's pool
runs (NOTE [ Threads for large ops ]: the calling thread and the workers take the next piece
not taken, so one that gets its core late does fewer), each piece one BLAS call with the
thread's OpenBLAS limited to one thread (``serial_blas``). Nothing waits inside a piece,
only for the last one. A matrix product is cut into blocks of columns of the result (every
piece reads all of ``a`` and a slice of ``b``: measured faster than blocks of rows, which
re-pack all of ``b``), or of rows when it has too few columns; a batched one into blocks
of its first batch dim with two or more matrices. A bias row is added to each block right
after it is computed, while it is in cache.

Each element of the result is the dot product the single call computes, with the same
blocking along the inner dim, so the numbers agree with it to rounding (they are not
promised bit for bit: OpenBLAS's threaded and serial kernels may split differently).
``set_num_threads(1)`` (or a BLAS without ``openblas_set_num_threads_local``) gives the
single call.
"""

from __future__ import annotations

import math

import numpy as np

from ember._backend import _cpu_threads
from ember._backend._blas import _set_threads_local

__all__ = ["install", "matmul"]

_PIECES_PER_THREAD = 2
_MIN_COLUMNS = 64  # of a column block (fewer: the BLAS kernels run at a fraction of speed)
_MIN_ROWS = 32


def install() -> None:
    from ember._backend._base import register_kernel

    register_kernel("matmul", "cpu", matmul, dtypes=(np.float32, np.float64))


def _threads() -> int:
    return 1 if _set_threads_local is None else _cpu_threads.available_threads()


def _bounds(n: int, parts: int) -> list:
    return [(n * i // parts, n * (i + 1) // parts) for i in range(parts)]


def _run(pieces) -> None:
    _cpu_threads.run_tasks(pieces, serial_blas=True)


def _matmul_2d(a, b, bias, threads):
    m, n = a.shape[0], b.shape[1]
    out = np.empty((m, n), np.result_type(a, b))
    if n >= _MIN_COLUMNS * 2:
        parts = min(threads * _PIECES_PER_THREAD, n // _MIN_COLUMNS)

        def piece(lo, hi):
            def run():
                block = out[:, lo:hi]
                np.matmul(a, b[:, lo:hi], out=block)
                if bias is not None:
                    block += bias[lo:hi]
            return run
    elif m >= _MIN_ROWS * 2:
        parts = min(threads * _PIECES_PER_THREAD, m // _MIN_ROWS)

        def piece(lo, hi):
            def run():
                block = out[lo:hi]
                np.matmul(a[lo:hi], b, out=block)
                if bias is not None:
                    block += bias
            return run
    else:
        return None
    _run([piece(lo, hi) for lo, hi in _bounds(n if n >= _MIN_COLUMNS * 2 else m, parts)])
    return out


def _matmul_batched(a, b, threads):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    axis = next((i for i, s in enumerate(batch) if s >= 2), None)
    if axis is None:
        return None
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.empty(batch + (a.shape[-2], b.shape[-1]), np.result_type(a, b))
    parts = min(threads * _PIECES_PER_THREAD, batch[axis])
    lead = (slice(None),) * axis

    def piece(lo, hi):
        index = lead + (slice(lo, hi),)
        return lambda: np.matmul(a[index], b[index], out=out[index])

    _run([piece(lo, hi) for lo, hi in _bounds(batch[axis], parts)])
    return out


def matmul(a, b, bias=None):
    """``a @ b`` (NumPy's matmul of arrays of at least 2 dims), plus ``bias`` (an ``(n,)``
    row, for 2-d operands) on every row, on several threads when there are several (NOTE
    [ Threaded GEMM ]); the single call otherwise."""
    threads = _threads()
    out = None
    if (threads >= 2 and type(a) is np.ndarray and type(b) is np.ndarray
            and a.dtype == b.dtype and a.ndim >= 2 and b.ndim >= 2 and a.size and b.size):
        if a.ndim == 2 and b.ndim == 2:
            out = _matmul_2d(a, b, bias, threads)
        elif bias is None and b.ndim == 2 and a.flags.c_contiguous:
            # a batch of inputs times one matrix: one product of all their rows
            flat = _matmul_2d(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]), b, None,
                              threads)
            out = None if flat is None else flat.reshape(a.shape[:-1] + (b.shape[-1],))
        elif bias is None:
            out = _matmul_batched(a, b, threads)
    if out is None:
        out = np.matmul(a, b)
        if bias is not None:
            out += bias
    return out
