# The OpenMP policy of every kernel module (`include "_parallel.pxi"`).
#
# NOTE [ OpenMP on few cores ]
# A prange loop runs on several threads only when the OpenMP team has more than two
# threads and the loop has at least `parallel_min` elements of work. On a 2-core machine
# the threads of a finished loop spin-wait (libgomp's default wait policy, milliseconds of
# `pause`) and take the cores from the OpenBLAS threads of the matmul that follows:
# measured on 2 cores, a LeNet-5 Adam step took 15 ms with a parallel Adam update and
# 7.8 ms with a serial one (an MLP SGD step 8.0 ms and 3.1 ms), a parallel im2col ran 1.6x
# slower than the serial one, and OMP_WAIT_POLICY=PASSIVE recovered the same time. On more
# cores the loops do go parallel above the threshold.
# Large elementwise ops and reductions (add, mul, exp, sum, softmax, ... from 1M elements)
# do run on every core, two included: NumPy's loops on slices, from a pool of threads that
# sleep when idle instead of spinning (NOTE [ Threads for large ops ] in
# ember._backend._cpu_threads).

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int ember_omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int ember_omp_max_threads(void) { return 1; }
    #endif
    """
    int ember_omp_max_threads() nogil

# "never": the serial threshold on machines with two threads or fewer
cdef Py_ssize_t _SERIAL = <Py_ssize_t>1 << 62


cdef Py_ssize_t parallel_min(Py_ssize_t work) noexcept:
    """The module's threshold: ``work`` elements with more than two OpenMP threads, else
    never."""
    return work if ember_omp_max_threads() > 2 else _SERIAL


def openmp_threads():
    """The number of threads the OpenMP loops may use (1 when built without OpenMP)."""
    return ember_omp_max_threads()


def set_parallel_threshold(Py_ssize_t n):
    """Run this module's loops on several OpenMP threads from ``n`` elements of work on
    (also with two threads or fewer; tests use it to reach the parallel code); returns the
    old threshold."""
    global PARALLEL_MIN
    old = PARALLEL_MIN
    PARALLEL_MIN = n
    return old
