"""ember.profiler against torch.profiler: names, signatures, schedules."""

import inspect
import warnings

import pytest

import ember.profiler as ep

torch = pytest.importorskip("torch")
import torch.profiler as tp  # noqa: E402


@pytest.mark.parametrize("name", ["profile", "record_function", "ProfilerActivity",
                                  "ProfilerAction", "schedule", "tensorboard_trace_handler"])
def test_names_and_signatures(name):
    mine, theirs = getattr(ep, name), getattr(tp, name)
    if name in ("ProfilerActivity", "ProfilerAction"):
        names = {n for n in dir(theirs) if not n.startswith("_")} - {"name", "value"}
        assert names == set(mine.__members__)
        return
    target = theirs.__init__ if inspect.isclass(theirs) else theirs
    mine_fn = mine.__init__ if inspect.isclass(mine) else mine
    assert list(inspect.signature(mine_fn).parameters) == \
        list(inspect.signature(target).parameters)


@pytest.mark.parametrize("kw", [
    dict(wait=1, warmup=1, active=2, repeat=1), dict(wait=2, warmup=1, active=1, repeat=2,
                                                     skip_first=1),
    dict(wait=1, warmup=0, active=1), dict(wait=2, warmup=1, active=2, repeat=2,
                                            skip_first_wait=1),
    dict(wait=0, warmup=1, active=3, skip_first=2)])
def test_schedule_matches_torch(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = ep.schedule(**kw), tp.schedule(**kw)
    assert [mine(i).name for i in range(16)] == [theirs(i).name for i in range(16)]
