"""ember.utils.checkpoint: recomputation really happens, and gradients equal the
unchecked model's (float64)."""

import contextlib

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.utils import checkpoint as C

MODES = [True, False]


class Counted(nn.Module):
    """Linear -> tanh -> dropout, counting its forward calls."""

    def __init__(self, p=0.5):
        super().__init__()
        self.lin = nn.Linear(4, 4).double()
        self.drop = nn.Dropout(p)
        self.calls = 0

    def forward(self, x, scale=1.0):
        self.calls += 1
        return self.drop(self.lin(x).tanh()) * scale


def grads_of(model, x, run):
    model.zero_grad()
    x.grad = None
    out = run()
    out.sum().backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("reentrant", MODES)
def test_recomputes_and_matches_unchecked_with_dropout(reentrant):
    ember.manual_seed(0)
    m = Counted()
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    state = ember.get_rng_state()
    got = grads_of(m, x, lambda: C.checkpoint(m, x, use_reentrant=reentrant))
    assert m.calls == 2                               # the forward ran again in backward
    ember.set_rng_state(state)
    m.calls = 0
    ref = grads_of(m, x, lambda: m(x))
    assert m.calls == 1
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("reentrant", [True])
def test_without_preserve_rng_state_masks_differ(reentrant):
    # (the non-reentrant variant recomputes only saved tensors; ember's dropout keeps its
    # mask as a plain attribute of its node, so there the forward's mask is used anyway)
    ember.manual_seed(0)
    m = Counted(p=0.5)
    x = ember.randn(50, 4, dtype=ember.float64, requires_grad=True)
    state = ember.get_rng_state()
    got = grads_of(m, x, lambda: C.checkpoint(m, x, use_reentrant=reentrant,
                                              preserve_rng_state=False))
    ember.set_rng_state(state)
    ref = grads_of(m, x, lambda: m(x))
    assert not np.allclose(got[0], ref[0])


def test_kwargs_and_non_tensor_outputs():
    m = Counted(p=0.0)
    x = ember.randn(2, 4, dtype=ember.float64, requires_grad=True)

    def f(x, *, scale):
        return m(x, scale=scale), 7, "label"
    out, n, s = C.checkpoint(f, x, use_reentrant=False, scale=3.0)
    assert (n, s) == (7, "label")
    (g,) = ember.autograd.grad(out.sum(), x)          # autograd.grad works without reentrancy
    x2 = x.detach().requires_grad_()
    (ref,) = ember.autograd.grad(m(x2, scale=3.0).sum(), x2)
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-13)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        C.checkpoint(f, x, use_reentrant=True, scale=3.0)
    # reentrant, a tuple with a non-tensor output
    out, n, s = C.checkpoint(lambda x: (m(x), 7, "label"), x, use_reentrant=True)
    out.sum().backward()
    assert n == 7


def test_inputs_that_do_not_require_grad():
    m = Counted(p=0.0)
    x = ember.randn(2, 4, dtype=ember.float64)              # no grad: only the weights get one
    m.zero_grad()
    C.checkpoint(m, x, use_reentrant=False).sum().backward()
    got = m.lin.weight.grad.numpy().copy()
    m.zero_grad()
    m(x).sum().backward()
    np.testing.assert_allclose(got, m.lin.weight.grad.numpy(), rtol=1e-13)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = C.checkpoint(m, x, use_reentrant=True)
    assert not out.requires_grad                           # as PyTorch's reentrant variant


