"""ember.fx.GraphModule: code, recompile, print_readable, submodules, copies, pickling,
to_folder, state_dict."""

import copy
import importlib
import pickle
import sys

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.fx import Graph, GraphModule, symbolic_trace


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("shift", ember.arange(3.0))

    def forward(self, x):
        return self.lin(x) + self.shift


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return ember.relu(self.head(x))


@pytest.fixture
def model():
    ember.manual_seed(0)
    return Model()


def test_state_dict_and_submodules_copied_by_path(model):
    gm = symbolic_trace(model)
    assert list(gm.state_dict()) == ["blocks.0.shift", "blocks.0.lin.weight",
                                     "blocks.0.lin.bias", "blocks.1.shift",
                                     "blocks.1.lin.weight", "blocks.1.lin.bias",
                                     "head.weight", "head.bias"]
    # parameters are shared with the traced model, not copied
    assert gm.head.weight is model.head.weight
    assert gm.get_submodule("blocks.1.lin") is model.blocks[1].lin
    # a state dict of the model loads into the GraphModule (same keys)
    gm.load_state_dict(model.state_dict())
    assert type(gm).__name__ == "Model" and gm.training == model.training


def test_graph_setter_and_recompile(model):
    gm = symbolic_trace(model)
    x = ember.randn(2, 3)
    relu = next(n for n in gm.graph.nodes if n.target is ember.relu)
    relu.target = ember.sigmoid
    close(gm(x), model(x))  # not recompiled yet: still relu
    code = gm.recompile().src
    assert "ember.sigmoid(head)" in code and gm.code == code
    close(gm(x), ember.sigmoid(model.head(model.blocks[1](model.blocks[0](x)))))
    g = Graph()
    g.output(g.call_function(ember.neg, (g.placeholder("x"),)))
    gm.graph = g
    assert "neg = ember.neg(x)" in gm.code and gm.graph.owning_module is gm
    close(gm(x), -x)
    with pytest.raises(TypeError, match="Expected a Graph"):
        gm.graph = "graph"


def test_each_graph_module_has_its_own_forward(model):
    a = symbolic_trace(model)
    b = symbolic_trace(lambda x: x * 2)
    x = ember.randn(2, 3)
    close(b(x), x * 2)
    close(a(x), model(x))
    assert type(a) is not type(b) and isinstance(a, GraphModule) and isinstance(b, GraphModule)


def test_print_readable_and_str(model, capsys):
    gm = symbolic_trace(model)
    text = gm.print_readable()
    assert capsys.readouterr().out.strip() == text.strip()
    lines = text.splitlines()
    assert lines[0] == "class Model(ember.nn.Module):"
    assert lines[1] == "    def forward(self, x):"
    assert '        blocks_0_lin = getattr(self.blocks, "0").lin(x);  x = None' in lines
    assert gm.print_readable(print_output=False) == text
    assert capsys.readouterr().out == ""
    s = str(gm)
    assert s.startswith("Model(") and gm.code in s and "print_readable()" in s


def test_nested_graph_module_is_printed():
    inner = symbolic_trace(lambda x: x + 1)
    outer = nn.Sequential(inner, nn.ReLU())
    gm = symbolic_trace(outer)
    # a GraphModule is not an ember.nn module: traced through, not a leaf
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "call_module",
                                              "output"]
    holder = GraphModule({"sub": inner}, _call_sub_graph(), class_name="Holder")
    lines = holder.print_readable(print_output=False).splitlines()
    assert lines[:3] == ["class Holder(ember.nn.Module):", "    class <lambda>(ember.nn.Module):",
                         "        def forward(self, x):"]
    assert "        sub = self.sub(x);  x = None" in lines


def _call_sub_graph():
    g = Graph()
    g.output(g.call_module("sub", (g.placeholder("x"),)))
    return g


def test_root_as_dict_and_missing_target():
    g = _call_sub_graph()
    lin = nn.Linear(2, 2)
    gm = GraphModule({"sub": lin}, g)
    x = ember.randn(1, 2)
    close(gm(x), lin(x))
    with pytest.raises(RuntimeError, match="referenced target sub but that target was not "
                                           "provided"):
        GraphModule({}, _call_sub_graph())
    with pytest.raises(RuntimeError, match="Unsupported type"):
        GraphModule(3, _call_sub_graph())


def test_add_delete_submodules(model):
    gm = symbolic_trace(model)
    assert gm.add_submodule("extra.deep.lin", nn.Linear(2, 2))
    assert isinstance(gm.get_submodule("extra.deep.lin"), nn.Linear)
    assert gm.delete_submodule("extra.deep.lin") and not gm.delete_submodule("extra.deep.lin")
    assert not gm.delete_submodule("nothing.here")
    gm.add_submodule("unused", nn.ReLU())
    gm.delete_all_unused_submodules()
    names = {n for n, _ in gm.named_modules()}
    assert "unused" not in names and "extra" not in names
    assert {"blocks", "blocks.0", "blocks.0.lin", "head"} <= names
    x = ember.randn(2, 3)
    close(gm(x), model(x))


def test_pickle_and_deepcopy(model):
    gm = symbolic_trace(model)
    x = ember.randn(4, 3)
    restored = pickle.loads(pickle.dumps(gm))
    assert isinstance(restored, GraphModule) and type(restored).__name__ == "Model"
    close(restored(x), model(x))
    assert restored.code == gm.code
    dup = copy.deepcopy(gm)
    close(dup(x), model(x))
    assert dup.head.weight is not gm.head.weight and dup.graph is not gm.graph
    assert dup.graph.owning_module is dup
    with ember.no_grad():
        dup.head.weight.zero_()
    close(gm(x), model(x))  # the original is untouched
    shallow = copy.copy(gm)
    assert shallow.head is gm.head and shallow.graph is gm.graph


def test_pickle_with_a_wrapped_function():
    import _fx_wrapped

    gm = symbolic_trace(_fx_wrapped.uses_wrapped)
    restored = pickle.loads(pickle.dumps(gm))
    x = ember.randn(3)
    close(restored(x), _fx_wrapped.uses_wrapped(x))


def test_to_folder_round_trip(model, tmp_path, monkeypatch):
    gm = symbolic_trace(model)
    folder = tmp_path / "exported_model"
    with pytest.warns(UserWarning, match="saved as pickled files"):
        gm.to_folder(folder, "Exported")
    assert {p.name for p in folder.iterdir()} >= {"__init__.py", "module.py",
                                                   "state_dict.pt", "blocks.pt"}
    src = (folder / "module.py").read_text()
    assert "class Exported(ember.nn.Module):" in src
    assert "self.head = ember.nn.Linear(in_features=3, out_features=2, bias=True)" in src
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("exported_model")
    try:
        fresh = mod.Exported()
        x = ember.randn(2, 3)
        close(fresh(x), model(x))
    finally:
        for k in [k for k in sys.modules if k.startswith("exported_model")]:
            del sys.modules[k]


def test_code_runs_with_ember_names_and_inf():
    def f(x):
        return x.clamp(min=float("-inf"), max=float("inf")).to(ember.float64), ember.float16

    gm = symbolic_trace(f)
    assert "min = -inf, max = inf" in gm.code and "ember.float64" in gm.code
    out, dt = gm(ember.tensor([1.0, 2.0]))
    assert out.dtype == ember.float64 and dt is ember.float16
