"""Helpers of ``ember.distributions``: broadcasting parameters, probabilities and
logits, lazily computed properties."""

from __future__ import annotations

import numbers
from functools import update_wrapper

import numpy as np

import ember

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]


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
    return value.flatten(value.dim() - dim).sum(-1)


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


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular elements (on and below diagonal ``diag``) of a (batch of)
    ``D x D`` matrices as vectors, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, diag)
    return mat[..., ember.tensor(rows, device=mat.device), ember.tensor(cols, device=mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """A (batch of) ``D x D`` lower-triangular matrices holding the elements of ``vec``
    on and below diagonal ``diag``, in row order (zeros elsewhere).

    Raises:
        ValueError: if ``vec.shape[-1]`` is not the size of such a triangle.
    """
    m = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-6:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    index = np.full((n, n), m, dtype=np.int64)
    rows, cols = np.tril_indices(n, diag)
    index[rows, cols] = np.arange(len(rows))
    padded = ember.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    out = padded[..., ember.tensor(index.reshape(-1), device=vec.device)]
    return out.reshape(tuple(vec.shape[:-1]) + (n, n))
