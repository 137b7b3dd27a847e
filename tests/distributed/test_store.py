"""HashStore, FileStore and PrefixStore: the values PyTorch's stores give, timeouts, queues,
and a FileStore shared by processes."""

from __future__ import annotations

import multiprocessing
import os
from datetime import timedelta

import pytest

import ember.distributed as dist


def _ops(store) -> list:
    """One sequence of operations; PyTorch's HashStore gives these results (checked in
    tests/interop/test_distributed_store_torch.py)."""
    out = []
    store.set("a", "1")
    out.append(store.get("a"))
    out += [store.add("c", 3), store.add("c", -1), store.num_keys()]
    out += [store.compare_set("a", "1", "2"), store.compare_set("a", "1", "3"),
            store.compare_set("new", "x", "y"), store.compare_set("new2", "", "z")]
    out += [store.delete_key("a"), store.delete_key("a"), store.check(["c"]),
            store.check(["c", "a"])]
    store.append("ap", b"x")
    store.append("ap", "y")
    store.multi_set(["m1", "m2"], ["v1", b"v2"])
    out += [store.multi_get(["ap", "m1", "m2"]), sorted(store.list_keys())]
    return out


EXPECTED = [b"1", 3, 2, 2, b"2", b"2", b"x", b"z", True, False, True, False,
            [b"xy", b"v1", b"v2"], ["ap", "c", "m1", "m2", "new2"]]


def test_hash_store():
    assert _ops(dist.HashStore()) == EXPECTED


def test_file_store(tmp_path):
    assert _ops(dist.FileStore(str(tmp_path / "fs"))) == EXPECTED


def test_prefix_store():
    base = dist.HashStore()
    store = dist.PrefixStore("pre", base)
    store.set("k", "v")
    assert base.get("pre/k") == b"v" and store.get("k") == b"v"
    assert store.underlying_store is base and store.list_keys() == ["k"]
    with pytest.raises(TypeError):
        dist.PrefixStore("p", {})


def test_timeouts_and_queues():
    store = dist.HashStore()
    store.set_timeout(timedelta(milliseconds=50))
    assert store.timeout == timedelta(milliseconds=50)
    with pytest.raises(dist.DistStoreError, match="Wait timeout"):
        store.get("missing")
    with pytest.raises(dist.DistStoreError, match="Wait timeout"):
        store.wait(["missing"], timedelta(milliseconds=20))
    store.queue_push("q", "one")
    store.queue_push("q", b"two")
    assert store.queue_len("q") == 2
    assert store.queue_pop("q") == b"one" and store.queue_pop("q", block=False) == b"two"
    with pytest.raises(dist.QueueEmptyError, match="queue is empty"):
        store.queue_pop("q", block=False)
    with pytest.raises(dist.DistStoreError):
        store.queue_pop("q")
    with pytest.raises(TypeError):
        store.set("k", 3)


def _worker(path: str, rank: int) -> None:
    store = dist.FileStore(path, 2)
    store.add("count", 1)
    store.set(f"rank{rank}", str(os.getpid()))
    store.barrier("start", 2, timedelta(seconds=30))
    assert int(store.get("count")) == 2
    store.wait([f"rank{1 - rank}"], timedelta(seconds=30))
    del store


def test_file_store_between_processes(tmp_path):
    path = str(tmp_path / "shared")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_worker, args=(path, r)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert not os.path.exists(path)     # removed when both handles were closed
