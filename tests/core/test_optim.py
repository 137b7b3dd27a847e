"""ember.optim without PyTorch: the Optimizer base (groups, state dicts, hooks, errors),
each optimizer's fused kernel against its array-level path and against values worked
out by hand, L-BFGS on the Rosenbrock function, and swa_utils.

(tests/interop/test_optim_torch.py compares every optimizer with torch.optim.)
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.optim as optim
from ember._C import _optim
from ember.optim import swa_utils

# One case per optimizer with its options turned on (each option's parity with PyTorch
# is in tests/interop); the table drives the generic tests below.
CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1,
                     weight_decay=0.1)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 0.1))),
    ("ASGD", dict(lr=0.01, t0=3, weight_decay=0.1)),
]


def _case_id(case):
    return case[0] + "-" + ",".join(f"{k}={v}" for k, v in case[1].items())


def _g(array):
    """A float64 (or complex128) tensor: NumPy's default, exact hand-worked values."""
    array = np.array(array)
    return ember.tensor(array if array.dtype.kind == "c" else array.astype(np.float64))


def _leaf(array):
    return _g(array).requires_grad_(True)


def _run(name, options, params, grads_seq):
    opt = getattr(optim, name)(params, **options)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = None if g is None else ember.tensor(g)
        opt.step()
    return opt


def _grads(shapes, steps=12, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]


# --- the fused kernel against the array-level path ---------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_kernel_matches_array_path(case, dtype):
    # A transposed (non-contiguous) parameter takes the array-level path; the same
    # values in a contiguous one take the compiled kernel.
    name, options = case
    rng = np.random.default_rng(0)
    init = rng.standard_normal((6, 5)).astype(dtype)
    grads = [[g] for g in (rng.standard_normal((6, 5)).astype(dtype) for _ in range(12))]
    contiguous = ember.tensor(init.copy(), requires_grad=True)
    strided = ember.tensor(np.ascontiguousarray(init.T), requires_grad=True).t()
    strided = strided.detach().requires_grad_(True)
    assert not strided._data.flags.c_contiguous
    _run(name, options, [contiguous], grads)
    _run(name, options, [strided], grads)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(strided.detach().numpy(), contiguous.detach().numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_complex_parameter_is_its_real_view(case):
    # PyTorch updates a complex parameter as the real tensor of its (re, im) pairs.
    name, options = case
    rng = np.random.default_rng(2)
    init = rng.standard_normal((4, 3, 2))
    grads = [rng.standard_normal((4, 3, 2)) for _ in range(10)]
    real = _leaf(init)
    cplx = _leaf(init[..., 0] + 1j * init[..., 1])
    _run(name, options, [real], [[g] for g in grads])
    _run(name, options, [cplx], [[g[..., 0] + 1j * g[..., 1]] for g in grads])
    out = cplx.detach().numpy()
    np.testing.assert_allclose(np.stack([out.real, out.imag], -1), real.detach().numpy(),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", CASES[:6], ids=_case_id)
def test_non_contiguous_complex_parameter(case):
    name, options = case
    rng = np.random.default_rng(4)
    init = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    grads = [[rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))]
             for _ in range(6)]
    contiguous = _leaf(init)
    strided = ember.tensor(np.ascontiguousarray(init.T)).t().detach().requires_grad_(True)
    _run(name, options, [contiguous], grads)
    _run(name, options, [strided], grads)
    np.testing.assert_allclose(strided.detach().numpy(), contiguous.detach().numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_float16_parameters_take_the_array_path(case):
    name, options = case
    rng = np.random.default_rng(5)
    init = rng.standard_normal(16)
    grads = [[rng.standard_normal(16)] for _ in range(5)]
    p16 = ember.tensor(init.astype(np.float16), requires_grad=True)
    p64 = _leaf(init)
    opt = _run(name, options, [p16], [[g[0].astype(np.float16)] for g in grads])
    _run(name, options, [p64], grads)
    assert p16.dtype == ember.float16
    for value in opt.state[p16].values():
        if isinstance(value, ember.Tensor) and value.dim() > 0:
            assert value.dtype == ember.float16
    np.testing.assert_allclose(p16.detach().numpy().astype(np.float64),
                               p64.detach().numpy(), rtol=2e-2, atol=2e-2)


@settings(max_examples=40, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=9),
    dtype=st.sampled_from([np.float32, np.float64]),
    case=st.sampled_from(CASES),
    seed=st.integers(0, 2**32 - 1),
)
def test_kernel_matches_array_path_hypothesis(shape, dtype, case, seed):
    name, options = case
    rng = np.random.default_rng(seed)
    init = rng.uniform(-3, 3, shape).astype(dtype)
    grads = [[rng.uniform(-2, 2, shape).astype(dtype)] for _ in range(4)]
    a = ember.tensor(init.copy(), requires_grad=True)
    # a view with a gap between elements: never contiguous (unless empty or one element)
    wide = np.zeros(shape + (2,), dtype)
    wide[..., 0] = init
    b = ember.tensor(wide)[..., 0].detach().requires_grad_(True)
    _run(name, options, [a], grads)
    _run(name, options, [b], grads)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)


