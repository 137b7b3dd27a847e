"""MaxViT (Tu et al., 2022): MBConv plus block (window) and grid attention, MaxViT-T."""

from __future__ import annotations

import math
from collections import OrderedDict
from functools import partial

import numpy as np

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import (
    WeightsEnum,
    classification_weights,
    make_builder,
    ovewrite_named_param,
)
from embervision.ops.misc import Conv2dNormActivation, SqueezeExcitation
from embervision.ops.stochastic_depth import StochasticDepth
from embervision.transforms._utils import InterpolationMode

__all__ = ["MaxVit", "MaxVit_T_Weights", "maxvit_t"]


def _get_conv_output_shape(input_size, kernel_size: int, stride: int, padding: int):
    return tuple((s - kernel_size + 2 * padding) // stride + 1 for s in input_size[:2])


def _make_block_input_shapes(input_size, n_blocks: int):
    """The grid entering each block: the stem and every block halve it (3x3, stride 2)."""
    shapes = []
    shape = _get_conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        shape = _get_conv_output_shape(shape, 3, 2, 1)
        shapes.append(shape)
    return shapes


def _get_relative_position_index(height: int, width: int) -> ember.Tensor:
    coords = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing="ij"))
    coords = coords.reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    index = (rel[:, :, 0] + height - 1) * (2 * width - 1) + (rel[:, :, 1] + width - 1)
    return ember.from_numpy(index.astype(np.int64))


class MBConv(nn.Module):
    """Pre-norm inverted residual with squeeze-excitation; the shortcut is average-pooled and
    projected when the shape changes.

    Args:
        in_channels (int), out_channels (int): channels.
        expansion_ratio (float): width of the bottleneck relative to ``out_channels``.
        squeeze_ratio (float): width of the squeeze-excitation relative to ``out_channels``.
        stride (int): of the depthwise convolution.
        activation_layer (callable), norm_layer (callable): the layers.
        p_stochastic_dropout (float): stochastic depth. Default: 0.0.
    """

    def __init__(self, in_channels: int, out_channels: int, expansion_ratio: float,
                 squeeze_ratio: float, stride: int, activation_layer, norm_layer,
                 p_stochastic_dropout: float = 0.0):
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)] + proj
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid = int(out_channels * expansion_ratio)
        sqz = int(out_channels * squeeze_ratio)
        self.stochastic_depth = (StochasticDepth(p_stochastic_dropout, mode="row")
                                 if p_stochastic_dropout else nn.Identity())
        layers = OrderedDict()
        layers["pre_norm"] = norm_layer(in_channels)
        layers["conv_a"] = Conv2dNormActivation(in_channels, mid, kernel_size=1, stride=1,
                                                padding=0, activation_layer=activation_layer,
                                                norm_layer=norm_layer, inplace=None)
        layers["conv_b"] = Conv2dNormActivation(mid, mid, kernel_size=3, stride=stride,
                                                padding=1, activation_layer=activation_layer,
                                                norm_layer=norm_layer, groups=mid, inplace=None)
        layers["squeeze_excitation"] = SqueezeExcitation(mid, sqz, activation=nn.SiLU)
        layers["conv_c"] = nn.Conv2d(in_channels=mid, out_channels=out_channels, kernel_size=1,
                                     bias=True)
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """Multi-head self-attention over the ``P`` positions of each of ``G`` partitions, with a
    learned relative position bias.

    Args:
        feat_dim (int): features.
        head_dim (int): features per head; must divide ``feat_dim``.
        max_seq_len (int): positions per partition (a square number).
    """

    def __init__(self, feat_dim: int, head_dim: int, max_seq_len: int):
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(math.sqrt(max_seq_len))
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        # torchvision scales by the full feature width, not the head width; kept for parity.
        self.scale_factor = feat_dim ** -0.5
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            ember.empty(((2 * self.size - 1) * (2 * self.size - 1), self.n_heads),
                        dtype=ember.float32))
        self.register_buffer("relative_position_index",
                             _get_relative_position_index(self.size, self.size))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self):
        index = self.relative_position_index.view(-1)
        bias = self.relative_position_bias_table[index].view(self.max_seq_len, self.max_seq_len,
                                                             -1)
        return bias.permute(2, 0, 1).contiguous().unsqueeze(0)

    def forward(self, x):
        b, g, p, d = x.shape
        h, dh = self.n_heads, self.head_dim
        q, k, v = (t.reshape(b, g, p, h, dh).permute(0, 1, 3, 2, 4)
                   for t in ember.chunk(self.to_qkv(x), 3, dim=-1))
        logits = q.matmul((k * self.scale_factor).transpose(-2, -1))
        attn = F.softmax(logits + self.get_relative_positional_bias(), dim=-1)
        out = attn.matmul(v).permute(0, 1, 3, 2, 4).reshape(b, g, p, d)
        return self.merge(out)


