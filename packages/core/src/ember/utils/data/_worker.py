"""What runs in a DataLoader worker process, and how its batches travel.

NOTE [ DataLoader workers ]
Each worker is a process with an index queue (a multiprocessing Queue, main -> worker:
``(task_idx, indices, released slot names)``, a ``_ResumeIteration`` for persistent workers,
or None to stop)
and one end of its own result connection (a socket pair; only the worker writes). The
worker waits on both: end-of-file on the result connection means that the main process
has shut it down (or died). That works even where the queue can no longer deliver a
None (an iterator freed by the garbage collector, whose queue was finalized first).

A result is one pickled ``(task_idx, data)`` message written with :class:`_BatchPickler`:
every tensor (and every large NumPy array) in ``data`` goes as the name of a
shared-memory segment ("slot") plus dtype, shape, strides and offset, never as its
bytes; collation in the worker already stacks into slots (``_collate._shared_empty``).
Slots are reused (:class:`_SlotPool`): the main process maps each slot once, and when
the last tensor built on a received slot is garbage-collected there, the slot's name
goes back to its worker with a later task, so that steady-state loading writes into
memory both processes already have mapped (a fresh segment per batch costs more in
page faults than the copy it saves). Slot names carry the iterator's prefix; the
iterator unlinks them all when it shuts its workers down, and a worker whose main
process has died unlinks its own, so nothing is left in /dev/shm.

The main process waits on the result connections and on the workers' sentinels together
(``multiprocessing.connection.wait``), so a worker that dies is noticed at once.
"""

from __future__ import annotations

import io
import multiprocessing.connection
import os
import pickle
import queue
import random
import signal
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ember.multiprocessing import _shm

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds a worker waits for work before checking its parent
_SHM_ARRAY_MIN_BYTES = 1 << 16  # NumPy arrays from this size travel through shared memory


class WorkerInfo:
    """Information about the current DataLoader worker process: ``id`` (0 to
    ``num_workers - 1``), ``num_workers``, ``seed`` (this worker's seed) and ``dataset``
    (this process's copy of the dataset)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the current DataLoader worker, or None in the main
    process. Use it in an ``IterableDataset.__iter__`` (or a ``worker_init_fn``) to give
    each worker its own share of the data."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class KeyErrorMessage(str):
    """str subclass that returns itself in repr (KeyError quotes its message otherwise)."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception with its formatted traceback, to re-raise in another process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the wrapped exception type, its message holding the original traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception  # no frame <-> traceback cycle keeping the iterator alive


def _generate_state(base_seed, worker_id):
    """PyTorch's NumPy seed for a worker: a SeedSequence-like hash of (base_seed, id)."""
    INIT_A, MULT_A = 0x43B0D7E5, 0x931E8875
    INIT_B, MULT_B = 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R = 0xCA01F9DD, 0x4973F715
    XSHIFT = 4 * 8 // 2
    MASK32 = 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(4):
        pool[i] = hash_(entropy[i])
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = INIT_B
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        data_val = (data_val * hash_const_b) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state


# -- fetching ---------------------------------------------------------------------------

class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)


# -- the batch transport ----------------------------------------------------------------

def _size_class(nbytes: int) -> int:
    """Segments come in powers of two from one page, so that freed ones fit new batches."""
    return max(4096, 1 << (max(nbytes, 1) - 1).bit_length())


class _SlotPool:
    """A worker's shared-memory segments ("slots"), mapped once and reused.

    A slot handed to the main process stays busy until the main process releases it (its
    batch was garbage-collected there); the release comes back with a later task. Writing
    into memory that both processes keep mapped costs what a copy costs, where a fresh
    segment per batch costs page faults on both sides.
    """

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.free: dict = {}     # size class -> [Segment]
        self.by_name: dict = {}  # name -> Segment, every slot of this worker
        self.busy: set = set()   # names in the main process's hands
        self.fresh: list = []    # names taken since the last message went out

    def take(self, nbytes: int):
        size = _size_class(nbytes)
        free = self.free.get(size)
        if free:
            seg = free.pop()
        else:
            seg, name = _shm.create_named(self.prefix, size)
            self.by_name[name] = seg
        self.busy.add(seg.name)
        self.fresh.append(seg.name)
        return seg

    def owns(self, seg) -> bool:
        return seg is not None and self.by_name.get(seg.name) is seg

    def release(self, names) -> None:
        for name in names:
            if name in self.busy:
                self.busy.discard(name)
                seg = self.by_name[name]
                self.free.setdefault(seg.nbytes, []).append(seg)

    def sent(self, referenced) -> None:
        """A message went out: slots taken for it that it does not reference are free."""
        unused = [n for n in self.fresh if n not in referenced]
        self.fresh = []
        self.release(unused)

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialized array in a slot (collation stacks into it)."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return _shm.array_on(self.take(nbytes), dtype, shape)


def _open_slot(name, nbytes):
    """Map a slot and unlink its name (a receiver without a pool: plain ``pickle.loads``)."""
    seg = _shm.open_named(name, nbytes)
    return _shm.array_on(seg, np.uint8, (nbytes,))


