"""torch.fx's documented examples, in ember: replacing ops, inlining a submodule, inverting a
graph, a profiling interpreter, shape propagation; Interpreter, Transformer, replace_pattern."""

import operator
import time

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.fx import (
    Graph,
    GraphModule,
    Interpreter,
    Proxy,
    Tracer,
    Transformer,
    replace_pattern,
    symbolic_trace,
)
from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata
from ember.fx.subgraph_rewriter import ReplacedPatterns, replace_pattern_with_filters


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = ember.relu(self.conv(x))
        x = F.max_pool2d(x, 2)
        return F.relu(self.fc(x.flatten(1))).sigmoid()


# -- replacing ops (torch.fx docs: "Direct Graph Manipulation") ----------------------------

def test_replace_relu_by_gelu_editing_nodes():
    model = Net()
    gm = symbolic_trace(model)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (ember.relu, F.relu):
            node.target = F.gelu
    gm.recompile()
    assert "ember.relu(" not in gm.code and "functional.relu(" not in gm.code
    assert gm.code.count("ember.nn.functional.gelu(") == 2
    x = ember.randn(2, 3, 8, 8)
    ref = F.gelu(model.fc(F.max_pool2d(F.gelu(model.conv(x)), 2).flatten(1))).sigmoid()
    close(gm(x), ref)


def test_replace_relu_by_gelu_with_a_transformer():
    class ReluToGelu(Transformer):
        def call_function(self, target, args, kwargs):
            if target in (ember.relu, F.relu):
                target = F.gelu
            return super().call_function(target, args, kwargs)

    model = Net()
    gm = symbolic_trace(model)
    new = ReluToGelu(gm).transform()
    assert isinstance(new, GraphModule)
    targets = [n.target for n in new.graph.nodes if n.op == "call_function"]
    assert targets.count(F.gelu) == 2 and ember.relu not in targets
    x = ember.randn(1, 3, 8, 8)
    ref = F.gelu(model.fc(F.max_pool2d(F.gelu(model.conv(x)), 2).flatten(1))).sigmoid()
    close(new(x), ref)
    # the original is untouched
    assert ember.relu in [n.target for n in gm.graph.nodes]


def test_replace_add_by_mul_inserting_nodes():
    # torch.fx docs: replace add with a mul, inserting the new node before the old one
    def f(x, y):
        return (x + y).neg()

    gm = symbolic_trace(f)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is operator.add:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(ember.mul, node.args, node.kwargs)
                node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    assert "mul = ember.mul(x, y)" in gm.code
    x, y = ember.randn(3), ember.randn(3)
    close(gm(x, y), -(x * y))


# -- inlining a submodule ------------------------------------------------------------------

class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return ember.tanh(self.lin(x)) * 2


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.inner(x) + x)


class InnerLeaf(Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, Inner) or super().is_leaf_module(m, qualname)


def inline(gm: GraphModule, name: str) -> None:
    """Replace the call of submodule ``name`` by the nodes of its traced forward."""
    sub = symbolic_trace(gm.get_submodule(name))
    graph = gm.graph
    node = next(n for n in graph.nodes if n.op == "call_module" and n.target == name)
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    val_map = dict(zip(placeholders, node.args))
    with graph.inserting_before(node):
        out = graph.graph_copy(sub.graph, val_map)
    for n in val_map.values():
        if isinstance(n, ember.fx.Node) and n.op in ("get_attr", "call_module") \
                and n not in node.args:
            n.target = f"{name}.{n.target}"
    node.replace_all_uses_with(out)
    graph.erase_node(node)
    graph.lint()
    gm.recompile()


def test_inline_a_submodule():
    model = Outer()
    gm = GraphModule(model, InnerLeaf().trace(model))
    assert ("call_module", "inner") in [(n.op, n.target) for n in gm.graph.nodes]
    inline(gm, "inner")
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert ("call_module", "inner") not in ops and ("call_module", "inner.lin") in ops
    assert ("call_function", ember.tanh) in ops
    x = ember.randn(3, 4)
    close(gm(x), model(x))


# -- inverting a graph (torch.fx docs: "Invert the transformation") ------------------------

def test_invert_a_graph():
    inverses = {ember.sin: ember.asin, ember.exp: ember.log, ember.neg: ember.neg,
                ember.log: ember.exp}

    def f(x):
        return ember.exp(ember.neg(ember.sin(x)))

    gm = symbolic_trace(f)
    new_graph = Graph()
    env = {}
    for node in reversed(gm.graph.nodes):
        if node.op == "call_function":
            env[node.args[0].name] = new_graph.call_function(inverses[node.target],
                                                             (env[node.name],))
        elif node.op == "output":
            env[node.args[0].name] = new_graph.placeholder(node.name)
        elif node.op == "placeholder":
            new_graph.output(env[node.name])
    inverse = GraphModule(gm, new_graph)
    x = ember.tensor([0.1, 0.5, -0.3])
    close(inverse(f(x)), x, 1e-5)
    assert [n.target for n in inverse.graph.nodes if n.op == "call_function"] == \
        [ember.log, ember.neg, ember.asin]


