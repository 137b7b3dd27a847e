"""The nn.Module system: registration, iteration, modes, conversions, state_dict, hooks,
repr, copying; and the containers (Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict) and Flatten/Unflatten.

The expected values and messages were checked against PyTorch 2.13 (the interop file
tests/interop/test_nn_module_torch.py compares the same behaviours with torch itself).
The modules here are tiny ones written for the tests, so the Module system is tested
independently of the layers.
"""

from __future__ import annotations

import copy
import io
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn as nn
from ember.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


class Lin(nn.Module):
    """A Linear-like module: ``x @ weight.T + bias``."""

    def __init__(self, i, o, bias=True):
        super().__init__()
        self.in_features, self.out_features = i, o
        self.weight = nn.Parameter(ember.ones(o, i))
        if bias:
            self.bias = nn.Parameter(ember.zeros(o))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def outs(seq):
    return [m.out_features for m in seq]


# -- registration ------------------------------------------------------------------------
class TestRegistration:
    def test_assignment_registers(self):
        m = Lin(2, 3)
        m.register_buffer("running", ember.zeros(3))
        m.sub = Lin(3, 1)
        m.plain = ember.ones(1)  # a plain tensor attribute is not registered
        m.number = 4
        assert list(m._parameters) == ["weight", "bias"]
        assert list(m._buffers) == ["running"]
        assert list(m._modules) == ["sub"]
        assert "plain" in m.__dict__ and "number" in m.__dict__
        assert list(m.state_dict()) == ["weight", "bias", "running", "sub.weight", "sub.bias"]

    def test_parameter_replaces_buffer_and_none(self):
        m = Lin(2, 3)
        m.register_buffer("b", ember.ones(2))
        m.b = nn.Parameter(ember.ones(2))
        assert list(m._parameters) == ["weight", "bias", "b"] and "b" not in m._buffers
        m.weight = None
        assert m._parameters["weight"] is None and m.weight is None
        assert "weight" not in m.state_dict()
        assert [n for n, _ in m.named_parameters()] == ["bias", "b"]

    def test_submodule_set_to_none(self):
        m = Lin(2, 3)
        m.sub = Lin(1, 1)
        m.sub = None
        assert list(m._modules.items()) == [("sub", None)]
        assert list(m.children()) == []

    def test_buffer_reassignment_keeps_persistence(self):
        m = Lin(2, 3)
        m.register_buffer("b", ember.ones(2), persistent=False)
        m.b = ember.zeros(3)
        assert m.b.shape == (3,) and list(m._buffers) == ["b"]
        assert list(m.state_dict()) == ["weight", "bias"]

    def test_buffer_marker(self):
        m = Lin(2, 3)
        m.b = nn.Buffer(ember.ones(2), persistent=False)
        m.c = nn.Buffer(ember.ones(1))
        assert type(m.b).__name__ == "Tensor" and not isinstance(m.b, nn.Buffer)
        assert list(m._buffers) == ["b", "c"]
        assert list(m.state_dict()) == ["weight", "bias", "c"]

    def test_non_persistent_buffer(self):
        m = Lin(2, 3)
        m.register_buffer("stat", ember.ones(3), persistent=False)
        assert [n for n, _ in m.named_buffers()] == ["stat"]
        assert "stat" not in m.state_dict()
        m.load_state_dict({"weight": ember.ones(3, 2), "bias": ember.ones(3)})
        sd = m.state_dict()
        sd["stat"] = ember.ones(3)
        with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "stat"'):
            m.load_state_dict(sd)

    def test_register_errors(self):
        m = Lin(2, 3)
        with pytest.raises(KeyError, match='buffer name can.*t contain "\\."'):
            m.register_buffer("a.b", ember.ones(1))
        with pytest.raises(KeyError, match="buffer name can.*t be empty string"):
            m.register_buffer("", ember.ones(1))
        m.foo = 1
        with pytest.raises(KeyError, match="attribute 'foo' already exists"):
            m.register_buffer("foo", ember.ones(1))
        with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'x'"):
            m.register_buffer("x", 3)
        with pytest.raises(TypeError, match="object to parameter 'p' \\(torch.nn.Parameter or "
                                            "None required\\)"):
            m.register_parameter("p", ember.ones(1))
        with pytest.raises(TypeError, match="int is not a Module subclass"):
            m.add_module("x", 3)
        with pytest.raises(TypeError, match="module name should be a string. Got int"):
            m.add_module(3, Lin(1, 1))
        with pytest.raises(TypeError, match="as parameter 'weight' \\(torch.nn.Parameter or None "
                                            "expected\\)"):
            m.weight = ember.zeros(3, 2)
        m.sub = Lin(1, 1)
        with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
            m.sub = 5
        m.register_buffer("buf", ember.ones(1))
        with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'buf'"):
            m.buf = 5

    def test_assign_before_init(self):
        class P(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(ember.ones(1))

        class M(nn.Module):
            def __init__(self):
                self.sub = Lin(1, 1)

        with pytest.raises(AttributeError,
                           match="cannot assign parameters before Module.__init__\\(\\) call"):
            P()
        with pytest.raises(AttributeError,
                           match="cannot assign module before Module.__init__\\(\\) call"):
            M()

    def test_init_arguments_rejected(self):
        class K(nn.Module):
            def __init__(self, a):
                super().__init__(a)

        with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
            K(1)

    def test_missing_forward(self):
        class NoForward(nn.Module):
            pass

        with pytest.raises(NotImplementedError,
                           match='Module \\[NoForward\\] is missing the required "forward"'):
            NoForward()(1)

    def test_delete_attributes(self):
        m = Lin(2, 3)
        m.register_buffer("buf", ember.ones(1), persistent=False)
        m.sub = Lin(1, 1)
        m.other = 3
        del m.weight, m.buf, m.sub, m.other
        assert list(m._parameters) == ["bias"]
        assert m._buffers == {} and m._modules == {}
        assert "buf" not in m._non_persistent_buffers_set
        assert not hasattr(m, "weight") and not hasattr(m, "other")
        with pytest.raises(AttributeError, match="'Lin' object has no attribute 'weight'"):
            m.weight  # noqa: B018
        with pytest.raises(AttributeError):
            del m.nope

    def test_dir(self):
        m = Lin(2, 3)
        m.register_buffer("rb", ember.ones(1))
        m.sub = Lin(1, 1)
        d = dir(m)
        for name in ("weight", "bias", "rb", "sub", "forward", "training", "in_features"):
            assert name in d
        assert d == sorted(d)
        assert not [k for k in dir(nn.Sequential(Lin(1, 1), Lin(1, 1))) if k.isdigit()]


# -- iteration ---------------------------------------------------------------------------
class TestIteration:
    def make(self):
        a = Lin(2, 2)
        s = nn.Sequential(a, nn.Sequential(a, Lin(2, 1)))
        s.register_buffer("buf", ember.zeros(1))
        return s

    def test_named_parameters_shared_module(self):
        s = self.make()
        assert [n for n, _ in s.named_parameters()] == ["0.weight", "0.bias", "1.1.weight",
                                                        "1.1.bias"]
        assert [n for n, _ in s.named_parameters(remove_duplicate=False)] == [
            "0.weight", "0.bias", "1.0.weight", "1.0.bias", "1.1.weight", "1.1.bias"]
        assert [n for n, _ in s.named_parameters(prefix="m", recurse=False)] == []
        assert [n for n, _ in s[1].named_parameters(prefix="m", recurse=False)] == []
        assert [n for n, _ in s[0].named_parameters(prefix="m")] == ["m.weight", "m.bias"]
        assert len(list(s.parameters())) == 4
        assert [n for n, _ in s.named_buffers()] == ["buf"]
        # state_dict lists shared tensors under each name
        assert list(s.state_dict()) == ["buf", "0.weight", "0.bias", "1.0.weight", "1.0.bias",
                                        "1.1.weight", "1.1.bias"]

    def test_shared_parameter(self):
        w = nn.Parameter(ember.ones(2, 2))
        a, b = Lin(2, 2), Lin(2, 2)
        a.weight = w
        b.weight = w
        s = nn.Sequential(a, b)
        assert [n for n, _ in s.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
        assert [n for n, _ in s.named_parameters(remove_duplicate=False)] == [
            "0.weight", "0.bias", "1.weight", "1.bias"]
        assert list(s.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]

    def test_modules_and_children(self):
        s = self.make()
        assert [n for n, _ in s.named_modules()] == ["", "0", "1", "1.1"]
        assert [n for n, _ in s.named_modules(remove_duplicate=False)] == [
            "", "0", "1", "1.0", "1.1"]
        assert [n for n, _ in s.named_modules(prefix="root")] == ["root", "root.0", "root.1",
                                                                  "root.1.1"]
        assert [n for n, _ in s.named_children()] == ["0", "1"]
        assert list(s.children()) == [s[0], s[1]]
        assert len(list(s.modules())) == 4

    def test_get_submodule_parameter_buffer(self):
        s = nn.Sequential(Lin(2, 2), nn.Sequential(Lin(2, 1)))
        s.register_buffer("bb", ember.ones(1))
        assert s.get_submodule("1.0") is s[1][0]
        assert s.get_submodule("") is s
        assert s.get_parameter("1.0.weight") is s[1][0].weight
        assert s.get_buffer("bb") is s.bb
        with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
            s.get_submodule("1.5")
        with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
            s.get_submodule("0.weight.x")
        with pytest.raises(AttributeError, match="`in_features` is not an nn.Parameter"):
            s.get_parameter("1.0.in_features")
        with pytest.raises(AttributeError, match="Lin has no attribute `nope`"):
            s.get_parameter("1.0.nope")
        with pytest.raises(AttributeError, match="`weight` is not a buffer"):
            s.get_buffer("0.weight")

    def test_get_buffer_missing_attribute(self):
        # PyTorch names the missing attribute: "Lin has no attribute `zz`"
        s = nn.Sequential(Lin(2, 2))
        with pytest.raises(AttributeError, match="Lin has no attribute `zz`"):
            s.get_buffer("0.zz")

    def test_set_submodule(self):
        s = nn.Sequential(Lin(2, 2), nn.Sequential(Lin(2, 1)))
        new = Lin(2, 3)
        s.set_submodule("1.0", new)
        assert s[1][0] is new
        with pytest.raises(AttributeError, match="Sequential has no attribute `zz`"):
            s.set_submodule("1.zz", Lin(2, 3), strict=True)
        s.set_submodule("1.zz", Lin(2, 3))
        assert "1.zz.weight" in s.state_dict()

    def test_apply(self):
        s = nn.Sequential(Lin(2, 2), nn.Sequential(Lin(2, 1)))
        order = []
        assert s.apply(lambda m: order.append(type(m).__name__)) is s
        assert order == ["Lin", "Lin", "Sequential", "Sequential"]

        def init(m):
            if isinstance(m, Lin):
                nn.init.constant_(m.weight, 0.5)

        s.apply(init)
        assert all(float(p.sum()) == 0.5 * p.numel() for n, p in s.named_parameters()
                   if n.endswith("weight"))


# -- modes and conversions ---------------------------------------------------------------
class TestModes:
    def test_train_eval(self):
        s = nn.Sequential(Lin(2, 2), nn.Sequential(Lin(2, 1)))
        assert s.eval() is s
        assert [m.training for m in s.modules()] == [False] * 4
        s[1].train()
        assert [m.training for m in s.modules()] == [False, False, True, True]
        assert s.train(False) is s
        with pytest.raises(ValueError, match="training mode is expected to be boolean"):
            s.train("x")

    def test_requires_grad_(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        assert s.requires_grad_(False) is s
        assert [p.requires_grad for p in s.parameters()] == [False] * 4
        s.requires_grad_()
        assert all(p.requires_grad for p in s.parameters())

    def test_zero_grad(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        s(ember.ones(3, 2)).sum().backward()
        assert all(p.grad is not None for p in s.parameters())
        s.zero_grad(set_to_none=False)
        assert [p.grad.tolist() for p in s.parameters()] == [
            [[0.0, 0.0], [0.0, 0.0]], [0.0, 0.0], [[0.0, 0.0]], [0.0]]
        s.zero_grad()
        assert [p.grad for p in s.parameters()] == [None] * 4

    def test_dtype_conversions(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        s.register_buffer("ib", ember.zeros(2, dtype=ember.int64))
        s.register_buffer("fb", ember.zeros(2))
        w = s[0].weight
        s(ember.ones(3, 2)).sum().backward()
        assert s.double() is s
        assert s[0].weight is w  # parameters keep their identity
        assert w.dtype == ember.float64 and w.grad.dtype == ember.float64
        assert s.ib.dtype == ember.int64 and s.fb.dtype == ember.float64
        s.half()
        assert w.dtype == ember.float16
        s.float()
        assert w.dtype == ember.float32
        s.to(ember.float64)
        assert w.dtype == ember.float64
        s.to(dtype=ember.float32)
        assert w.dtype == ember.float32
        s.to("cpu", ember.float64)
        assert w.dtype == ember.float64
        s.to(ember.zeros(1, dtype=ember.float16))
        assert w.dtype == ember.float16 and s.ib.dtype == ember.int64
        with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or "
                                            "complex dtypes, but got desired dtype="):
            s.to(ember.int32)
        assert s.to("cpu") is s


# -- state_dict ----------------------------------------------------------------------------
class TestStateDict:
    def test_state_dict(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1, bias=False))
        sd = s.state_dict()
        assert list(sd) == ["0.weight", "0.bias", "1.weight"]
        assert isinstance(sd, OrderedDict)
        assert dict(sd._metadata) == {"": {"version": 1}, "0": {"version": 1},
                                      "1": {"version": 1}}
        assert not sd["0.weight"].requires_grad
        assert not isinstance(sd["0.weight"], nn.Parameter)
        assert s.state_dict(keep_vars=True)["0.weight"] is s[0].weight
        sd["0.weight"][0, 0] = 5.0  # shares storage with the parameter
        assert float(s[0].weight.detach()[0, 0]) == 5.0
        assert list(s.state_dict(prefix="p.")) == ["p.0.weight", "p.0.bias", "p.1.weight"]

    def test_load_state_dict(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        w = s[0].weight
        src = nn.Sequential(Lin(2, 2), Lin(2, 1))
        nn.init.constant_(src[0].weight, 3.0)
        result = s.load_state_dict(src.state_dict())
        assert repr(result) == "<All keys matched successfully>"
        assert result.missing_keys == [] and result.unexpected_keys == []
        assert s[0].weight is w and s[0].weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]
        # dtypes are converted to the module's
        s.load_state_dict({"0.weight": ember.ones(2, 2, dtype=ember.float64),
                           "0.bias": ember.ones(2), "1.weight": ember.ones(1, 2),
                           "1.bias": ember.ones(1)})
        assert s[0].weight.dtype == ember.float32

    def test_strict_errors(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        sd = {"0.weight": ember.zeros(3, 3), "0.bias": ember.zeros(2),
              "1.weight": ember.zeros(1, 2), "extra.x": ember.zeros(1), "1.zz": ember.zeros(1)}
        with pytest.raises(RuntimeError) as info:
            s.load_state_dict(sd)
        assert str(info.value) == (
            "Error(s) in loading state_dict for Sequential:\n"
            '\tMissing key(s) in state_dict: "1.bias". \n'
            '\tUnexpected key(s) in state_dict: "extra.x", "1.zz". \n'
            "\tsize mismatch for 0.weight: copying a param with shape ember.Size([3, 3]) from "
            "checkpoint, the shape in current model is ember.Size([2, 2]).")
        # size mismatches are errors even when not strict
        with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
            s.load_state_dict(sd, strict=False)

    def test_non_strict(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        sd = {"0.weight": ember.full((2, 2), 3.0), "1.weight": ember.zeros(1, 2),
              "extra.x": ember.zeros(1)}
        result = s.load_state_dict(sd, strict=False)
        assert result.missing_keys == ["0.bias", "1.bias"]
        assert result.unexpected_keys == ["extra.x"]
        missing, unexpected = result
        assert missing == ["0.bias", "1.bias"]
        assert s[0].weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]

    def test_incompatible_keys_repr(self):
        s = Lin(2, 2)
        result = s.load_state_dict({"weight": ember.ones(2, 2), "x": ember.ones(1)},
                                   strict=False)
        assert repr(result) == ("_IncompatibleKeys(missing_keys=['bias'], "
                                "unexpected_keys=['x'])")

    def test_not_a_dict(self):
        with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got"):
            Lin(2, 2).load_state_dict([1])

    def test_assign(self):
        s = Lin(2, 2)
        w = s.weight
        s.load_state_dict({"weight": ember.full((2, 2), 2.0), "bias": ember.ones(2)},
                          assign=True)
        assert s.weight is not w and isinstance(s.weight, nn.Parameter)
        assert s.weight.requires_grad and s.weight.tolist() == [[2.0, 2.0], [2.0, 2.0]]

    def test_state_dict_hooks(self):
        s = Lin(2, 2)
        log = []
        s.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix)))
        s.register_state_dict_post_hook(lambda m, sd, prefix, meta: log.append(("post",
                                                                                list(sd))))
        s.register_load_state_dict_post_hook(lambda m, keys: log.append(("load", keys)))
        s.state_dict()
        s.load_state_dict(s.state_dict())
        assert log[:2] == [("pre", ""), ("post", ["weight", "bias"])]
        assert log[-1][0] == "load" and log[-1][1].missing_keys == []

    def test_extra_state(self):
        class WithState(Lin):
            def get_extra_state(self):
                return {"k": self.in_features}

            def set_extra_state(self, state):
                self.loaded = state

        m = WithState(2, 2)
        sd = m.state_dict()
        assert list(sd) == ["weight", "bias", "_extra_state"]
        m2 = WithState(2, 2)
        m2.load_state_dict(sd)
        assert m2.loaded == {"k": 2}


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 5), min_size=2, max_size=5),
       biases=st.lists(st.booleans(), min_size=4, max_size=4), seed=st.integers(0, 2 ** 16))
