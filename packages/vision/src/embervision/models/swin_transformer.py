"""Swin Transformer (Liu et al., 2021) T/S/B and Swin Transformer V2 (Liu et al., 2022) T/S/B:
self-attention inside shifted windows, with torchvision's module names."""

from __future__ import annotations

import itertools
import math
from functools import partial

import numpy as np

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.ops.misc import MLP, Permute
from embervision.ops.stochastic_depth import StochasticDepth
from embervision.transforms._utils import InterpolationMode

__all__ = [
    "SwinTransformer",
    "Swin_T_Weights",
    "Swin_S_Weights",
    "Swin_B_Weights",
    "Swin_V2_T_Weights",
    "Swin_V2_S_Weights",
    "Swin_V2_B_Weights",
    "swin_t",
    "swin_s",
    "swin_b",
    "swin_v2_t",
    "swin_v2_s",
    "swin_v2_b",
]


def _patch_merging_pad(x):
    """``[..., H, W, C]`` -> ``[..., H/2, W/2, 4C]``: each 2x2 neighbourhood's features side
    by side (odd sizes padded with zeros)."""
    h, w = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
    return ember.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :],
                      x[..., 1::2, 1::2, :]], -1)


def _get_relative_position_bias(table, index, window_size):
    n = window_size[0] * window_size[1]
    bias = table[index].view(n, n, -1)
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


