"""Large elementwise ops and reductions on every CPU core: NumPy's own loops on slices,
run by a small pool of ember's threads.

NOTE [ Threads for large ops ]
Above ``PARALLEL_MIN`` elements the CPU kernels below split their work into one slice per
thread and call the same NumPy ufunc (or reduction) on each slice, from a pool of
``get_num_threads() - 1`` worker threads plus the calling one. NumPy releases the GIL
inside its loops, so the slices run at the same time.

Why NumPy on slices and not OpenMP loops of our own: every element goes through the loop
that the single-threaded call runs, so elementwise results are bit-identical to it for
every op NumPy has (add, mul, exp, tanh, ...) with no kernel of ours to keep equal to
NumPy's; NumPy's floating-point error state (``np.errstate``, warnings) applies as in the
single call, because each slice runs in a copy of the caller's context. And the workers
wait on a lock when idle (a futex, no spinning): libgomp's spin-waiting threads are what
made every OpenMP loop serial on two cores (NOTE [ OpenMP on few cores ]); these threads
leave the cores to OpenBLAS as soon as their slice is done.

How reductions split: a reduction over some dims is split along a dim it keeps, so every
output element is reduced by the same loop as in the single call (bit-identical). A
reduction over every element of a contiguous array is split where NumPy's pairwise sum
splits it (halves rounded down to a multiple of 8), and the halves' sums are added as
NumPy adds them: for a power-of-two number of slices the result is the single call's, bit
for bit; max and min are exact whatever the split. The number of slices depends only on
the thread count, so a result is the same from run to run for the same count.

``set_num_threads(1)`` (``ember.set_num_threads``) makes every kernel run the single call.
"""

from __future__ import annotations

import contextvars
import threading

import numpy as np

from ember import _threads

__all__ = ["PARALLEL_MIN", "available_threads", "install", "map_blocks", "num_threads",
           "parallel_run", "reduce", "run_tasks", "set_parallel_min", "softmax_lastdim",
           "ufunc_call"]

# Elements from which a kernel splits its work. Handing a slice to a worker costs
# ~10-50 us (a wake-up on a futex); 1M float32 elements take ~0.3-1 ms per pass.
PARALLEL_MIN = 1 << 20
# The alignment of the slices (64 bytes of float32: no two threads write the same cache
# line). A thread has at least PARALLEL_MIN / 2 elements of work, cut in _OVERSPLIT
# slices of at least _MIN_SLICE elements each: the threads take the next free slice, so
# that one that got its core late (a busy machine) does less of the work.
_ALIGN = 16
_OVERSPLIT = 4
_MIN_SLICE = 1 << 16


_backend = None  # the CPU backend, once install() ran


def set_parallel_min(n: int) -> int:
    """Split work from ``n`` elements on (tests lower it to reach the threaded code with
    small arrays): here, in the CPU backend's ``tuning.parallel_min`` and in the compiled
    fast paths; returns the old value."""
    global PARALLEL_MIN
    from ember._C import _core

    old, PARALLEL_MIN = PARALLEL_MIN, int(n)
    if _backend is not None:
        _backend.tuning.parallel_min = PARALLEL_MIN
    _core.set_large_ufunc_call(ufunc_call, PARALLEL_MIN)
    return old


def install(backend) -> None:
    """Register the kernels for the CPU backend ``backend`` and hand the threaded ufunc
    call to the compiled fast paths."""
    global _backend
    from ember._backend._base import register_kernel

    _backend = backend
    register_kernel("ufunc", "cpu", ufunc_call)
    register_kernel("map_blocks", "cpu", lambda fn, x, out=None: map_blocks(fn, x, out),
                    dtypes=(np.float32, np.float64), contiguous=True)
    register_kernel("reduce", "cpu", reduce, dtypes=_REDUCE_DTYPES)
    register_kernel("softmax_lastdim", "cpu", softmax_lastdim, dtypes=(np.float32, np.float64),
                    contiguous=True)
    set_parallel_min(PARALLEL_MIN)


def num_threads() -> int:
    """The threads a kernel may use: ``ember.set_num_threads``'s value, else the CPUs this
    process may run on."""
    n = _threads._state["num_threads"]
    return n if n is not None else _threads._default_threads()


