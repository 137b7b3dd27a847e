"""Rprop: resilient backpropagation."""

from __future__ import annotations

from ember._ops.creation import full_like, zeros_like
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

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm.

    Each element has its own step size, multiplied by :math:`\eta_+` while the sign of
    its gradient stays the same and by :math:`\eta_-` when it flips (clamped to
    ``step_sizes``); the parameter moves by the step size against the gradient's sign
    (not at all at a flip, where the gradient is then taken as zero).

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): initial step size (default: 1e-2)
        etas (tuple[float, float], optional): multiplicative decrease and increase
            factors :math:`(\eta_-, \eta_+)` (default: (0.5, 1.2))
        step_sizes (tuple[float, float], optional): minimal and maximal step sizes
            (default: (1e-6, 50))
        capturable, foreach (bool, optional): accepted for compatibility
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False (default: False)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    _group_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False
    }
    _counter_keys = ("step",)

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps) -> bool:
        def init(p):
            lr = _to_scalar(group["lr"])
            return {"step": _step_tensor(), "prev": zeros_like(p),
                    "step_size": full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)}

        return self._gather(group, params, grads,
                            {"prev": prevs, "step_size": step_sizes, "step": state_steps}, init)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): a closure that reevaluates the model and
                returns the loss.
        """
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            prevs: list[Tensor] = []
            step_sizes: list[Tensor] = []
            state_steps: list[Tensor] = []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes,
                                           state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                  maximize=group["maximize"], has_complex=has_complex)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus) -> None:
    """Functional form of :class:`Rprop`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    for i, param in enumerate(params):
        _increment(state_steps[i])
        _fused.update("rprop", param, grads[i], (prevs[i], step_sizes[i]),
                      etaminus, etaplus, step_size_min, step_size_max, maximize)


def _rprop_arrays(xp, param, grad, prev, step_size, etaminus, etaplus, step_size_min,
                  step_size_max, maximize) -> None:
    d = -grad if maximize else grad
    sign = xp.sign(d * prev)
    factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus, xp.where(
        sign == 0, 1, sign))).astype(param.dtype, copy=False)
    step_size *= factor
    xp.clip(step_size, step_size_min, step_size_max, out=step_size)
    d = xp.where(factor == etaminus, 0, d).astype(param.dtype, copy=False)
    param += (-xp.sign(d)) * step_size
    prev[...] = d


_fused.register("rprop", _rprop_arrays)