# --- values worked out by hand --------------------------------------------------------------

def test_sgd_momentum_by_hand():
    p = _leaf([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.5)
    # step 1: d = g + 0.5 p = 2 + 0.5 = 2.5; the buffer starts at d; p = 1 - 0.25
    p.grad = _g([2.0])
    opt.step()
    assert p.item() == pytest.approx(0.75)
    assert opt.state[p]["momentum_buffer"].item() == pytest.approx(2.5)
    # step 2: d = 2 + 0.375 = 2.375; b = 0.9 * 2.5 + 0.5 * 2.375 = 3.4375
    p.grad = _g([2.0])
    opt.step()
    assert opt.state[p]["momentum_buffer"].item() == pytest.approx(3.4375)
    assert p.item() == pytest.approx(0.75 - 0.34375)


def test_adam_by_hand():
    p = _leaf([1.0, -2.0])
    opt = optim.Adam([p], lr=0.1, betas=(0.9, 0.99), eps=1e-8)
    p.grad = _g([0.5, -3.0])
    opt.step()
    # the first step is lr * g / |g| (bias-corrected m / sqrt(v)), up to eps
    np.testing.assert_allclose(p.detach().numpy(), [0.9, -1.9], rtol=1e-7)
    p.grad = _g([0.5, 1.0])
    opt.step()
    m = np.array([0.9 * 0.05 + 0.05, 0.9 * -0.3 + 0.1])
    v = np.array([0.99 * 0.0025 + 0.0025, 0.99 * 0.09 + 0.01])
    expected = np.array([0.9, -1.9]) - 0.1 * (m / 0.19) / (np.sqrt(v / (1 - 0.99**2)) + 1e-8)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6)
    assert opt.state[p]["step"].item() == 2.0


def test_adagrad_and_rprop_by_hand():
    p = _leaf([1.0])
    opt = optim.Adagrad([p], lr=1.0, lr_decay=0.5, initial_accumulator_value=1.0, eps=0.0)
    p.grad = _g([3.0])
    opt.step()  # sum = 10, p = 1 - 3 / sqrt(10)
    assert p.item() == pytest.approx(1 - 3 / math.sqrt(10))
    p.grad = _g([1.0])
    opt.step()  # clr = 1 / 1.5, sum = 11
    assert p.item() == pytest.approx(1 - 3 / math.sqrt(10) - (1 / 1.5) / math.sqrt(11))

    q = _leaf([0.0, 0.0, 0.0])
    opt = optim.Rprop([q], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.01, 0.3))
    for g in ([1.0, -1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]):
        q.grad = _g(g)
        opt.step()
    # element 0: steps of 0.1, 0.2, 0.3 (clamped), 0.3
    # element 1: -0.1 (up), sign flip: step size 0.05 and no move, then 0.05, 0.1
    # element 2: 0.1, zero gradient (no move, size kept), 0.1, 0.2
    np.testing.assert_allclose(q.detach().numpy(), [-0.9, 0.1 - 0.05 - 0.1, -0.4])


def test_maximize_is_minimizing_the_negation():
    for name, options in CASES:
        options = {k: v for k, v in options.items() if k != "maximize"}
        a, b = _leaf([0.3, -1.2, 2.0]), _leaf([0.3, -1.2, 2.0])
        grads = _grads([(3,)], steps=5)
        _run(name, dict(options, maximize=True), [a], grads)
        _run(name, options, [b], [[-g[0]] for g in grads])
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                   err_msg=name)


