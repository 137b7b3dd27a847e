"""Adadelta."""

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

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    .. math::
        v_t = \rho v_{t-1} + (1-\rho) g_t^2, \quad
        \Delta x_t = \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}} g_t, \quad
        u_t = \rho u_{t-1} + (1-\rho) \Delta x_t^2, \quad
        \theta_t = \theta_{t-1} - \gamma \Delta x_t

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): coefficient that scales delta before it is
            applied to the parameters (default: 1.0)
        rho (float, optional): coefficient of the running averages (default: 0.9)
        eps (float, optional): term added to the denominator (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, capturable (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas,
                    state_steps) -> bool:
        return self._gather(group, params_with_grad, grads,
                            {"square_avg": square_avgs, "acc_delta": acc_deltas,
                             "step": state_steps},
                            lambda p: {"step": _step_tensor(), "square_avg": zeros_like(p),
                                       "acc_delta": zeros_like(p)})

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
            square_avgs: list[Tensor] = []
            acc_deltas: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs,
                                           acc_deltas, state_steps)
            adadelta(params_with_grad, grads, square_avgs, acc_deltas, state_steps,
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"],
                     has_complex=has_complex)
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize) -> None:
    """Functional form of :class:`Adadelta`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for param, grad, square_avg, acc_delta, step_t in zip(params, grads, square_avgs,
                                                          acc_deltas, state_steps):
        _increment(step_t)
        _fused.update("adadelta", param, grad, (square_avg, acc_delta),
                      lr, rho, eps, weight_decay, maximize)


def _adadelta_arrays(xp, param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay,
                     maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    square_avg *= rho
    square_avg += (1 - rho) * d * d
    delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * d
    acc_delta *= rho
    acc_delta += (1 - rho) * delta * delta
    param += (-lr) * delta


_fused.register("adadelta", _adadelta_arrays)
