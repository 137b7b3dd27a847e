"""CPU kernels that NumPy would do in several passes or with Python loops.

Each kernel validates the user's indices first and raises IndexError naming the bad
index and the size; only then does it run its loop without bounds checks, without
the GIL and, where OpenMP is available, on several threads.
"""

cimport cython
from cython.parallel cimport prange

import numpy as np
cimport numpy as cnp

cnp.import_array()

include "_parallel.pxi"

cdef Py_ssize_t PARALLEL_MIN = parallel_min(32768)

ctypedef fused floating_t:
    float
    double

ctypedef fused index_t:
    cnp.int32_t
    cnp.int64_t


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _first_bad_index(const index_t[::1] index, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(index.shape[0]):
        if index[i] < -size or index[i] >= size:
            return i
    return -1


def check_indices(index, Py_ssize_t size, int dim=0):
    """Raise IndexError if an entry of the 1-d integer array ``index`` is out of range."""
    idx = np.ascontiguousarray(index)
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        idx = idx.astype(np.int64)
    cdef Py_ssize_t bad
    if idx.dtype == np.int64:
        bad = _first_bad_index[cnp.int64_t](idx, size)
    else:
        bad = _first_bad_index[cnp.int32_t](idx, size)
    if bad >= 0:
        raise IndexError(
            f"index {int(idx[bad])} is out of bounds for dimension {dim} with size {size}")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _index_add_rows(floating_t[:, ::1] out, const cnp.int64_t[::1] index,
                          const floating_t[:, ::1] src, floating_t alpha) noexcept nogil:
    # Rows of ``src`` may go to the same row of ``out``, so threads split the
    # columns, never the rows: no two threads ever write the same element.
    cdef Py_ssize_t n = index.shape[0], cols = out.shape[1], rows = out.shape[0]
    cdef Py_ssize_t i, j, r
    if cols >= 64 and n * cols >= PARALLEL_MIN:
        for j in prange(cols, schedule="static"):
            for i in range(n):
                r = index[i]
                if r < 0:
                    r = r + rows
                out[r, j] += alpha * src[i, j]
    else:
        for i in range(n):
            r = index[i]
            if r < 0:
                r = r + rows
            for j in range(cols):
                out[r, j] += alpha * src[i, j]


def index_add_rows(out, index, src, alpha=1.0):
    """``out[index[i], :] += alpha * src[i, :]`` for every i, summing repeated rows.

    ``out`` and ``src`` are C-contiguous 2-d float32 or float64 arrays with the same
    number of columns; ``index`` is a 1-d integer array with one entry per row of
    ``src``. The scatter-add that embedding backward and ``index_add`` need, in one
    pass (NumPy's ``np.add.at`` is several times slower).
    """
    if out.ndim != 2 or src.ndim != 2:
        raise ValueError(f"index_add_rows expects 2-d arrays, got {out.ndim}-d and {src.ndim}-d")
    if out.dtype != src.dtype:
        raise TypeError(f"index_add_rows: dtype mismatch {out.dtype} and {src.dtype}")
    if out.shape[1] != src.shape[1]:
        raise ValueError(
            f"index_add_rows: out has {out.shape[1]} columns but src has {src.shape[1]}")
    idx = np.ascontiguousarray(index, dtype=np.int64).reshape(-1)
    if idx.shape[0] != src.shape[0]:
        raise ValueError(
            f"index_add_rows: index has {idx.shape[0]} entries but src has {src.shape[0]} rows")
    if not out.flags.c_contiguous:
        raise ValueError("index_add_rows: out must be C-contiguous")
    check_indices(idx, out.shape[0])
    src_c = np.ascontiguousarray(src)
    if out.dtype == np.float32:
        _index_add_rows[float](out, idx, src_c, <float>alpha)
    elif out.dtype == np.float64:
        _index_add_rows[double](out, idx, src_c, <double>alpha)
    else:
        raise TypeError(f"index_add_rows supports float32 and float64, not {out.dtype}")
    return out
