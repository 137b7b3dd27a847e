"""Stochastic weight averaging and exponential moving averages of models.

:class:`AveragedModel` keeps a running average (SWA) or an exponential moving average
(EMA) of a model's parameters, :func:`update_bn` recomputes batch-norm statistics for
averaged weights, and :class:`SWALR` anneals the learning rate to a constant for SWA.
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any

from ember._dtype import int64
from ember._ops.creation import tensor as _tensor
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.batchnorm import _BatchNorm
from ember.nn.modules.module import Module
from ember.optim._lr_base import LRScheduler, _format_param

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]


def _is_float_or_complex(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """An EMA update of lists of parameters in place:
    ``ema = decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _is_float_or_complex(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """A running-average (SWA) update of lists of parameters in place."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _is_float_or_complex(averaged_param_list[0]):
            weight = 1 / (float(num_averaged) + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.copy_(p_avg + diff / (num_averaged + 1))
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA of one parameter: returns ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running average of one parameter: returns
    ``averaged + (current - averaged) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    r"""Keeps an average of a model's parameters: Stochastic Weight Averaging (SWA) by
    default, an exponential moving average (EMA) with ``multi_avg_fn=
    get_ema_multi_avg_fn(decay)``, or any average through ``avg_fn`` / ``multi_avg_fn``.

    The average lives in a deep copy of the model, ``self.module``; calling the averaged
    model calls it. :meth:`update_parameters` folds in the model's current parameters
    (its buffers too with ``use_buffers=True``; otherwise they are copied).

    Args:
        model (Module): the model to average.
        device (device, optional): where to keep the average (default: the model's).
        avg_fn (function, optional): ``avg_fn(averaged, current, num_averaged)`` returning
            the new average of one parameter.
        multi_avg_fn (function, optional): ``multi_avg_fn(averaged_list, current_list,
            num_averaged)`` updating lists of parameters in place.
        use_buffers (bool): average the buffers too, rather than copying them
            (default: False).

    Example::

        >>> swa_model = AveragedModel(model)
        >>> ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        >>> for input, target in loader:
        ...     ...
        ...     optimizer.step()
        ...     swa_model.update_parameters(model)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Run the averaged model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into
        the average; the first call copies them."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers())
                      if self.use_buffers else self.module.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers())
                       if self.use_buffers else model.parameters())
        with no_grad():
            self_param_detached: list[Tensor] = []
            model_param_detached: list[Tensor] = []
            copy_param = bool(self.n_averaged == 0)
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_param_detached.append(p_averaged.detach())
                model_param_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)

            if self.n_averaged > 0:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    self._update_groups(self_param_detached, model_param_detached)
                else:
                    for p_averaged, p_model in zip(self_param_detached, model_param_detached):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.detach().copy_(
                            self.avg_fn(p_averaged.detach(), p_model, n_averaged))

            if not self.use_buffers:
                # The buffers are not averaged: keep the model's.
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.add_(1)

    def _update_groups(self, self_params, model_params) -> None:
        # By device and dtype, as PyTorch's grouped (foreach) update.
        groups: dict[Any, tuple[list, list]] = {}
        for p_avg, p_model in zip(self_params, model_params):
            key = (str(p_avg.device), p_avg.dtype)
            groups.setdefault(key, ([], []))
            groups[key][0].append(p_avg)
            groups[key][1].append(p_model)
        for (device, _), (averaged, current) in groups.items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, n_averaged)
            elif device.startswith("cuda"):
                get_swa_multi_avg_fn()(averaged, current, n_averaged)
            else:
                # PyTorch's CPU path: the one-parameter formula, parameter by parameter.
                avg_fn = get_swa_avg_fn()
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(avg_fn(p_avg, p_model, n_averaged))


def _is_batchnorm(module) -> bool:
    return isinstance(module, _BatchNorm)


def update_bn(loader, model, device=None) -> None:
    r"""Recompute the running statistics of the batch-norm layers of ``model`` with one
    pass over ``loader`` (for weights averaged by :class:`AveragedModel`, whose
    statistics are not averages of anything).

    Args:
        loader (iterable): batches (the first element of a list or tuple batch is the
            input).
        model (Module): the model whose batch-norm statistics to update.
        device (device, optional): moves each input there first.

    Example::

        >>> update_bn(loader, swa_model)
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if _is_batchnorm(module):
                module.reset_running_stats()
                momenta[module] = module.momentum

        if not momenta:
            return

        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None  # a cumulative average over the pass

        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)

        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneals each group's learning rate to a constant ``swa_lr`` over ``anneal_epochs``
    epochs (cosine or linear), then keeps it: the schedule for SWA.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        swa_lr (float or list): the SWA learning rate, per group.
        anneal_epochs (int): the number of epochs of the annealing (default: 10).
        anneal_strategy (str): ``"cos"`` or ``"linear"`` (default: "cos").
        last_epoch (int): the index of the last epoch (default: -1).

    Example::

        >>> swa_scheduler = SWALR(optimizer, anneal_strategy="linear", anneal_epochs=5,
        ...                       swa_lr=0.05)
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state (without the annealing function itself)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
