"""ember.autograd.graph (saved tensors hooks in the core, nodes, edges, multi-grad hooks)
and the autograd leftovers: Variable, inference tensors, post-accumulate-grad hooks,
engine settings, anomaly flags."""

import threading

import numpy as np
import pytest

import ember
from ember.autograd import graph as G


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


X = np.array([0.5, -1.0, 2.0])


# ----------------------------------------------------------------------------
# saved tensors hooks

def test_pack_unpack_called_and_gradients_right():
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()          # keep only a NumPy copy

    def unpack(a):
        unpacked.append(1)
        return ember.from_numpy(a)

    x = t64(X, requires_grad=True)
    with G.saved_tensors_hooks(pack, unpack):
        y = (x * x.exp()).sum()                   # exp saves its output, mul both inputs
    assert len(packed) == 3
    y.backward()
    assert len(unpacked) == 3
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X) * (1 + X), rtol=1e-13)


def test_hooked_saves_keep_history_for_higher_order():
    x = t64(X, requires_grad=True)
    with G.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x.sin() * x).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), np.sin(X) + X * np.cos(X), rtol=1e-13)
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(X) - X * np.sin(X), rtol=1e-13)


def test_custom_function_saves_are_hooked():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3 * y / x
    seen = []
    x = t64(X, requires_grad=True)
    with G.saved_tensors_hooks(lambda t: seen.append(t) or t.detach() * 1, lambda t: t):
        out = Cube.apply(x)
    assert len(seen) == 2
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * X ** 2, rtol=1e-13)


def test_hook_errors_nesting_and_threads():
    x = t64(X, requires_grad=True)
    with G.saved_tensors_hooks(lambda t: 1, lambda p: p):
        y = x.exp()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of"):
        y.sum().backward()
    used = []
    with G.saved_tensors_hooks(lambda t: used.append("outer") or t, lambda t: t):
        with G.saved_tensors_hooks(lambda t: used.append("inner") or t, lambda t: t):
            x.exp()
        x.exp()
    assert used == ["inner", "outer"]
    other = []

    def work():
        other.append(ember._C._core._current_saved_tensors_hooks())
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        th = threading.Thread(target=work)
        th.start()
        th.join()
    assert other == [[]]                           # hooks are per thread


def test_disable_saved_tensors_hooks():
    x = t64(X, requires_grad=True)
    with G.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with G.save_on_cpu():
                pass
        x.exp()                                    # saving without hooks is fine
    with G.save_on_cpu():
        with G.disable_saved_tensors_hooks("not now"):
            with pytest.raises(RuntimeError, match="not now"):
                x.exp()
    assert ember._C._core._saved_tensors_hooks_get_disabled_error_message() is None


def test_save_on_cpu_gradients():
    x = t64(X, requires_grad=True)
    with G.save_on_cpu(pin_memory=True):
        y = (x.tanh() * x).sum()
    y.backward()
    t = np.tanh(X)
    np.testing.assert_allclose(x.grad.numpy(), t + X * (1 - t ** 2), rtol=1e-13)


def test_allow_mutation_on_saved_tensors():
    with G.allow_mutation_on_saved_tensors():
        a = t64(X, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()                                   # changes a tensor that pow saved
        out.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * X)
    with G.allow_mutation_on_saved_tensors():
        a = t64(X, requires_grad=True)
        out = (a.clone() ** 2).sum()
    with pytest.raises(RuntimeError, match="Trying to backward outside of the"):
        out.backward()
    a = t64(X, requires_grad=True)                 # outside: the usual error
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


# ----------------------------------------------------------------------------
# nodes and edges

def test_node_abc_metadata_and_edges():
    x = t64(X, requires_grad=True)
    y = x.exp() * 2
    assert isinstance(y.grad_fn, G.Node)
    assert not isinstance(3, G.Node)
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}
    edge = G.get_gradient_edge(x)
    assert edge.node.name() == "AccumulateGrad" and edge.output_nr == 0
    assert isinstance(edge.node, G.Node)
    (g1,) = ember.autograd.grad(y.sum(), edge, retain_graph=True)
    mid = x.exp()
    z = (mid * mid).sum()
    (g2,) = ember.autograd.grad(z, G.get_gradient_edge(mid))
    np.testing.assert_allclose(g1.numpy(), 2 * np.exp(X))
    np.testing.assert_allclose(g2.numpy(), 2 * np.exp(X))
    w = t64(X, requires_grad=True)
    (w * x).sum().backward(inputs=G.get_gradient_edge(x))      # accumulates into x only
    np.testing.assert_allclose(x.grad.numpy(), X)
    assert w.grad is None
    with pytest.raises(RuntimeError, match="does not require gradients"):
        G.get_gradient_edge(t64(X))
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used"):
        ember.autograd.grad(y.sum(), edge, materialize_grads=True)