class SwapAxes(nn.Module):
    """``ember.swapaxes(x, a, b)`` as a module."""

    def __init__(self, a: int, b: int):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x):
        return ember.swapaxes(x, self.a, self.b)


class WindowPartition(nn.Module):
    """``[B, C, H, W]`` -> ``[B, H/P * W/P, P*P, C]``: non-overlapping P x P windows."""

    def forward(self, x, p: int):
        b, c, h, w = x.shape
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, (h // p) * (w // p), p * p, c)


class WindowDepartition(nn.Module):
    """The inverse of :class:`WindowPartition`."""

    def forward(self, x, p: int, h_partitions: int, w_partitions: int):
        b, _, _, c = x.shape
        x = x.reshape(b, h_partitions, w_partitions, p, p, c).permute(0, 5, 1, 3, 2, 4)
        return x.reshape(b, c, h_partitions * p, w_partitions * p)


class PartitionAttentionLayer(nn.Module):
    """Attention and MLP over windows (``partition_type="window"``: local P x P blocks) or
    over a grid (``"grid"``: positions P apart, i.e. dilated, global mixing).

    Args:
        in_channels (int), head_dim (int): the attention widths.
        partition_size (int): P.
        partition_type (str): ``"window"`` or ``"grid"``.
        grid_size (tuple of int): the feature map's size.
        mlp_ratio (int): MLP expansion.
        activation_layer (callable), norm_layer (callable): the layers.
        attention_dropout (float), mlp_dropout (float), p_stochastic_dropout (float): rates.
    """

    def __init__(self, in_channels: int, head_dim: int, partition_size: int,
                 partition_type: str, grid_size, mlp_ratio: int, activation_layer, norm_layer,
                 attention_dropout: float, mlp_dropout: float, p_stochastic_dropout: float):
        super().__init__()
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type not in ("grid", "window"):
            raise ValueError("partition_type must be either 'grid' or 'window'")
        if partition_type == "window":
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        grid = partition_type == "grid"
        self.partition_swap = SwapAxes(-2, -3) if grid else nn.Identity()
        self.departition_swap = SwapAxes(-2, -3) if grid else nn.Identity()
        self.attn_layer = nn.Sequential(
            norm_layer(in_channels),
            RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size ** 2),
            nn.Dropout(attention_dropout))
        self.mlp_layer = nn.Sequential(
            nn.LayerNorm(in_channels),
            nn.Linear(in_channels, in_channels * mlp_ratio),
            activation_layer(),
            nn.Linear(in_channels * mlp_ratio, in_channels),
            nn.Dropout(mlp_dropout))
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x):
        if self.grid_size[0] % self.p != 0 or self.grid_size[1] % self.p != 0:
            raise ValueError(f"Grid size must be divisible by partition size. Got grid size of "
                             f"{self.grid_size} and partition size of {self.p}")
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    """MBConv, then window attention, then grid attention."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, stride: int, norm_layer, activation_layer,
                 head_dim: int, mlp_ratio: int, mlp_dropout: float, attention_dropout: float,
                 p_stochastic_dropout: float, partition_size: int, grid_size):
        super().__init__()
        layers = OrderedDict()
        layers["MBconv"] = MBConv(in_channels=in_channels, out_channels=out_channels,
                                  expansion_ratio=expansion_ratio, squeeze_ratio=squeeze_ratio,
                                  stride=stride, activation_layer=activation_layer,
                                  norm_layer=norm_layer,
                                  p_stochastic_dropout=p_stochastic_dropout)
        for kind in ("window", "grid"):
            layers[f"{kind}_attention"] = PartitionAttentionLayer(
                in_channels=out_channels, head_dim=head_dim, partition_size=partition_size,
                partition_type=kind, grid_size=grid_size, mlp_ratio=mlp_ratio,
                activation_layer=activation_layer, norm_layer=nn.LayerNorm,
                attention_dropout=attention_dropout, mlp_dropout=mlp_dropout,
                p_stochastic_dropout=p_stochastic_dropout)
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """``n_layers`` MaxViT layers; the first halves the grid."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, norm_layer, activation_layer, head_dim: int,
                 mlp_ratio: int, mlp_dropout: float, attention_dropout: float,
                 partition_size: int, input_grid_size, n_layers: int, p_stochastic):
        super().__init__()
        if len(p_stochastic) != n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got "
                             f"p_stochastic={p_stochastic}.")
        self.layers = nn.ModuleList()
        self.grid_size = _get_conv_output_shape(input_grid_size, kernel_size=3, stride=2,
                                                padding=1)
        for idx, p in enumerate(p_stochastic):
            self.layers.append(MaxVitLayer(
                in_channels=in_channels if idx == 0 else out_channels,
                out_channels=out_channels, squeeze_ratio=squeeze_ratio,
                expansion_ratio=expansion_ratio, stride=2 if idx == 0 else 1,
                norm_layer=norm_layer, activation_layer=activation_layer, head_dim=head_dim,
                mlp_ratio=mlp_ratio, mlp_dropout=mlp_dropout,
                attention_dropout=attention_dropout, partition_size=partition_size,
                grid_size=self.grid_size, p_stochastic_dropout=p))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    """MaxViT from `MaxViT: Multi-Axis Vision Transformer <https://arxiv.org/abs/2204.01697>`_.

    Args:
        input_size (tuple of int): the input image's size; every block's grid must be
            divisible by ``partition_size``.
        stem_channels (int): channels of the stem.
        partition_size (int): window and grid size of the attention.
        block_channels (list of int), block_layers (list of int): the blocks.
        head_dim (int): features per attention head.
        stochastic_depth_prob (float): reached by the last layer (linear from 0).
        norm_layer (callable, optional): Default: ``BatchNorm2d(eps=1e-3, momentum=0.01)``.
        activation_layer (callable): Default: ``nn.GELU``.
        squeeze_ratio (float): Default: 0.25.
        expansion_ratio (float): Default: 4.
        mlp_ratio (int): Default: 4.
        mlp_dropout (float), attention_dropout (float): Default: 0.0.
        num_classes (int): Default: 1000.

    Shape:
        - Input: :math:`(N, 3, H, W)` with :math:`(H, W)` = ``input_size``
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, input_size, stem_channels: int, partition_size: int, block_channels,
                 block_layers, head_dim: int, stochastic_depth_prob: float, norm_layer=None,
                 activation_layer=nn.GELU, squeeze_ratio: float = 0.25,
                 expansion_ratio: float = 4, mlp_ratio: int = 4, mlp_dropout: float = 0.0,
                 attention_dropout: float = 0.0, num_classes: int = 1000):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        sizes = _make_block_input_shapes(input_size, len(block_channels))
        for idx, size in enumerate(sizes):
            if size[0] % partition_size != 0 or size[1] % partition_size != 0:
                raise ValueError(
                    f"Input size {size} of block {idx} is not divisible by partition size "
                    f"{partition_size}. Consider changing the partition size or the input "
                    f"size.\nCurrent configuration yields the following block input sizes: "
                    f"{sizes}.")
        self.stem = nn.Sequential(
            Conv2dNormActivation(3, stem_channels, 3, stride=2, norm_layer=norm_layer,
                                 activation_layer=activation_layer, bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None,
                                 activation_layer=None, bias=True))
        grid = _get_conv_output_shape(input_size, kernel_size=3, stride=2, padding=1)
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        in_channels = [stem_channels] + list(block_channels[:-1])
        p_stochastic = np.linspace(0, stochastic_depth_prob, sum(block_layers)).tolist()
        p_idx = 0
        for c_in, c_out, n in zip(in_channels, block_channels, block_layers):
            self.blocks.append(MaxVitBlock(
                in_channels=c_in, out_channels=c_out, squeeze_ratio=squeeze_ratio,
                expansion_ratio=expansion_ratio, norm_layer=norm_layer,
                activation_layer=activation_layer, head_dim=head_dim, mlp_ratio=mlp_ratio,
                mlp_dropout=mlp_dropout, attention_dropout=attention_dropout,
                partition_size=partition_size, input_grid_size=grid, n_layers=n,
                p_stochastic=p_stochastic[p_idx:p_idx + n]))
            grid = self.blocks[-1].grid_size
            p_idx += n
        last = block_channels[-1]
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(last), nn.Linear(last, last),
            nn.Tanh(), nn.Linear(last, num_classes, bias=False))
        self._init_weights()

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#maxvit"


class MaxVit_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "maxvit_t-bc5ab103", 30919624, _RECIPE, 83.7, 96.722, 5.558, 118.769, min_size=(224, 224),
        resize_size=224, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


def _build(weights, progress, **kwargs):
    if weights is not None:
        ovewrite_named_param(kwargs, "input_size", weights.meta["min_size"])
    input_size = kwargs.pop("input_size", (224, 224))
    model = MaxVit(stem_channels=64, block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2],
                   head_dim=32, stochastic_depth_prob=0.2, partition_size=7,
                   input_size=input_size, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


maxvit_t = make_builder(
    "maxvit_t", MaxVit_T_Weights, _build,
    "MaxViT-T from `MaxViT: Multi-Axis Vision Transformer <https://arxiv.org/abs/2204.01697>`_.")