def test_state_dict_round_trip(sizes, biases, seed):
    """A random stack of layers: state_dict -> numpy -> load into a fresh copy gives the same
    parameters and outputs, and parameters_to_vector agrees with the state_dict."""
    rng = np.random.default_rng(seed)

    def build():
        return nn.Sequential(*[Lin(a, b, bias=biases[i % 4])
                               for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False))])

    src, dst = build(), build()
    for p in src.parameters():
        with ember.no_grad():
            p.copy_(ember.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    arrays = {k: v.numpy().copy() for k, v in src.state_dict().items()}
    dst.load_state_dict({k: ember.tensor(v) for k, v in arrays.items()})
    for (k1, v1), (k2, v2) in zip(src.state_dict().items(), dst.state_dict().items(), strict=True):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())
    x = ember.tensor(rng.standard_normal((3, sizes[0])).astype(np.float32))
    np.testing.assert_allclose(src(x).detach().numpy(), dst(x).detach().numpy(), rtol=1e-6)
    vec = nn.utils.parameters_to_vector(dst.parameters())
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  np.concatenate([a.ravel() for a in arrays.values()]))


# -- hooks ---------------------------------------------------------------------------------
class TestForwardHooks:
    def test_pre_and_post_hooks(self):
        m = Lin(2, 2)
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
        h2 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h3 = m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # one value: wrapped
        h4 = m.register_forward_hook(lambda mod, args, out: out * 10)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", out.tolist())),
                                prepend=True)
        assert m(ember.ones(1, 2)).tolist() == [[60.0, 60.0]]
        h2.remove()
        h3.remove()
        h4.remove()
        h4.remove()  # removing twice is harmless
        assert m(ember.ones(1, 2)).tolist() == [[2.0, 2.0]]
        assert log == [("pre", 1), ("post", [[6.0, 6.0]]), ("pre", 1), ("post", [[2.0, 2.0]])]

    def test_with_kwargs(self):
        class Scale(nn.Module):
            def forward(self, x, scale=1.0):
                return x * scale

        m = Scale()
        seen = []
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: (args, {**kwargs, "scale": 3.0}), with_kwargs=True)
        m.register_forward_hook(
            lambda mod, args, kwargs, out: (seen.append(dict(kwargs)), out + 1)[1],
            with_kwargs=True)
        assert m(ember.ones(2), scale=2.0).tolist() == [4.0, 4.0]
        assert seen == [{"scale": 3.0}]
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple "
                                               "of \\(new_args, new_kwargs\\), but got 5."):
            m(ember.ones(2))

    def test_always_call(self):
        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        log = []
        m.register_forward_hook(lambda mod, args, out: log.append("always"), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("normal"))
        with pytest.raises(ValueError, match="boom"):
            m(ember.ones(2))
        assert log == ["always"]

    def test_handle_context_manager(self):
        m = Lin(2, 2)
        with m.register_forward_hook(lambda mod, a, o: o * 0):
            assert m(ember.ones(1, 2)).tolist() == [[0.0, 0.0]]
        assert m(ember.ones(1, 2)).tolist() == [[2.0, 2.0]]

    def test_global_hooks(self):
        log = []
        h = register_module_forward_hook(lambda mod, args, out: log.append(type(mod).__name__))
        h2 = register_module_forward_pre_hook(lambda mod, args: log.append("pre"))
        try:
            nn.Sequential(Lin(1, 1))(ember.ones(1, 1))
        finally:
            h.remove()
            h2.remove()
        nn.Sequential(Lin(1, 1))(ember.ones(1, 1))
        assert log == ["pre", "pre", "Lin", "Sequential"]


