"""Normalization layers: LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm."""

from __future__ import annotations

import numbers

from ember._ops.creation import empty
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    r"""Local response normalization across channels (dim 1):
    ``b_c = a_c / (k + alpha / n * sum_{c'} a_{c'}^2) ** beta`` over the ``size``
    neighbouring channels.

    Args:
        size: the number of neighbouring channels.
        alpha: multiplicative factor. Default: 0.0001.
        beta: exponent. Default: 0.75.
        k: additive factor. Default: 1.

    Shape:
        - Input: (N, C, *), at least 3 dims. Output: the same.
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    r"""Layer normalization over the last dims of the input (``normalized_shape``):
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, the statistics per
    sample over those dims, ``weight``/``bias`` elementwise there.

    Args:
        normalized_shape: the shape of the trailing dims to normalize (an int for one).
        eps: added to the variance for numerical stability. Default: 1e-5.
        elementwise_affine: whether to learn ``weight`` (initialized to 1) and
            ``bias`` (to 0). Default: True.
        bias: whether to learn the bias (with ``elementwise_affine``). Default: True.

    Shape:
        - Input: (N, *). Output: the same.
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory_kwargs))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1 and bias 0."""
        if self.elementwise_affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
            "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    r"""Group normalization: the channels are split into ``num_groups`` groups, each
    normalized per sample over its channels and spatial dims; then an affine transform
    per channel.

    Args:
        num_groups: the number of groups (divides ``num_channels``).
        num_channels: C, the number of channels.
        eps: added to the variance for numerical stability. Default: 1e-5.
        affine: whether to learn ``weight`` (initialized to 1) and ``bias`` (to 0) per
            channel. Default: True.

    Shape:
        - Input: (N, C, *). Output: the same.
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(empty(num_channels, **factory_kwargs))
            if bias:
                self.bias = Parameter(empty(num_channels, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1 and bias 0."""
        if self.affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            "{num_groups}, {num_channels}, eps={eps}, affine={affine}, "
            "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class RMSNorm(Module):
    r"""Root-mean-square normalization over the last dims (``normalized_shape``):
    ``y = x / sqrt(mean(x**2) + eps) * weight``.

    Args:
        normalized_shape: the shape of the trailing dims to normalize (an int for one).
        eps: added to the mean square; None (the default) is the input dtype's machine
            epsilon.
        elementwise_affine: whether to learn ``weight`` (initialized to 1).

    Shape:
        - Input: (N, *). Output: the same.
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1."""
        if self.elementwise_affine:
            with no_grad():
                self.weight.fill_(1)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, "
                "elementwise_affine={elementwise_affine}".format(**self.__dict__))
