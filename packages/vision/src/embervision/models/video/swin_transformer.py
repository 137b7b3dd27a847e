"""Video Swin Transformer (Liu et al., 2022) T/S/B: the 2-D Swin's blocks and patch merging
with attention inside shifted 3-D windows, with torchvision's module names so that its
Kinetics-400 checkpoints load."""

from __future__ import annotations

import math
from functools import partial

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, make_builder
from embervision.models.swin_transformer import (
    PatchMerging,
    SwinTransformerBlock,
    _shift_mask,
    _swin_stages,
    _WindowAttention,
)
from embervision.models.video._utils import kinetics_weights, with_weights

__all__ = [
    "SwinTransformer3d",
    "Swin3D_T_Weights",
    "Swin3D_S_Weights",
    "Swin3D_B_Weights",
    "swin3d_t",
    "swin3d_s",
    "swin3d_b",
]


def _pad_size(size_dhw, patch_size) -> list[int]:
    return [(p - s % p) % p for s, p in zip(size_dhw, patch_size)]


def shifted_window_attention_3d(input, qkv_weight, proj_weight, relative_position_bias,
                                window_size: list[int], num_heads: int, shift_size: list[int],
                                attention_dropout: float = 0.0, dropout: float = 0.0,
                                qkv_bias=None, proj_bias=None, training: bool = True):
    """Multi-head self-attention inside (shifted) 3-D windows, with a relative position bias.

    Args:
        input (Tensor[B, T, H, W, C]): the features.
        qkv_weight (Tensor[3C, C]), proj_weight (Tensor[C, C]): the projections.
        relative_position_bias (Tensor): added to the attention logits.
        window_size (list of int): the window ``(T, H, W)``.
        num_heads (int): attention heads.
        shift_size (list of int): the cyclic shift ``(T, H, W)``; all 0 for plain windows.
        attention_dropout (float), dropout (float): Default: 0.0.
        qkv_bias (Tensor, optional), proj_bias (Tensor, optional): the biases.
        training (bool): whether dropout is applied. Default: True.

    Returns:
        Tensor[B, T, H, W, C]
    """
    b, t, h, w, c = input.shape
    pad = _pad_size((t, h, w), window_size)
    x = F.pad(input, (0, 0, 0, pad[2], 0, pad[1], 0, pad[0]))
    padded = tuple(x.shape[1:4])
    shifted = sum(shift_size) > 0
    if shifted:
        x = ember.roll(x, shifts=tuple(-s for s in shift_size), dims=(1, 2, 3))
    nt, nh, nw = (p // s for p, s in zip(padded, window_size))
    num_windows = nt * nh * nw
    volume = math.prod(window_size)
    x = x.view(b, nt, window_size[0], nh, window_size[1], nw, window_size[2], c)
    x = x.permute(0, 1, 3, 5, 2, 4, 6, 7).reshape(b * num_windows, volume, c)
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), volume, 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    attn = (q * (c // num_heads) ** -0.5).matmul(k.transpose(-2, -1)) + relative_position_bias
    if shifted:
        mask = ember.from_numpy(_shift_mask(padded, window_size, shift_size)).to(
            dtype=attn.dtype, device=attn.device)
        attn = attn.view(b, num_windows, num_heads, volume, volume)
        attn = (attn + mask.unsqueeze(1).unsqueeze(0)).view(-1, num_heads, volume, volume)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), volume, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(b, nt, nh, nw, window_size[0], window_size[1], window_size[2], c)
    x = x.permute(0, 1, 4, 2, 5, 3, 6, 7).reshape(b, *padded, c)
    if shifted:
        x = ember.roll(x, shifts=tuple(shift_size), dims=(1, 2, 3))
    return x[:, :t, :h, :w, :].contiguous()


class ShiftedWindowAttention3d(_WindowAttention):
    """Module form of :func:`shifted_window_attention_3d` with a learned relative position
    bias table; along a side the input does not exceed, the window shrinks to the input and
    does not shift."""

    dims = 3

    def define_relative_position_index(self) -> None:
        self.register_buffer("relative_position_index",
                             ember.from_numpy(self._pairwise_index()))

    def get_relative_position_bias(self, window_size: list[int]):
        # A shrunken window takes the first rows and columns of the full window's index, as
        # torchvision does.
        volume = math.prod(window_size)
        index = self.relative_position_index[:volume, :volume].flatten()
        bias = self.relative_position_bias_table[index].view(volume, volume, -1)
        return bias.permute(2, 0, 1).contiguous().unsqueeze(0)

    def forward(self, x):
        window_size, shift_size = list(self.window_size), list(self.shift_size)
        for i, size in enumerate(x.shape[1:4]):
            if size <= window_size[i]:
                window_size[i], shift_size[i] = size, 0
        return shifted_window_attention_3d(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(window_size),
            window_size, self.num_heads, shift_size=shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, training=self.training)


class PatchEmbed3d(nn.Module):
    """Clip to patch embedding: zero-padded to whole patches, a strided ``Conv3d``, channels
    last and a norm.

    Args:
        patch_size (list of int): the patch ``(T, H, W)``.
        in_channels (int): Default: 3.
        embed_dim (int): Default: 96.
        norm_layer (callable, optional): Default: None (no norm).
    """

    def __init__(self, patch_size: list[int], in_channels: int = 3, embed_dim: int = 96,
                 norm_layer=None) -> None:
        super().__init__()
        self.tuple_patch_size = (patch_size[0], patch_size[1], patch_size[2])
        self.proj = nn.Conv3d(in_channels, embed_dim, kernel_size=self.tuple_patch_size,
                              stride=self.tuple_patch_size)
        self.norm = norm_layer(embed_dim) if norm_layer is not None else nn.Identity()

    def forward(self, x):
        pad = _pad_size(x.shape[2:], self.tuple_patch_size)
        x = self.proj(F.pad(x, (0, pad[2], 0, pad[1], 0, pad[0])))
        return self.norm(x.permute(0, 2, 3, 4, 1))


class SwinTransformer3d(nn.Module):
    """Video Swin Transformer on clips ``(N, 3, T, H, W)``: a patch embedding, stages of
    (shifted) 3-D window blocks separated by patch merging, a norm, global pooling and a
    linear head.

    Args:
        patch_size (list of int): the patch ``(T, H, W)``.
        embed_dim (int): channels of the first stage (doubled at each later one).
        depths (list of int): blocks per stage.
        num_heads (list of int): attention heads per stage.
        window_size (list of int): the attention window ``(T, H, W)``.
        mlp_ratio (float): Default: 4.0.
        dropout (float), attention_dropout (float): Default: 0.0.
        stochastic_depth_prob (float): reached by the last block. Default: 0.1.
        num_classes (int): Default: 400.
        norm_layer (callable, optional): Default: ``LayerNorm(eps=1e-5)``.
        block (callable, optional): Default: the 2-D Swin's block with
            :class:`ShiftedWindowAttention3d`.
        downsample_layer (callable): Default: the 2-D Swin's ``PatchMerging``.
        patch_embed (callable, optional): Default: :class:`PatchEmbed3d`.
    """

    def __init__(self, patch_size: list[int], embed_dim: int, depths: list[int],
                 num_heads: list[int], window_size: list[int], mlp_ratio: float = 4.0,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.1, num_classes: int = 400, norm_layer=None,
                 block=None, downsample_layer=PatchMerging, patch_embed=None) -> None:
        super().__init__()
        self.num_classes = num_classes
        if block is None:
            block = partial(SwinTransformerBlock, attn_layer=ShiftedWindowAttention3d)
        if norm_layer is None:
            norm_layer = partial(nn.LayerNorm, eps=1e-5)
        if patch_embed is None:
            patch_embed = PatchEmbed3d
        self.patch_embed = patch_embed(patch_size=patch_size, embed_dim=embed_dim,
                                       norm_layer=norm_layer)
        self.pos_drop = nn.Dropout(p=dropout)
        # torchvision passes attn_layer to any block, its default one included
        layers = _swin_stages(block, embed_dim, depths, num_heads, window_size, mlp_ratio,
                             dropout, attention_dropout, stochastic_depth_prob, norm_layer,
                             downsample_layer, attn_layer=ShiftedWindowAttention3d)
        self.features = nn.Sequential(*layers)
        self.num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool3d(1)
        self.head = nn.Linear(self.num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.norm(self.features(self.pos_drop(self.patch_embed(x))))
        x = self.avgpool(x.permute(0, 4, 1, 2, 3))
        return self.head(ember.flatten(x, 1))


_COMMON = {"crop_size": (224, 224), "resize_size": (256,), "mean": (0.4850, 0.4560, 0.4060),
           "std": (0.2290, 0.2240, 0.2250), "min_size": (1, 1), "min_temporal_size": 1,
           "recipe": "https://github.com/SwinTransformer/Video-Swin-Transformer#kinetics-400",
           "docs": ("The weights were ported from the paper. The accuracies are estimated on "
                    "video-level with parameters `frame_rate=15`, `clips_per_video=12`, and "
                    "`clip_len=32`")}


class Swin3D_T_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "swin3d_t-7615ae03", num_params=28158070, acc1=77.715, acc5=93.519, ops=43.882,
        file_size=121.543, **_COMMON)
    DEFAULT = KINETICS400_V1


class Swin3D_S_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "swin3d_s-da41c237", num_params=49816678, acc1=79.521, acc5=94.158, ops=82.841,
        file_size=218.288, **_COMMON)
    DEFAULT = KINETICS400_V1


