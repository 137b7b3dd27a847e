"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

See NOTE [ DataLoader workers ] in _worker.py for the protocol between the main process
and its workers, and NOTE [ Shared-memory segments ] in ember/multiprocessing/_shm.py
for how a batch travels.
"""

from __future__ import annotations

import atexit
import collections
import io
import itertools
import math
import multiprocessing as python_multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import numpy as np

from ember.multiprocessing import _shm
from ember.utils.data import _collate, _worker
from ember.utils.data._worker import (
    ExceptionWrapper,
    _DatasetKind,
    _IterableDatasetStopIteration,
    _ResumeIteration,
)
from ember.utils.data.dataset import Dataset, IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

default_collate = _collate.default_collate
default_convert = _collate.default_convert
get_worker_info = _worker.get_worker_info

_T_co = TypeVar("_T_co", covariant=True)

_JOIN_GRACE_S = 1.0  # how long a stopping worker may take before it is terminated


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides the end)."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Combines a dataset and a sampler into an iterable over batches.

    Map-style and iterable-style datasets, single- or multi-process loading (worker
    processes whose batches reach this process through shared memory), automatic batching
    with ``collate_fn``, every argument of ``torch.utils.data.DataLoader``.

    Args:
        dataset: the dataset to load from.
        batch_size: samples per batch (``None`` disables batching). Default: 1.
        shuffle: reshuffle the data every epoch (map-style datasets).
        sampler: the order of the indices (exclusive with ``shuffle``).
        batch_sampler: yields lists of indices (exclusive with ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: worker processes (0: load in this process).
        collate_fn: merges a list of samples into a batch (``default_collate``).
        pin_memory: copy batches into pinned memory (ignored where there is no
            accelerator, with PyTorch's warning).
        drop_last: drop the last incomplete batch.
        timeout: seconds to wait for a batch from the workers (0: forever).
        worker_init_fn: called in each worker with its id, after seeding.
        multiprocessing_context: a start method name or a multiprocessing context.
        generator: the generator for ``RandomSampler`` and for the workers' base seed.
        prefetch_factor: batches loaded in advance per worker (2 with workers).
        persistent_workers: keep the workers between epochs.
        pin_memory_device: deprecated, ignored.
        in_order: return batches in sampler order (False: as they come).
    """

    __initialized = False

    def __init__(self, dataset: Dataset[_T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start "
                            f"method in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context)
                if not isinstance(multiprocessing_context,
                                  python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn (as PyTorch does) when more workers are asked for than there are CPUs."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            msg = (f"Our suggested max number of worker in current system is {suggest}, which is "
                   "smaller than what this DataLoader is going to create."
                   if suggest is not None else
                   "DataLoader is not able to compute a suggested max number of worker in "
                   "current system.")
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"{msg} Please be aware that excessive worker creation might get DataLoader "
                "running slow or even freeze, lower the worker number to avoid potential "
                "slowness/freeze if necessary.", stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        import ember

        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(ember.empty((), dtype=ember.int64)
                              .random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)


# Iterators with live workers, shut down at interpreter exit (before multiprocessing's own
# exit handler terminates daemonic children), so that no segment outlives the program.
_live_iterators: weakref.WeakSet = weakref.WeakSet()
_live_reader_fds: set = set()  # main-side ends of the workers' result connections
_live_lock = threading.Lock()


@atexit.register
def _shutdown_live_iterators():
    with _live_lock:
        iterators = list(_live_iterators)
    for it in iterators:
        it._shutdown_workers()


def _death_message(proc) -> str:
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or f"signal {-code}"
        except ValueError:
            name = f"signal {-code}"
        return f"DataLoader worker (pid {proc.pid}) is killed by signal: {name}."
    return f"DataLoader worker (pid(s) {proc.pid}) exited unexpectedly (exit code {code})"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        if self._prefetch_factor <= 0:
            raise ValueError("prefetch_factor must be positive with num_workers > 0")
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        self._prefix = _shm.new_prefix("dl")
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._readers = []
        self._reader_fds = []
        self._ready = collections.deque()
        self._failure = None
        self._slots = {}  # name -> Segment: the workers' slots, each mapped here once
        self._released = [collections.deque() for _ in range(self._num_workers)]
        with _live_lock:
            _live_iterators.add(self)
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                reader, writer = ctx.Pipe(duplex=True)
                with _live_lock:
                    self._reader_fds.append(reader.fileno())
                    _live_reader_fds.add(reader.fileno())
                    # A forked worker inherits the main-side ends of every result
                    # connection; it closes them, so that each worker sees end-of-file on
                    # its own once the main process closes it.
                    inherited = tuple(_live_reader_fds) \
                        if ctx.get_start_method() == "fork" else ()
                w = ctx.Process(
                    target=_worker._worker_loop,
                    args=(self._dataset_kind, self._dataset, index_queue, writer,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, self._worker_init_fn, i, self._num_workers,
                          self._persistent_workers, f"{self._prefix}w{i}_", os.getpid(),
                          inherited),
                    daemon=True)
                self._index_queues.append(index_queue)
                self._readers.append(reader)
                try:
                    w.start()
                finally:
                    writer.close()
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # -- receiving ------------------------------------------------------------------------
    def _receive(self, i) -> bool:
        """Read one message from worker ``i``'s pipe into the ready queue; False at EOF."""
        try:
            payload = self._readers[i].recv_bytes()
        except (EOFError, OSError):
            return False
        released = self._released[i]
        slots = self._slots

        def open_slot(name, nbytes):
            seg = slots.get(name)
            if seg is None:
                seg = slots[name] = _shm.open_named(name, nbytes, unlink=False)
            slot = _shm.array_on(seg, np.uint8, (nbytes,))
            # Once every tensor built on it is gone, the worker may reuse the slot.
            weakref.finalize(slot, released.append, name)
            return slot

        self._ready.append(_worker._BatchUnpickler(io.BytesIO(payload), open_slot).load())
        return True

    def _worker_exited(self, i):
        """Worker ``i`` exited (its pipe hit EOF or its sentinel fired): keep what it sent
        before, and remember the failure, raised once that data has been delivered."""
        try:
            while self._readers[i].poll():
                if not self._receive(i):
                    break
        except (EOFError, OSError):
            pass
        w = self._workers[i]
        w.join(timeout=1.0)
        self._workers_status[i] = False
        self._workers_num_tasks[i] = 0
        if self._failure is None:
            self._failure = _death_message(w)

    def _get_data(self):
        """The next message from any worker, waiting at most ``timeout`` seconds."""
        if self._ready:
            return self._ready.popleft()
        if self._failure is not None:
            raise RuntimeError(self._failure)
        deadline = None if self._timeout <= 0 else time.monotonic() + self._timeout
        while True:
            watched = {}
            for i, w in enumerate(self._workers):
                if self._workers_status[i]:
                    watched[self._readers[i]] = ("data", i)
                    watched[w.sentinel] = ("exit", i)
            if not watched:
                raise RuntimeError("DataLoader has no live worker to wait for")
            wait_s = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = multiprocessing.connection.wait(list(watched), wait_s)
            if not ready:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            exited = []
            for obj in ready:
                kind, i = watched[obj]
                if kind == "exit" or not self._receive(i):
                    exited.append(i)
            for i in dict.fromkeys(exited):
                self._worker_exited(i)
            if self._ready:
                return self._ready.popleft()
            if self._failure is not None:
                raise RuntimeError(self._failure)

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable \
                    and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._workers_num_tasks[data.worker_id] -= 1
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_queue_idx] < \
                        max_tasks // sum(self._workers_status):
                    break
        else:
            return
        released = self._released[worker_queue_idx]
        names = [released.popleft() for _ in range(len(released))]
        self._index_queues[worker_queue_idx].put((self._send_idx, index, names))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        try:
            self._index_queues[worker_id].put(None)
        except (OSError, ValueError):
            pass
        self._workers_status[worker_id] = False

    # -- shutting down --------------------------------------------------------------------
    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            # Workers see end-of-file (or EPIPE while writing a result) and exit.
            with _live_lock:
                _live_reader_fds.difference_update(self._reader_fds)
                for r in self._readers:
                    r.close()
            deadline = time.monotonic() + _JOIN_GRACE_S
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            for w in self._workers:
                w.join(timeout=1.0)
                if w.is_alive():
                    w.kill()
                    w.join()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            self._ready.clear()
            self._slots.clear()
            _shm.unlink_prefix(self._prefix)
            with _live_lock:
                _live_iterators.discard(self)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