class _SlotRef:
    """A slot, pickled once per message however many tensors live in it."""

    __slots__ = ("name", "nbytes")

    def __init__(self, name, nbytes):
        self.name, self.nbytes = name, nbytes

    def __reduce__(self):
        return (_open_slot, (self.name, self.nbytes))


def _rebuild_array(slot, dtype, shape, strides, offset):
    if slot.nbytes == 0:
        return np.empty(shape, dtype)
    return np.ndarray(shape, dtype, buffer=slot, offset=offset, strides=strides)


def _rebuild_tensor(slot, dtype, shape, strides, offset, requires_grad, cls=None):
    from ember._C._core import make_subclass, make_tensor_from_array

    t = make_tensor_from_array(_rebuild_array(slot, dtype, shape, strides, offset))
    if cls is not None:
        return make_subclass(cls, t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


class _BatchPickler(pickle.Pickler):
    """Pickles tensors (and large arrays) as references to slots: those the worker
    collated into are referenced as they are, others are copied into a slot first."""

    def __init__(self, file, pool: _SlotPool):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.pool = pool
        self.refs: dict = {}

    def _place(self, array):
        seg = _shm.segment_of(array)
        if not self.pool.owns(seg):
            seg = self.pool.take(array.nbytes)
            shared = _shm.array_on(seg, array.dtype, array.shape)
            np.copyto(shared, array)
            array = shared
        ref = self.refs.get(seg.name)
        if ref is None:
            ref = self.refs[seg.name] = _SlotRef(seg.name, seg.nbytes)
        return ref, (array.dtype, array.shape, array.strides, _shm.offset_in(array, seg))

    def reducer_override(self, obj):
        from ember._C._core import TensorBase

        if isinstance(obj, TensorBase):
            a = obj._data
            if type(a) is not np.ndarray or a.size == 0:
                return NotImplemented
            import ember

            ref, meta = self._place(a)
            cls = None if type(obj) is ember.Tensor else type(obj)
            return (_rebuild_tensor, (ref, *meta, bool(obj.requires_grad and obj.is_leaf), cls))
        # a dataset's own NumPy arrays (host memory by definition) travel in shared memory
        if type(obj) is np.ndarray and obj.nbytes >= _SHM_ARRAY_MIN_BYTES \
                and not obj.dtype.hasobject:
            ref, meta = self._place(obj)
            return (_rebuild_array, (ref, *meta))
        return NotImplemented


def _dumps_batch(msg, pool: _SlotPool) -> bytes:
    """``msg`` pickled for the main process, its tensors placed in ``pool``'s slots."""
    buf = io.BytesIO()
    p = _BatchPickler(buf, pool)
    try:
        p.dump(msg)
    except BaseException:
        pool.sent(())
        raise
    pool.sent(p.refs)
    return buf.getbuffer()


class _BatchUnpickler(pickle.Unpickler):
    """Unpickles a worker's message with ``open_slot(name, nbytes)`` mapping its slots."""

    def __init__(self, file, open_slot):
        super().__init__(file)
        self._open = open_slot

    def find_class(self, module, name):
        if module == __name__ and name == "_open_slot":
            return self._open
        return super().find_class(module, name)


def _send(conn, msg, pool, worker_id):
    try:
        payload = _dumps_batch(msg, pool)
    except Exception:
        payload = _dumps_batch(
            (msg[0], ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")),
            pool)
    conn.send_bytes(payload)


def _worker_loop(dataset_kind, dataset, index_queue, conn, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers,
                 prefix, parent_pid, inherited_fds=()):
    """The body of a worker process (see NOTE [ DataLoader workers ])."""
    for fd in inherited_fds:  # the main process's ends of result connections (fork)
        try:
            os.close(fd)
        except OSError:
            pass
    import ember
    from ember.utils.data import _collate

    global _worker_info
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process drives the shutdown
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        ember.manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        pool = _SlotPool(prefix)
        _collate._shared_empty = pool.empty
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        inbox = index_queue._reader
        while True:
            ready = multiprocessing.connection.wait([inbox, conn], MP_STATUS_CHECK_INTERVAL)
            if conn in ready:  # EOF: the main process closed its end (or died)
                _shm.unlink_prefix(prefix)
                break
            if not ready:
                if os.getppid() != parent_pid:  # the main process is gone
                    _shm.unlink_prefix(prefix)
                    break
                continue
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                conn.send_bytes(_dumps_batch((r, None), pool))
                iteration_end = False
                try:
                    fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                          collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:
                break
            idx, index, released = r
            pool.release(released)
            if iteration_end:
                continue
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            _send(conn, (idx, data), pool, worker_id)
            del data, idx, index, r, released
    except (BrokenPipeError, ConnectionResetError, EOFError, KeyboardInterrupt):
        pass  # the main process closed our pipe: it is shutting us down
    finally:
        try:
            conn.close()
        except OSError:
            pass