class TestBackwardHooks:
    def test_grad_input_grad_output(self):
        class Two(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(ember.tensor([2.0, 3.0]))

            def forward(self, x, k, y):
                return x * self.w * k + y, x.sum() * 2

        m = Two()
        log = []

        def as_lists(gs):
            return [None if g is None else g.tolist() for g in gs]

        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", as_lists(gi),
                                                                      as_lists(go))))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", as_lists(go))))
        x = ember.tensor([1.0, 1.0], requires_grad=True)
        y = ember.tensor([0.5, 0.5], requires_grad=True)
        a, _ = m(x, 3.0, y)
        (a * ember.tensor([1.0, 2.0])).sum().backward()
        # one grad_input per forward argument (None for the number), one grad_output per output
        assert log == [("pre", [[1.0, 2.0], None]),
                       ("hook", [[6.0, 18.0], None, [1.0, 2.0]], [[1.0, 2.0], None])]
        assert x.grad.tolist() == [6.0, 18.0] and y.grad.tolist() == [1.0, 2.0]

    def test_replacing_gradients(self):
        m = Lin(2, 2)
        log = []
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi[0].tolist(),
                                                                      go[0].tolist())))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
        x = ember.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        assert log == [([[20.0, 20.0]], [[10.0, 10.0]])]
        assert x.grad.tolist() == [[1.0, 1.0]]
        # the parameters' gradients see the replaced grad_output
        assert m.weight.grad.tolist() == [[10.0, 10.0], [10.0, 10.0]]

    def test_inputs_without_grad(self):
        m = Lin(2, 2)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go[0].tolist())))
        m(ember.ones(1, 2)).sum().backward()
        assert log == [((None,), [[1.0, 1.0]])]
        assert m.weight.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]

    def test_in_sequential(self):
        s = nn.Sequential(Lin(2, 2), Lin(2, 1))
        log = []
        for i, mod in enumerate(s):
            mod.register_full_backward_hook(
                lambda mod, gi, go, i=i: log.append((i, gi[0].tolist(), go[0].tolist())))
        s(ember.ones(3, 2, requires_grad=True)).sum().backward()
        assert log == [(1, [[1.0, 1.0]] * 3, [[1.0]] * 3), (0, [[2.0, 2.0]] * 3,
                                                            [[1.0, 1.0]] * 3)]


