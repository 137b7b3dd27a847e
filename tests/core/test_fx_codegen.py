"""ember.fx code generation options, argument normalization, annotate, tracing state."""

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.fx import GraphModule, Tracer, symbolic_trace
from ember.fx._symbolic_trace import is_fx_symbolic_tracing, is_fx_tracing
from ember.fx.annotate import annotate
from ember.fx.operator_schemas import ArgsKwargsPair, normalize_function, normalize_module
from ember.fx.passes.shape_prop import ShapeProp


def traced_with_meta():
    gm = symbolic_trace(lambda x, y: ember.relu(x) + y)
    ShapeProp(gm).propagate(ember.randn(2, 3), ember.randn(3).double())
    return gm


def test_verbose_code_annotates_dtype_shape_stride():
    gm = traced_with_meta()
    src = gm.graph.python_code("self", verbose=True).src
    assert 'def forward(self, x: "f32[2, 3]", y: "f64[3]"):' in src
    assert '    relu: "f32[2, 3]" = ember.relu(x);  x = None' in src
    assert '    add: "f64[2, 3]" = relu + y;  relu = y = None' in src
    assert "    # No stacktrace found for following nodes" in src
    src = gm.graph.python_code("self", verbose=True, include_stride=True).src
    assert 'x: "f32[2, 3][3, 1]"' in src
    colored = gm.graph.python_code("self", verbose=True, colored=True).src
    assert "\033[31mf32\033[0m" in colored and "\033[2mx = None\033[0m" in colored


def test_verbose_code_with_val_tensors_and_devices():
    gm = symbolic_trace(lambda x: x.sum())
    for n in gm.graph.nodes:
        if n.op != "output":
            n.meta["val"] = ember.zeros(2, dtype=ember.int64)
    src = gm.graph.python_code("self", verbose=True, include_device=True).src
    assert 'x: "i64[2]cpu"' in src
    node = next(n for n in gm.graph.nodes if n.op == "call_method")
    assert node.format_node(include_tensor_metadata=True).startswith("%sum_1 : i64[2][num_users")


def test_expanded_def_and_additional_meta():
    gm = traced_with_meta()
    for n in gm.graph.nodes:
        n.meta["tag"] = n.name.upper()
    src = gm.graph.python_code("self", expanded_def=True, verbose=True,
                               additional_meta=["tag"]).src
    assert 'def forward(\n    self,\n    x: "f32[2, 3]",\n    y: "f64[3]",\n):' in src
    assert "# tag: RELU" in src


def test_record_func_code_runs_under_the_profiler():
    gm = symbolic_trace(lambda x: ember.relu(x) * 2)
    code = gm.graph.python_code("self", record_func=True)
    assert "_rf_relu = ember.profiler.record_function('relu'); _rf_relu.__enter__()" in \
        code.src
    from ember.fx.graph_module import _forward_from_src

    forward = _forward_from_src(code.src, code.globals)
    x = ember.tensor([-1.0, 2.0])
    np.testing.assert_allclose(forward(gm, x).numpy(), [0.0, 4.0])
    lines = code.src.strip().splitlines()
    assert lines[-2].strip() == "_rf.__exit__(None, None, None)"
    assert lines[-1].strip() == "return mul"


def test_print_readable_options():
    gm = traced_with_meta()
    text = gm.print_readable(print_output=False, include_stride=True, expanded_def=True)
    assert 'x: "f32[2, 3][3, 1]",' in text and text.startswith("class <lambda>(ember.nn.Module)")


def test_stack_trace_summary_comment():
    t = Tracer()
    t.record_stack_traces = True
    graph = t.trace(nn.Sequential(nn.Linear(2, 2)))
    gm = GraphModule(t.root, graph)
    src = gm.print_readable(print_output=False)
    assert "# File: " in src and "No stacktrace" not in src


def test_is_impure_random_ops():
    gm = symbolic_trace(lambda x: (F.dropout(x, 0.5), ember.rand_like(x), x)[2])
    assert gm.graph.eliminate_dead_code() is False  # dropout and rand_like stay
    ops = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert F.dropout in ops and ember.rand_like in ops
    drop = next(n for n in gm.graph.nodes if n.target is F.dropout)
    assert drop.is_impure() and not drop.is_impure(impure_random=False)
    assert gm.graph.eliminate_dead_code(lambda n: n.op in ("placeholder", "output"))
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "output"]


def test_normalized_arguments():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return F.max_pool1d(self.lin(x).unsqueeze(0), 2, padding=1)

    gm = symbolic_trace(M())
    pool = next(n for n in gm.graph.nodes if n.target is F.max_pool1d)
    pair = pool.normalized_arguments(gm)
    assert isinstance(pair, ArgsKwargsPair)
    assert pair.args[1] == 2 and pair.kwargs == {"stride": None, "padding": 1, "dilation": 1,
                                                  "ceil_mode": False, "return_indices": False}
    only = pool.normalized_arguments(gm, normalize_to_only_use_kwargs=True)
    assert only.args == () and only.kwargs["input"] is pool.args[0]
    lin = next(n for n in gm.graph.nodes if n.op == "call_module")
    assert lin.normalized_arguments(gm).args[0].name == "x"
    unsq = next(n for n in gm.graph.nodes if n.op == "call_method")
    assert unsq.normalized_arguments(gm) is None
    assert normalize_function(ember.add, (1, 2), {"alpha": 3}) == \
        ArgsKwargsPair((1, 2), {"alpha": 3, "out": None})
    assert normalize_function(ember.add, (1, 2, 3, 4, 5)) is None  # does not bind
    assert normalize_function(lambda *a: a, (1,)) is None
    with pytest.raises(RuntimeError, match="root did not have that target"):
        normalize_module(gm, "nope", ())


def test_annotate_and_tracing_state():
    seen = []

    def f(x):
        seen.append((is_fx_tracing(), is_fx_symbolic_tracing()))
        return annotate(x, ember.Tensor) * 2

    gm = symbolic_trace(f)
    assert seen == [(True, True)] and not is_fx_tracing()
    assert "def forward(self, x : ember.Tensor):" in gm.code
    assert annotate(3, int) == 3
    with pytest.raises(RuntimeError, match="already had a type"):
        symbolic_trace(lambda x: annotate(annotate(x * 1, int), int))


def test_node_name_to_scope():
    t = Tracer()
    t.trace(nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
    assert t.node_name_to_scope["_0"] == ("0", nn.Linear)
    assert t.node_name_to_scope["output"] == ("", None)