# -- a profiling interpreter (torch.fx docs) ----------------------------------------------

class ProfilingInterpreter(Interpreter):
    def __init__(self, gm):
        super().__init__(gm)
        self.total_runtime_sec = []
        self.runtimes_sec = {}

    def run(self, *args):
        t0 = time.perf_counter()
        out = super().run(*args)
        self.total_runtime_sec.append(time.perf_counter() - t0)
        return out

    def run_node(self, n):
        t0 = time.perf_counter()
        out = super().run_node(n)
        self.runtimes_sec.setdefault(n, []).append(time.perf_counter() - t0)
        return out


def test_profiling_interpreter():
    model = Net()
    gm = symbolic_trace(model)
    interp = ProfilingInterpreter(gm)
    x = ember.randn(2, 3, 8, 8)
    for _ in range(2):
        close(interp.run(x), model(x))
    assert len(interp.total_runtime_sec) == 2
    assert set(interp.runtimes_sec) == set(gm.graph.nodes)
    assert all(len(v) == 2 and min(v) >= 0 for v in interp.runtimes_sec.values())
    assert sum(interp.runtimes_sec[n][0] for n in gm.graph.nodes) <= \
        interp.total_runtime_sec[0]


# -- Interpreter ---------------------------------------------------------------------------

def test_interpreter_overrides_and_env():
    class NegSigmoid(Interpreter):
        def call_method(self, target, args, kwargs):
            if target == "sigmoid":
                return ember.neg(super().call_method(target, args, kwargs))
            return super().call_method(target, args, kwargs)

    model = Net()
    gm = symbolic_trace(model)
    x = ember.randn(1, 3, 8, 8)
    close(NegSigmoid(gm).run(x), -model(x))
    interp = Interpreter(gm, garbage_collect_values=False)
    interp.run(x)
    assert set(interp.env) == set(gm.graph.nodes)
    # the garbage-collecting interpreter keeps only the output
    gc = Interpreter(gm)
    gc.run(x)
    assert [n.op for n in gc.env] == ["output"]
    # initial_env: a node whose value is given is not run
    conv = next(n for n in gm.graph.nodes if n.target == "conv")
    zeros = ember.zeros(1, 4, 8, 8)
    out = Interpreter(gm).run(x, initial_env={conv: zeros})
    # relu, max-pool of zeros are zeros, so fc gives its bias
    close(out, F.relu(model.fc.bias.detach()).sigmoid().unsqueeze(0))
    args = [x]
    close(Interpreter(gm).boxed_run(args), model(x))
    assert args == []


def test_interpreter_errors_name_the_node():
    gm = symbolic_trace(lambda x, y: x + y)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter y"):
        Interpreter(gm).run(ember.ones(1))
    with pytest.raises(RuntimeError, match="nonexistent target nope"):
        Interpreter(gm).fetch_attr("nope.weight")
    try:
        Interpreter(gm).run(ember.ones(2), ember.ones(3))
    except Exception as e:  # the op's own error, with the node named in a note
        assert any("While executing %add" in note for note in getattr(e, "__notes__", []))
    else:
        raise AssertionError("a shape mismatch must raise")


def test_transformer_keeps_defaults_attributes_and_module_calls():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.scale = nn.Parameter(ember.tensor(2.0))

        def forward(self, x, bias=1.0):
            return self.lin(x) * self.scale + bias

    gm = symbolic_trace(M())
    new = Transformer(gm).transform()
    assert new.code == gm.code
    x = ember.randn(2, 3)
    close(new(x), gm(x))
    close(new(x, 0.0), gm(x, 0.0))
    lin = next(n for n in new.graph.nodes if n.op == "call_module")
    assert lin.meta["nn_module_stack"]["lin"][1] is nn.Linear


# -- shape propagation ---------------------------------------------------------------------

def test_shape_prop_records_tensor_meta():
    model = Net()
    gm = symbolic_trace(model)
    x = ember.randn(2, 3, 8, 8)
    out = ShapeProp(gm).propagate(x)
    close(out, model(x))
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes}
    assert shapes == {"x": (2, 3, 8, 8), "conv": (2, 4, 8, 8), "relu": (2, 4, 8, 8),
                      "max_pool2d": (2, 4, 4, 4), "flatten": (2, 64), "fc": (2, 5),
                      "relu_1": (2, 5), "sigmoid": (2, 5), "output": (2, 5)}
    meta = next(iter(gm.graph.nodes)).meta
    tm = meta["tensor_meta"]
    assert isinstance(tm, TensorMetadata) and meta["type"] is ember.Tensor
    assert tm.dtype == ember.float32 and tm.requires_grad is False
    assert tm.stride == (192, 64, 8, 1) and tm.memory_format == ember.contiguous_format
    assert tm.is_quantized is False and tm.qparams == {}
    fc = next(n for n in gm.graph.nodes if n.target == "fc")
    assert fc.meta["tensor_meta"].requires_grad is True