# -- repr, copies ----------------------------------------------------------------------------
class Multi(nn.Module):
    def extra_repr(self):
        return "line one\nline two"


class Single(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(Lin(1, 2))

    def extra_repr(self):
        return "k=1"


NESTED_REPR = """\
Sequential(
  (enc): Sequential(
    (0): Lin(in_features=2, out_features=3, bias=True)
    (1): Sequential(
      (0): Lin(in_features=3, out_features=3, bias=False)
    )
  )
  (m): Multi(
    line one
    line two
  )
  (s): Single(
    k=1
    (inner): Sequential(
      (0): Lin(in_features=1, out_features=2, bias=True)
    )
  )
  (f): Flatten(start_dim=0, end_dim=-1)
  (u): Unflatten(dim=1, unflattened_size=(2, 3))
  (none): None
)"""


def test_repr_nested():
    s = nn.Sequential(OrderedDict([
        ("enc", nn.Sequential(Lin(2, 3), nn.Sequential(Lin(3, 3, bias=False)))),
        ("m", Multi()), ("s", Single()), ("f", nn.Flatten(0)), ("u", nn.Unflatten(1, (2, 3)))]))
    s.add_module("none", None)
    assert repr(s) == NESTED_REPR
    assert repr(nn.Sequential()) == "Sequential()"


def test_repr_containers():
    ml = nn.ModuleList([Lin(1, 1), Lin(1, 1), nn.Sequential(Lin(1, 1)), nn.Sequential(Lin(1, 1)),
                        Lin(2, 2)])
    assert repr(ml) == """\
ModuleList(
  (0-1): 2 x Lin(in_features=1, out_features=1, bias=True)
  (2-3): 2 x Sequential(
    (0): Lin(in_features=1, out_features=1, bias=True)
  )
  (4): Lin(in_features=2, out_features=2, bias=True)
)"""
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleDict({"a": Lin(1, 1)})) == (
        "ModuleDict(\n  (a): Lin(in_features=1, out_features=1, bias=True)\n)")
    pl = nn.ParameterList([nn.Parameter(ember.zeros(2, 3)), ember.zeros(4), "x"])
    assert repr(pl) == """\
ParameterList(
    (0): Parameter containing: [ember.float32 of size 2x3]
    (1): Parameter containing: [ember.float32 of size 4]
    (2): Object of type: str
)"""
    pd = nn.ParameterDict({"b": nn.Parameter(ember.zeros(2, 3)),
                           "a": ember.zeros(4, dtype=ember.float64)})
    assert repr(pd) == """\
ParameterDict(
    (a): Parameter containing: [torch.DoubleTensor of size 4]
    (b): Parameter containing: [torch.FloatTensor of size 2x3]
)"""


