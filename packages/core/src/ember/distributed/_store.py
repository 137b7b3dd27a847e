"""Key-value stores (torch.distributed's Store, HashStore, FileStore, PrefixStore).

PyTorch's process groups rendezvous through a store; ember's meet through MPI, so stores are
here for the programs that use them directly: to share small values between processes (a
HashStore within one process and its threads, a FileStore between processes that see one
file system). Values are bytes (str is encoded as UTF-8). A wait longer than the store's
timeout raises DistStoreError ("Wait timeout"), as in PyTorch.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import threading
import time
from datetime import timedelta

from ember.distributed._types import DistStoreError, QueueEmptyError, default_pg_timeout

__all__ = ["Store", "HashStore", "FileStore", "PrefixStore"]

_INTERNAL = "__filestore__/"


def _bytes(value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"a store value is str or bytes, got {type(value).__name__}")


class Store:
    """The interface of the key-value stores: ``set``, ``get``, ``add``, ``compare_set``,
    ``wait``, ``check``, ``delete_key``, ``num_keys``, ``list_keys``, ``append``,
    ``multi_get``, ``multi_set``, the queues and ``barrier``.

    Subclasses keep a dict of ``key -> bytes`` and give ``_transact(fn)``: run ``fn(data)``
    on it atomically (changes in place), returning its result.
    """

    def __init__(self) -> None:
        self._timeout = default_pg_timeout

    # -- what subclasses provide ---------------------------------------------------------
    def _transact(self, fn):
        raise TypeError("Store is an interface: use HashStore, FileStore or PrefixStore")

    def _key(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(f"a store key is a str, got {type(key).__name__}")
        return key

    # -- the API -------------------------------------------------------------------------
    @property
    def timeout(self) -> timedelta:
        """How long ``get`` and ``wait`` wait for a key."""
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        """Set how long ``get`` and ``wait`` wait for a key."""
        if not isinstance(timeout, timedelta):
            raise TypeError("set_timeout takes a datetime.timedelta")
        self._timeout = timeout

    def set(self, key: str, value) -> None:
        """Store ``value`` (str or bytes) under ``key``."""
        k, v = self._key(key), _bytes(value)
        self._transact(lambda d: d.__setitem__(k, v))

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to the timeout for it to be set."""
        k = self._key(key)
        self._wait_for([k], self._timeout)
        return self._transact(lambda d: d[k])

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer under ``key`` (0 if unset); returns the new value."""
        k, amount = self._key(key), int(amount)

        def fn(d):
            value = int(d.get(k, b"0")) + amount
            d[k] = str(value).encode()
            return value
        return self._transact(fn)

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is unset and
        ``expected_value`` is empty); returns the value it holds afterwards (for an unset key
        and a non-empty ``expected_value``: ``expected_value``)."""
        k, want, new = self._key(key), _bytes(expected_value), _bytes(desired_value)

        def fn(d):
            if k not in d:
                if want == b"":
                    d[k] = new
                    return new
                return want
            if d[k] == want:
                d[k] = new
            return d[k]
        return self._transact(fn)

    def append(self, key: str, value) -> None:
        """Append ``value`` to the bytes under ``key`` (set it if unset)."""
        k, v = self._key(key), _bytes(value)
        self._transact(lambda d: d.__setitem__(k, d.get(k, b"") + v))

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """The values of ``keys``, waiting for all of them."""
        ks = [self._key(k) for k in keys]
        self._wait_for(ks, self._timeout)
        return self._transact(lambda d: [d[k] for k in ks])

    def multi_set(self, keys: list[str], values: list) -> None:
        """Set every key of ``keys`` to the value at the same place of ``values``."""
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        pairs = [(self._key(k), _bytes(v)) for k, v in zip(keys, values)]
        self._transact(lambda d: d.update(pairs))

    def check(self, keys: list[str]) -> bool:
        """True if every key of ``keys`` is set (no waiting)."""
        ks = [self._key(k) for k in keys]
        return self._transact(lambda d: all(k in d for k in ks))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Wait until every key of ``keys`` is set; DistStoreError after ``timeout`` (default:
        the store's)."""
        self._wait_for([self._key(k) for k in keys],
                       self._timeout if timeout is None else timeout)

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; True if it was set."""
        k = self._key(key)
        return self._transact(lambda d: d.pop(k, None) is not None)

    def num_keys(self) -> int:
        """The number of keys set."""
        return self._transact(len)

    def list_keys(self) -> list[str]:
        """The keys set."""
        return self._transact(lambda d: sorted(d))

    def queue_push(self, key: str, value) -> None:
        """Append ``value`` to the queue ``key``."""
        k, v = self._queue_key(key), _bytes(value)

        def fn(d):
            items = json.loads(d.get(k, b"[]"))
            items.append(base64.b64encode(v).decode())
            d[k] = json.dumps(items).encode()
        self._transact(fn)

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """Take the first value of the queue ``key``; waits up to the timeout if it is empty
        (``block``), else raises QueueEmptyError."""
        k = self._queue_key(key)

        def fn(d):
            items = json.loads(d.get(k, b"[]"))
            if not items:
                return None
            first = items.pop(0)
            d[k] = json.dumps(items).encode()
            return base64.b64decode(first)
        deadline = time.monotonic() + self._timeout.total_seconds()
        while True:
            got = self._transact(fn)
            if got is not None:
                return got
            if not block:
                raise QueueEmptyError("queue is empty")
            if time.monotonic() > deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(1e-3)

    def queue_len(self, key: str) -> int:
        """The number of values in the queue ``key``."""
        k = self._queue_key(key)
        return self._transact(lambda d: len(json.loads(d.get(k, b"[]"))))

    def barrier(self, key: str, world_size: int, timeout: timedelta | None = None) -> None:
        """Wait until ``world_size`` callers have reached the barrier named ``key``."""
        arrived = self.add(f"{key}/arrived", 1)
        generation = (arrived - 1) // world_size
        self._wait_for_count(f"{key}/arrived", (generation + 1) * world_size,
                             self._timeout if timeout is None else timeout)

    def has_extended_api(self) -> bool:
        """True: append, multi_get, multi_set and the queues work."""
        return True

    def clone(self) -> Store:
        """Another handle on the same store."""
        return self

    # -- helpers -------------------------------------------------------------------------
    def _queue_key(self, key: str) -> str:
        return f"{self._key(key)}/__queue__"

    def _wait_for(self, keys: list[str], timeout: timedelta) -> None:
        deadline = time.monotonic() + timeout.total_seconds()
        delay = 1e-4
        while not self._transact(lambda d: all(k in d for k in keys)):
            if time.monotonic() > deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(delay)
            delay = min(delay * 2, 0.02)

    def _wait_for_count(self, key: str, count: int, timeout: timedelta) -> None:
        deadline = time.monotonic() + timeout.total_seconds()
        while self._transact(lambda d: int(d.get(key, b"0"))) < count:
            if time.monotonic() > deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(1e-3)


class HashStore(Store):
    """A store in this process's memory, shared by its threads.

    Example::

        >>> store = dist.HashStore()
        >>> store.set("first_key", "first_value")
        >>> store.get("first_key")
        b'first_value'
    """

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def _transact(self, fn):
        with self._lock:
            return fn(self._data)


class FileStore(Store):
    """A store in a file, shared by the processes that open the same path (one machine or a
    shared file system with working locks). The file is removed when ``world_size`` handles
    on it have been closed (garbage-collected), as in PyTorch.

    Args:
        file_name (str): the path of the file.
        world_size (int, optional): how many processes use it (-1: unknown; the file stays).

    Example::

        >>> store = dist.FileStore("/tmp/filestore", 2)
        >>> store.add("count", 1)
        1
    """

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        self.path = os.fspath(file_name)
        self._world_size = int(world_size)
        self._closed = False
        with open(self.path, "a"):
            pass

    def _transact(self, fn, internal: bool = False):
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                raw = f.read()
                data = {k: base64.b64decode(v) for k, v in json.loads(raw or b"{}").items()}
                before = dict(data)
                if internal:
                    result = fn(data)
                else:   # the store's own bookkeeping keys are not the user's
                    user = {k: v for k, v in data.items() if not k.startswith(_INTERNAL)}
                    result = fn(user)
                    data = {**{k: v for k, v in data.items() if k.startswith(_INTERNAL)},
                            **user}
                if data != before:
                    f.seek(0)
                    f.truncate()
                    f.write(json.dumps({k: base64.b64encode(v).decode()
                                        for k, v in data.items()}).encode())
                    f.flush()
                return result
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def __del__(self) -> None:
        if self._closed or self._world_size <= 0 or not os.path.exists(self.path):
            return
        self._closed = True

        def close(d):
            n = int(d.get(_INTERNAL + "closed", b"0")) + 1
            d[_INTERNAL + "closed"] = str(n).encode()
            return n
        try:
            if self._transact(close, internal=True) >= self._world_size:
                os.remove(self.path)
        except OSError:
            pass


class PrefixStore(Store):
    """A view of ``store`` whose keys get ``prefix + "/"`` in front.

    Args:
        prefix (str): the prefix.
        store (Store): the store underneath.
    """

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__()
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore wraps a Store, got {type(store).__name__}")
        self._prefix = prefix
        self.underlying_store = store
        self._timeout = store.timeout

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{super()._key(key)}"

    def _transact(self, fn):
        return self.underlying_store._transact(fn)

    def list_keys(self) -> list[str]:
        start = f"{self._prefix}/"
        return [k[len(start):] for k in self.underlying_store.list_keys() if k.startswith(start)]