class _Pool:
    """Worker threads, each with its own queue of tasks; started on first use, grown on
    demand, daemons (they never keep the interpreter alive)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queues: list = []
        self._pid = None

    def _workers(self, k: int) -> list:
        import os
        import queue

        with self._lock:
            if self._pid != os.getpid():  # a forked child has none of its parent's threads
                self._queues, self._pid = [], os.getpid()
            while len(self._queues) < k:
                q = queue.SimpleQueue()
                threading.Thread(target=self._work, args=(q,), daemon=True,
                                 name=f"ember-cpu-{len(self._queues) + 1}").start()
                self._queues.append(q)
            return self._queues[:k]

    @staticmethod
    def _work(q) -> None:
        while True:
            ctx, take = q.get()
            ctx.run(take)

    def run(self, fns) -> None:
        """Run the callables ``fns``, at once where the threads are free: this thread and
        the workers take the next one not taken until none is left (a worker that wakes up
        late finds them done and costs nothing); re-raise the first exception any raised."""
        import queue

        done = queue.SimpleQueue()
        it = iter(range(len(fns)))  # next() on it is atomic under the GIL

        def take():
            for i in it:
                try:
                    fns[i]()
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    done.put(exc)
                else:
                    done.put(None)

        for q in self._workers(min(len(fns), num_threads()) - 1):
            q.put((contextvars.copy_context(), take))
        take()
        error = None
        for _ in fns:
            exc = done.get()
            if error is None and exc is not None:
                error = exc
        if error is not None:
            raise error


_pool = _Pool()
_in_worker = threading.local()


def _slices(n: int, parts: int) -> list:
    """``parts`` (start, stop) ranges covering range(n), boundaries aligned to _ALIGN."""
    bounds = [0]
    for i in range(1, parts):
        b = (n * i // parts) // _ALIGN * _ALIGN
        bounds.append(max(b, bounds[-1]))
    bounds.append(n)
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i + 1] > bounds[i]]


def _parts(work: int) -> int:
    """How many slices ``work`` elements get (1: run the single call)."""
    if work < PARALLEL_MIN or getattr(_in_worker, "active", False):
        return 1
    return max(1, min(num_threads(), work // max(1, PARALLEL_MIN // 2)))


def _slice_count(threads: int, work: int, n: int) -> int:
    smallest = max(1, min(_MIN_SLICE, PARALLEL_MIN // 8))
    return min(n, threads * _OVERSPLIT, max(threads, work // smallest))


def parallel_run(fn, n: int, work: int | None = None) -> bool:
    """Call ``fn(start, stop)`` for slices covering range(n) on several threads, when the
    ``work`` (elements; ``n`` by default) is large enough; False (and nothing called) when
    it is not. Slices of a range of elements (``work is None``) start at multiples of 16."""
    elements = work is None
    work = n if elements else work
    threads = _parts(work)
    if threads < 2:
        return False
    parts = _slice_count(threads, work, n)
    ranges = (_slices(n, parts) if elements else
              [(n * i // parts, n * (i + 1) // parts) for i in range(parts)])
    if len(ranges) < 2:
        return False

    def task(start, stop):
        def call():
            _in_worker.active = True
            try:
                fn(start, stop)
            finally:
                _in_worker.active = False
        return call

    _pool.run([task(a, b) for a, b in ranges])
    return True


def available_threads() -> int:
    """The threads a kernel may split its work over now: 1 inside a task of the pool (its
    work is one piece of a split already), else :func:`num_threads`."""
    return 1 if getattr(_in_worker, "active", False) else num_threads()


def run_tasks(fns, *, serial_blas: bool = False) -> None:
    """Run the callables ``fns`` on the pool (this thread and the workers), each marked as
    a task (kernels inside it do not split again) and, with ``serial_blas``, with its
    thread's OpenBLAS on one thread (NOTE [ Threaded GEMM ] in ``_cpu_matmul``)."""
    import ember._backend._blas as blas

    def task(fn):
        def call():
            _in_worker.active = True
            try:
                if serial_blas:
                    with blas.serial_blas(np):
                        fn()
                else:
                    fn()
            finally:
                _in_worker.active = False
        return call

    _pool.run([task(fn) for fn in fns])


# -- elementwise ------------------------------------------------------------------------------

def _flat_operand(v, shape):
    """``v`` as a 1-d view matching a C-contiguous array of ``shape``; a number or a
    one-element array as it is (broadcast by the ufunc); None if it cannot be sliced so."""
    if type(v) is not np.ndarray:
        return v
    if v.shape == shape:
        return v.reshape(-1) if v.flags.c_contiguous else None
    if v.size == 1 and len(v.shape) <= len(shape):
        return v.reshape(())
    return None