class TestCopies:
    def make(self):
        m = nn.Sequential(Lin(2, 3), Lin(3, 1))
        m.register_buffer("rb", ember.arange(3.0))
        m.eval()
        m.tag = "x"
        shared = nn.Parameter(ember.ones(2))
        m[0].s1 = shared
        m[1].s2 = shared
        return m

    def test_deepcopy(self):
        m = self.make()
        c = copy.deepcopy(m)
        assert not c.training and c.tag == "x"
        assert c[0].s1 is c[1].s2 and c[0].s1 is not m[0].s1  # sharing is preserved
        assert c[0].weight is not m[0].weight and isinstance(c[0].weight, nn.Parameter)
        assert c[0].weight.requires_grad
        assert c.rb.tolist() == [0.0, 1.0, 2.0]
        assert list(c.state_dict()) == list(m.state_dict())
        with ember.no_grad():
            c[0].weight.fill_(7.0)
        assert float(m[0].weight.detach().sum()) == 6.0  # independent storage

    def test_pickle(self):
        m = self.make()
        buf = io.BytesIO()
        pickle.dump(m, buf)
        buf.seek(0)
        p = pickle.load(buf)
        assert type(p) is nn.Sequential and not p.training and p.tag == "x"
        assert p[0].s1 is p[1].s2
        assert list(p.state_dict()) == list(m.state_dict())
        assert p.rb.tolist() == [0.0, 1.0, 2.0]
        assert isinstance(p[0].weight, nn.Parameter) and p[0].weight.requires_grad
        x = ember.ones(2, 2)
        assert p(x).tolist() == m(x).tolist()


