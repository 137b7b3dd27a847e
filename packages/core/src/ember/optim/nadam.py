"""NAdam: Adam with Nesterov momentum."""

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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""Implements NAdam (Adam with Nesterov momentum and a momentum schedule).

    With :math:`\mu_t = \beta_1 (1 - 0.5 \cdot 0.96^{t\psi})` (:math:`\psi` the
    ``momentum_decay``) and :math:`\hat v_t = v_t / (1-\beta_2^t)`:

    .. math::
        \theta_t = \theta_{t-1}
        - \gamma \frac{\mu_{t+1} m_t}{(1-\prod_{i\le t+1}\mu_i)(\sqrt{\hat v_t}+\epsilon)}
        - \gamma \frac{(1-\mu_t) g_t}{(1-\prod_{i\le t}\mu_i)(\sqrt{\hat v_t}+\epsilon)}

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of
            the gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (default: 0)
        momentum_decay (float, optional): momentum decay :math:`\psi` (default: 4e-3)
        decoupled_weight_decay (bool, optional): AdamW-style weight decay, which makes
            this NAdamW (default: False)
        foreach, capturable (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:
        _check_lr(lr)
        _check_betas_eps(betas, eps)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
        "decoupled_weight_decay": False
    }
    _counter_keys = ("step", "mu_product")

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    mu_products, state_steps) -> bool:
        return self._gather(group, params_with_grad, grads,
                            {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs,
                             "mu_product": mu_products, "step": state_steps},
                            lambda p: {"step": _step_tensor(), "mu_product": _step_tensor(1.0),
                                       "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)})

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
            mu_products: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, mu_products, state_steps)
            nadam(params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                  beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  has_complex=has_complex)
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps) -> None:
    """Functional form of :class:`NAdam`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if not all(isinstance(t, Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        bias_correction2 = 1 - beta2**step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # The product of the momenta is kept in the counters' dtype, as PyTorch does.
        mu_product = mu_products[i]
        mu_product._data *= mu  # in the counter's dtype (a weak Python scalar)
        mu_product._bump_version()
        mu_product_value = float(mu_product._data)
        mu_product_next = mu_product_value * mu_next
        grad_coef = -lr * (1.0 - mu) / (1.0 - mu_product_value)
        avg_coef = (-lr * mu_next) / (1.0 - mu_product_next)
        _fused.update("nadam", param, grads[i],
                      (exp_avgs[i], exp_avg_sqs[i]), beta1, beta2, eps, weight_decay, lr,
                      decoupled_weight_decay, bias_correction2, grad_coef, avg_coef,
                      maximize)


def _nadam_arrays(xp, param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay, lr,
                  decoupled_weight_decay, bias_correction2, grad_coef, avg_coef,
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
    denom = xp.sqrt(exp_avg_sq / bias_correction2) + eps
    param += grad_coef * d / denom
    param += avg_coef * exp_avg / denom


_fused.register("nadam", _nadam_arrays)
