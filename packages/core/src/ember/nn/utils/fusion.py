"""Folding an evaluation-mode batch norm into the convolution or linear layer before it:
``fuse_conv_bn_eval``, ``fuse_conv_bn_weights``, ``fuse_linear_bn_eval``,
``fuse_linear_bn_weights``."""

from __future__ import annotations

import copy

from ember._ops.creation import ones_like, zeros_like
from ember.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose weight and bias include ``bn`` (both in evaluation mode):
    ``bn(conv(x)) == fused(x)`` up to rounding.

    Args:
        conv (nn.modules.conv._ConvNd): the convolution.
        bn (nn.modules.batchnorm._BatchNorm): the batch norm after it, with running
            statistics.
        transpose (bool, optional): whether ``conv`` is a transposed convolution (its
            output channels are the weight's dim 1). Default: False.

    Returns:
        The fused convolution (``conv`` itself is left as it is).

    Examples::

        >>> conv, bn = nn.Conv2d(3, 8, 3).eval(), nn.BatchNorm2d(8).eval()
        >>> fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b,
                         transpose: bool = False):
    """The weight and bias of a convolution followed by a batch norm, as one convolution:
    ``w * bn_w / sqrt(bn_rv + eps)`` per output channel and
    ``(b - bn_rm) * bn_w / sqrt(bn_rv + eps) + bn_b``.

    Args:
        conv_w (Tensor): the convolution's weight.
        conv_b (Tensor or None): its bias.
        bn_rm, bn_rv (Tensor): the batch norm's running mean and variance.
        bn_eps (float): its eps.
        bn_w, bn_b (Tensor or None): its weight and bias (None: 1 and 0).
        transpose (bool, optional): whether the convolution is transposed. Default: False.

    Returns:
        ``(weight, bias)`` as Parameters, in the convolution's dtypes, requiring gradient
        as the inputs do.
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ones_like(bn_rm)
    if bn_b is None:
        bn_b = zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    extra = [1] * (conv_w.dim() - 2)
    shape = [1, -1, *extra] if transpose else [-1, 1, *extra]
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=w_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias include ``bn`` (both in evaluation mode).

    The batch norm's features must be the linear layer's outputs
    (``linear.out_features == bn.num_features``), or one feature broadcast to all.

    Args:
        linear (nn.Linear): the linear layer.
        bn (nn.modules.batchnorm._BatchNorm): the batch norm after it.

    Returns:
        The fused linear layer.

    Examples::

        >>> lin, bn = nn.Linear(20, 10).eval(), nn.BatchNorm1d(10).eval()
        >>> fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias of a linear layer followed by a batch norm, as one linear
    layer: ``w * scale[:, None]`` and ``(b - bn_rm) * scale + bn_b`` with
    ``scale = bn_w / sqrt(bn_rv + eps)``.

    Returns:
        ``(weight, bias)`` as Parameters, in the linear layer's dtypes.
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