def test_increment_version():
    x = t64(X, requires_grad=True)
    a = x * 1
    y = a.sin()                                    # sin saves its input
    G.increment_version([a])
    G.increment_version(x * 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_register_multi_grad_hook_all_and_any():
    a, b, c = (t64(X, requires_grad=True) for _ in range(3))
    calls = []
    h = G.register_multi_grad_hook((a, b, c), lambda grads: calls.append(grads))
    (a * 2 + b * 3).sum().backward()               # c is not part of this backward
    assert len(calls) == 1
    ga, gb, gc = calls[0]
    np.testing.assert_allclose(ga.numpy(), 2.0)
    np.testing.assert_allclose(gb.numpy(), 3.0)
    assert gc is None
    ember.autograd.grad((a * b).sum(), (a, b))     # autograd.grad runs tensor hooks too
    assert len(calls) == 2
    h.remove()
    (a + b).sum().backward()
    assert len(calls) == 2
    first = []
    G.register_multi_grad_hook((a, b), lambda g: first.append(g), mode="any")
    (a * 5 + b).sum().backward()
    assert len(first) == 1
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        G.register_multi_grad_hook((a,), print, mode="some")


def test_leaf_hooks_run_under_autograd_grad():
    x = t64(X, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (g,) = ember.autograd.grad((x * 3).sum(), x)
    np.testing.assert_allclose(g.numpy(), 30.0)


def test_compile_and_stream_settings():
    with pytest.raises(RuntimeError, match="can only be used inside a torch.compile region"):
        G.region_activation_memory_budget(0.5)
    with pytest.raises(ValueError, match="must be in"):
        G.region_activation_memory_budget(2.0)
    with pytest.raises(TypeError, match="expects a float"):
        G.region_activation_memory_budget("half")
    G.set_warn_on_accumulate_grad_stream_mismatch(True)
    G.set_override_stale_capture_stream(False)


# ----------------------------------------------------------------------------
# autograd leftovers

def test_variable():
    x = ember.ones(2)
    v = ember.autograd.Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and not x.requires_grad
    assert isinstance(x, ember.autograd.Variable)
    assert not isinstance(3, ember.autograd.Variable)
    v.detach().add_(1)
    np.testing.assert_array_equal(x.numpy(), 2.0)  # shares the memory
    assert ember.autograd.Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        ember.autograd.Variable(3)


def test_inference_tensors():
    with ember.inference_mode():
        y = ember.ones(2)
        z = y * 2
    assert y.is_inference() and z.is_inference() and ember.is_inference(y)
    assert y[0:1].is_inference()                   # a view of an inference tensor
    assert not (y + 1).is_inference() and not ember.ones(1).is_inference()
    with ember.inference_mode(False):
        assert not ember.ones(1).is_inference()
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.is_inference(3)
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y                                      # mul saves y for x's gradient
    (x * y.clone()).sum().backward()               # a clone is a normal tensor
    (x + y).sum().backward()                       # add saves nothing


def test_post_accumulate_grad_hook():
    w = t64(X, requires_grad=True)
    seen = []

    def hook(p):
        seen.append(p.grad.numpy().copy())
        with ember.no_grad():
            p.sub_(p.grad * 0.1)                   # an optimizer step in backward
            p.grad = None
    h = w.register_post_accumulate_grad_hook(hook)
    (w * 2).sum().backward()
    np.testing.assert_allclose(seen[0], 2.0)
    np.testing.assert_allclose(w.detach().numpy(), X - 0.2)
    assert w.grad is None
    h.remove()
    (w * 2).sum().backward()
    assert len(seen) == 1 and w.grad is not None
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (w * 2).register_post_accumulate_grad_hook(hook)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(1).register_post_accumulate_grad_hook(hook)
    w.register_post_accumulate_grad_hook(lambda p: 1)
    with pytest.raises(TypeError, match="hook returned 'int'"):
        (w * 2).sum().backward()


def test_engine_settings_and_anomaly_flags():
    assert ember.autograd.is_multithreading_enabled()
    with ember.autograd.set_multithreading_enabled(False):
        assert not ember.autograd.is_multithreading_enabled()
    assert ember.autograd.is_multithreading_enabled()

    @ember.autograd.set_multithreading_enabled(False)
    def f():
        return ember.autograd.is_multithreading_enabled()
    assert f() is False and ember.autograd.is_multithreading_enabled()
    with ember.autograd.enforce_grad_layout_policy(False):
        pass
    assert ember.autograd.is_view_replay_enabled()
    assert not ember.is_anomaly_enabled()
    ember.set_anomaly_enabled(True, check_nan=False)
    try:
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
        assert ember.autograd.is_anomaly_enabled()
    finally:
        ember.set_anomaly_enabled(False)
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()


def test_autograd_grad_does_not_run_or_free_the_requested_inputs_nodes():
    # PyTorch runs only the nodes between the outputs and the inputs: the inputs' own
    # backward does not run, so their graph is still there afterwards
    x = t64(X, requires_grad=True)
    a = x.sin()
    c = x * 4
    seen = []
    c.register_hook(lambda g: seen.append(g))
    (g,) = ember.autograd.grad((a + c).sum(), a)
    np.testing.assert_allclose(g.numpy(), 1.0)
    assert seen == []                              # c's node is not on the way to a
    a.sum().backward()                             # a's graph was not freed
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X))
    y = x.exp()
    ga, gx = ember.autograd.grad((y * y).sum(), (y, x))   # y's node runs: x is below it
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp(2 * X))
    np.testing.assert_allclose(ga.numpy(), 2 * np.exp(X))