def test_reentrant_refuses_autograd_grad_and_warns_without_use_reentrant():
    m = Counted(p=0.0)
    x = ember.randn(2, 4, dtype=ember.float64, requires_grad=True)
    out = C.checkpoint(m, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        ember.autograd.grad(out.sum(), x)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        C.checkpoint(m, x)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        C.checkpoint(m, x, use_reentrant=True, debug=True)


def test_early_stop_and_retain_graph():
    reached_end = []

    def f(x):
        y = x.sin() * x
        reached_end.append(1)
        return y
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    out = C.checkpoint(f, x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    assert len(reached_end) == 1          # recomputation stopped once all saved were back
    g1 = x.grad.numpy().copy()
    out.sum().backward()                  # a second backward recomputes again
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1)
    np.testing.assert_allclose(g1, (np.sin(x.detach().numpy())
                                    + x.detach().numpy() * np.cos(x.detach().numpy())))
    reached_end.clear()
    with C.set_checkpoint_early_stop(False):
        out = C.checkpoint(f, x, use_reentrant=False)
    out.sum().backward()
    assert len(reached_end) == 2


def test_determinism_check_and_debug():
    calls = []

    def f(x):
        calls.append(1)
        return x.exp() if len(calls) == 1 else x[:2].exp()
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    out = C.checkpoint(f, x, use_reentrant=False)
    with pytest.raises(C.CheckpointError, match="different metadata"):
        out.sum().backward()
    calls.clear()
    out = C.checkpoint(f, x, use_reentrant=False, debug=True)
    with pytest.raises(C.CheckpointError, match="Operations executed during the original"):
        out.sum().backward()
    out = C.checkpoint(ember.exp, x, use_reentrant=False, determinism_check="none")
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        C.checkpoint(f, x, use_reentrant=False, determinism_check="strict")


def test_input_changed_in_place_after_forward():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    y = x * 1
    out = C.checkpoint(lambda y: y.sin(), y, use_reentrant=False)
    with ember.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("reentrant", MODES)
def test_checkpoint_sequential_and_nesting(reentrant):
    ember.manual_seed(2)
    seq = nn.Sequential(*[nn.Linear(4, 4).double() for _ in range(4)], nn.Tanh())
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    got = grads_of(seq, x, lambda: C.checkpoint_sequential(seq, 2, x, use_reentrant=reentrant))
    ref = grads_of(seq, x, lambda: seq(x))
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    got = grads_of(seq, x, lambda: C.checkpoint(
        lambda x: C.checkpoint(seq, x, use_reentrant=reentrant), x, use_reentrant=reentrant))
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_context_fn_and_helpers():
    entered = []

    @contextlib.contextmanager
    def tag(name):
        entered.append(name)
        yield

    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    out = C.checkpoint(lambda x: x.exp(), x, use_reentrant=False,
                       context_fn=lambda: (tag("forward"), tag("recompute")))
    out.sum().backward()
    assert entered == ["forward", "recompute"]
    a, b = C.noop_context_fn()
    with a, b:
        pass
    t = ember.ones(2, requires_grad=True)
    d = C.detach_variable((t, 3))
    assert d[0] is not t and d[0].requires_grad and d[0].is_leaf and d[1] == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        C.detach_variable([t])
    assert C.get_device_states(t) == ([], [])
    C.DefaultDeviceType.set_device_type("cpu")
    assert C.DefaultDeviceType.get_device_type() == "cpu"
    assert [p.name for p in C.CheckpointPolicy][:2] == ["MUST_SAVE", "PREFER_SAVE"]
    assert C.SelectiveCheckpointContext(is_recompute=False).is_recompute is False
    with C.GraphExecGroup():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with C.GraphExecGroup():
                pass


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_masks_match_on_a_gpu(reentrant):
    # a stand-in for CuPy (tests/core/_fake_cupy.py): the CUDA generator's state cannot be
    # saved, so checkpoint reseeds it for the forward and again for the recomputation
    import _fake_cupy

    with _fake_cupy.installed():
        x = ember.randn(400, dtype=ember.float64).to("cuda:0").requires_grad_()

        def f(x):
            return ember.nn.functional.dropout(x * 1, 0.5, training=True)
        out = C.checkpoint(f, x, use_reentrant=reentrant)
        out.sum().backward()
        kept = out.detach().cpu().numpy() != 0
        assert 0 < kept.sum() < 400
        np.testing.assert_array_equal(x.grad.cpu().numpy(), np.where(kept, 2.0, 0.0))


def test_selective_checkpoint_contexts_ask_the_policy_and_keep_the_gradients():
    from ember.utils.checkpoint import (
        CheckpointPolicy,
        checkpoint,
        create_selective_checkpoint_contexts,
    )

    seen = []

    def policy(ctx, op, *args):
        seen.append((ctx.is_recompute, op))
        return CheckpointPolicy.MUST_SAVE if op == "matmul" else CheckpointPolicy.PREFER_RECOMPUTE

    ember.manual_seed(0)
    w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)

    def f(x):
        return x.mm(w).sin().sum()

    checkpoint(f, x, use_reentrant=False,
               context_fn=lambda: create_selective_checkpoint_contexts(policy)).backward()
    got = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    f(x).backward()
    assert ember.allclose(got[0], x.grad) and ember.allclose(got[1], w.grad)
    assert (False, "matmul") in seen and (True, "matmul") in seen  # forward and recompute
    # a list of ops is MUST_SAVE for them; a bad policy or answer is an error
    ctx_fn = lambda: create_selective_checkpoint_contexts([ember.mm, "sin"])  # noqa: E731
    checkpoint(f, x, use_reentrant=False, context_fn=ctx_fn).backward()
    with pytest.raises(TypeError, match="function or a list of ops"):
        create_selective_checkpoint_contexts(3)
    with pytest.raises(RuntimeError, match="CheckpointPolicy"):
        checkpoint(f, x, use_reentrant=False, context_fn=lambda:
                   create_selective_checkpoint_contexts(lambda ctx, op, *a: "save"))
