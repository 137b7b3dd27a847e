"""ember.fx Graph and Node: building, editing, linting, dead code, printing."""

import copy
import operator

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.fx import (
    Graph,
    GraphModule,
    Node,
    has_side_effect,
    map_aggregate,
    map_arg,
    symbolic_trace,
)
from ember.fx.immutable_collections import immutable_dict, immutable_list


def build_graph():
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2.0)
    a = g.call_function(operator.add, (x, y))
    r = g.call_function(ember.relu, (a,))
    s = g.call_method("sum", (r,), {"dim": 0})
    g.output(s)
    return g, (x, y, a, r, s)


def test_building_by_hand_and_running():
    g, (x, y, a, r, s) = build_graph()
    gm = GraphModule(nn.Module(), g)
    assert gm.code.strip() == (
        "def forward(self, x, y = 2.0):\n"
        "    add = x + y;  x = y = None\n"
        "    relu = ember.relu(add);  add = None\n"
        "    sum_1 = relu.sum(dim = 0);  relu = None\n"
        "    return sum_1")
    t = ember.tensor([[1.0, -5.0], [2.0, 3.0]])
    np.testing.assert_allclose(gm(t).numpy(), [7.0, 5.0])
    np.testing.assert_allclose(gm(t, 0.0).numpy(), [3.0, 3.0])
    assert len(g.nodes) == 6 and [n.name for n in reversed(g.nodes)][0] == "output"


def test_users_args_and_input_nodes():
    g, (x, y, a, r, s) = build_graph()
    assert a.all_input_nodes == [x, y] and list(x.users) == [a]
    assert list(a.users) == [r] and r.prev is a and r.next is s
    assert isinstance(s.kwargs, immutable_dict)
    with pytest.raises(TypeError, match="does not support mutation"):
        s.kwargs["dim"] = 1
    r.args = (x,)
    assert list(a.users) == [] and r in x.users
    r.update_arg(0, a)
    assert list(a.users) == [r]
    s.update_kwarg("dim", 1)
    assert s.kwargs == {"dim": 1}
    r.insert_arg(1, 3)
    assert r.args == (a, 3)


def test_replace_all_uses_with_and_replace_input_with():
    g, (x, y, a, r, s) = build_graph()
    with g.inserting_after(a):
        neg = g.call_function(operator.neg, (a,))
    assert neg.prev is a and neg.next is r
    changed = a.replace_all_uses_with(neg)
    # the new node itself keeps using ``a``
    assert changed == [r] and neg.args == (a,) and list(a.users) == [neg]
    r.replace_input_with(neg, x)
    assert r.args == (x,)
    with g.inserting_before(r):
        mul = g.call_function(operator.mul, (x, 2))
    assert mul.next is r
    changed = x.replace_all_uses_with(mul, delete_user_cb=lambda u: u is r)
    assert changed == [r] and r.args == (mul,)
    b = g.call_function(ember.exp, (x,))
    b.meta["val"] = 1
    c = g.create_node("call_function", ember.exp, (x,))
    b.replace_all_uses_with(c, propagate_meta=True)
    assert c.meta == {"val": 1}


def test_prepend_append_move_nodes():
    g, (x, y, a, r, s) = build_graph()
    s.append(r)  # moves r after s: the graph is now out of order
    assert [n.name for n in g.nodes][-3:] == ["sum_1", "relu", "output"]
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    s.prepend(r)
    g.lint()
    with pytest.raises(ValueError, match="itself"):
        r.prepend(r)


def test_erase_node_and_dead_code():
    g = Graph()
    x = g.placeholder("x")
    unused = g.call_function(ember.exp, (x,))
    g.call_function(ember.sin, (unused,))
    printed = g.call_function(print, (x,))
    inplace = g.call_method("add_", (x, 1))
    g.output(x)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(unused)
    assert g.eliminate_dead_code()
    # print (side effect) and the in-place method stay; exp/sin go
    assert [n.op for n in g.nodes] == ["placeholder", "call_function", "call_method", "output"]
    assert printed in g.nodes and inplace in g.nodes
    assert not g.eliminate_dead_code()
    assert g.eliminate_dead_code(is_impure_node=lambda n: n.op == "placeholder"
                                 or n.op == "output")
    assert len(g.nodes) == 2


