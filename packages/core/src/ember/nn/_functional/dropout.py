"""Dropout: elementwise, channel-wise (``dropout1d/2d/3d``) and alpha dropout.

Each is one graph node ``y = x * noise (+ shift)`` whose noise, drawn from the default
generator with PyTorch's semantics, is kept on the node for backward (``g * noise``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember._C._core import Node, apply_inplace, is_grad_enabled
from ember._ops._util import TensorBase, apply, type_name, wrap, xp_of
from ember.nn._functional._low_precision import computes_in_float32

__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
           "dropout3d"]

_SELU_ALPHA_PRIME = 1.7580993408473766  # scale * alpha of SELU


class Dropout(Node):
    """``x * noise + shift`` with a fixed (drawn) ``noise`` broadcast over ``x``."""

    def forward(self, x, noise, shift):
        self.noise = noise
        y = x * noise
        if shift is not None:
            y += shift
        return y

    def backward(self, g):
        if is_grad_enabled():
            return g * wrap(self.noise)
        return wrap(g._data * self.noise)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train, inplace, feature=False, alpha=False, unbatched=False):
    """PyTorch's ``_dropout_impl``: the shared body of every dropout variant."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"dropout(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    x = input._data
    if p == 0 or not train or x.size == 0:
        return input
    if x.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{type_name(x.dtype)}")
    xp = xp_of(x)
    if feature:
        if x.ndim + unbatched < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        lead = 1 if unbatched else 2
        shape = x.shape[:lead] + (1,) * (x.ndim - lead)
    else:
        shape = x.shape
    shift = None
    if p == 1:
        noise = xp.zeros((), x.dtype)
    else:
        from ember._ops.random import _generator

        rng = _generator(None, input.device)._rng
        keep = rng.random(shape, dtype=np.float32) < (1 - p)
        if alpha:
            a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
            noise = keep.astype(x.dtype)
            shift = (noise - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
            noise *= a
        else:
            noise = keep.astype(x.dtype)
            noise *= 1.0 / (1 - p)
        if xp is not np:
            noise = xp.asarray(noise)
            shift = None if shift is None else xp.asarray(shift)
    if inplace:
        return apply_inplace(Dropout, input, noise, shift)
    return apply(Dropout, input, noise, shift)


@computes_in_float32
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)``
    (when ``training``; otherwise return ``input``).

    See :class:`~ember.nn.Dropout`.
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout: dropped elements take SELU's negative saturation value and the
    result is rescaled so that a zero-mean, unit-variance input keeps those statistics.

    See :class:`~ember.nn.AlphaDropout`.
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1).

    See :class:`~ember.nn.FeatureAlphaDropout`.
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _deprecated_dims(name, ndim, expected, spatial):
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, "
        f"please use dropout instead. Note that {name} exists to provide channel-wise dropout "
        f"on inputs with {spatial} spatial dimensions, a channel dimension, and an optional "
        f"batch dimension (i.e. {expected[0]}D or {expected[1]}D inputs).", stacklevel=3)


@computes_in_float32
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability ``p``.

    See :class:`~ember.nn.Dropout1d`.
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _dropout_impl(input, p, training, inplace, feature=True, unbatched=ndim == 2)


@computes_in_float32
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, H, W)`` input with probability ``p``.

    A 3-D input is taken as ``(N, C, L)`` (with a warning), as PyTorch does.

    See :class:`~ember.nn.Dropout2d`.
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _deprecated_dims("dropout2d", ndim, (3, 4), 2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, feature=True)


@computes_in_float32
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p``.

    See :class:`~ember.nn.Dropout3d`.
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _deprecated_dims("dropout3d", ndim, (4, 5), 3)
    return _dropout_impl(input, p, training, inplace, feature=True, unbatched=ndim != 5)