def test_asgd_averages_after_t0():
    p = _leaf([1.0, 2.0])
    opt = optim.ASGD([p], lr=0.1, t0=2, lambd=0.0)
    values = []
    for _ in range(5):
        p.grad = _g([1.0, 1.0])
        opt.step()
        values.append(p.detach().numpy().copy())
    # mu = 1 / max(1, step - t0): ax copies the iterates, then averages them
    # (the mu of a step is the one computed at the end of the previous step)
    np.testing.assert_allclose(opt.state[p]["ax"].numpy(), np.mean(values[3:], axis=0),
                               rtol=1e-12)


# --- the Optimizer base ---------------------------------------------------------------------

def test_steps_skip_parameters_without_grad_and_bump_versions():
    a, b = _leaf([1.0]), _leaf([2.0])
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = _g([1.0])
    v = a._version
    opt.step()
    assert a._version > v
    assert b.item() == 2.0 and b not in opt.state
    assert set(opt.state[a]) == {"step", "exp_avg", "exp_avg_sq"}


def test_step_runs_without_recording_and_returns_the_closure_loss():
    p = _leaf([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    seen = {}

    def closure():
        seen["grad_enabled"] = ember.is_grad_enabled()
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert seen["grad_enabled"] is True
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6])
    assert p.grad_fn is None and p.requires_grad