class Swin3D_B_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "swin3d_b_1k-24f7c7c6", num_params=88048984, acc1=79.427, acc5=94.386, ops=140.667,
        file_size=364.134, **_COMMON)
    KINETICS400_IMAGENET22K_V1 = kinetics_weights(
        "swin3d_b_22k-7c6ae6fa", num_params=88048984, acc1=81.643, acc5=95.574, ops=140.667,
        file_size=364.134, **_COMMON)
    DEFAULT = KINETICS400_V1


# name: (weights enum, embed_dim, depths, num_heads)
_VARIANTS = {
    "swin3d_t": (Swin3D_T_Weights, 96, [2, 2, 6, 2], [3, 6, 12, 24]),
    "swin3d_s": (Swin3D_S_Weights, 96, [2, 2, 18, 2], [3, 6, 12, 24]),
    "swin3d_b": (Swin3D_B_Weights, 128, [2, 2, 18, 2], [4, 8, 16, 32]),
}


def _builder(arch):
    enum, embed_dim, depths, num_heads = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        model = SwinTransformer3d(patch_size=[2, 4, 4], embed_dim=embed_dim, depths=depths,
                                  num_heads=num_heads, window_size=[8, 7, 7],
                                  stochastic_depth_prob=0.1, **kwargs)
        return with_weights(model, weights, progress)

    doc = (f"The {arch[-1].upper()} Video Swin Transformer of `Video Swin Transformer "
           "<https://arxiv.org/abs/2106.13230>`_.")
    return make_builder(arch, enum, build, doc)


swin3d_t = _builder("swin3d_t")
swin3d_s = _builder("swin3d_s")
swin3d_b = _builder("swin3d_b")
