"""Adagrad."""

from __future__ import annotations

from ember._ops.creation import full_like
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

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    .. math::
        \tilde\gamma = \frac{\gamma}{1 + (t-1)\eta}, \quad
        s_t = s_{t-1} + g_t^2, \quad
        \theta_t = \theta_{t-1} - \tilde\gamma \frac{g_t}{\sqrt{s_t} + \epsilon}

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay :math:`\eta` (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the sums of
            squared gradients (default: 0)
        eps (float, optional): term added to the denominator (default: 1e-10)
        foreach, fused (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None) -> None:
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        # Adagrad's state exists from the start, for every parameter (as in PyTorch).
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor(0.0, group["fused"])
                state["sum"] = self._initial_sum(p, initial_accumulator_value)

    @staticmethod
    def _initial_sum(p, value):
        if p.is_complex():
            value = complex(value, value)
        return full_like(p, value)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _counter_keys = ("step",)

    def share_memory(self) -> None:
        """Move the sums of squared gradients to shared memory (for Hogwild training)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        # A parameter without state was added after construction (add_param_group).
        has_complex = self._gather(
            group, params_with_grad, grads, {"sum": state_sums, "step": state_steps},
            lambda p: {"step": _step_tensor(0.0, group["fused"]),
                       "sum": self._initial_sum(p, self.defaults["initial_accumulator_value"])})
        return False, has_complex

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
            state_sums: list[Tensor] = []
            state_steps: list[Tensor] = []
            _, has_complex = self._init_group(group, params_with_grad, grads, state_sums,
                                              state_steps)
            adagrad(params_with_grad, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"], has_complex=has_complex)
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize) -> None:
    """Functional form of :class:`Adagrad`."""
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError("adagrad: grad_scale and found_inf are not supported")
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step = _increment(step_t)
        clr = lr / (1 + (step - 1) * lr_decay)
        _fused.update("adagrad", param, grad, (state_sum,), clr, eps,
                      weight_decay, maximize)


def _adagrad_arrays(xp, param, grad, state_sum, clr, eps, weight_decay, maximize) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    state_sum += d * d
    param += (-clr) * d / (xp.sqrt(state_sum) + eps)


_fused.register("adagrad", _adagrad_arrays)
