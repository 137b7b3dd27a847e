"""ember.profiler: events from the dispatch point, tables, traces, schedules."""

import json

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import _dispatch
from ember._C import _core
from ember.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def _small_model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))


def _names(prof):
    return [e.name for e in prof.events()]


def test_records_forward_and_backward_of_a_model():
    model = _small_model()
    x = ember.randn(2, 1, 6, 6)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_step"):
            loss = F.cross_entropy(model(x), ember.tensor([0, 2]))
            loss.backward()
    names = _names(prof)
    assert names[0] == "model_step"
    assert "ember::convolution" in names  # the node conv1d/2d/3d share
    assert "ember::relu" in names
    assert any("Backward" in n for n in names)
    # every op ran inside the annotated range
    step = prof.events()[0]
    assert all(e.start_us >= step.start_us and e.end_us <= step.end_us
               for e in prof.events()[1:])
    assert step.cpu_time_total >= sum(c.cpu_time_total for c in step.cpu_children)


def test_shapes_nesting_and_self_time():
    a, b = ember.randn(3, 4), ember.randn(4, 5)
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            ember.matmul(a, b)
    ev = {e.name: e for e in prof.events()}
    mm = ev["ember::matmul"]
    assert mm.input_shapes == [[3, 4], [4, 5]]
    assert mm.cpu_parent is ev["outer"]
    outer = ev["outer"]
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - mm.cpu_time_total)


def test_fast_paths_views_and_inplace_pass_through_the_dispatch_point():
    x = ember.randn(4, 4)
    with profile() as prof:
        x + x                 # compiled binary fast path
        x.exp()               # compiled unary fast path
        x.view(16)            # a view
        x.add_(1.0)           # in place
    names = _names(prof)
    assert names.count("ember::add") >= 1
    assert "ember::exp" in names
    assert "ember::view" in names
    assert "ember::add_" in names


def test_key_averages_table_counts_and_sorts():
    x = ember.randn(8, 8)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            ember.matmul(x, x)
        ember.sum(x)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["ember::matmul"].count == 3
    assert avg["ember::matmul"].cpu_time == pytest.approx(
        avg["ember::matmul"].cpu_time_total / 3)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    header = table.splitlines()[1]
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "# of Calls"):
        assert col in header
    rows = [line for line in table.splitlines() if "ember::" in line]
    # rows sorted by total CPU time (which op took longer is up to the machine's load)
    names = [line.split()[0] for line in rows]
    totals = [avg[n].cpu_time_total for n in names]
    assert set(names) >= {"ember::matmul", "ember::sum"}
    assert totals == sorted(totals, reverse=True)
    assert table.rstrip().splitlines()[-1].startswith("Self CPU time total:")
    by_shape = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in by_shape and "[[8, 8], [8, 8]]" in by_shape
    with pytest.raises(AttributeError, match="sort_by"):
        prof.key_averages().table(sort_by="wall_time")


def test_group_by_input_shape_needs_record_shapes():
    with profile() as prof:
        ember.ones(2) * 2
    with pytest.raises(RuntimeError, match="record_shapes"):
        prof.key_averages(group_by_input_shape=True)


def test_export_chrome_trace(tmp_path):
    x = ember.randn(3, 3, requires_grad=True)
    with profile(record_shapes=True) as prof:
        (x * x).sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    assert len(events) == len(prof.events())
    mul = next(e for e in events if e["name"] == "ember::mul")
    assert mul["ph"] == "X" and mul["cat"] == "cpu_op" and mul["dur"] >= 0
    assert mul["args"]["Input Dims"] == [[3, 3], [3, 3]]
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_no_listener_outside_a_profile_and_nested_profiles():
    assert _core.get_dispatch_listener() is None
    with profile() as outer:
        ember.ones(2).exp()
        with profile() as inner:
            ember.ones(2).log()
        assert len(_dispatch.listeners()) == 1
    assert _core.get_dispatch_listener() is None
    assert "ember::log" in _names(inner) and "ember::exp" not in _names(inner)
    assert "ember::log" in _names(outer) and "ember::exp" in _names(outer)


def test_listener_removed_when_the_block_raises():
    with pytest.raises(ValueError):
        with profile():
            raise ValueError("boom")
    assert _core.get_dispatch_listener() is None


def test_record_function_as_decorator_and_without_profiler():
    @record_function("helper")
    def helper(t):
        return t * 2

    x = ember.ones(2)
    assert (helper(x) == 2).all()  # no profile running: just runs
    with profile() as prof:
        helper(x)
    assert _names(prof) == ["helper", "ember::mul"] and prof.events()[0].is_user_annotation


