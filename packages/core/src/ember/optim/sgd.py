"""Stochastic gradient descent, optionally with momentum and Nesterov momentum."""

from __future__ import annotations

from ember._ops.creation import zeros_like
from ember._tensor import Tensor
from ember.optim import _fused
from ember.optim.optimizer import (
    Optimizer,
    _check_lr,
    _evaluate_closure,
    _reject_differentiable,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g_t` (negated when
    ``maximize``): :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`; with momentum,
    :math:`b_t = \mu b_{t-1} + (1-\tau) g_t` (:math:`b_1 = g_1`) and
    :math:`g_t \leftarrow g_t + \mu b_t` (Nesterov) or :math:`g_t \leftarrow b_t`;
    then :math:`\theta_t = \theta_{t-1} - \gamma g_t`.

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate :math:`\gamma` (default: 1e-3)
        momentum (float, optional): momentum factor :math:`\mu` (default: 0)
        dampening (float, optional): dampening for momentum :math:`\tau` (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) :math:`\lambda`
            (default: 0)
        nesterov (bool, optional): enables Nesterov momentum (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing it
            (default: False)
        foreach, fused (bool, optional): accepted for compatibility; ember always runs
            its fused kernel on the CPU (default: None)
        differentiable (bool, optional): must be False (default: False)

    Example::

        >>> optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> optimizer.zero_grad()
        >>> loss_fn(model(input), target).backward()
        >>> optimizer.step()
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if _to_scalar(weight_decay) < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable(differentiable)
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _group_defaults = {
        "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
        "fused": False
    }

    def _init_group(self, group, params, grads, momentum_buffer_list) -> bool:
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    momentum_buffer_list.append(self.state[p].get("momentum_buffer"))
        return False

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
            momentum_buffer_list: list[Tensor | None] = []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if group["momentum"] != 0:
                for p, momentum_buffer in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = momentum_buffer
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr,
        dampening, nesterov, maximize) -> None:
    """Functional form of :class:`SGD`: updates ``params`` (and fills the ``None`` entries
    of ``momentum_buffer_list`` with new buffers) in place."""
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError("sgd: grad_scale and found_inf are not supported")
    lr = _to_scalar(lr)
    weight_decay = _to_scalar(weight_decay)
    for i, param in enumerate(params):
        grad = d_p_list[i]
        buf = None
        init = False
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                # PyTorch starts the buffer at the (decayed) gradient: the kernel writes it.
                buf = momentum_buffer_list[i] = zeros_like(param)
                init = True
        _fused.update("sgd", param, grad, (buf,), lr, weight_decay,
                      momentum, dampening, nesterov, maximize, init)


def _sgd_arrays(xp, param, grad, buf, lr, weight_decay, momentum, dampening, nesterov,
                maximize, init_buffer) -> None:
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    if momentum != 0:
        if init_buffer:
            buf[...] = d
        else:
            buf *= momentum
            buf += (1 - dampening) * d
        d = d + momentum * buf if nesterov else buf
    param += (-lr) * d


_fused.register("sgd", _sgd_arrays)
