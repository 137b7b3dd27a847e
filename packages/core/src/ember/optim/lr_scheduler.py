"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``.

A scheduler changes its optimizer's ``param_group["lr"]`` (and, for the cyclic ones,
its momentum) each time its :meth:`~LRScheduler.step` is called, which should be after
the optimizer's ``step``. The chainable form (each value computed from the current one)
and the closed form (``step(epoch)``) follow PyTorch's, as do the warnings for a wrong
calling order, ``get_last_lr`` and the ``state_dict`` contents.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from typing import Any

from ember.optim._lr_base import (
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    _LRScheduler,
    _param_groups_val_list,
    _update_param_group_val,
    _warn_get_lr_called_within_step,
)
from ember.optim._lr_cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ember.optim.optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]


def _lambdas_state_dict(scheduler, state_dict):
    # Only callable objects' attributes are saved, not functions or lambdas.
    state_dict["lr_lambdas"] = [None] * len(scheduler.lr_lambdas)
    for idx, fn in enumerate(scheduler.lr_lambdas):
        if not isinstance(fn, types.FunctionType):
            state_dict["lr_lambdas"][idx] = fn.__dict__.copy()
    return state_dict


def _lambdas_load_state_dict(scheduler, state_dict) -> None:
    lr_lambdas = state_dict.pop("lr_lambdas")
    scheduler.__dict__.update(state_dict)
    state_dict["lr_lambdas"] = lr_lambdas  # restore the caller's dict
    for idx, fn in enumerate(lr_lambdas):
        if fn is not None:
            scheduler.lr_lambdas[idx].__dict__.update(fn)