def test_has_side_effect_keeps_a_node():
    calls = []

    @has_side_effect
    def log(v):
        calls.append(v)

    g = Graph()
    x = g.placeholder("x")
    g.call_function(log, (x,))
    g.output(x)
    g.eliminate_dead_code()
    assert [n.op for n in g.nodes] == ["placeholder", "call_function", "output"]


def test_lint_errors():
    g, (x, y, a, r, s) = build_graph()
    other = Graph()
    z = other.placeholder("z")
    with pytest.raises(ValueError, match="belongs to another Graph"):
        g.call_function(ember.relu, (z,))
    gm = symbolic_trace(nn.Sequential(nn.Linear(2, 2)))
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "missing"
    with pytest.raises(RuntimeError, match="references nonexistent attribute"):
        gm.graph.lint()
    with pytest.warns(UserWarning, match="no underlying reference"):
        gm.graph.get_attr("nope")


def test_names_are_unique_and_not_builtins():
    g = Graph()
    x = g.placeholder("x")
    names = [g.call_method("sum", (x,)).name, g.call_method("sum", (x,)).name,
             g.call_function(getattr, (x, "shape")).name,
             g.create_node("call_function", ember.relu, (x,), name="list").name,
             g.create_node("call_function", ember.relu, (x,), name="3d").name,
             g.call_module("layer1.0.conv", (x,)).name,
             g.get_attr("blocks.0.weight").name]
    assert names == ["sum_1", "sum_2", "getattr_1", "list_1", "_3d", "layer1_0_conv",
                     "blocks_0_weight"]


def test_node_copy_graph_copy_and_deepcopy():
    g, (x, y, a, r, s) = build_graph()
    g2 = Graph()
    val_map = {}
    out = g2.graph_copy(g, val_map)
    g2.output(out)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert val_map[a].args == (val_map[x], val_map[y])
    g3 = copy.deepcopy(g)
    assert str(g3) == str(g) and next(iter(g3.nodes)) is not x
    t = ember.tensor([1.0, -3.0])
    np.testing.assert_allclose(GraphModule(nn.Module(), g3)(t).numpy(), 0.0 + 3.0)


def test_format_node_and_str():
    g, (x, y, a, r, s) = build_graph()
    assert x.format_node() == "%x : [num_users=1] = placeholder[target=x]"
    assert y.format_node() == "%y : [num_users=1] = placeholder[target=y](default=2.0)"
    assert a.format_node() == ("%add : [num_users=1] = call_function[target=operator.add]"
                               "(args = (%x, %y), kwargs = {})")
    assert s.format_node() == ("%sum_1 : [num_users=1] = call_method[target=sum]"
                               "(args = (%relu,), kwargs = {dim: 0})")
    assert str(g).splitlines() == ["graph():"] + ["    " + n.format_node() for n in g.nodes]
    assert repr(a) == "add"


def test_find_nodes():
    g, (x, y, a, r, s) = build_graph()
    assert g.find_nodes(op="placeholder") == [x, y]
    assert g.find_nodes(op="call_function", target=ember.relu) == [r]
    assert g.find_nodes(op="call_method", target="mean") == []


def test_print_tabular_needs_tabulate(capsys):
    g, _ = build_graph()
    try:
        import tabulate  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            g.print_tabular()
        assert "relies on the library `tabulate`" in capsys.readouterr().out
    else:
        g.print_tabular()
        assert "call_function" in capsys.readouterr().out


def test_map_arg_and_map_aggregate():
    g, (x, y, a, r, s) = build_graph()
    out = map_arg((x, [1, y], {"k": a}, slice(x, None)), lambda n: n.name)
    assert out == ("x", [1, "y"], {"k": "add"}, slice("x", None))
    assert isinstance(out[1], immutable_list)
    assert map_aggregate((1, [2, 3]), lambda v: v * 10) == (10, [20, 30])
    with pytest.raises(TypeError, match="fn must be a callable"):
        map_arg(x, 3)


def test_node_validates_op_and_target():
    g = Graph()
    with pytest.raises(ValueError, match="invalid node op"):
        g.create_node("call_everything", ember.relu)
    with pytest.raises(ValueError, match="a Callable is expected"):
        g.create_node("call_function", "relu")
    with pytest.raises(ValueError, match="a str is expected"):
        g.create_node("call_method", ember.relu)
    assert isinstance(g.placeholder("x"), Node)
