"""ember.optim.lr_scheduler without PyTorch: each scheduler's learning rates against its
closed form, the calling-order warnings, state dicts, and the composite schedulers.

(tests/interop/test_optim_torch.py compares every scheduler with PyTorch's, step by step.)
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.optim import SGD, Adam
from ember.optim import lr_scheduler as S


def _optimizer(lr=0.1, groups=1, cls=SGD, **options):
    params = [{"params": [ember.tensor([1.0], requires_grad=True)]} for _ in range(groups)]
    return cls(params, lr=lr, **options)


def _lrs(opt, sched, steps, metric=None):
    """The learning rates before the first step and after each step (group 0)."""
    out = [sched.get_last_lr()[0]]
    for i in range(steps):
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric(i))
        out.append(sched.get_last_lr()[0])
        assert opt.param_groups[0]["lr"] == out[-1]
    return out


# (scheduler factory, closed form of the learning rate at epoch e for base lr 0.1)
CLOSED_FORMS = {
    "LambdaLR": (lambda o: S.LambdaLR(o, lambda e: 1 / (1 + e)), lambda e: 0.1 / (1 + e)),
    "MultiplicativeLR": (lambda o: S.MultiplicativeLR(o, lambda e: 0.9),
                         lambda e: 0.1 * 0.9**e),
    "StepLR": (lambda o: S.StepLR(o, step_size=3, gamma=0.5), lambda e: 0.1 * 0.5 ** (e // 3)),
    "MultiStepLR": (lambda o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
                    lambda e: 0.1 * 0.1 ** ((e >= 2) + 2 * (e >= 5))),
    "ConstantLR": (lambda o: S.ConstantLR(o, factor=0.5, total_iters=4),
                   lambda e: 0.05 if e < 4 else 0.1),
    "LinearLR": (lambda o: S.LinearLR(o, start_factor=0.2, end_factor=1.0, total_iters=4),
                 lambda e: 0.1 * (0.2 + 0.8 * min(e, 4) / 4)),
    "ExponentialLR": (lambda o: S.ExponentialLR(o, gamma=0.8), lambda e: 0.1 * 0.8**e),
    "PolynomialLR": (lambda o: S.PolynomialLR(o, total_iters=6, power=2.0),
                     lambda e: 0.1 * (1 - min(e, 6) / 6) ** 2),
    "CosineAnnealingLR": (lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
                          lambda e: 0.01 + 0.09 * (1 + math.cos(math.pi * e / 5)) / 2),
    "CosineAnnealingWarmRestarts": (
        lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.0),
        # periods of 3, 6, 12 epochs
        lambda e: 0.05 * (1 + math.cos(math.pi * (e if e < 3 else e - 3 if e < 9 else e - 9)
                                       / (3 if e < 3 else 6 if e < 9 else 12)))),
}


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_chainable_form_follows_the_closed_form(name):
    make, closed = CLOSED_FORMS[name]
    opt = _optimizer()
    lrs = _lrs(opt, make(opt), 14)
    np.testing.assert_allclose(lrs, [closed(e) for e in range(15)], rtol=1e-12, atol=1e-15)


def test_cosine_annealing_goes_back_up_after_t_max():
    opt = _optimizer()
    lrs = _lrs(opt, S.CosineAnnealingLR(opt, T_max=4), 12)
    expected = [0.05 * (1 + math.cos(math.pi * e / 4)) for e in range(13)]
    np.testing.assert_allclose(lrs, expected, atol=1e-12)


def test_groups_get_their_own_rates():
    opt = SGD([{"params": [ember.tensor([1.0], requires_grad=True)], "lr": 1.0},
               {"params": [ember.tensor([1.0], requires_grad=True)], "lr": 0.5}], lr=0.1)
    sched = S.LambdaLR(opt, [lambda e: 0.5**e, lambda e: e + 1])
    for _ in range(3):
        opt.step()
        sched.step()
    assert sched.get_last_lr() == [0.125, 2.0]
    assert [g["initial_lr"] for g in opt.param_groups] == [1.0, 0.5]
    assert sched.base_lrs == [1.0, 0.5]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [lambda e: 1.0])


def test_calling_order_warnings():
    opt = _optimizer()
    sched = S.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                         "`optimizer.step\\(\\)`"):
        sched.step()
    opt = _optimizer()
    sched = S.StepLR(opt, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()  # the right order: no warning
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
    opt = _optimizer()
    sched = S.StepLR(opt, step_size=1)
    opt.step = lambda closure=None: None  # replaced after the scheduler was made
    with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
        sched.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(5)


def test_epoch_argument_uses_the_closed_form():
    opt = _optimizer()
    sched = S.StepLR(opt, step_size=2, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning):
        sched.step(7)
    assert sched.get_last_lr() == [0.1 * 0.5**3] and sched.last_epoch == 7


def test_resuming_needs_initial_lr():
    opt = _optimizer()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                       "param_groups\\[0\\]"):
        S.StepLR(opt, step_size=2, last_epoch=3)
    S.StepLR(opt, step_size=2)
    S.StepLR(opt, step_size=2, last_epoch=3)  # now the groups carry it


def test_scheduler_errors():
    opt = _optimizer()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        S.StepLR([], step_size=1)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected"):
        S.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected"):
        S.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected"):
        S.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        S.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode maximum is unknown!"):
        S.ReduceLROnPlateau(opt, mode="maximum")
    with pytest.raises(ValueError, match="threshold mode relative is unknown!"):
        S.ReduceLROnPlateau(opt, threshold_mode="relative")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        S.ReduceLROnPlateau(opt, min_lr=[0, 0])
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.CyclicLR(_optimizer(cls=ember.optim.Adagrad), base_lr=0.1, max_lr=1.0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        S.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as "
                                         "optimizer.param_groups"):
        S.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10)
    sched = S.OneCycleLR(_optimizer(), max_lr=1.0, total_steps=2)
    sched.optimizer.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of "
                                         "total steps is 2"):
        sched.step()


def test_reduce_lr_on_plateau():
    opt = _optimizer(lr=1.0)
    sched = S.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1, min_lr=0.2)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]
    lrs = _lrs(opt, sched, len(metrics), metric=lambda i: metrics[i])
    # bad epochs at 2, 3 -> reduce after epoch 3 (4 steps), cooldown 1, then again ...
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2]
    assert sched.best == 0.9
    sched2 = S.ReduceLROnPlateau(_optimizer(lr=1.0), mode="max", threshold=0.1,
                                 threshold_mode="abs", patience=0)
    sched2.step(1.0)
    sched2.step(1.05)  # not better by 0.1: reduce
    assert sched2.get_last_lr() == [0.1]
    state = sched.state_dict()
    assert state["best"] == 0.9 and "optimizer" not in state


def test_cyclic_lr_triangular_and_momentum():
    opt = _optimizer(lr=0.5, momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, step_size_down=2,
                       base_momentum=0.8, max_momentum=0.9)
    lrs, momenta = [sched.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
    for _ in range(8):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
    np.testing.assert_allclose(lrs, [0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1])
    np.testing.assert_allclose(momenta, [0.9, 0.85, 0.8, 0.85, 0.9, 0.85, 0.8, 0.85, 0.9])
    # Adam: the momentum is beta1
    opt = _optimizer(cls=Adam)
    S.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)


def test_cyclic_lr_triangular2_halves_each_cycle():
    opt = _optimizer()
    sched = S.CyclicLR(opt, base_lr=0.0, max_lr=1.0, step_size_up=1, mode="triangular2",
                       cycle_momentum=False)
    assert _lrs(opt, sched, 6) == pytest.approx([0.0, 1.0, 0.0, 0.5, 0.0, 0.25, 0.0])


def test_one_cycle():
    opt = _optimizer(momentum=0.9)
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=11, pct_start=0.5,
                         anneal_strategy="linear", div_factor=10, final_div_factor=100)
    lrs = _lrs(opt, sched, 10)
    # up from 0.1 to 1.0 in 4.5 steps, then down to 0.001 by step 10
    up = [0.1 + 0.9 * e / 4.5 for e in range(5)]
    down = [1.0 + (0.001 - 1.0) * (e - 4.5) / 5.5 for e in range(5, 11)]
    np.testing.assert_allclose(lrs, up + down, rtol=1e-12)
    assert opt.param_groups[0]["max_lr"] == 1.0 and opt.param_groups[0]["min_lr"] == 0.001


def test_sequential_lr():
    opt = _optimizer()
    warmup = S.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = S.ExponentialLR(opt, gamma=0.5)
    sched = S.SequentialLR(opt, [warmup, decay], milestones=[3])
    lrs = _lrs(opt, sched, 6)
    np.testing.assert_allclose(lrs, [0.05, 0.075, 0.1, 0.1, 0.05, 0.025, 0.0125])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one "
                                         "more than the number of milestone points"):
        S.SequentialLR(opt, [warmup, decay], milestones=[])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.SequentialLR(opt, [warmup, S.ReduceLROnPlateau(opt)], milestones=[2])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                         "optimizer"):
        S.SequentialLR(opt, [warmup, S.StepLR(_optimizer(), 2)], milestones=[2])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        S.SequentialLR(opt, [], milestones=[])


def test_chained_scheduler_multiplies():
    opt = _optimizer()
    sched = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
                                S.ExponentialLR(opt, gamma=0.9)])
    lrs = _lrs(opt, sched, 4)
    np.testing.assert_allclose(lrs, [0.05 * 0.9**0, 0.05 * 0.9, 0.1 * 0.81, 0.1 * 0.729,
                                     0.1 * 0.6561])
    sd = sched.state_dict()
    assert len(sd["_schedulers"]) == 2 and "optimizer" not in sd


def test_state_dict_round_trip():
    class Factor:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate**epoch

    opt = _optimizer()
    fn = Factor()
    sched = S.LambdaLR(opt, fn)
    for _ in range(3):
        opt.step()
        sched.step()
    sd = pickle.loads(pickle.dumps(sched.state_dict()))
    assert sd["lr_lambdas"] == [{"rate": 0.5}] and sd["last_epoch"] == 3

    opt2 = _optimizer()
    fn2 = Factor()
    fn2.rate = 0.1
    sched2 = S.LambdaLR(opt2, fn2)
    sched2.load_state_dict(sd)
    assert fn2.rate == 0.5 and sched2.last_epoch == 3
    opt2.step()
    sched2.step()
    assert sched2.get_last_lr() == [0.1 * 0.5**4]

    # the composite ones save their schedulers' states
    opt3 = _optimizer()
    seq = S.SequentialLR(opt3, [S.ConstantLR(opt3, factor=0.5, total_iters=2),
                                S.StepLR(opt3, step_size=2)], milestones=[2])
    _lrs(opt3, seq, 3)
    opt4 = _optimizer()
    seq2 = S.SequentialLR(opt4, [S.ConstantLR(opt4, factor=0.5, total_iters=2),
                                 S.StepLR(opt4, step_size=2)], milestones=[2])
    seq2.load_state_dict(pickle.loads(pickle.dumps(seq.state_dict())))
    assert seq2.last_epoch == seq.last_epoch
    assert seq2._schedulers[1].last_epoch == seq._schedulers[1].last_epoch


def test_tensor_learning_rate_is_updated_in_place():
    lr = ember.tensor(0.1)
    opt = SGD([ember.tensor([1.0], requires_grad=True)], lr=lr)
    sched = S.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)
    assert isinstance(sched.get_last_lr()[0], ember.Tensor)


@settings(max_examples=30, deadline=None)
@given(gamma=st.floats(0.1, 1.0), step_size=st.integers(1, 6), steps=st.integers(1, 25))
def test_step_lr_hypothesis(gamma, step_size, steps):
    opt = _optimizer(lr=1.0)
    lrs = _lrs(opt, S.StepLR(opt, step_size=step_size, gamma=gamma), steps)
    np.testing.assert_allclose(lrs, [gamma ** (e // step_size) for e in range(steps + 1)],
                               rtol=1e-9)