# -- containers ------------------------------------------------------------------------------
class TestSequential:
    def test_indexing_and_slicing(self):
        a, b, c = Lin(1, 1), Lin(1, 2), Lin(2, 3)
        s = nn.Sequential(a, b, c)
        assert len(s) == 3 and s[0] is a and s[-1] is c
        assert type(s[1:]) is nn.Sequential and list(s[1:]) == [b, c]
        assert list(s[::2]._modules) == ["0", "2"]  # slices keep the names
        with pytest.raises(IndexError, match="index 3 is out of range"):
            s[3]
        with pytest.raises(IndexError, match="index -4 is out of range"):
            s[-4]
        assert s(ember.ones(1, 1)).shape == (1, 3)
        s[0] = Lin(1, 1)
        assert s[0] is not a

    def test_mutation(self):
        b, d = Lin(1, 2), Lin(3, 4)
        s = nn.Sequential(Lin(1, 1), b, Lin(2, 3))
        assert s.append(d) is s and list(s._modules) == ["0", "1", "2", "3"]
        del s[1]
        assert outs(s) == [1, 3, 4] and list(s._modules) == ["0", "1", "2"]
        s.insert(1, b)
        assert outs(s) == [1, 2, 3, 4]
        s.insert(-1, Lin(5, 5))
        assert outs(s) == [1, 2, 3, 5, 4]
        with pytest.raises(IndexError, match="Index out of range: 9"):
            s.insert(9, b)
        with pytest.raises(AssertionError, match="module should be of type"):
            s.insert(0, 3)
        assert s.pop(1) is b and outs(s) == [1, 3, 5, 4]
        s.extend([Lin(7, 7)])
        assert outs(s) == [1, 3, 5, 4, 7]
        del s[1:3]
        assert list(s._modules) == ["0", "1", "2"] and outs(s) == [1, 4, 7]

    def test_operators(self):
        s = nn.Sequential(Lin(1, 1), Lin(1, 4))
        t = s + nn.Sequential(Lin(8, 8))
        assert outs(t) == [1, 4, 8] and outs(s) == [1, 4]
        with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
            s + [Lin(1, 1)]
        s += nn.Sequential(Lin(9, 9))
        assert outs(s) == [1, 4, 9]
        assert outs(s * 2) == [1, 4, 9, 1, 4, 9] and outs(2 * s) == [1, 4, 9, 1, 4, 9]
        with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
            s * 0
        with pytest.raises(TypeError, match="unsupported operand type"):
            s * 1.5
        s *= 2
        assert outs(s) == [1, 4, 9, 1, 4, 9] and s[0] is s[3]

    def test_ordered_dict(self):
        s = nn.Sequential(OrderedDict([("x", Lin(1, 2)), ("y", Lin(2, 2))]))
        assert list(s._modules) == ["x", "y"] and list(s[1:]._modules) == ["y"]
        assert list(s.state_dict()) == ["x.weight", "x.bias", "y.weight", "y.bias"]
        assert s[0] is s.x


