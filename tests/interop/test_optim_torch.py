"""ember.optim against torch.optim 2.13: every optimizer and option, every scheduler.

From identical parameters and the same sequence of gradients (drawn with NumPy), 50 steps
give parameters, optimizer state and learning rates equal within 1e-5 relative; L-BFGS
with a strong-Wolfe line search converges on the Rosenbrock function to PyTorch's point;
a PyTorch optimizer's state dict loads into ember (and back) and continues the same
trajectory. Skipped as a whole when torch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.optim  # noqa: E402
from ember.optim import lr_scheduler as ember_sched  # noqa: E402
from ember.optim import swa_utils as ember_swa  # noqa: E402

torch.set_default_dtype(torch.float32)

STEPS = 50
SHAPES = [(5, 7), (3,), ()]

# (optimizer, options): every option the issue names, alone and combined.
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.8, weight_decay=0.01, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.5), eps=1e-3, amsgrad=True, weight_decay=0.05,
                  maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, amsgrad=True, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1,
                     maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, weight_decay=0.1,
                     maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.01, t0=10, lambd=1e-3, alpha=0.5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, t0=5, maximize=True)),
]


def _case_id(case):
    name, options = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in options.items())


def _gradients(dtype, steps=STEPS, seed=1, shapes=SHAPES):
    """Per step, one gradient (or None) per parameter; the last parameter gets none on
    every third step (an optimizer skips it then)."""
    rng = np.random.default_rng(seed)
    out = []
    for step in range(steps):
        grads = [(rng.standard_normal(s) * 0.5).astype(dtype) for s in shapes]
        if dtype in (np.complex64, np.complex128):
            grads = [(g + 0.5j * rng.standard_normal(g.shape)).astype(dtype) for g in grads]
        if step % 3 == 2:
            grads[-1] = None
        out.append(grads)
    return out


def _initial(dtype, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if dtype in (np.complex64, np.complex128):
        params = [(p + 1j * rng.standard_normal(p.shape)).astype(dtype) for p in params]
    return params


def _leaves(lib, arrays):
    return [lib.tensor(a.copy(), requires_grad=True) for a in arrays]


def _set_grads(lib, params, grads):
    for p, g in zip(params, grads, strict=True):
        p.grad = None if g is None else lib.tensor(g.copy())


def _np(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return x.detach().numpy()
    return np.asarray(x)


def _tolerances(dtype):
    # float64: the same arithmetic, equal far within 1e-5 relative. float32: the same
    # operations, rounded in a different order (PyTorch's SIMD kernels use fused
    # multiply-adds), so elements that pass near zero need a small absolute tolerance.
    if dtype in (np.float64, np.complex128):
        return dict(rtol=1e-5, atol=1e-12)
    return dict(rtol=1e-5, atol=2e-5)


def _assert_state_close(e_state, t_state, tol, check_dtype=True):
    assert set(e_state) == set(t_state)
    for key, t_value in t_state.items():
        e_value = e_state[key]
        if isinstance(t_value, torch.Tensor):
            assert isinstance(e_value, ember.Tensor), key
            if check_dtype:
                assert str(e_value.dtype).replace("ember.", "") == \
                    str(t_value.dtype).replace("torch.", ""), key
            np.testing.assert_allclose(_np(e_value), _np(t_value), err_msg=key, **tol)
        else:
            assert e_value == t_value, key


def _run(lib, name, options, params, grads_seq, groups=None):
    mod = ember.optim if lib is ember else torch.optim
    param_arg = params if groups is None else groups(params)
    opt = getattr(mod, name)(param_arg, **options)
    for grads in grads_seq:
        _set_grads(lib, params, grads)
        opt.step()
    return opt


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_optimizer_matches_torch(case, dtype):
    name, options = case
    tol = _tolerances(dtype)
    init, grads = _initial(dtype), _gradients(dtype)
    e_params, t_params = _leaves(ember, init), _leaves(torch, init)
    e_opt = _run(ember, name, options, e_params, grads)
    t_opt = _run(torch, name, options, t_params, grads)
    for i, (e, t) in enumerate(zip(e_params, t_params)):
        np.testing.assert_allclose(_np(e), _np(t), err_msg=f"param {i}", **tol)
        _assert_state_close(e_opt.state[e], t_opt.state[t], tol)
    assert [g["lr"] for g in e_opt.param_groups] == [g["lr"] for g in t_opt.param_groups]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in
                                  ("SGD", "Adam", "RMSprop", "Rprop", "Adadelta", "ASGD")
                                  and len(c[1]) > 1], ids=_case_id)
def test_complex_parameters_match_torch(case):
    name, options = case
    init, grads = _initial(np.complex128), _gradients(np.complex128)
    e_params, t_params = _leaves(ember, init), _leaves(torch, init)
    _run(ember, name, options, e_params, grads)
    _run(torch, name, options, t_params, grads)
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5, atol=1e-12)


def test_param_groups_match_torch():
    def groups(params):
        return [{"params": params[:1], "lr": 0.05, "betas": (0.8, 0.99)},
                {"params": params[1:], "weight_decay": 0.1, "amsgrad": True}]

    init, grads = _initial(np.float64), _gradients(np.float64)
    e_params, t_params = _leaves(ember, init), _leaves(torch, init)
    e_opt = _run(ember, "Adam", dict(lr=0.01), e_params, grads, groups)
    t_opt = _run(torch, "Adam", dict(lr=0.01), t_params, grads, groups)
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5)
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert e_sd["param_groups"] == t_sd["param_groups"]


def test_tensor_lr_matches_torch():
    init, grads = _initial(np.float64), _gradients(np.float64)
    e_params, t_params = _leaves(ember, init), _leaves(torch, init)
    e_opt = ember.optim.Adam(e_params, lr=ember.tensor(0.01))
    t_opt = torch.optim.Adam(t_params, lr=torch.tensor(0.01))
    for g in grads:
        _set_grads(ember, e_params, g)
        _set_grads(torch, t_params, g)
        e_opt.step()
        t_opt.step()
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5)


# --- state dicts across libraries ------------------------------------------------------

def _to_ember(obj):
    if isinstance(obj, torch.Tensor):
        return ember.tensor(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return {k: _to_ember(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_ember(v) for v in obj)
    return obj


def _to_torch(obj):
    if isinstance(obj, ember.Tensor):
        return torch.tensor(obj.numpy().copy())
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_torch(v) for v in obj)
    return obj


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_torch_state_dict_continues_in_ember(case):
    name, options = case
    init, grads = _initial(np.float64), _gradients(np.float64)
    half = STEPS // 2
    t_params = _leaves(torch, init)
    t_opt = _run(torch, name, options, t_params, grads[:half])

    # ember takes over from torch's parameters and state dict ...
    e_params = _leaves(ember, [_np(t) for t in t_params])
    e_opt = getattr(ember.optim, name)(e_params, **options)
    e_opt.load_state_dict(_to_ember(t_opt.state_dict()))
    # ... and both continue with the same gradients.
    for g in grads[half:]:
        _set_grads(ember, e_params, g)
        _set_grads(torch, t_params, g)
        e_opt.step()
        t_opt.step()
    for i, (e, t) in enumerate(zip(e_params, t_params)):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5, atol=1e-12,
                                   err_msg=f"param {i}")
        # (loading casts floating-point state such as NAdam's mu_product to the
        # parameter's dtype, in PyTorch too: compare values)
        _assert_state_close(e_opt.state[e], t_opt.state[t], dict(rtol=1e-5, atol=1e-12),
                            check_dtype=False)


@pytest.mark.parametrize("name,options", [("Adam", dict(lr=0.01, amsgrad=True)),
                                          ("SGD", dict(lr=0.1, momentum=0.9)),
                                          ("NAdam", dict(lr=0.01))])
def test_ember_state_dict_continues_in_torch(name, options):
    init, grads = _initial(np.float32), _gradients(np.float32)
    half = STEPS // 2
    e_params = _leaves(ember, init)
    e_opt = _run(ember, name, options, e_params, grads[:half])
    t_params = _leaves(torch, [_np(e) for e in e_params])
    t_opt = getattr(torch.optim, name)(t_params, **options)
    t_opt.load_state_dict(_to_torch(e_opt.state_dict()))
    for g in grads[half:]:
        _set_grads(ember, e_params, g)
        _set_grads(torch, t_params, g)
        e_opt.step()
        t_opt.step()
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(_np(e), _np(t), **_tolerances(np.float32))


def test_state_dict_layout_matches_torch():
    init, grads = _initial(np.float32), _gradients(np.float32, steps=3)
    for name, options in CASES:
        e_params, t_params = _leaves(ember, init), _leaves(torch, init)
        e_sd = _run(ember, name, options, e_params, grads).state_dict()
        t_sd = _run(torch, name, options, t_params, grads).state_dict()
        assert e_sd["param_groups"] == t_sd["param_groups"], name
        assert e_sd["state"].keys() == t_sd["state"].keys(), name
        for k in t_sd["state"]:
            assert list(e_sd["state"][k]) == list(t_sd["state"][k]), (name, k)


# --- L-BFGS ------------------------------------------------------------------------------

def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2).sum() + (100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def _lbfgs(lib, x0, steps, **options):
    mod = ember.optim if lib is ember else torch.optim
    x = lib.tensor(x0.copy(), requires_grad=True)
    opt = mod.LBFGS([x], **options)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return x, opt, losses


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lbfgs_strong_wolfe_rosenbrock_matches_torch(dtype):
    x0 = np.array([-1.5, 2.0, -0.5, 1.2], dtype)
    options = dict(lr=1, max_iter=100, history_size=10, line_search_fn="strong_wolfe")
    e_x, e_opt, e_losses = _lbfgs(ember, x0, 5, **options)
    t_x, t_opt, t_losses = _lbfgs(torch, x0, 5, **options)
    # both converge to the minimum (1, ..., 1), at the same point
    np.testing.assert_allclose(_np(t_x), np.ones_like(x0), atol=1e-3)
    np.testing.assert_allclose(_np(e_x), _np(t_x), rtol=1e-5,
                               atol=1e-12 if dtype == np.float64 else 1e-4)
    if dtype == np.float64:
        # the same iterates: the same numbers of iterations and evaluations
        for key in ("n_iter", "func_evals"):
            assert e_opt.state[e_x][key] == t_opt.state[t_x][key], key
        np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5, atol=1e-12)


def test_lbfgs_fixed_step_matches_torch():
    x0 = np.array([-1.2, 1.0, 0.5], np.float64)
    options = dict(lr=0.002, max_iter=15, history_size=5)
    e_x, e_opt, _ = _lbfgs(ember, x0, 4, **options)
    t_x, t_opt, _ = _lbfgs(torch, x0, 4, **options)
    np.testing.assert_allclose(_np(e_x), _np(t_x), rtol=1e-5)
    e_state, t_state = e_opt.state[e_x], t_opt.state[t_x]
    for key in ("d", "prev_flat_grad", "H_diag"):
        np.testing.assert_allclose(_np(e_state[key]), _np(t_state[key]), rtol=1e-5)
    assert len(e_state["old_dirs"]) == len(t_state["old_dirs"])


def test_lbfgs_torch_state_dict_continues_in_ember():
    x0 = np.array([-1.2, 1.0, 0.5, 0.1], np.float64)
    options = dict(lr=1, max_iter=4, history_size=5, line_search_fn="strong_wolfe")
    t_x, t_opt, _ = _lbfgs(torch, x0, 2, **options)
    e_x = ember.tensor(_np(t_x).copy(), requires_grad=True)
    e_opt = ember.optim.LBFGS([e_x], **options)
    e_opt.load_state_dict(_to_ember(t_opt.state_dict()))
    for x, opt in ((e_x, e_opt), (t_x, t_opt)):
        def closure(x=x, opt=opt):
            opt.zero_grad()
            loss = _rosenbrock(x)
            loss.backward()
            return loss

        opt.step(closure)
    np.testing.assert_allclose(_np(e_x), _np(t_x), rtol=1e-5, atol=1e-12)


# --- learning-rate schedulers -----------------------------------------------------------

def _schedulers(mod, opt):
    """Every scheduler, by name, built on ``opt`` (schedulers of mod.lr_scheduler)."""
    S = mod.lr_scheduler
    return {
        "LambdaLR": lambda: S.LambdaLR(opt, lambda e: 0.9**e),
        "LambdaLR-list": lambda: S.LambdaLR(opt, [lambda e: 0.9**e, lambda e: 1 / (1 + e)]),
        "MultiplicativeLR": lambda: S.MultiplicativeLR(opt, lambda e: 0.95),
        "StepLR": lambda: S.StepLR(opt, step_size=7, gamma=0.5),
        "MultiStepLR": lambda: S.MultiStepLR(opt, milestones=[5, 12, 12, 30], gamma=0.3),
        "ConstantLR": lambda: S.ConstantLR(opt, factor=0.25, total_iters=8),
        "LinearLR": lambda: S.LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=20),
        "ExponentialLR": lambda: S.ExponentialLR(opt, gamma=0.93),
        "PolynomialLR": lambda: S.PolynomialLR(opt, total_iters=30, power=2.0),
        "CosineAnnealingLR": lambda: S.CosineAnnealingLR(opt, T_max=12, eta_min=0.001),
        "CosineAnnealingWarmRestarts": lambda: S.CosineAnnealingWarmRestarts(
            opt, T_0=5, T_mult=2, eta_min=0.001),
        "CyclicLR": lambda: S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                       step_size_down=6),
        "CyclicLR-triangular2": lambda: S.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.1,
                                                   step_size_up=3, mode="triangular2"),
        "CyclicLR-exp_range": lambda: S.CyclicLR(opt, base_lr=0.01, max_lr=0.1,
                                                 step_size_up=5, mode="exp_range",
                                                 gamma=0.97),
        "OneCycleLR": lambda: S.OneCycleLR(opt, max_lr=0.1, total_steps=STEPS),
        "OneCycleLR-linear-3phase": lambda: S.OneCycleLR(
            opt, max_lr=[0.1, 0.2], epochs=5, steps_per_epoch=10, anneal_strategy="linear",
            three_phase=True),
        "ReduceLROnPlateau": lambda: S.ReduceLROnPlateau(opt, patience=2, factor=0.5,
                                                         cooldown=1, min_lr=1e-4),
        "ReduceLROnPlateau-max-abs": lambda: S.ReduceLROnPlateau(
            opt, mode="max", threshold=0.05, threshold_mode="abs", patience=1),
        "SequentialLR": lambda: S.SequentialLR(
            opt, [S.LinearLR(opt, start_factor=0.1, total_iters=5),
                  S.ExponentialLR(opt, gamma=0.9),
                  S.CosineAnnealingLR(opt, T_max=10)], milestones=[5, 20]),
        "ChainedScheduler": lambda: S.ChainedScheduler(
            [S.ConstantLR(opt, factor=0.5, total_iters=4), S.ExponentialLR(opt, gamma=0.95),
             S.StepLR(opt, step_size=10, gamma=0.5)]),
        "SWALR": lambda: (mod.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=10)),
        "SWALR-linear": lambda: (mod.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=7,
                                                     anneal_strategy="linear")),
    }


SCHEDULERS = list(_schedulers(ember.optim, None))


def _metric(step):
    # a validation loss that improves, then stalls, then worsens
    return [1.0, 0.8, 0.7, 0.69, 0.69, 0.7, 0.71][step % 7] + (0.0 if step < 20 else 0.3)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_matches_torch(name, optimizer):
    init, grads = _initial(np.float64), _gradients(np.float64)
    results = {}
    for lib, mod in ((ember, ember.optim), (torch, torch.optim)):
        params = _leaves(lib, init)
        options = dict(lr=0.1, momentum=0.9) if optimizer == "SGD" else dict(lr=0.1)
        opt = getattr(mod, optimizer)([{"params": params[:1]}, {"params": params[1:]}],
                                      **options)
        sched = _schedulers(mod, opt)[name]()
        lrs, momenta = [sched.get_last_lr()], []
        for step, g in enumerate(grads):
            _set_grads(lib, params, g)
            opt.step()
            if name.startswith("ReduceLROnPlateau"):
                sched.step(_metric(step))
            else:
                sched.step()
            lrs.append(sched.get_last_lr())
            momenta.append([grp.get("momentum", grp.get("betas", (None,))[0])
                            for grp in opt.param_groups])
        results[lib.__name__] = (params, lrs, momenta, sched.state_dict())
    (e_params, e_lrs, e_mom, e_sd), (t_params, t_lrs, t_mom, t_sd) = \
        results["ember"], results["torch"]
    np.testing.assert_allclose(np.array(e_lrs, float), np.array(t_lrs, float), rtol=1e-5)
    np.testing.assert_allclose(np.array(e_mom, float), np.array(t_mom, float), rtol=1e-5)
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5, atol=1e-12)
    assert sorted(e_sd) == sorted(t_sd)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR"])
def test_closed_form_epoch_matches_torch(name):
    lrs = {}
    for lib, mod in ((ember, ember.optim), (torch, torch.optim)):
        opt = mod.SGD([lib.tensor([1.0], requires_grad=True)], lr=0.1)
        sched = _schedulers(mod, opt)[name]()
        out = []
        with pytest.warns(UserWarning):  # the epoch argument is deprecated
            for epoch in (3, 9, 4, 15, 31, 2):
                opt.step()
                sched.step(epoch)
                out.append(sched.get_last_lr())
        lrs[lib.__name__] = out
    np.testing.assert_allclose(lrs["ember"], lrs["torch"], rtol=1e-12)


def test_warm_restarts_fractional_epochs_match_torch():
    lrs = {}
    for lib, mod in ((ember, ember.optim), (torch, torch.optim)):
        opt = mod.SGD([lib.tensor([1.0], requires_grad=True)], lr=0.1)
        sched = mod.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        out = []
        for i in range(40):
            opt.step()
            sched.step(i / 4)
            out.append(sched.get_last_lr()[0])
        lrs[lib.__name__] = out
    np.testing.assert_allclose(lrs["ember"], lrs["torch"], rtol=1e-12)


def test_swa_averaged_model_matches_torch_on_parameters():
    # AveragedModel needs an nn.Module; until ember.nn lands, compare the averaging
    # functions themselves, which AveragedModel applies parameter by parameter.
    rng = np.random.default_rng(3)
    seq = [rng.standard_normal(4) for _ in range(6)]
    for e_fn, t_fn in ((ember_swa.get_swa_avg_fn(), torch.optim.swa_utils.get_swa_avg_fn()),
                       (ember_swa.get_ema_avg_fn(0.9),
                        torch.optim.swa_utils.get_ema_avg_fn(0.9))):
        e_avg, t_avg = ember.tensor(seq[0]), torch.tensor(seq[0])
        for n, x in enumerate(seq[1:], start=1):
            e_avg = e_fn(e_avg, ember.tensor(x), ember.tensor(n))
            t_avg = t_fn(t_avg, torch.tensor(x), torch.tensor(n))
        np.testing.assert_allclose(_np(e_avg), _np(t_avg), rtol=1e-12)


def test_scheduler_state_dict_from_torch_continues_in_ember():
    lrs = {}
    t_opt = torch.optim.SGD([torch.tensor([1.0], requires_grad=True)], lr=0.1, momentum=0.9)
    t_sched = torch.optim.lr_scheduler.OneCycleLR(t_opt, max_lr=0.5, total_steps=40)
    for _ in range(15):
        t_opt.step()
        t_sched.step()
    e_opt = ember.optim.SGD([ember.tensor([1.0], requires_grad=True)], lr=0.1, momentum=0.9)
    e_sched = ember_sched.OneCycleLR(e_opt, max_lr=0.5, total_steps=40)
    e_sched.load_state_dict(t_sched.state_dict())
    e_opt.load_state_dict(_to_ember(t_opt.state_dict()))
    for lib, opt, sched in (("ember", e_opt, e_sched), ("torch", t_opt, t_sched)):
        out = []
        for _ in range(20):
            opt.step()
            sched.step()
            out.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
        lrs[lib] = out
    np.testing.assert_allclose(lrs["ember"], lrs["torch"], rtol=1e-12)


@pytest.mark.parametrize("ema", [False, True])
def test_averaged_model_and_update_bn_match_torch(ema):
    rng = np.random.default_rng(0)
    models, averaged = {}, {}
    for lib in (ember, torch):
        nn = lib.nn
        models[lib] = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        swa = lib.optim.swa_utils
        kwargs = dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)) if ema else {}
        averaged[lib] = swa.AveragedModel(models[lib], **kwargs)
    init = [rng.standard_normal(tuple(p.shape)).astype(np.float32)
            for p in models[torch].parameters()]
    for step in range(4):
        for lib in (ember, torch):
            with lib.no_grad():
                for p, value in zip(models[lib].parameters(), init):
                    p.copy_(lib.tensor(value + step * 0.5))
            averaged[lib].update_parameters(models[lib])
    loader = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3)]
    for lib in (ember, torch):
        lib.optim.swa_utils.update_bn([lib.tensor(x) for x in loader], averaged[lib])
    e_sd, t_sd = averaged[ember].state_dict(), averaged[torch].state_dict()
    assert list(e_sd) == list(t_sd)
    for key in t_sd:
        np.testing.assert_allclose(_np(e_sd[key]), _np(t_sd[key]), rtol=1e-5, atol=1e-6,
                                   err_msg=key)