def test_shape_prop_nested_results_and_memory_formats():
    def f(x):
        cl = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        return cl, x[:, :, ::2], x.shape, x.chunk(2, dim=1)

    gm = symbolic_trace(f)
    ShapeProp(gm).propagate(ember.randn(2, 4, 3, 3))
    nodes = {n.name: n for n in gm.graph.nodes}
    assert nodes["permute_1"].meta["tensor_meta"].memory_format == ember.channels_last
    assert nodes["getitem"].meta["tensor_meta"].memory_format is None
    chunk = nodes["chunk"].meta["tensor_meta"]
    assert isinstance(chunk, tuple) and [tuple(c.shape) for c in chunk] == [(2, 2, 3, 3)] * 2
    assert nodes["getattr_1"].meta["type"] is ember.Size
    assert "tensor_meta" not in nodes["getattr_1"].meta
    out = nodes["output"].meta["tensor_meta"]
    assert tuple(out[2]) == (2, 4, 3, 3)


def test_shape_prop_error_names_the_node():
    gm = symbolic_trace(lambda x: x @ x)
    with pytest.raises(RuntimeError, match="ShapeProp error for: node=%matmul"):
        ShapeProp(gm).propagate(ember.ones(2, 3))
    with pytest.raises(NotImplementedError, match="fake tensors"):
        ShapeProp(gm, fake_mode=object())


# -- replace_pattern -----------------------------------------------------------------------

def test_replace_pattern_documented_example():
    # torch.fx.replace_pattern's docstring example (there: stack+sum -> cat)
    class M(nn.Module):
        def forward(self, x, w1, w2):
            m1 = ember.cat([w1, w2]).sum()
            m2 = ember.cat([w1, w2]).sum()
            return x + ember.max(m1) + ember.max(m2)

    def pattern(w1, w2):
        return ember.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return ember.stack([w1, w2])

    gm = symbolic_trace(M())
    matches = replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    code = gm.code
    assert code.count("ember.stack([w1, w2])") == 2 and "ember.cat" not in code
    x, w1, w2 = ember.randn(2), ember.randn(2), ember.randn(2)
    ref = x + ember.max(ember.stack([w1, w2])) + ember.max(ember.stack([w1, w2]))
    close(gm(x, w1, w2), ref)


def test_replace_pattern_leaves_shared_values_alone():
    def f(x):
        a = ember.relu(x + 1)
        return a, x + 1  # ``x + 1`` is used outside the pattern ``relu(x + 1)``... twice

    def pattern(x):
        return ember.relu(x + 1)

    def replacement(x):
        return ember.sigmoid(x)

    gm = symbolic_trace(f)
    # two separate adds: the first is inside the match, the second is not matched
    assert len(replace_pattern(gm, pattern, replacement)) == 1

    def g(x):
        y = x + 1
        return ember.relu(y), y

    gm = symbolic_trace(g)
    assert replace_pattern(gm, pattern, replacement) == []  # y escapes the match


def test_replace_pattern_with_filters_and_literals():
    def f(x):
        return ember.relu(x * 2) + ember.relu(x * 3)

    def pattern(x):
        return ember.relu(x * 2)

    def replacement(x):
        return ember.sigmoid(x)

    gm = symbolic_trace(f)
    out = replace_pattern_with_filters(gm, pattern, replacement, ignore_literals=True)
    assert len(out) == 2 and isinstance(out[0], ReplacedPatterns)
    assert out[0].replacements[0].target is ember.sigmoid
    x = ember.randn(4)
    close(gm(x), 2 * ember.sigmoid(x))
    gm = symbolic_trace(f)
    out = replace_pattern_with_filters(gm, pattern, replacement,
                                       match_filters=[lambda m, g, p: False])
    assert out == [] and "sigmoid" not in gm.code
    gm = symbolic_trace(f)
    assert len(replace_pattern(gm, pattern, replacement)) == 1  # the literal 3 differs
    with pytest.raises(TypeError, match="must be a GraphModule"):
        replace_pattern(gm.graph, pattern, replacement)


def test_proxy_retracing_helper():
    # torch.fx docs "Proxy/Retracing": build a graph by running a function on Proxies
    def relu_decomposition(x):
        return (x > 0) * x

    gm = symbolic_trace(lambda x: F.relu(x) + 1)
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is F.relu:
            with graph.inserting_before(node):
                proxy = relu_decomposition(Proxy(node.args[0]))
                node.replace_all_uses_with(proxy.node)
            graph.erase_node(node)
    gm.recompile()
    x = ember.tensor([-1.0, 2.0])
    close(gm(x), ember.tensor([1.0, 3.0]))
    assert "gt = x > 0" in gm.code
