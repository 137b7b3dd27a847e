"""Helpers of ``ember.distributions``: broadcasting parameters, probabilities and
logits, lazily computed properties."""

from __future__ import annotations

import numbers
from functools import update_wrapper

import ember

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property"]


def broadcast_all(*values):
    """The values (tensors or numbers) as tensors broadcast to one shape; numbers take
    the dtype of the tensors among them (the default float dtype if there is none).

    Raises:
        ValueError: if a value is neither a tensor nor a number.
    """
    if not all(isinstance(v, ember.Tensor) or isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, ember.Tensor)), None)
        dtype = like.dtype if like is not None else ember.get_default_dtype()
        device = like.device if like is not None else None
        values = [v if isinstance(v, ember.Tensor) else
                  ember.tensor(v, dtype=dtype, device=device) for v in values]
    return ember.broadcast_tensors(*values)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def clamp_probs(probs):
    """``probs`` clamped to [eps, 1 - eps] of its dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary, softmax over the last dim otherwise."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.nn.functional.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped away from 0 and 1 first)."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