def _overlaps_partially(out, operands) -> bool:
    for v in operands:
        if type(v) is np.ndarray and v is not out and np.may_share_memory(out, v):
            same = (v.__array_interface__["data"][0] == out.__array_interface__["data"][0]
                    and v.strides == out.strides and v.shape == out.shape
                    and v.dtype.itemsize == out.dtype.itemsize)
            if not same:
                return True
    return False


def ufunc_call(ufunc, *operands, out=None):
    """``ufunc(*operands, out=out)``: NumPy's result, bit for bit, computed on several
    threads when the output is large and C-contiguous and every array operand has its
    shape (or one element). ``out`` (optional) must have the broadcast shape."""
    if out is None:
        size = 0
        shape = None
        for v in operands:
            if type(v) is np.ndarray and v.size > size:
                size, shape = v.size, v.shape
        if size < PARALLEL_MIN or _parts(size) < 2:
            return ufunc(*operands)
        flat = [_flat_operand(v, shape) for v in operands]
        if any(f is None for f in flat):
            return ufunc(*operands)
        dtypes = tuple(v.dtype if type(v) is np.ndarray else type(v) for v in operands)
        try:
            dt = ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)[-1]
        except (TypeError, ValueError):  # numpy scalars, out-of-range numbers: NumPy decides
            return ufunc(*operands)
        out = np.empty(shape, dt)
    else:
        shape = out.shape
        flat = [_flat_operand(v, shape) for v in operands]
        if (out.size < PARALLEL_MIN or not out.flags.c_contiguous
                or any(f is None for f in flat) or _overlaps_partially(out, operands)):
            return ufunc(*operands, out=out)
    flat_out = out.reshape(-1)

    def run(a, b):
        ufunc(*[f[a:b] if type(f) is np.ndarray and f.ndim else f for f in flat],
              out=flat_out[a:b])

    if not parallel_run(run, out.size):
        ufunc(*operands, out=out)
    return out


_BLOCK_BYTES = 256 << 10  # a block of map_blocks: its passes stay in the core's L2


