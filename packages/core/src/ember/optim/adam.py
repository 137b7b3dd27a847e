"""Adam, with AMSGrad and decoupled (AdamW) weight decay."""

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

__all__ = ["Adam", "adam"]


def _check_betas(betas, capturable, foreach) -> None:
    if not 0.0 <= _to_scalar(betas[0]) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= _to_scalar(betas[1]) < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if betas[i].numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


class Adam(Optimizer):
    r"""Implements the Adam algorithm.

    With :math:`g_t` the gradient (negated when ``maximize``, plus
    :math:`\lambda\theta_{t-1}` for L2 weight decay):

    .. math::
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad
        v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2, \quad
        \theta_t = \theta_{t-1} - \gamma \frac{m_t / (1-\beta_1^t)}
        {\sqrt{v_t / (1-\beta_2^t)} + \epsilon}

    (AMSGrad uses the running maximum of :math:`v_t`; with ``decoupled_weight_decay``
    the parameter is first scaled by :math:`1-\gamma\lambda`, which is AdamW.)

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of
            the gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability
            (default: 1e-8)
        weight_decay (float, optional): weight decay (default: 0)
        amsgrad (bool, optional): use the AMSGrad variant (default: False)
        foreach, fused, capturable (bool, optional): accepted for compatibility; ember
            always runs its fused kernel on the CPU
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
        decoupled_weight_decay (bool, optional): AdamW's weight decay (default: False)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas, capturable, foreach)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _group_defaults = {
        "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
        "differentiable": False, "decoupled_weight_decay": False, "fused": None
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps) -> bool:
        amsgrad = group["amsgrad"]
        states = {"exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs, "step": state_steps}
        if amsgrad:
            states["max_exp_avg_sq"] = max_exp_avg_sqs

        def init(p):
            state = {"step": _step_tensor(0.0, group["fused"]), "exp_avg": zeros_like(p),
                     "exp_avg_sq": zeros_like(p)}
            if amsgrad:
                state["max_exp_avg_sq"] = zeros_like(p)
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
            exp_avgs: list[Tensor] = []
            exp_avg_sqs: list[Tensor] = []
            max_exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, max_exp_avg_sqs, state_steps)
            adam(params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                 state_steps, amsgrad=group["amsgrad"], has_complex=has_complex,
                 beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None,
         found_inf=None, has_complex=False, decoupled_weight_decay=False, *, amsgrad,
         beta1, beta2, lr, weight_decay, eps, maximize) -> None:
    """Functional form of :class:`Adam`: updates ``params`` and their state in place."""
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError("adam: grad_scale and found_inf are not supported")
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        max_exp_avg_sq = max_exp_avg_sqs[i] if amsgrad else None
        _fused.update("adam", param, grads[i],
                      (exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sq), beta1, beta2, eps,
                      weight_decay, lr, decoupled_weight_decay, step_size,
                      bias_correction2_sqrt, maximize)


def _adam_arrays(xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, beta1, beta2, eps,
                 weight_decay, lr, decoupled_weight_decay, step_size, bias_correction2_sqrt,
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
    v = exp_avg_sq
    if max_exp_avg_sq is not None:
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        v = max_exp_avg_sq
    denom = xp.sqrt(v) / bias_correction2_sqrt + eps
    param += (-step_size) * exp_avg / denom


_fused.register("adam", _adam_arrays)
