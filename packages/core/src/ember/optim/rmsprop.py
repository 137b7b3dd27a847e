"""RMSprop, optionally centered and with momentum."""

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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""Implements RMSprop.

    .. math::
        v_t = \alpha v_{t-1} + (1-\alpha) g_t^2, \quad
        \theta_t = \theta_{t-1} - \gamma \frac{g_t}{\sqrt{v_t} + \epsilon}

    Centered, :math:`\sqrt{v_t - \bar g_t^2}` replaces :math:`\sqrt{v_t}` (with
    :math:`\bar g_t` the running average of the gradient); with momentum,
    :math:`b_t = \mu b_{t-1} + g_t / (\sqrt{\cdot} + \epsilon)` and
    :math:`\theta_t = \theta_{t-1} - \gamma b_t`.

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional): normalize by the estimated variance of the gradient
            (default: False)
        capturable, foreach (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "momentum": 0, "centered": False, "foreach": None, "maximize": False,
        "differentiable": False, "capturable": False
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps) -> bool:
        momentum, centered = group["momentum"] > 0, group["centered"]
        states = {"square_avg": square_avgs, "step": state_steps}
        if momentum:
            states["momentum_buffer"] = momentum_buffer_list
        if centered:
            states["grad_avg"] = grad_avgs

        def init(p):
            state = {"step": _step_tensor(), "square_avg": zeros_like(p)}
            if momentum:
                state["momentum_buffer"] = zeros_like(p)
            if centered:
                state["grad_avg"] = zeros_like(p)
            return state

        return self._gather(group, params_with_grad, grads, states, init)

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
            grad_avgs: list[Tensor] = []
            momentum_buffer_list: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs,
                                           momentum_buffer_list, grad_avgs, state_steps)
            rmsprop(params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list,
                    state_steps, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], maximize=group["maximize"],
                    has_complex=has_complex)
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered) -> None:
    """Functional form of :class:`RMSprop`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        _increment(state_steps[i])
        grad_avg = grad_avgs[i] if centered else None
        buf = momentum_buffer_list[i] if momentum > 0 else None
        _fused.update("rmsprop", param, grads[i],
                      (square_avgs[i], grad_avg, buf), lr, alpha, eps, weight_decay,
                      momentum, maximize)


def _rmsprop_arrays(xp, param, grad, square_avg, grad_avg, momentum_buffer, lr, alpha, eps,
                    weight_decay, momentum, maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    square_avg *= alpha
    square_avg += (1 - alpha) * d * d
    if grad_avg is not None:
        _fused.lerp_(xp, grad_avg, d, 1 - alpha)
        avg = xp.sqrt(square_avg - grad_avg * grad_avg)
    else:
        avg = xp.sqrt(square_avg)
    avg += eps
    if momentum > 0:
        momentum_buffer *= momentum
        momentum_buffer += d / avg
        param += (-lr) * momentum_buffer
    else:
        param += (-lr) * d / avg


_fused.register("rmsprop", _rmsprop_arrays)
