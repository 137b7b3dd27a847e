"""Normalization layers: LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm."""

from __future__ import annotations

import numbers

from ember._ops.creation import empty
from ember.autograd import Function
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


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


def _channel_window_sums(a, lo_pad, size):
    """``out[:, c] = sum(a[:, c - lo_pad : c - lo_pad + size])`` (zero outside), by running
    sums over the channels."""
    from ember._ops.creation import tensor

    C = a.size(1)
    padded = F.pad(a, (0, 0, 0, 0, lo_pad + 1, size))
    run = padded.cumsum(1)
    idx = tensor(list(range(C)), device=a.device)
    return run.index_select(1, idx + size) - run.index_select(1, idx)


class _CrossMapLRN2dFunction(Function):
    """PyTorch's ``CrossMapLRN2d``: its forward recurrence and its own backward (the
    gradient of a centred window, which is not exactly the forward's), for the same
    numbers both ways."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        from ember._ops.creation import tensor

        C = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        # s_c = P[min(c + pre_pad - 1, C - 1)] - (P[c - pre_pad] - P[0]) for c > pre_pad,
        # P the running sum of the squares over the channels
        prefix = (input * input).cumsum(1)
        hi = tensor([min(c + pre_pad - 1, C - 1) for c in range(C)], device=input.device)
        sums = prefix.index_select(1, hi)
        if C > pre_pad + 1:
            lo = tensor([c - pre_pad for c in range(pre_pad + 1, C)], device=input.device)
            removed = prefix.index_select(1, lo) - prefix[:, :1]
            sums = sums - F.pad(removed, (0, 0, 0, 0, pre_pad + 1, 0))
        scale = sums * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        inverse_pre_pad = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        # channel c gathers ratio[c' ] for c' in [c - inverse_pre_pad, c - inverse_pre_pad
        # + size) (PyTorch's padded accumulation)
        window = _channel_window_sums(ratio, inverse_pre_pad, size)
        grad_input = scale.pow(-ctx.beta) * grad_output \
            - (2 * ctx.alpha * ctx.beta / size) * input * window
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    r"""Local response normalization across the channels of a 4-d input (N, C, H, W), in the
    form of Lua Torch's ``SpatialCrossMapLRN`` that PyTorch keeps:
    ``b_c = a_c * (k + alpha / size * s_c) ** -beta`` with ``s_c`` the sum of ``a^2`` over a
    window of channels around ``c``.

    The window is PyTorch's: its running update adds channel ``c + (size - 1) // 2`` and
    removes channel ``c - (size - 1) // 2 - 1`` only once ``c`` is past the first window,
    so channel 0 stays in the sums of the later channels (the exact recurrence of
    ``torch.nn._functions.CrossMapLRN2d``, kept for the same numbers).

    Args:
        size: the number of channels in the window.
        alpha: the multiplicative factor. Default: 1e-4.
        beta: the exponent. Default: 0.75.
        k: the additive factor. Default: 1.

    Shape:
        - Input: (N, C, H, W). Output: the same.

    Examples::

        >>> m = nn.CrossMapLRN2d(3)
        >>> m(ember.randn(2, 5, 4, 4)).shape
        ember.Size([2, 5, 4, 4])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


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