def test_param_groups_and_defaults():
    a, b = _leaf([1.0]), _leaf([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["params"] == [b]
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["momentum"] == 0.5
    a.grad, b.grad = _g([1.0]), _g([1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    c = _leaf([1.0])
    opt.add_param_group({"params": [c], "lr": 1.0})
    assert opt.param_groups[2]["momentum"] == 0 and opt.param_groups[2]["nesterov"] is False
    assert "Parameter Group 2" in repr(opt) and "lr: 1.0" in repr(opt)


def test_named_parameters():
    a, b = _leaf([1.0]), _leaf([2.0])
    opt = optim.Adam([("w", a), ("b", b)])
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.Adam([("w", a), b])
    with pytest.raises(ValueError, match="should be with/without names"):
        opt.add_param_group({"params": [_leaf([0.0])]})


def test_errors_for_bad_parameters():
    a = _leaf([1.0])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {a}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors, but one of the params "
                                        "is numpy.ndarray"):
        optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([a, a], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([a]).add_param_group([a])
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam([a], differentiable=True)


@pytest.mark.parametrize("make,match", [
    (lambda p: optim.SGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.SGD(p, momentum=-1), "Invalid momentum value: -1"),
    (lambda p: optim.SGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam(p, eps=-1.0), "Invalid epsilon value: -1.0"),
    (lambda p: optim.Adam(p, betas=(0, 0.9)), "betas must be either both floats or both"),
    (lambda p: optim.Adam(p, lr=ember.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
    (lambda p: optim.AdamW(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: optim.RMSprop(p, alpha=-1), "Invalid alpha value: -1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-1),
     "Invalid initial_accumulator_value value: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.LBFGS(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.LBFGS([{"params": p}, {"params": [_leaf([0.0])]}]),
     "LBFGS doesn't support per-parameter options"),
])
def test_errors_for_bad_options(make, match):
    with pytest.raises(ValueError, match=match):
        make([_leaf([1.0])])


def test_zero_grad():
    p = _leaf([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


@pytest.mark.parametrize("case", CASES + [("LBFGS", dict(history_size=3))], ids=_case_id)
def test_state_dict_round_trip_continues_the_trajectory(case):
    name, options = case
    shapes = [(3, 2), (4,)]
    grads = _grads(shapes, steps=10, seed=7)
    init = [np.random.default_rng(8).standard_normal(s) for s in shapes]

    def closure_for(params, opt, i):
        def closure():
            opt.zero_grad()
            loss = sum(((p - ember.tensor(g)) ** 2).sum() for p, g in zip(params, grads[i]))
            loss.backward()
            return loss
        return closure

    def run(params, opt, steps):
        for i in steps:
            if name == "LBFGS":
                opt.step(closure_for(params, opt, i))
            else:
                for p, g in zip(params, grads[i]):
                    p.grad = _g(g)
                opt.step()

    params = [_leaf(a) for a in init]
    opt = getattr(optim, name)(params, **options)
    run(params, opt, range(5))
    # save (through pickle, as a checkpoint would), and continue in a new optimizer
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    params2 = [_leaf(p.detach().numpy().copy()) for p in params]
    opt2 = getattr(optim, name)(params2, **options)
    opt2.load_state_dict(saved)
    run(params, opt, range(5, 10))
    run(params2, opt2, range(5, 10))
    # (loading casts floating-point state to the parameter's dtype, as PyTorch does:
    # NAdam's mu_product and ASGD's eta and mu go from float32 to float64 here)
    for p, q in zip(params, params2):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-7)


def test_state_dict_layout_and_load_errors():
    a, b = _leaf([1.0, 2.0]), _leaf([3.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad = _g([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0] and sd["param_groups"][1]["params"] == [1]
    assert list(sd["state"]) == [0]
    assert sd["state"][0]["momentum_buffer"] is opt.state[a]["momentum_buffer"]
    assert sd["param_groups"][1]["lr"] == 0.5
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([{"params": [a, b]}, {"params": [_leaf([0.0])]}]).load_state_dict(sd)
    # floating-point state follows the parameter's dtype; step counters keep theirs
    c = ember.tensor([0.0, 0.0], dtype=ember.float64, requires_grad=True)
    opt3 = optim.Adam([c])
    sd3 = optim.Adam([a]).state_dict()
    sd3["state"] = {0: {"step": ember.tensor(3.0), "exp_avg": ember.tensor([1.0, 2.0]),
                        "exp_avg_sq": ember.tensor([1.0, 1.0])}}
    opt3.load_state_dict(sd3)
    assert opt3.state[c]["exp_avg"].dtype == ember.float64
    assert opt3.state[c]["step"].dtype == ember.float32


def test_load_state_dict_of_old_checkpoints_with_number_steps():
    p = _leaf([1.0])
    opt = optim.Adam([p])
    p.grad = _g([1.0])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1  # as PyTorch < 1.12 saved it
    del sd["param_groups"][0]["decoupled_weight_decay"]
    opt2 = optim.Adam([_leaf([1.0])])
    opt2.load_state_dict(sd)
    state = next(iter(opt2.state.values()))
    assert isinstance(state["step"], ember.Tensor) and state["step"].item() == 1.0
    assert opt2.param_groups[0]["decoupled_weight_decay"] is False


def test_state_dict_hooks():
    p = _leaf([1.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load-pre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("first"), prepend=True)
    sd = opt.state_dict()
    assert sd["extra"] == 1 and calls == ["first", "pre"]
    opt.load_state_dict(sd)
    assert calls[2:] == ["load-pre", "load-post"]


def test_step_hooks():
    p = _leaf([1.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def pre(o, args, kwargs):
        calls.append(("pre", o is opt, args, kwargs))

    h1 = opt.register_step_pre_hook(pre)
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    h3 = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("g-pre"))
    h4 = optim.optimizer.register_optimizer_step_post_hook(
        lambda o, a, k: calls.append("g-post"))
    try:
        p.grad = _g([1.0])
        opt.step()
        assert calls == ["g-pre", ("pre", True, (), {}), "post", "g-post"]
    finally:
        for h in (h1, h2, h3, h4):
            h.remove()
    calls.clear()
    opt.step()
    assert calls == []

    # a pre hook may replace the arguments (here: give the step a closure)
    opt.register_step_pre_hook(lambda o, a, k: ((), {"closure": lambda: 42}))
    assert opt.step() == 42
    opt2 = optim.SGD([_leaf([0.0])])
    opt2.register_step_pre_hook(lambda o, a, k: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt2.step()


def test_subclass_step_calling_super_runs_hooks_once():
    class Clipped(optim.SGD):
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.clamp_(-1, 1)
            return super().step(closure)

    p = _leaf([1.0])
    opt = Clipped([p], lr=0.1)
    calls = []
    opt.register_step_post_hook(lambda o, a, k: calls.append(1))
    p.grad = _g([5.0])
    opt.step()
    assert calls == [1] and p.item() == pytest.approx(0.9)


def test_custom_optimizer_on_the_base_class():
    class Sign(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        @ember.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.sub_(p.grad.sign() * group["lr"])
                    self.state[p]["count"] = self.state[p].get("count", 0) + 1

    p = _leaf([1.0, -1.0])
    opt = Sign([p], lr=0.25)
    hooks = []
    opt.register_step_pre_hook(lambda *a: hooks.append(1))
    p.grad = _g([3.0, -2.0])
    opt.step()
    assert p.tolist() == [0.75, -0.75] and hooks == [1]
    assert opt.state_dict()["state"] == {0: {"count": 1}}


def test_adagrad_state_exists_before_the_first_step():
    p = _leaf([1.0, 2.0])
    opt = optim.Adagrad([p], initial_accumulator_value=0.3)
    assert opt.state[p]["sum"].tolist() == pytest.approx([0.3, 0.3])
    assert opt.state[p]["step"].item() == 0.0
    q = _leaf([1.0])
    opt.add_param_group({"params": [q]})
    q.grad = _g([1.0])
    opt.step()
    assert opt.state[q]["sum"].item() == pytest.approx(1.3)


def test_optimizer_pickles_and_deep_copies():
    p = _leaf([1.0, 2.0])
    opt = optim.Adam([p], lr=0.1)
    p.grad = _g([1.0, 1.0])
    opt.step()
    for clone in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        q = clone.param_groups[0]["params"][0]
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
        assert clone.state[q]["step"].item() == 1.0
        q.grad = _g([1.0, 1.0])
        clone.step()
        assert clone.state[q]["step"].item() == 2.0


@pytest.mark.parametrize("cls,kwargs,counters", [
    (optim.Adam, {}, ("step",)), (optim.NAdam, {}, ("step", "mu_product")),
    (optim.ASGD, {}, ("step", "eta", "mu")), (optim.RMSprop, {}, ("step",)),
    (optim.SGD, {"momentum": 0.9}, ()),
])
def test_unpickling_an_old_optimizer_fills_in_what_it_lacked(cls, kwargs, counters):
    # a checkpoint pickled before some group options existed and with counters as numbers
    p = _leaf([1.0, 2.0])
    opt = cls([p], lr=0.1, **kwargs)
    p.grad = _g([1.0, 1.0])
    opt.step()
    state = opt.__getstate__()
    for key in ("maximize", "foreach", "differentiable"):
        del state["param_groups"][0][key]
    for key in counters:
        state["state"][p][key] = state["state"][p][key].item()
    old = cls.__new__(cls)
    old.__setstate__(state)
    group = old.param_groups[0]
    assert group["maximize"] is False and group["foreach"] is None
    assert group["differentiable"] is False
    for key in counters:
        assert isinstance(old.state[p][key], ember.Tensor), key
    old.step()  # and it still steps


def test_functional_forms():
    p = _leaf([1.0, 2.0])
    g = _g([0.5, 0.5])
    bufs = [None]
    optim.sgd.sgd([p], [g], bufs, weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0,
                  nesterov=False, maximize=False)
    assert bufs[0].tolist() == [0.5, 0.5]
    np.testing.assert_allclose(p.detach().numpy(), [0.95, 1.95])
    step = ember.tensor(0.0)
    m, v = _g([0.0, 0.0]), _g([0.0, 0.0])
    optim.adam.adam([p], [g], [m], [v], [], [step], amsgrad=False, beta1=0.9, beta2=0.999,
                    lr=0.1, weight_decay=0.0, eps=1e-8, maximize=False)
    assert step.item() == 1.0
    np.testing.assert_allclose(p.detach().numpy(), [0.85, 1.85], rtol=1e-6)
    with pytest.raises(RuntimeError, match="state_steps"):
        optim.adam.adam([p], [g], [m], [v], [], [1], amsgrad=False, beta1=0.9, beta2=0.999,
                        lr=0.1, weight_decay=0.0, eps=1e-8, maximize=False)


def test_mismatched_state_is_an_error_not_a_crash():
    p = _leaf([1.0, 2.0, 3.0])
    opt = optim.Adam([p])
    p.grad = _g([1.0, 1.0, 1.0])
    opt.step()
    opt.state[p]["exp_avg"] = ember.zeros(2)
    with pytest.raises(RuntimeError, match=r"optimizer state of shape \(2,\) does not match "
                                           r"the parameter's shape \(3,\)"):
        opt.step()


def test_kernels_check_their_arguments():
    p = np.zeros(4, np.float32)
    g = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="sgd: grad has shape"):
        _optim.sgd(p, g[:3], None, 0.1, 0.0, 0.0, 0.0, False, False, False)
    with pytest.raises(TypeError, match="adagrad: state_sum has dtype float64"):
        _optim.adagrad(p, g, np.zeros(4), 0.1, 1e-10, 0.0, False)
    with pytest.raises(ValueError, match="adam: exp_avg is not contiguous"):
        _optim.adam(p, g, np.zeros(8, np.float32)[::2], np.zeros(4, np.float32), None, 0.9,
                    0.999, 1e-8, 0.0, 0.1, False, 0.1, 1.0, False)
    with pytest.raises(TypeError, match="float32 or float64"):
        _optim.rprop(p.astype(np.float16), g, g, g, 0.5, 1.2, 1e-6, 50, False)
    with pytest.raises(ValueError, match="momentum_buffer"):
        _optim.sgd(p, g, None, 0.1, 0.0, 0.9, 0.0, False, False, False)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="param is read-only"):
        _optim.sgd(ro, g, None, 0.1, 0.0, 0.0, 0.0, False, False, False)
    big = np.ones(100_000, np.float64)  # the multi-threaded path
    _optim.sgd(big, np.ones_like(big), None, 0.5, 0.0, 0.0, 0.0, False, False, False)
    assert (big == 0.5).all()


# --- L-BFGS ----------------------------------------------------------------------------------

def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2).sum() + (100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


@pytest.mark.parametrize("dtype", [ember.float64, ember.float32])
def test_lbfgs_strong_wolfe_minimizes_rosenbrock(dtype):
    x = ember.tensor([-1.5, 2.0, -0.5, 1.2], dtype=dtype, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=100, history_size=10, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    first = opt.step(closure).item()
    for _ in range(4):
        last = opt.step(closure).item()
    assert last < 1e-8 < first
    np.testing.assert_allclose(x.detach().numpy(), np.ones(4), atol=1e-3)
    state = opt.state[x]
    assert state["func_evals"] >= state["n_iter"] > 10
    assert len(state["old_dirs"]) <= 10
    assert isinstance(state["d"], ember.Tensor) and state["d"].shape == (4,)


def test_lbfgs_without_line_search_and_errors():
    x = ember.tensor([3.0, -2.0], requires_grad=True)
    opt = optim.LBFGS([x], lr=0.5, max_iter=30)

    def closure():
        opt.zero_grad()
        loss = ((x - ember.tensor([1.0, 2.0])) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0], atol=1e-4)
    x.data = ember.tensor([0.0, 0.0])
    opt = optim.LBFGS([x], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_lbfgs_complex_and_several_parameters():
    z = ember.tensor([1.0 + 2.0j, -1.0j], requires_grad=True)
    w = ember.tensor([[0.5, -0.5]], requires_grad=True)
    opt = optim.LBFGS([z, w], line_search_fn="strong_wolfe")
    target = np.array([0.5 - 1.0j, 2.0 + 0.5j])

    def closure():
        opt.zero_grad()
        d = z - ember.tensor(target)
        loss = (d.abs() ** 2).sum() + ((w - 3.0) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(z.detach().numpy(), target, atol=1e-5)
    np.testing.assert_allclose(w.detach().numpy(), [[3.0, 3.0]], atol=1e-5)


# --- swa_utils -------------------------------------------------------------------------------

class _Module(ember.nn.Module):
    """One parameter ``w`` (the given leaf, shared) and one buffer ``buf``; forward is the
    identity."""

    def __init__(self, w, buf):
        super().__init__()
        self.w = ember.nn.Parameter(w)
        self.register_buffer("buf", buf)

    def forward(self, x):
        return x


def test_averaged_model_swa_and_ema():
    model = _Module(ember.tensor([0.0, 0.0]), ember.tensor([5.0]))
    w, buf = model.w, model.buf
    swa = swa_utils.AveragedModel(model)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    custom = swa_utils.AveragedModel(model, avg_fn=lambda a, c, n: a + c)
    assert swa.n_averaged.item() == 0 and swa.n_averaged.dtype == ember.int64
    values = [[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]]
    for i, v in enumerate(values):
        with ember.no_grad():
            w.copy_(ember.tensor(v))
            buf.fill_(float(i))
        for avg in (swa, ema, custom):
            avg.update_parameters(model)
    (sw,), (em,), (cu,) = (list(m.module.parameters()) for m in (swa, ema, custom))
    np.testing.assert_allclose(sw.detach().numpy(), np.mean(values, axis=0))
    np.testing.assert_allclose(em.detach().numpy(), [0.25 * 1 + 0.25 * 3 + 0.5 * 5,
                                                     0.25 * 2 + 0.25 * 4 + 0.5 * 9])
    np.testing.assert_allclose(cu.detach().numpy(), np.sum(values, axis=0))
    assert swa.n_averaged.item() == 3
    assert list(swa.module.buffers())[0].item() == 2.0  # buffers copied, not averaged
    assert w.tolist() == [5.0, 9.0]  # the model itself is untouched
    assert swa.module is not model and swa(ember.tensor([1.0])).item() == 1.0
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(model, avg_fn=lambda *a: a[0],
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


def test_averaged_model_use_buffers_and_swa_multi():
    model = _Module(ember.tensor([2.0]), ember.tensor([10.0]))
    w, buf = model.w, model.buf
    avg = swa_utils.AveragedModel(model, use_buffers=True,
                                  multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    for v in (2.0, 4.0, 9.0):
        with ember.no_grad():
            w.fill_(v)
            buf.fill_(v * 10)
        avg.update_parameters(model)
    assert list(avg.module.parameters())[0].item() == pytest.approx(5.0)
    assert list(avg.module.buffers())[0].item() == pytest.approx(50.0)


def test_ema_decay_is_checked():
    with pytest.raises(ValueError, match="Invalid decay value 1.5"):
        swa_utils.get_ema_multi_avg_fn(1.5)
    with pytest.raises(ValueError, match="Invalid decay value -0.1"):
        swa_utils.get_ema_avg_fn(-0.1)


def test_swalr():
    p = _leaf([1.0])
    opt = optim.SGD([p], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lrs = [sched.get_last_lr()[0]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1])
    sd = sched.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == "linear"
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)


def test_package_surface():
    for name in optim.__all__:
        assert getattr(optim, name) is not None
    assert optim.SGD.__module__ == "ember.optim.sgd"
    assert issubclass(optim.AdamW, optim.Adam)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optim.SGD([_leaf([1.0])]).zero_grad()


def test_swa_with_nn_modules():
    nn = ember.nn
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    averaged = swa_utils.AveragedModel(model)
    assert isinstance(averaged, nn.Module)
    snapshots = []
    for k in range(3):
        with ember.no_grad():
            for p in model.parameters():
                p.add_(float(k + 1))
        snapshots.append([p.detach().numpy().copy() for p in model.parameters()])
        averaged.update_parameters(model)
    for p, values in zip(averaged.module.parameters(), zip(*snapshots)):
        np.testing.assert_allclose(p.detach().numpy(), np.mean(values, axis=0), rtol=1e-6)
    keys = set(averaged.state_dict())
    assert "n_averaged" in keys and "module.0.weight" in keys
    assert "module.1.running_mean" in keys

    rng = np.random.default_rng(0)
    loader = [ember.tensor(rng.standard_normal((4, 3)).astype(np.float32)) for _ in range(3)]
    swa_utils.update_bn(loader, averaged)
    linear = averaged.module[0]
    with ember.no_grad():
        batch_means = [linear(x).mean(0).numpy() for x in loader]
    np.testing.assert_allclose(averaged.module[1].running_mean.numpy(),
                               np.mean(batch_means, axis=0), rtol=1e-5, atol=1e-6)
    assert averaged.module[1].momentum == 0.1