def map_blocks(fn, x, out=None):
    """``out`` with ``fn(x_block, out_block)`` called on blocks of a C-contiguous ``x`` and
    of ``out`` (a new array like ``x`` if None; ``x`` itself for an in-place op), an op of
    several NumPy passes written to compute one block in place, so that each block's passes
    run in cache; the blocks on several threads when ``x`` is large. ``fn`` must compute
    each element from the same element of ``x`` alone, so that the result is the one of
    ``fn(x, out)``, bit for bit."""
    if out is None:
        out = np.empty_like(x)
    flat, flat_out = x.reshape(-1), out.reshape(-1)
    block = max(_ALIGN, _BLOCK_BYTES // max(1, x.itemsize) // _ALIGN * _ALIGN)

    def run(a, b):
        for s in range(a, b, block):
            e = min(b, s + block)
            fn(flat[s:e], flat_out[s:e])

    if not parallel_run(run, flat.size):
        run(0, flat.size)
    return out


# -- reductions -------------------------------------------------------------------------------

def _pairwise_slices(n: int, parts: int) -> list:
    """Split range(n) as NumPy's pairwise sum does (halves, the first rounded down to a
    multiple of 8), ``parts`` rounded down to a power of two; the tree of the splits is
    returned as nested (left, right) pairs of (start, stop) leaves."""
    def split(a, b, k):
        if k < 2 or b - a <= 128:
            return (a, b)
        h = (b - a) // 2
        h -= h % 8
        return (split(a, a + h, k // 2), split(a + h, b, k // 2))

    return split(0, n, parts)


def _leaves(tree, acc):
    if isinstance(tree[0], tuple):
        _leaves(tree[0], acc)
        _leaves(tree[1], acc)
    else:
        acc.append(tree)
    return acc


def _split_axis(shape, axes) -> int | None:
    """The first kept dim of ``shape`` with the most elements to split, or None."""
    best, size = None, 1
    for d, s in enumerate(shape):
        if d not in axes and s > size:
            best, size = d, s
    return best if best is not None and size >= 2 else None


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(a % ndim if ndim else 0 for a in axis))


def reduce(ufunc, x, axis=None, keepdims=False, dtype=None):
    """``ufunc.reduce(x, axis, dtype, keepdims=keepdims)`` for np.add, np.maximum and
    np.minimum, on several threads for a large ``x`` (see NOTE [ Threads for large ops ])."""
    def single():
        return ufunc.reduce(x, axis=axis if axis is not None else None, dtype=dtype,
                            keepdims=keepdims)

    n = x.size
    parts = _parts(n)
    if parts < 2 or x.ndim == 0:
        return single()
    axes = _norm_axes(axis, x.ndim)
    d = _split_axis(x.shape, axes)
    if d is not None and x.shape[d] >= 2:
        out_shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        rdt = _result_dtype(ufunc, x, dtype)
        out = np.empty(out_shape, rdt)
        index = [slice(None)] * x.ndim

        def run(a, b):
            sl = tuple(index[:d] + [slice(a, b)] + index[d + 1:])
            ufunc.reduce(x[sl], axis=axes, dtype=dtype, keepdims=True, out=out[sl])

        if not parallel_run(run, x.shape[d], n):
            return single()
        if keepdims:
            return out
        kept = tuple(s for i, s in enumerate(out_shape) if i not in axes)
        return out.reshape(kept) if kept else out.reshape(())[()]
    if len(axes) != x.ndim or not x.flags.c_contiguous:
        return single()
    flat = x.reshape(-1)
    parts = _slice_count(parts, n, n)
    parts = 1 << (parts.bit_length() - 1)  # a power of two: NumPy's pairwise result
    tree = _pairwise_slices(n, parts)
    leaves = _leaves(tree, [])
    if len(leaves) < 2:
        return single()
    results = {}

    def task(leaf):
        def call():
            results[leaf] = ufunc.reduce(flat[leaf[0]:leaf[1]], dtype=dtype)
        return call

    _pool.run([task(leaf) for leaf in leaves])

    def combine(t):
        if isinstance(t[0], tuple):
            return ufunc(combine(t[0]), combine(t[1]))
        return results[t]

    value = combine(tree)
    if keepdims:
        return np.asarray(value).reshape((1,) * x.ndim)
    return value


# the dtypes reduce() takes: those whose reductions NumPy computes without Python objects
_REDUCE_DTYPES = (np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int8,
                  np.int16, np.int32, np.int64, np.uint8, np.bool_)


def _result_dtype(ufunc, x, dtype):
    """The dtype of ``ufunc.reduce(x, dtype=dtype)`` (x.dtype for float inputs)."""
    return ufunc.reduce(x.reshape(-1)[:1], dtype=dtype).dtype


# -- softmax over the last dim -----------------------------------------------------------------

_SOFTMAX_BLOCK_BYTES = 256 << 10  # rows per step: a block stays in the core's L2


def _softmax_rows(x, out, log: bool, a: int, b: int) -> None:
    """softmax (or log_softmax) of rows a:b of the 2-d arrays, a block of rows at a time,
    the same NumPy calls as the single call (NOTE [ Threads for large ops ])."""
    rows = max(1, _SOFTMAX_BLOCK_BYTES // max(1, x.shape[1] * x.itemsize))
    for r in range(a, b, rows):
        xs, e = x[r:min(b, r + rows)], out[r:min(b, r + rows)]
        m = xs.max(axis=1, keepdims=True)
        np.subtract(xs, m, out=e)
        if log:
            s = np.exp(e).sum(axis=1, keepdims=True)
            np.subtract(e, np.log(s), out=e)
        else:
            np.exp(e, out=e)
            np.true_divide(e, e.sum(axis=1, keepdims=True), out=e)


def softmax_lastdim(x, log: bool = False):
    """softmax (log_softmax) of a C-contiguous float array over its last dim, in blocks of
    rows that stay in cache, on several threads when large. Every row is computed as
    ``e = exp(x - max(x)); e / sum(e)`` (``z = x - max(x); z - log(sum(exp(z)))``)."""
    x2 = x.reshape(-1, x.shape[-1])
    out = np.empty_like(x2)
    with np.errstate(all="ignore"):
        if not parallel_run(lambda a, b: _softmax_rows(x2, out, log, a, b), x2.shape[0],
                            x.size):
            _softmax_rows(x2, out, log, 0, x2.shape[0])
    return out.reshape(x.shape)