class TestModuleList:
    def test_list_operations(self):
        a, b, c = Lin(1, 1), Lin(1, 2), Lin(2, 3)
        ml = nn.ModuleList([a, b])
        assert len(ml) == 2 and ml[-1] is b and type(ml[0:1]) is nn.ModuleList
        ml.append(c)
        ml.extend([Lin(4, 4)])
        ml.insert(0, Lin(5, 5))
        assert outs(ml) == [5, 1, 2, 3, 4]
        ml[1] = Lin(6, 6)
        assert outs(ml) == [5, 6, 2, 3, 4]
        del ml[0]
        assert list(ml._modules) == ["0", "1", "2", "3"] and outs(ml) == [6, 2, 3, 4]
        del ml[::2]
        assert list(ml._modules) == ["0", "1"] and outs(ml) == [2, 4]
        assert ml.pop(0).out_features == 2
        ml += [Lin(1, 8)]
        assert outs(ml) == [4, 8]
        assert outs(ml + nn.ModuleList([Lin(1, 9)])) == [4, 8, 9]
        assert list(ml.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]

    def test_errors(self):
        ml = nn.ModuleList([Lin(1, 1)])
        with pytest.raises(TypeError, match="ModuleList.extend should be called with an "
                                            "iterable, but got int"):
            ml.extend(3)
        with pytest.raises(IndexError, match="index 5 is out of range"):
            ml[5]
        with pytest.raises(NotImplementedError):
            ml(1)


class TestModuleDict:
    def test_dict_operations(self):
        md = nn.ModuleDict({"b": Lin(1, 1), "a": Lin(1, 2)})
        assert list(md) == ["b", "a"] and len(md) == 2 and "a" in md  # insertion order
        md["c"] = Lin(1, 3)
        md.update([("d", Lin(1, 4))])
        md.update(OrderedDict([("e", Lin(1, 5))]))
        assert list(md.keys()) == ["b", "a", "c", "d", "e"]
        assert outs(md.values()) == [1, 2, 3, 4, 5]
        assert [(k, v.out_features) for k, v in md.items()][0] == ("b", 1)
        assert md.pop("b").out_features == 1
        del md["a"]
        assert list(md) == ["c", "d", "e"]
        assert list(md.state_dict())[:2] == ["c.weight", "c.bias"]
        md.clear()
        assert len(md) == 0

    def test_errors(self):
        md = nn.ModuleDict()
        with pytest.raises(TypeError, match="ModuleDict.update should be called with an "
                                            "iterable of key/value pairs, but got int"):
            md.update(3)
        with pytest.raises(TypeError, match="ModuleDict update sequence element #0 should be "
                                            "Iterable; isint"):
            md.update([3])
        with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has "
                                             "length 3; 2 is required"):
            md.update([("x", Lin(1, 1), 3)])


