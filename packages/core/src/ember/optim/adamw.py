"""AdamW: Adam with decoupled weight decay."""

from __future__ import annotations

from ember.optim.adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm: :class:`Adam` with decoupled weight decay (the
    parameter is scaled by :math:`1-\gamma\lambda` before the Adam update, instead of
    :math:`\lambda\theta` being added to the gradient).

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of
            the gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability
            (default: 1e-8)
        weight_decay (float, optional): weight decay coefficient (default: 1e-2)
        amsgrad (bool, optional): use the AMSGrad variant (default: False)
        maximize (bool, optional): maximize the objective (default: False)
        foreach, capturable, fused (bool, optional): accepted for compatibility
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
          capturable=False, differentiable=False, fused=None, grad_scale=None,
          found_inf=None, has_complex=False, *, amsgrad, beta1, beta2, lr, weight_decay,
          eps, maximize) -> None:
    """Functional form of :class:`AdamW`."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
         foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
         grad_scale=grad_scale, found_inf=found_inf, has_complex=has_complex,
         amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
         eps=eps, maximize=maximize, decoupled_weight_decay=True)
