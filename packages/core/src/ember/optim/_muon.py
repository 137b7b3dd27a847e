"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration."""

from __future__ import annotations

import math

from ember._backend import backend_of
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.optim import _fused
from ember.optim.optimizer import (
    Optimizer,
    _evaluate_closure,
    _to_scalar,
)

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(xp, a):
    """``a`` (float32) rounded to bfloat16 precision (to nearest, ties to even), kept in
    float32: each step of PyTorch's Newton-Schulz iteration runs in bfloat16."""
    a = xp.ascontiguousarray(a, dtype=xp.float32)
    bits = a.view(xp.uint32)
    rounded = (bits + xp.uint32(0x7FFF) + ((bits >> 16) & xp.uint32(1))) & xp.uint32(0xFFFF0000)
    out = rounded.view(xp.float32)
    return xp.where(xp.isnan(a), a, out)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """The orthogonalization of the 2-D array ``grad`` by ``ns_steps`` quintic Newton-Schulz
    steps (bfloat16 precision at every step, as PyTorch); a float32 array."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    xp = backend_of(grad).xp
    a, b, c = ns_coefficients
    x = _bf16(xp, grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp, xp.sqrt((x * x).sum(dtype=xp.float32)))
    x = _bf16(xp, x / _bf16(xp, xp.maximum(norm, xp.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(xp, x @ x.T)
        gram_update = _bf16(xp, b * gram + c * (gram @ gram))
        x = _bf16(xp, a * x + gram_update @ x)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn, param_shape) -> float:
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    r"""Implements Muon (`Jordan et al., 2024 <https://kellerjordan.github.io/posts/muon/>`__)
    as PyTorch 2.13 does, for 2-D parameters.

    .. math::
        B_t = \mu B_{t-1} + g_t, \quad
        \tilde B_t = g_t + \mu B_t \ (\text{nesterov}) \text{ or } B_t, \quad
        O_t = \mathrm{NS}_k^{(a,b,c)}(\tilde B_t), \\
        \theta_t = \theta_{t-1}(1 - \gamma\lambda) - \mathrm{AdjustLR}(\gamma)\, O_t

    (the momentum buffer is kept as ``lerp``, ``B_t = B_{t-1} + (1-\mu)(g_t - B_{t-1})``, as
    PyTorch keeps it). :math:`\mathrm{NS}` is ``ns_steps`` quintic Newton-Schulz steps with
    coefficients ``(a, b, c)`` on the update scaled to unit norm, in bfloat16 precision as
    PyTorch computes them; ``AdjustLR`` scales the rate by :math:`\sqrt{\max(1, A/B)}`
    (``"original"``) or :math:`0.2\sqrt{\max(A, B)}` (``"match_rms_adamw"``) for an
    ``A x B`` parameter.

    Args:
        params (iterable): 2-D parameters (or ``(name, parameter)`` pairs) to optimize,
            or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-3)
        weight_decay (float, optional): decoupled weight decay (default: 0.1)
        momentum (float, optional): momentum factor (default: 0.95)
        nesterov (bool, optional): Nesterov momentum (default: True)
        ns_coefficients (tuple of three floats, optional): the Newton-Schulz coefficients
            (default: (3.4445, -4.775, 2.0315))
        eps (float, optional): the floor of the norm the update is divided by
            (default: 1e-7)
        ns_steps (int, optional): Newton-Schulz steps, fewer than 100 (default: 5)
        adjust_lr_fn (str, optional): ``"original"``, ``"match_rms_adamw"`` or None (the
            original) (default: None)

    Examples::

        >>> opt = ember.optim.Muon([layer.weight for layer in hidden_layers], lr=0.02)
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_group(self, group, params_with_grad, grads, muon_momentum_bufs) -> bool:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = p.grad.new_zeros(p.grad.shape)
            muon_momentum_bufs.append(state["momentum_buffer"])
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
            params_with_grad, grads, bufs = [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, bufs)
            muon(params_with_grad, grads, bufs, lr=group["lr"],
                 weight_decay=group["weight_decay"], momentum=group["momentum"],
                 nesterov=group["nesterov"], ns_coefficients=group["ns_coefficients"],
                 eps=group["eps"], ns_steps=group["ns_steps"],
                 adjust_lr_fn=group["adjust_lr_fn"], has_complex=has_complex)
        return loss


def muon(params, grads, muon_momentum_bufs, *, foreach=None, lr, weight_decay, momentum,
         nesterov, ns_coefficients, ns_steps, eps, adjust_lr_fn, has_complex) -> None:
    """Functional form of :class:`Muon`."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = _to_scalar(lr)
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for i, param in enumerate(params):
        g = grads[i]._data
        if g.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        xp = backend_of(g).xp
        buf = muon_momentum_bufs[i]
        _fused.lerp_(xp, buf._data, g, 1 - momentum)
        buf._bump_version()
        if nesterov:
            update = g.copy()
            _fused.lerp_(xp, update, buf._data, momentum)
        else:
            update = buf._data
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, param.shape)
        p = param._data
        p *= 1 - lr * weight_decay
        p += (-adjusted_lr) * update.astype(p.dtype, copy=False)
        param._bump_version()

