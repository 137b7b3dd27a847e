"""Small building blocks of the models: conv-norm-activation, squeeze-excitation, MLP,
Permute and a frozen batch norm."""

from __future__ import annotations

from collections.abc import Callable

import ember
from ember import nn

__all__ = [
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "FrozenBatchNorm2d",
    "MLP",
    "Permute",
    "SqueezeExcitation",
]


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d whose statistics and affine parameters are fixed buffers.

    Args:
        num_features (int): the number of channels.
        eps (float): added to the variance. Default: 1e-5.

    Shape:
        - Input: :math:`(N, C, H, W)`; Output: the same.
    """

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", ember.ones(num_features))
        self.register_buffer("bias", ember.zeros(num_features))
        self.register_buffer("running_mean", ember.zeros(num_features))
        self.register_buffer("running_var", ember.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # A BatchNorm2d checkpoint loads: its counter of batches has no place here.
        state_dict.pop(prefix + "num_batches_tracked", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


class _ConvNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=None, activation_layer=None, dilation=1, inplace=True,
                 bias=None, conv_layer=nn.Conv2d):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                dims = len(kernel_size) if not isinstance(kernel_size, int) else len(dilation)
                ks = (kernel_size,) * dims if isinstance(kernel_size, int) else kernel_size
                dl = (dilation,) * dims if isinstance(dilation, int) else dilation
                padding = tuple((ks[i] - 1) // 2 * dl[i] for i in range(dims))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding,
                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class Conv2dNormActivation(_ConvNormActivation):
    """``Conv2d`` followed by a norm layer and an activation, as one ``Sequential``.

    Args:
        in_channels (int), out_channels (int): channels in and out.
        kernel_size (int or tuple): Default: 3.
        stride (int or tuple): Default: 1.
        padding (int, tuple or str, optional): ``(kernel_size - 1) // 2 * dilation`` when None.
        groups (int): Default: 1.
        norm_layer (callable, optional): Default: ``nn.BatchNorm2d``; None for no norm.
        activation_layer (callable, optional): Default: ``nn.ReLU``; None for none.
        dilation (int or tuple): Default: 1.
        inplace (bool, optional): passed to the activation. Default: True.
        bias (bool, optional): the convolution's bias; True only without a norm layer when
            None.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size=3, stride=1,
                 padding=None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 dilation=1, inplace: bool | None = True, bias: bool | None = None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(_ConvNormActivation):
    """``Conv3d`` followed by a norm layer (``BatchNorm3d``) and an activation."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size=3, stride=1,
                 padding=None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm3d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 dilation=1, inplace: bool | None = True, bias: bool | None = None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (Hu et al., 2018): channels rescaled by a gate computed from
    their global average.

    Args:
        input_channels (int): channels of the input.
        squeeze_channels (int): channels of the bottleneck.
        activation (callable): Default: ``nn.ReLU``.
        scale_activation (callable): Default: ``nn.Sigmoid``.
    """

    def __init__(self, input_channels: int, squeeze_channels: int,
                 activation: Callable[..., nn.Module] = nn.ReLU,
                 scale_activation: Callable[..., nn.Module] = nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, x):
        scale = self.avgpool(x)
        scale = self.activation(self.fc1(scale))
        return self.scale_activation(self.fc2(scale))

    def forward(self, x):
        return self._scale(x) * x


class MLP(nn.Sequential):
    """Multi-layer perceptron: ``Linear`` (+ norm) + activation + dropout per hidden layer,
    then a last ``Linear`` and dropout.

    Args:
        in_channels (int): input features.
        hidden_channels (list of int): the sizes of the layers; the last is the output size.
        norm_layer (callable, optional): Default: None.
        activation_layer (callable, optional): Default: ``nn.ReLU``.
        inplace (bool, optional): passed to the activation and dropout. Default: None.
        bias (bool): Default: True.
        dropout (float): Default: 0.0.
    """

    def __init__(self, in_channels: int, hidden_channels: list[int],
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 inplace: bool | None = None, bias: bool = True, dropout: float = 0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        in_dim = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            in_dim = hidden
        layers.append(nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    """Permutes the dimensions of the input: ``x.permute(*dims)``."""

    def __init__(self, dims: list[int]):
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return ember.permute(x, self.dims)