def test_creation_and_sampling_ops_pass_the_dispatch_point():
    with profile(record_shapes=True) as prof:
        ember.zeros(2, 3)
        ember.rand(4)
        ember.tensor([1.0])
    assert _names(prof) == ["ember::zeros", "ember::rand", "ember::tensor"]


def test_schedule_and_on_trace_ready(tmp_path):
    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [sched(i) for i in range(6)] == [
        ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE, ProfilerAction.NONE]
    skip = schedule(skip_first=2, wait=0, warmup=1, active=1)
    assert [skip(i) for i in range(4)] == [ProfilerAction.NONE, ProfilerAction.NONE,
                                           ProfilerAction.WARMUP,
                                           ProfilerAction.RECORD_AND_SAVE]
    ready = []
    x = ember.ones(2)
    with profile(schedule=sched, on_trace_ready=lambda p: ready.append(
            [e.name for e in p.events()])) as prof:
        for step in range(6):
            x = x * (step + 1)   # one mul per step
            prof.step()
    assert len(ready) == 1
    assert ready[0].count("ember::mul") == 2  # the two active steps only
    with pytest.raises(ValueError):
        schedule(wait=0, warmup=0, active=0)


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    with profile(schedule=schedule(wait=0, warmup=1, active=1),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), "w0")) as prof:
        for _ in range(2):
            ember.ones(3).sum()
            prof.step()
    files = list(tmp_path.glob("w0.*.pt.trace.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text())["traceEvents"]


def test_activities_are_checked():
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])


class _Kinds:
    """A listener recording what the dispatch point announced, and how."""

    def __init__(self, with_backward=True):
        self.calls = []
        if with_backward:
            self.enter_backward = lambda name: self.calls.append(("backward", name))

    def enter(self, name, inputs):
        self.calls.append(("op", name))

    def exit(self, token):
        pass


@pytest.mark.parametrize("with_backward", [True, False])
def test_backward_nodes_are_announced_apart_from_ops(with_backward):
    class Twice(ember.autograd.Function):  # a node whose name says nothing of backward
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    listener = _Kinds(with_backward)
    x = ember.ones(3, requires_grad=True)
    _dispatch.add_listener(listener)
    try:
        Twice.apply(x).sum().backward()
    finally:
        _dispatch.remove_listener(listener)
    backward = [n for k, n in listener.calls if k == "backward"]
    ops = [n for k, n in listener.calls if k == "op"]
    assert "Twice" in ops and "sum" in ops  # the Function's forward is announced once
    if with_backward:
        assert backward == ["SumBackward0", "TwiceBackward"]
        assert not set(backward) & set(ops)
    else:  # a listener without enter_backward hears backward nodes through enter
        assert not backward and ops.count("TwiceBackward") == 1
    with profile() as prof:  # the profiler keeps a backward node's name, prefixes ops
        Twice.apply(ember.ones(2, requires_grad=True)).sum().backward()
    names = _names(prof)
    assert any("Twice" in n and not n.startswith("ember::") for n in names)
    assert "ember::sum" in names


# Ops that may return without an announcement: they hand back their input itself (a real
# tensor's conj/real/resolve_*, a no-op .to, atleast_* of a big-enough tensor) or answer
# a flag without computing.
_RETURN_INPUT_OR_FLAG = {"to", "conj", "real", "real_part", "resolve_conj", "resolve_neg",
                         "atleast_1d", "atleast_2d", "is_conj", "is_neg", "positive",
                         "conj_physical_"}


def test_every_registered_op_passes_the_dispatch_point():
    from ember._ops._registry import registered_ops

    counted = _Kinds()
    x, y, i = ember.randn(3, 4), ember.randn(3, 4), ember.tensor([0, 1])
    silent, ran = [], 0
    _dispatch.add_listener(counted)
    try:
        for op in registered_ops():
            if op.namespace != "ember" or op.name in _RETURN_INPUT_OR_FLAG:
                continue
            for args in ((x,), (x, y), (x, 0), (x, i), (x, 1, i)):
                counted.calls.clear()
                try:
                    op.function(*args)
                except Exception:  # noqa: BLE001 - try the next argument pattern
                    continue
                ran += 1
                if not counted.calls:
                    silent.append(op.name)
                break
    finally:
        _dispatch.remove_listener(counted)
    assert ran > 200  # of the ~350 top-level ops; the others take other arguments
    assert not silent, f"ops that ran without passing the dispatch point: {silent}"
