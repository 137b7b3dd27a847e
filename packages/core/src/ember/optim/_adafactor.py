"""Adafactor: Adam-like steps with a factored (row x column) second moment."""

from __future__ import annotations

import math

from ember._backend import backend_of
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.optim import _fused
from ember.optim.optimizer import (
    Optimizer,
    _evaluate_closure,
    _increment,
    _step_tensor,
    _tensors_to_steps,
    _to_scalar,
)

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    r"""Implements Adafactor (`Shazeer and Stern, 2018 <https://arxiv.org/abs/1804.04235>`__)
    as PyTorch 2.13 does.

    For a matrix (or a stack of matrices) the second moment is kept as a row factor
    ``R`` and a column factor ``C``; for a vector, in full. With
    :math:`\hat\beta_{2,t} = 1 - t^{\text{beta2\_decay}}`,
    :math:`\rho_t = \min(\gamma, 1/\sqrt{t})` and
    :math:`\alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta_{t-1}))\rho_t`:

    .. math::
        R_t = \hat\beta_{2,t} R_{t-1} + (1-\hat\beta_{2,t})\,\mathrm{mean}_{cols}(g_t^2),
        \quad
        C_t = \hat\beta_{2,t} C_{t-1} + (1-\hat\beta_{2,t})\,\mathrm{mean}_{rows}(g_t^2),
        \\
        \hat V_t = \frac{R_t C_t}{\max(\mathrm{mean}(R_t), \epsilon_1)}, \quad
        U_t = \frac{g_t}{\sqrt{\max(\hat V_t, \epsilon_1^2)}}, \quad
        \theta_t = \theta_{t-1}(1 - \gamma\lambda)
                   - \frac{\alpha_t}{\max(1, \mathrm{RMS}(U_t) / d)} U_t

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): unlike other optimizers, Adafactor does not need a
            learning rate schedule; ``lr`` caps the relative step size (default: 1e-2)
        beta2_decay (float, optional): the decay rate of the second moment's average,
            :math:`\hat\beta_{2,t} = 1 - t^{\text{beta2\_decay}}` (default: -0.8)
        eps (tuple[float or None, float], optional): :math:`\epsilon_1`, the floor of the
            squared update's denominator (None: the dtype's machine epsilon), and
            :math:`\epsilon_2`, the floor of the parameter's RMS (default: (None, 1e-3))
        d (float, optional): the clipping threshold of the update's RMS (default: 1.0)
        weight_decay (float, optional): decoupled weight decay :math:`\lambda`
            (default: 0.0)
        foreach (bool, optional): accepted for compatibility (default: None)
        maximize (bool, optional): maximize the objective (default: False)

    Examples::

        >>> opt = ember.optim.Adafactor(model.parameters(), lr=1e-2)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None}
    _counter_keys = ("step",)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
        _tensors_to_steps(self)

    def _init_group(self, group, params_with_grad, grads, row_vars, col_vars, variances,
                    state_steps) -> bool:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = p.grad.new_zeros(p.grad.shape)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            state_steps.append(state["step"])
        return False

    @no_grad()
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): a closure that reevaluates the model and
                returns the loss.
        """
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads = [], []
            row_vars, col_vars, variances, state_steps = [], [], [], []
            eps1, eps2 = group["eps"]
            has_complex = self._init_group(group, params_with_grad, grads, row_vars,
                                           col_vars, variances, state_steps)
            adafactor(params_with_grad, grads, row_vars, col_vars, variances, state_steps,
                      d=group["d"], lr=group["lr"], beta2_decay=group["beta2_decay"],
                      weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      foreach=group["foreach"], maximize=group["maximize"],
                      grad_scale=getattr(self, "grad_scale", None),
                      found_inf=getattr(self, "found_inf", None), has_complex=has_complex)
        return loss


def _norm(xp, a, axis=None, keepdims=False):
    return xp.sqrt((a * a).sum(axis=axis, keepdims=keepdims))


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, grad_scale=None,
              found_inf=None, foreach=None, maximize=False, has_complex=False, *, d, lr,
              beta2_decay, weight_decay, eps1, eps2) -> None:
    """Functional form of :class:`Adafactor`."""
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        p = param._data
        xp = backend_of(p).xp
        g = -grads[i]._data if maximize else grads[i]._data
        e1 = float(xp.finfo(p.dtype).eps) if eps1 is None else eps1
        step = _increment(state_steps[i])
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, float(_norm(xp, p)) / math.sqrt(p.size)) * rho_t
        if weight_decay != 0:
            p *= 1 - lr * weight_decay
        if g.ndim > 1:
            row_var, col_var = row_vars[i], col_vars[i]
            if row_var is None or col_var is None:
                raise AssertionError(
                    "row_var and col_var should be defined when grad is multidimensional")
            # PyTorch's order: the norm, squared, then divided
            row_mean = _norm(xp, g, -1, True) ** 2 / g.shape[-1]
            _fused.lerp_(xp, row_var._data, row_mean, one_minus_beta2_t)
            col_mean = _norm(xp, g, -2, True) ** 2 / g.shape[-2]
            _fused.lerp_(xp, col_var._data, col_mean, one_minus_beta2_t)
            row_var._bump_version()
            col_var._bump_version()
            var_estimate = row_var._data @ col_var._data
            var_estimate /= xp.maximum(row_var._data.mean(axis=-2, keepdims=True), e1)
        else:
            variance = variances[i]
            if variance is None:
                raise AssertionError("variance should be defined when grad is a vector")
            _fused.lerp_(xp, variance._data, g * g, one_minus_beta2_t)
            variance._bump_version()
            var_estimate = variance._data.copy()
        update = 1 / xp.sqrt(xp.maximum(var_estimate, e1 * e1))
        update *= g
        denom = max(1.0, float(_norm(xp, update)) / (math.sqrt(update.size) * d))
        p += (-alpha / denom) * update
        param._bump_version()