class TestParameterList:
    def test_list_operations(self):
        pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3)), "s"])
        assert len(pl) == 3 and isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
        assert pl[2] == "s" and pl[-1] == "s"
        assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
        pl.append(ember.ones(1))
        pl.extend([ember.ones(4)])
        assert len(pl) == 5
        pl[0] = ember.zeros(5)
        assert isinstance(pl[0], nn.Parameter) and pl[0].shape == (5,)
        s = pl[1:3]
        assert type(s) is nn.ParameterList and len(s) == 2 and s[0] is pl[1]
        assert [type(p).__name__ for p in pl] == ["Parameter", "Parameter", "str", "Parameter",
                                                  "Parameter"]
        assert list(pl.state_dict()) == ["0", "1", "3", "4"]
        assert len(list(pl.parameters())) == 4

    def test_errors(self):
        pl = nn.ParameterList()
        with pytest.raises(TypeError, match="ParameterList.extend should be called with an "
                                            "iterable, but got Tensor"):
            pl.extend(ember.ones(2))
        with pytest.raises(IndexError, match="index 9 is out of range"):
            pl[9]
        with pytest.raises(RuntimeError, match="ParameterList should not be called."):
            pl(1)

    def test_module_to_keeps_entries(self):
        pl = nn.ParameterList([ember.ones(2)])
        p = pl[0]
        pl.double()
        assert pl[0] is p and p.dtype == ember.float64


class TestParameterDict:
    def test_dict_operations(self):
        pd = nn.ParameterDict({"b": ember.ones(2), "a": nn.Parameter(ember.zeros(3))})
        assert list(pd) == ["a", "b"]  # a plain dict is inserted in sorted order
        assert isinstance(pd["b"], nn.Parameter) and len(pd) == 2 and "a" in pd
        assert list(reversed(pd)) == ["b", "a"]
        pd["c"] = "obj"
        pd.update([("d", ember.ones(1))])
        pd.update(OrderedDict([("z", ember.ones(1)), ("y", ember.ones(1))]))
        assert list(pd.keys()) == ["a", "b", "c", "d", "z", "y"]
        assert [type(v).__name__ for v in pd.values()][2] == "str"
        assert pd.get("nope", 3) == 3
        assert pd.setdefault("e", ember.ones(2)).shape == (2,)
        assert pd.popitem()[0] == "e"
        assert pd.pop("c") == "obj"
        c = pd.copy()
        assert list(c) == ["a", "b", "d", "z", "y"] and c["a"] is pd["a"]
        assert list(pd | nn.ParameterDict({"q": ember.ones(1)}))[-1] == "q"
        pd |= nn.ParameterDict({"w": ember.ones(1)})
        assert list(pd)[-1] == "w"
        assert list(pd.fromkeys(["x", "y"], ember.ones(1))) == ["x", "y"]
        assert list(pd.state_dict()) == ["a", "b", "d", "z", "y", "w"]
        del pd["a"]
        assert "a" not in pd and not hasattr(pd, "a")
        pd.clear()
        assert len(pd) == 0 and list(pd.parameters()) == []

    def test_errors(self):
        pd = nn.ParameterDict()
        with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a "
                                            "key as it is not a string \\(type is 'int'\\)"):
            pd[3]
        with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
            pd(1)


class TestFlatten:
    def test_forward(self):
        x = ember.arange(24.0).reshape(2, 3, 4)
        assert nn.Flatten()(x).shape == (2, 12)
        assert nn.Flatten(0, 1)(x).shape == (6, 4)
        assert nn.Flatten(-2)(x).shape == (2, 12)
        assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
        assert nn.Unflatten(-1, [2, -1])(x).shape == (2, 3, 2, 2)
        np.testing.assert_array_equal(nn.Flatten(0)(x).numpy(), np.arange(24.0))

    def test_gradient(self):
        x = ember.arange(6.0, requires_grad=True)
        y = nn.Flatten(0)(nn.Unflatten(0, (2, 3))(x))
        (y * ember.arange(6.0)).sum().backward()
        assert x.grad.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]

    def test_errors(self):
        with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found "
                                            "element of type float at pos 1"):
            nn.Unflatten(1, (2, 2.0))
        with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but "
                                            "found type int"):
            nn.Unflatten(1, 3)
        with pytest.raises(RuntimeError):
            nn.Unflatten(1, (2, 2))(ember.ones(2, 3))

    def test_repr(self):
        assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
        assert repr(nn.Unflatten(1, [2, 3])) == "Unflatten(dim=1, unflattened_size=[2, 3])"


def test_bfloat16_and_to_empty():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    w = m[0].weight
    assert m.bfloat16() is m
    assert m[0].weight is w and w.dtype is ember.bfloat16
    assert m[1].running_mean.dtype is ember.bfloat16
    assert m[1].num_batches_tracked.dtype is ember.int64  # integers keep their dtype
    m = nn.Sequential(nn.Linear(2, 3))
    before = m[0].weight.data_ptr()
    assert m.to_empty(device="cpu") is m
    # new (uninitialized) storage on the device, the same Parameter objects and shapes
    assert m[0].weight.shape == (3, 2) and m[0].weight.data_ptr() != before
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    outer = nn.Sequential(nn.Linear(2, 2))
    outer.register_buffer("scale", ember.ones(2))
    inner_ptr = outer[0].weight.data_ptr()
    outer.to_empty(device="cpu", recurse=False)  # only the module's own tensors
    assert outer[0].weight.data_ptr() == inner_ptr
