"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from ember._ops.creation import zeros_like
from ember._tensor import Tensor
from ember.optim import _fused
from ember.optim.optimizer import (
    Optimizer,
    _check_lr,
    _evaluate_closure,
    _increment,
    _reject_differentiable,
    _step_tensor,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Implements averaged stochastic gradient descent.

    .. math::
        \theta_t = (1 - \lambda\eta_t)\theta_{t-1} - \eta_t g_t, \quad
        \bar\theta_t = \bar\theta_{t-1} + \mu_t (\theta_t - \bar\theta_{t-1})

    with :math:`\eta_{t+1} = \gamma / (1 + \lambda\gamma t)^\alpha` and
    :math:`\mu_{t+1} = 1 / \max(1, t - t_0)`; the average is ``state["ax"]``.

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lambd (float, optional): decay term (default: 1e-4)
        alpha (float, optional): power for the eta update (default: 0.75)
        t0 (float, optional): point at which to start averaging (default: 1e6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, capturable (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False,
                 capturable=False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False
    }
    _counter_keys = ("step", "eta", "mu")

    def _init_group(self, group, params_with_grad, grads, mus, axs, etas,
                    state_steps) -> bool:
        return self._gather(group, params_with_grad, grads,
                            {"mu": mus, "ax": axs, "eta": etas, "step": state_steps},
                            lambda p: {"step": _step_tensor(),
                                       "eta": _step_tensor(_to_scalar(group["lr"])),
                                       "mu": _step_tensor(1.0), "ax": zeros_like(p)})

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): a closure that reevaluates the model and
                returns the loss.
        """
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            mus: list[Tensor] = []
            axs: list[Tensor] = []
            etas: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_complex = self._init_group(group, params_with_grad, grads, mus, axs, etas,
                                           state_steps)
            asgd(params_with_grad, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                 lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"],
                 has_complex=has_complex)
        return loss


def _set_scalar(t: Tensor, value: float) -> None:
    t._data[...] = value  # rounded to the counter's dtype
    t._bump_version()


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay) -> None:
    """Functional form of :class:`ASGD`."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        eta, mu = etas[i], mus[i]
        _fused.update("asgd", param, grads[i], (axs[i],),
                      float(eta._data), lambd, float(mu._data), weight_decay, maximize)
        _set_scalar(eta, lr / ((1 + lambd * lr * step) ** alpha))
        _set_scalar(mu, 1 / max(1, step - t0))


def _asgd_arrays(xp, param, grad, ax, eta, lambd, mu, weight_decay, maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    param *= 1 - lambd * eta
    param += (-eta) * d
    if mu != 1:
        ax += (param - ax) * mu
    else:
        ax[...] = param


_fused.register("asgd", _asgd_arrays)