class PatchMerging(nn.Module):
    """Halves the resolution and doubles the channels: 2x2 patches concatenated, LayerNorm,
    then a linear reduction 4C -> 2C.

    Args:
        dim (int): input channels.
        norm_layer (callable): Default: ``nn.LayerNorm``.
    """

    def __init__(self, dim: int, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """Patch merging of Swin V2: the norm after the reduction."""

    def __init__(self, dim: int, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(_patch_merging_pad(x)))


def _shift_mask(padded_size, window_size, shift_size):
    """The additive mask (0 or -100) that keeps a shifted window from attending across the
    regions that the cyclic shift brought together: ``[windows, volume, volume]`` for a
    ``padded_size`` feature map (2-D or 3-D) cut into windows of ``window_size``."""
    region = np.zeros(padded_size, np.float32)
    bounds = [((0, -w), (-w, -s), (-s, None)) for w, s in zip(window_size, shift_size)]
    for count, corner in enumerate(itertools.product(*bounds)):
        region[tuple(slice(a, b) for a, b in corner)] = count
    split = [n for size, w in zip(padded_size, window_size) for n in (size // w, w)]
    dims = len(padded_size)
    region = region.reshape(split).transpose([*range(0, 2 * dims, 2), *range(1, 2 * dims, 2)])
    region = region.reshape(-1, math.prod(window_size))
    diff = region[:, None, :] - region[:, :, None]
    return np.where(diff != 0, np.float32(-100.0), np.float32(0.0))


def shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias,
                             window_size, num_heads, shift_size, attention_dropout=0.0,
                             dropout=0.0, qkv_bias=None, proj_bias=None, logit_scale=None,
                             training=True):
    """Multi-head self-attention inside (shifted) windows, with a relative position bias.

    Args:
        input (Tensor[N, H, W, C]): the features.
        qkv_weight (Tensor[3C, C]), proj_weight (Tensor[C, C]): the projections.
        relative_position_bias (Tensor): added to the attention logits.
        window_size (list of int): the window.
        num_heads (int): attention heads.
        shift_size (list of int): the cyclic shift (0 for plain windows); dropped along a
            side the window already covers.
        attention_dropout (float), dropout (float): Default: 0.0.
        qkv_bias (Tensor, optional), proj_bias (Tensor, optional): the biases.
        logit_scale (Tensor, optional): cosine attention with this (clamped) scale, Swin V2;
            the key bias is then zero.
        training (bool): whether dropout is applied. Default: True.

    Returns:
        Tensor[N, H, W, C]
    """
    b, h, w, c = input.shape
    pad_r = (window_size[1] - w % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - h % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_h, pad_w, _ = x.shape
    shift_size = list(shift_size)
    if window_size[0] >= pad_h:
        shift_size[0] = 0
    if window_size[1] >= pad_w:
        shift_size[1] = 0
    shifted = sum(shift_size) > 0
    if shifted:
        x = ember.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    nh, nw = pad_h // window_size[0], pad_w // window_size[1]
    num_windows = nh * nw
    area = window_size[0] * window_size[1]
    x = x.view(b, nh, window_size[0], nw, window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b * num_windows, area, c)
    if logit_scale is not None and qkv_bias is not None:
        length = qkv_bias.numel() // 3
        qkv_bias = ember.cat([qkv_bias[:length], ember.zeros_like(qkv_bias[length:2 * length]),
                              qkv_bias[2 * length:]])
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), x.size(1), 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * ember.clamp(logit_scale, max=math.log(100.0)).exp()
    else:
        attn = (q * (c // num_heads) ** -0.5).matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias
    if shifted:
        mask = ember.from_numpy(_shift_mask((pad_h, pad_w), window_size, shift_size)).to(
            dtype=attn.dtype, device=attn.device)
        attn = attn.view(x.size(0) // num_windows, num_windows, num_heads, area, area)
        attn = (attn + mask.unsqueeze(1).unsqueeze(0)).view(-1, num_heads, area, area)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), area, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(b, nh, nw, window_size[0], window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, pad_h, pad_w, c)
    if shifted:
        x = ember.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :h, :w, :].contiguous()


class _WindowAttention(nn.Module):
    """What the window attentions of the 2-D and the video (3-D) Swin share: the projections
    and a learned relative position bias table over windows of ``dims`` sides."""

    dims = 2

    def __init__(self, dim: int, window_size, shift_size, num_heads: int, qkv_bias: bool = True,
                 proj_bias: bool = True, attention_dropout: float = 0.0, dropout: float = 0.0):
        super().__init__()
        if len(window_size) != self.dims or len(shift_size) != self.dims:
            raise ValueError(f"window_size and shift_size must be of length {self.dims}")
        self.window_size = list(window_size)
        self.shift_size = list(shift_size)
        self.num_heads = num_heads
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.define_relative_position_index()

    def define_relative_position_bias_table(self):
        size = math.prod(2 * w - 1 for w in self.window_size)
        self.relative_position_bias_table = nn.Parameter(ember.zeros(size, self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def _pairwise_index(self):
        """``[V, V]``: the row of the bias table for each pair of positions in a window of
        volume V (their offset along each side, in mixed radix ``2 * side - 1``)."""
        grids = np.meshgrid(*(np.arange(w) for w in self.window_size), indexing="ij")
        coords = np.stack(grids).reshape(self.dims, -1)
        rel = coords[:, :, None] - coords[:, None, :]
        index = np.zeros(rel.shape[1:], np.int64)
        for offset, w in zip(rel, self.window_size):
            index = index * (2 * w - 1) + offset + w - 1
        return index


class ShiftedWindowAttention(_WindowAttention):
    """Module form of :func:`shifted_window_attention` with a learned relative position bias
    table."""

    def define_relative_position_index(self):
        self.register_buffer("relative_position_index",
                             ember.from_numpy(self._pairwise_index().reshape(-1)))

    def get_relative_position_bias(self):
        return _get_relative_position_bias(self.relative_position_bias_table,
                                           self.relative_position_index, self.window_size)

    def _attention(self, x, logit_scale=None):
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
            self.window_size, self.num_heads, shift_size=self.shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, logit_scale=logit_scale,
            training=self.training)

    def forward(self, x):
        return self._attention(x)


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    """Swin V2 attention: cosine similarity with a learned logit scale, and the position bias
    from a small MLP on log-spaced relative coordinates."""

    def __init__(self, dim: int, window_size, shift_size, num_heads: int, qkv_bias: bool = True,
                 proj_bias: bool = True, attention_dropout: float = 0.0, dropout: float = 0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias,
                         proj_bias=proj_bias, attention_dropout=attention_dropout,
                         dropout=dropout)
        self.logit_scale = nn.Parameter(ember.log(10 * ember.ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            length = self.qkv.bias.numel() // 3
            with ember.no_grad():
                self.qkv.bias[length:2 * length] = 0.0

    def define_relative_position_bias_table(self):
        wh, ww = self.window_size
        f32 = np.float32
        table = np.stack(np.meshgrid(np.arange(-(wh - 1), wh, dtype=f32),
                                     np.arange(-(ww - 1), ww, dtype=f32), indexing="ij"))
        table = np.ascontiguousarray(table.transpose(1, 2, 0))[None]
        table[..., 0] /= f32(wh - 1)
        table[..., 1] /= f32(ww - 1)
        table *= f32(8)  # to [-8, 8]
        table = np.sign(table) * np.log2(np.abs(table) + f32(1.0)) / f32(3.0)
        self.register_buffer("relative_coords_table", ember.from_numpy(table.astype(f32)))

    def get_relative_position_bias(self):
        bias = _get_relative_position_bias(
            self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads),
            self.relative_position_index, self.window_size)
        return 16 * ember.sigmoid(bias)

    def forward(self, x):
        return self._attention(x, logit_scale=self.logit_scale)


class SwinTransformerBlock(nn.Module):
    """Pre-norm block: window attention and MLP, each with stochastic depth and a residual.

    Args:
        dim (int): channels.
        num_heads (int): attention heads.
        window_size (list of int): the window.
        shift_size (list of int): the shift of the windows.
        mlp_ratio (float): Default: 4.0.
        dropout (float), attention_dropout (float), stochastic_depth_prob (float):
            Default: 0.0.
        norm_layer (callable): Default: ``nn.LayerNorm``.
        attn_layer (callable): Default: :class:`ShiftedWindowAttention`.
    """

    def __init__(self, dim: int, num_heads: int, window_size, shift_size, mlp_ratio: float = 4.0,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.0, norm_layer=nn.LayerNorm,
                 attn_layer=ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads,
                               attention_dropout=attention_dropout, dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None,
                       dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """Swin V2 block: post-norm residual branches (res-post-norm)."""

    def __init__(self, dim: int, num_heads: int, window_size, shift_size, mlp_ratio: float = 4.0,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.0, norm_layer=nn.LayerNorm,
                 attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio,
                         dropout=dropout, attention_dropout=attention_dropout,
                         stochastic_depth_prob=stochastic_depth_prob, norm_layer=norm_layer,
                         attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


def _swin_stages(block, embed_dim, depths, num_heads, window_size, mlp_ratio, dropout,
                attention_dropout, stochastic_depth_prob, norm_layer, downsample_layer,
                **block_kwargs) -> list:
    """The stages of a Swin (2-D or video): ``depths[i]`` blocks of ``embed_dim * 2**i``
    channels, every other one with windows shifted by half, stochastic depth growing linearly
    to ``stochastic_depth_prob``, and a ``downsample_layer`` between stages."""
    layers = []
    total = sum(depths)
    block_id = 0
    for i_stage, depth in enumerate(depths):
        dim = embed_dim * 2 ** i_stage
        stage = []
        for i_layer in range(depth):
            sd_prob = stochastic_depth_prob * float(block_id) / (total - 1)
            stage.append(block(dim, num_heads[i_stage], window_size=window_size,
                               shift_size=[0 if i_layer % 2 == 0 else w // 2
                                           for w in window_size],
                               mlp_ratio=mlp_ratio, dropout=dropout,
                               attention_dropout=attention_dropout,
                               stochastic_depth_prob=sd_prob, norm_layer=norm_layer,
                               **block_kwargs))
            block_id += 1
        layers.append(nn.Sequential(*stage))
        if i_stage < len(depths) - 1:
            layers.append(downsample_layer(dim, norm_layer))
    return layers


class SwinTransformer(nn.Module):
    """Swin Transformer: a patch embedding, stages of (shifted) window blocks separated by
    patch merging, a norm, global pooling and a linear head.

    Args:
        patch_size (list of int): the patch embedding's kernel and stride.
        embed_dim (int): channels of the first stage (doubled at each later one).
        depths (list of int): blocks per stage.
        num_heads (list of int): attention heads per stage.
        window_size (list of int): the attention window.
        mlp_ratio (float): Default: 4.0.
        dropout (float), attention_dropout (float): Default: 0.0.
        stochastic_depth_prob (float): reached by the last block. Default: 0.1.
        num_classes (int): Default: 1000.
        norm_layer (callable, optional): Default: ``LayerNorm(eps=1e-5)``.
        block (callable, optional): Default: :class:`SwinTransformerBlock`.
        downsample_layer (callable): Default: :class:`PatchMerging`.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, patch_size, embed_dim: int, depths, num_heads, window_size,
                 mlp_ratio: float = 4.0, dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.1, num_classes: int = 1000, norm_layer=None,
                 block=None, downsample_layer=PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        block = block or SwinTransformerBlock
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(
            nn.Conv2d(3, embed_dim, kernel_size=(patch_size[0], patch_size[1]),
                      stride=(patch_size[0], patch_size[1])),
            Permute([0, 2, 3, 1]),
            norm_layer(embed_dim))]
        layers += _swin_stages(block, embed_dim, depths, num_heads, window_size, mlp_ratio,
                              dropout, attention_dropout, stochastic_depth_prob, norm_layer,
                              downsample_layer)
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#swintransformer"
_RECIPE_V2 = "https://github.com/pytorch/vision/tree/main/references/classification#swintransformer-v2"


class Swin_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_b-68c6b09e", 87768224, _RECIPE, 83.582, 96.64, 15.431, 335.364, min_size=(224, 224),
        resize_size=238, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class Swin_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_s-5e29d889", 49606258, _RECIPE, 83.196, 96.36, 8.741, 189.786, min_size=(224, 224),
        resize_size=246, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class Swin_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_t-704ceda3", 28288354, _RECIPE, 81.474, 95.776, 4.491, 108.19, min_size=(224, 224),
        resize_size=232, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_v2_b-781e5279", 87930848, _RECIPE_V2, 84.112, 96.864, 20.325, 336.372,
        min_size=(256, 256), crop_size=256, resize_size=272,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_v2_s-637d8ceb", 49737442, _RECIPE_V2, 83.712, 96.816, 11.546, 190.675,
        min_size=(256, 256), crop_size=256, resize_size=260,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "swin_v2_t-b137f0e2", 28351570, _RECIPE_V2, 82.072, 96.132, 5.94, 108.626,
        min_size=(256, 256), crop_size=256, resize_size=260,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


# name: (weights enum, embed_dim, depths, num_heads, window, stochastic depth, version 2)
_VARIANTS = {
    "swin_t": (Swin_T_Weights, 96, [2, 2, 6, 2], [3, 6, 12, 24], 7, 0.2, False),
    "swin_s": (Swin_S_Weights, 96, [2, 2, 18, 2], [3, 6, 12, 24], 7, 0.3, False),
    "swin_b": (Swin_B_Weights, 128, [2, 2, 18, 2], [4, 8, 16, 32], 7, 0.5, False),
    "swin_v2_t": (Swin_V2_T_Weights, 96, [2, 2, 6, 2], [3, 6, 12, 24], 8, 0.2, True),
    "swin_v2_s": (Swin_V2_S_Weights, 96, [2, 2, 18, 2], [3, 6, 12, 24], 8, 0.3, True),
    "swin_v2_b": (Swin_V2_B_Weights, 128, [2, 2, 18, 2], [4, 8, 16, 32], 8, 0.5, True),
}


def _builder(arch):
    enum, embed_dim, depths, num_heads, window, sd_prob, v2 = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        if v2:
            kwargs.setdefault("block", SwinTransformerBlockV2)
            kwargs.setdefault("downsample_layer", PatchMergingV2)
        model = SwinTransformer(patch_size=[4, 4], embed_dim=embed_dim, depths=depths,
                                num_heads=num_heads, window_size=[window, window],
                                stochastic_depth_prob=sd_prob, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    size = arch[-1].upper()
    if v2:
        doc = (f"Swin Transformer V2 {size} from `Swin Transformer V2: Scaling Up Capacity and "
               "Resolution <https://arxiv.org/abs/2111.09883>`_.")
    else:
        doc = (f"Swin Transformer {size} from `Swin Transformer: Hierarchical Vision Transformer "
               "using Shifted Windows <https://arxiv.org/abs/2103.14030>`_.")
    return make_builder(arch, enum, build, doc)


swin_t = _builder("swin_t")
swin_s = _builder("swin_s")
swin_b = _builder("swin_b")
swin_v2_t = _builder("swin_v2_t")
swin_v2_s = _builder("swin_v2_s")
swin_v2_b = _builder("swin_v2_b")
