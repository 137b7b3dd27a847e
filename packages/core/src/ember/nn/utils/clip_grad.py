"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_`` and their two halves
``get_total_norm`` / ``clip_grads_with_norm_``."""

from __future__ import annotations

import functools
import types
import warnings

from ember._C import _core
from ember.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    return wrapper


def _as_list(tensors) -> list:
    if isinstance(tensors, _core.TensorBase):
        return [tensors]
    return list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None):
    r"""The norm of the norms of ``tensors``, i.e. their norm as if concatenated into one
    vector.

    Args:
        tensors (Iterable[Tensor] or Tensor): the tensors (usually gradients)
        norm_type (float): type of the p-norm; ``inf`` for the infinity norm. Default: 2.0
        error_if_nonfinite (bool): raise if the total norm is ``nan`` or ``inf``.
        foreach (bool): accepted for PyTorch compatibility; ember computes the norms
            one tensor at a time.

    Returns:
        Total norm of the tensors (viewed as a single vector).
    """
    from ember._ops.creation import tensor as _tensor
    from ember._ops.join import stack
    from ember._ops.reduction import vector_norm

    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _tensor(0.0)
    first_device = tensors[0].device
    norms = [vector_norm(t, norm_type).to(first_device) for t in tensors]
    total_norm = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm: float, total_norm,
                          foreach: bool | None = None) -> None:
    r"""Scale the gradients of ``parameters`` by ``max_norm / (total_norm + 1e-6)`` when
    that factor is below 1 (``total_norm`` as computed by :func:`get_total_norm`).

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose ``.grad`` is scaled in place
        max_norm (float): max norm of the gradients
        total_norm (Tensor): total norm of the gradients to use for clipping
        foreach (bool): accepted for PyTorch compatibility.
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    # multiplying by a coefficient clamped to 1 avoids a host sync on the GPU
    clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None):
    r"""Clip the gradient norm of an iterable of parameters, in place.

    The norm is computed over the norms of the individual gradients, as if they were
    concatenated into a single vector.

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose gradients are clipped
        max_norm (float): max norm of the gradients
        norm_type (float or str): type of the p-norm; ``inf`` (or ``"inf"``) for the
            infinity norm. Default: 2.0
        error_if_nonfinite (bool): if True, raise when the total norm is ``nan``,
            ``inf`` or ``-inf``. Default: False
        foreach (bool): accepted for PyTorch compatibility.

    Returns:
        Total norm of the parameter gradients (viewed as a single vector).

    Example::

        >>> loss.backward()
        >>> nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, _core.TensorBase):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # the generator is used twice
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None):
    """Deprecated: use :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    r"""Clamp the gradients of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose gradients are clipped
        clip_value (float): maximum allowed absolute value of the gradients
        foreach (bool): accepted for PyTorch compatibility.
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
