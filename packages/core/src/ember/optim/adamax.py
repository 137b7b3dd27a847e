"""Adamax: Adam with the infinity norm."""

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

__all__ = ["Adamax", "adamax"]


def _check_betas_eps(betas, eps) -> None:
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Adamax(Optimizer):
    r"""Implements Adamax, a variant of Adam based on the infinity norm:

    .. math::
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad
        u_t = \max(\beta_2 u_{t-1}, |g_t| + \epsilon), \quad
        \theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t} \frac{m_t}{u_t}

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (tuple[float, float], optional): coefficients of the running average of
            the gradient and of the infinity norm (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, capturable (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:
        _check_lr(lr)
        _check_betas_eps(betas, eps)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs,
                    state_steps) -> bool:
        return self._gather(group, params_with_grad, grads,
                            {"exp_avg": exp_avgs, "exp_inf": exp_infs, "step": state_steps},
                            lambda p: {"step": _step_tensor(), "exp_avg": zeros_like(p),
                                       "exp_inf": zeros_like(p)})

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
            exp_avgs: list[Tensor] = []
            exp_infs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_infs, state_steps)
            adamax(params_with_grad, grads, exp_avgs, exp_infs, state_steps,
                   eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"],
                   has_complex=has_complex)
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2,
           lr, weight_decay) -> None:
    """Functional form of :class:`Adamax`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        clr = lr / (1 - beta1**step)
        _fused.update("adamax", param, grads[i],
                      (exp_avgs[i], exp_infs[i]), beta1, beta2, eps, weight_decay, clr,
                      maximize)


def _adamax_arrays(xp, param, grad, exp_avg, exp_inf, beta1, beta2, eps, weight_decay, clr,
                   maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    _fused.lerp_(xp, exp_avg, d, 1 - beta1)
    exp_inf *= beta2
    xp.maximum(exp_inf, xp.abs(d) + eps, out=exp_inf)
    param += (-clr) * exp_avg / exp_inf


_fused.register("adamax", _adamax_arrays)