def _lambdas(optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """Sets each group's learning rate to its initial one times a function of the epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (function or list): a function of the epoch giving the factor, or one
            such function per parameter group.
        last_epoch (int): the index of the last epoch (default: -1).

    Example::

        >>> scheduler = LambdaLR(optimizer, lr_lambda=lambda epoch: 0.95**epoch)
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; of the lambdas, only callable objects' ``__dict__``."""
        state_dict = {key: value for key, value in self.__dict__.items()
                      if key not in ("optimizer", "lr_lambdas")}
        return _lambdas_state_dict(self, state_dict)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _lambdas_load_state_dict(self, state_dict)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(LRScheduler):
    """Multiplies each group's learning rate by a function of the epoch at every step.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (function or list): a function of the epoch giving the factor, or one
            such function per parameter group.
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; of the lambdas, only callable objects' ``__dict__``."""
        state_dict = {key: value for key, value in self.__dict__.items()
                      if key not in ("optimizer", "lr_lambdas")}
        return _lambdas_state_dict(self, state_dict)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _lambdas_load_state_dict(self, state_dict)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if not self._is_initial:
            return [group["lr"] * lmbda(self.last_epoch)
                    for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return _param_groups_val_list(self.optimizer, "lr")


class StepLR(LRScheduler):
    """Decays each group's learning rate by ``gamma`` every ``step_size`` epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        step_size (int): period of the decay.
        gamma (float): multiplicative factor of the decay (default: 0.1).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if (self.last_epoch == 0) or (self.last_epoch % self.step_size != 0):
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Decays each group's learning rate by ``gamma`` at each of the milestones.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        milestones (list): epoch indices (a milestone given twice decays twice).
        gamma (float): multiplicative factor of the decay (default: 0.1).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiplies each group's learning rate by ``factor`` until epoch ``total_iters``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        factor (float): the factor, in [0, 1] (default: 1/3).
        total_iters (int): the number of epochs it lasts (default: 5).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.factor
                           + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Changes each group's learning rate linearly from ``start_factor`` times the initial
    one to ``end_factor`` times it over ``total_iters`` epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        start_factor (float): the factor at the first epoch, in (0, 1] (default: 1/3).
        end_factor (float): the factor at the end, in [0, 1] (default: 1.0).
        total_iters (int): the number of epochs it takes (default: 5).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 + (self.end_factor - self.start_factor)
                               / (self.total_iters * self.start_factor
                                  + (self.last_epoch - 1)
                                  * (self.end_factor - self.start_factor)))
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Decays each group's learning rate by ``gamma`` every epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        gamma (float): multiplicative factor of the decay.
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


def _check_schedulers(name: str, optimizer, schedulers) -> None:
    for scheduler_idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {scheduler_idx} should have `optimizer` as its "
                            "attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{scheduler_idx} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {scheduler_idx} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}.")


def _schedulers_state_dict(scheduler) -> dict[str, Any]:
    state_dict = {key: value for key, value in scheduler.__dict__.items()
                  if key not in ("optimizer", "_schedulers")}
    state_dict["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state_dict


def _schedulers_load_state_dict(scheduler, state_dict) -> None:
    _schedulers = state_dict.pop("_schedulers")
    scheduler.__dict__.update(state_dict)
    state_dict["_schedulers"] = _schedulers  # restore the caller's dict
    for idx, s in enumerate(_schedulers):
        scheduler._schedulers[idx].load_state_dict(s)


class SequentialLR(LRScheduler):
    """Runs schedulers one after the other, switching at the milestones.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        schedulers (list): the schedulers, in order.
        milestones (list): the epochs at which the next scheduler takes over (one fewer
            than the schedulers).
        last_epoch (int): the index of the last epoch (default: -1).

    Example::

        >>> warmup = ConstantLR(optimizer, factor=0.1, total_iters=2)
        >>> decay = ExponentialLR(optimizer, gamma=0.9)
        >>> scheduler = SequentialLR(optimizer, schedulers=[warmup, decay], milestones=[2])
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list,
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but "
                             "got no scheduler.")
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer

        # Undo the steps the schedulers took when they were created, then start the
        # first one again.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Undo the initial step of every (nested) scheduler."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Step the scheduler in charge of the current epoch."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with each wrapped scheduler's state dict."""
        return _schedulers_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _schedulers_load_state_dict(self, state_dict)


class PolynomialLR(LRScheduler):
    """Decays each group's learning rate with a polynomial of the given ``power`` to zero
    over ``total_iters`` epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        total_iters (int): the number of epochs of the decay (default: 5).
        power (float): the power of the polynomial (default: 1.0).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneals each group's learning rate along a cosine from its initial value to
    ``eta_min`` over ``T_max`` epochs (and back up, periodically, past them):

    .. math::
        \eta_t = \eta_{min} + \frac{1}{2}(\eta_{max} - \eta_{min})
        \left(1 + \cos\left(\frac{T_{cur}}{T_{max}}\pi\right)\right)

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_max (int): the number of epochs of half a period.
        eta_min (float): the minimal learning rate (default: 0.0).
        last_epoch (int): the index of the last epoch (default: -1).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ChainedScheduler(LRScheduler):
    """Steps several schedulers together, at every step: their effects multiply.

    Args:
        schedulers (sequence): the schedulers.
        optimizer (Optimizer, optional): their optimizer (default: the first one's).
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every scheduler."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with each wrapped scheduler's state dict."""
        return _schedulers_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _schedulers_load_state_dict(self, state_dict)


class ReduceLROnPlateau(LRScheduler):
    """Reduces each group's learning rate by ``factor`` when a metric has stopped
    improving for ``patience`` epochs; ``step(metric)`` takes the metric.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        mode (str): ``"min"`` (the metric should decrease) or ``"max"`` (default: "min").
        factor (float): the factor of the reduction, < 1 (default: 0.1).
        patience (int): the number of epochs without improvement tolerated (default: 10).
        threshold (float): the least change that counts as an improvement
            (default: 1e-4).
        threshold_mode (str): ``"rel"`` or ``"abs"`` (default: "rel").
        cooldown (int): epochs to wait after a reduction before counting again
            (default: 0).
        min_lr (float or list): a lower bound on the learning rate, or one per group
            (default: 0).
        eps (float): a reduction smaller than this is not made (default: 1e-8).

    Example::

        >>> scheduler = ReduceLROnPlateau(optimizer, "min")
        >>> for epoch in range(10):
        ...     train(...)
        ...     scheduler.step(validate(...))
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        """Record the epoch's metric and reduce the learning rates if it has not improved
        for ``patience`` epochs."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch

        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1

        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # ignore any bad epochs in cooldown

        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0

        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    "to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, param_group in enumerate(self.optimizer.param_groups):
            old_lr = float(param_group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(param_group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


# Defined in private modules, presented (and pickled) under this one.
for _cls in (LRScheduler, _LRScheduler, CyclicLR, CosineAnnealingWarmRestarts, OneCycleLR):
    _cls.__module__ = __name__
del _cls
