"""RAdam: Adam with a rectified adaptive learning rate."""

from __future__ import annotations

from ember._ops.creation import zeros_like
from ember._tensor import Tensor
from ember.optim import _fused
from ember.optim.adamax import _check_betas_eps
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

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""Implements RAdam (Rectified Adam).

    Adam's update, scaled by the variance rectification term :math:`r_t` while the
    length of the approximated simple moving average :math:`\rho_t` exceeds 5, and a
    plain bias-corrected momentum step before that.

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of
            the gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (default: 0)
        decoupled_weight_decay (bool, optional): AdamW-style weight decay, which makes
            this RAdamW (default: False)
        foreach, capturable (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:
        _check_lr(lr)
        _check_betas_eps(betas, eps)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "foreach": None, "maximize": False, "differentiable": False,
        "decoupled_weight_decay": False, "capturable": False
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    state_steps) -> bool:
        return self._gather(group, params_with_grad, grads,
                            {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs,
                             "step": state_steps},
                            lambda p: {"step": _step_tensor(), "exp_avg": zeros_like(p),
                                       "exp_avg_sq": zeros_like(p)})

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
            exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, state_steps)
            radam(params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  has_complex=has_complex)
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps) -> None:
    """Functional form of :class:`RAdam`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rect = None
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        _fused.update("radam", param, grads[i],
                      (exp_avgs[i], exp_avg_sqs[i]), beta1, beta2, eps, weight_decay, lr,
                      decoupled_weight_decay, bias_correction1, bias_correction2**0.5,
                      rect, maximize)


def _radam_arrays(xp, param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay, lr,
                  decoupled_weight_decay, bias_correction1, bias_correction2_sqrt, rect,
                  maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            d = d + weight_decay * param
    _fused.lerp_(xp, exp_avg, d, 1 - beta1)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * d * d
    update = exp_avg / bias_correction1 * lr
    if rect is not None:
        update = update * (bias_correction2_sqrt / (xp.sqrt(exp_avg_sq) + eps)) * rect
    param -= update


_fused.register("radam", _radam_arrays)
