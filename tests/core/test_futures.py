"""ember.futures: Future (set_result/set_exception, wait, value, done, then, callbacks),
collect_all and wait_all."""

from __future__ import annotations

import threading

import pytest

import ember
from ember.futures import Future, collect_all, wait_all


def test_result_then_and_callbacks():
    fut = Future()
    assert not fut.done()
    doubled = fut.then(lambda f: f.value() * 2)
    seen = []
    fut.add_done_callback(lambda f: seen.append(f.value()))
    fut.set_result(21)
    assert fut.done() and fut.wait() == 21 and fut.value() == 21
    assert doubled.wait() == 42 and seen == [21]
    late = []
    fut.add_done_callback(lambda f: late.append(1))    # already done: runs at once
    assert late == [1]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        fut.set_result(1)


def test_exceptions():
    fut = Future()
    chained = fut.then(lambda f: f.value() + 1)
    fut.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        fut.wait()
    with pytest.raises(ValueError, match="bad"):
        chained.wait()          # the callback's f.value() raised
    with pytest.raises(TypeError):
        Future().set_exception("not an exception")
    with pytest.raises(RuntimeError, match="not completed"):
        Future().value()


def test_wait_across_threads():
    fut = Future()
    threading.Timer(0.05, fut.set_result, args=("done",)).start()
    assert fut.wait() == "done"


def test_collect_all_and_wait_all():
    futs = [Future() for _ in range(3)]
    every = collect_all(futs)
    for i, f in enumerate(futs):
        assert not every.done()
        f.set_result(i)
    assert every.wait() == futs
    assert wait_all(futs) == [0, 1, 2]
    assert collect_all([]).wait() == []


def test_namespace():
    assert ember.futures.Future is Future
