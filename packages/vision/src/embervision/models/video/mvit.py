"""Multiscale Vision Transformers: MViT V1 (Fan et al., 2021) and V2 (Li et al., 2022), with
torchvision's module names so that its Kinetics-400 checkpoints load.

Attention runs on a token sequence (a class token then ``T x H x W`` patches); queries, keys
and values are pooled by depthwise 3-D convolutions, shrinking the resolution stage by stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, make_builder, ovewrite_named_param
from embervision.models.video._utils import kinetics_weights, with_weights
from embervision.ops.misc import MLP
from embervision.ops.stochastic_depth import StochasticDepth

__all__ = [
    "MViT",
    "MViT_V1_B_Weights",
    "mvit_v1_b",
    "MViT_V2_S_Weights",
    "mvit_v2_s",
]


@dataclass
class MSBlockConfig:
    """One block of an MViT: heads, channels in and out, and the kernels and strides of the
    query and key/value pooling (empty lists: no pooling)."""

    num_heads: int
    input_channels: int
    output_channels: int
    kernel_q: list[int]
    kernel_kv: list[int]
    stride_q: list[int]
    stride_kv: list[int]


def _pools(kernel, stride) -> bool:
    return math.prod(kernel) > 1 or math.prod(stride) > 1


class Pool(nn.Module):
    """Pools the patch tokens of ``[B, heads, 1 + T*H*W, C]`` (or ``[B, 1 + T*H*W, C]``) as a
    ``T x H x W`` volume, keeping the class token; returns the tokens and the new ``(T, H, W)``.

    Args:
        pool (nn.Module): a 3-D pooling or convolution.
        norm (nn.Module, optional): applied to the tokens.
        activation (nn.Module, optional): applied after the norm.
        norm_before_pool (bool): norm the volume before pooling. Default: False.
    """

    def __init__(self, pool: nn.Module, norm: nn.Module | None,
                 activation: nn.Module | None = None, norm_before_pool: bool = False) -> None:
        super().__init__()
        self.pool = pool
        layers = [m for m in (norm, activation) if m is not None]
        self.norm_act = nn.Sequential(*layers) if layers else None
        self.norm_before_pool = norm_before_pool

    def forward(self, x, thw):
        squeeze = x.dim() == 3
        if squeeze:
            x = x.unsqueeze(1)
        elif x.dim() != 4:
            raise ValueError(f"Unsupported input dimension {x.shape}")
        class_token, x = x[:, :, :1], x[:, :, 1:]
        b, n, _, c = x.shape
        x = x.transpose(2, 3).reshape((b * n, c) + tuple(thw))
        if self.norm_before_pool and self.norm_act is not None:
            x = self.norm_act(x)
        x = self.pool(x)
        thw = tuple(x.shape[2:])
        x = ember.cat((class_token, x.reshape(b, n, c, -1).transpose(2, 3)), dim=2)
        if not self.norm_before_pool and self.norm_act is not None:
            x = self.norm_act(x)
        return (x.squeeze(1) if squeeze else x), thw


def _interpolate(embedding, d: int):
    """The ``[L, C]`` table linearly resampled to ``d`` rows (itself when it has them)."""
    if embedding.shape[0] == d:
        return embedding
    return F.interpolate(embedding.permute(1, 0).unsqueeze(0), size=d,
                         mode="linear").squeeze(0).permute(1, 0)


def _relative_index(q: int, k: int):
    # Distances between query and key positions on a common (finer) grid, shifted to start at
    # 0; float32 arithmetic truncated to integers as torchvision computes them.
    f32 = np.float32
    q_ratio, k_ratio = f32(max(k / q, 1.0)), f32(max(q / k, 1.0))
    dist = (np.arange(q, dtype=f32)[:, None] * q_ratio
            - (np.arange(k, dtype=f32)[None, :] + f32(1.0 - k)) * k_ratio)
    return ember.from_numpy(dist.astype(np.int64))


def _add_rel_pos(attn, q, q_thw, k_thw, rel_pos_h, rel_pos_w, rel_pos_t):
    """Adds MViT V2's decomposed relative position terms (query . table[distance] along T, H
    and W) to the patch-to-patch attention logits ``attn[:, :, 1:, 1:]``."""
    (q_t, q_h, q_w), (k_t, k_h, k_w) = q_thw, k_thw
    r_h = _interpolate(rel_pos_h, 2 * max(q_h, k_h) - 1)[_relative_index(q_h, k_h)]
    r_w = _interpolate(rel_pos_w, 2 * max(q_w, k_w) - 1)[_relative_index(q_w, k_w)]
    r_t = _interpolate(rel_pos_t, 2 * max(q_t, k_t) - 1)[_relative_index(q_t, k_t)]
    b, heads, _, dim = q.shape
    r_q = q[:, :, 1:].reshape(b, heads, q_t, q_h, q_w, dim)
    rel_h = ember.einsum("bythwc,hkc->bythwk", r_q, r_h)
    rel_w = ember.einsum("bythwc,wkc->bythwk", r_q, r_w)
    rel_t = ember.einsum("bythwc,tkc->bythwk", r_q, r_t)
    rel_pos = (rel_h[:, :, :, :, :, None, :, None] + rel_w[:, :, :, :, :, None, None, :]
               + rel_t[:, :, :, :, :, :, None, None])
    rel_pos = rel_pos.reshape(b, heads, q_t * q_h * q_w, k_t * k_h * k_w)
    return attn + F.pad(rel_pos, (1, 0, 1, 0))  # the class token's row and column: nothing


def _add_shortcut(x, shortcut, residual_with_cls_embed: bool):
    if residual_with_cls_embed:
        return x + shortcut
    return x + F.pad(shortcut[:, :, 1:, :], (0, 0, 1, 0))


def _depthwise_pool(dim: int, kernel, stride, norm_layer) -> Pool:
    return Pool(nn.Conv3d(dim, dim, kernel, stride=stride, padding=[k // 2 for k in kernel],
                          groups=dim, bias=False), norm_layer(dim))


class MultiscaleAttention(nn.Module):
    """Multi-head attention with pooled queries, keys and values (and, in V2, the pooling
    residual and relative positions).

    Args:
        input_size (list of int): ``[T, H, W]`` of the block's input (sizes the V2 tables).
        embed_dim (int), output_dim (int): channels in and out.
        num_heads (int): attention heads.
        kernel_q, kernel_kv, stride_q, stride_kv (list of int): the pooling.
        residual_pool (bool): add the pooled queries to the output (V2).
        residual_with_cls_embed (bool): that residual includes the class token.
        rel_pos_embed (bool): relative position terms (V2).
        dropout (float): after the projection. Default: 0.0.
        norm_layer (callable): of the pooled tokens. Default: ``nn.LayerNorm``.
    """

    def __init__(self, input_size: list[int], embed_dim: int, output_dim: int, num_heads: int,
                 kernel_q: list[int], kernel_kv: list[int], stride_q: list[int],
                 stride_kv: list[int], residual_pool: bool, residual_with_cls_embed: bool,
                 rel_pos_embed: bool, dropout: float = 0.0, norm_layer=nn.LayerNorm) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.output_dim = output_dim
        self.num_heads = num_heads
        self.head_dim = output_dim // num_heads
        self.scaler = 1.0 / math.sqrt(self.head_dim)
        self.residual_pool = residual_pool
        self.residual_with_cls_embed = residual_with_cls_embed
        self.qkv = nn.Linear(embed_dim, 3 * output_dim)
        layers = [nn.Linear(output_dim, output_dim)]
        if dropout > 0.0:
            layers.append(nn.Dropout(dropout, inplace=True))
        self.project = nn.Sequential(*layers)
        self.pool_q = (_depthwise_pool(self.head_dim, kernel_q, stride_q, norm_layer)
                       if _pools(kernel_q, stride_q) else None)
        self.pool_k = self.pool_v = None
        if _pools(kernel_kv, stride_kv):
            self.pool_k = _depthwise_pool(self.head_dim, kernel_kv, stride_kv, norm_layer)
            self.pool_v = _depthwise_pool(self.head_dim, kernel_kv, stride_kv, norm_layer)
        self.rel_pos_h = self.rel_pos_w = self.rel_pos_t = None
        if rel_pos_embed:
            size = max(input_size[1:])
            q_size = size // stride_q[1] if len(stride_q) > 0 else size
            kv_size = size // stride_kv[1] if len(stride_kv) > 0 else size
            spatial_dim = 2 * max(q_size, kv_size) - 1
            temporal_dim = 2 * input_size[0] - 1
            self.rel_pos_h = nn.Parameter(ember.zeros(spatial_dim, self.head_dim))
            self.rel_pos_w = nn.Parameter(ember.zeros(spatial_dim, self.head_dim))
            self.rel_pos_t = nn.Parameter(ember.zeros(temporal_dim, self.head_dim))
            for table in (self.rel_pos_h, self.rel_pos_w, self.rel_pos_t):
                nn.init.trunc_normal_(table, std=0.02)

    def forward(self, x, thw):
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).transpose(1, 3)
        q, k, v = qkv.unbind(dim=2)
        k_thw = thw
        if self.pool_k is not None:
            k, k_thw = self.pool_k(k, thw)
        if self.pool_v is not None:
            v = self.pool_v(v, thw)[0]
        if self.pool_q is not None:
            q, thw = self.pool_q(q, thw)
        attn = ember.matmul(self.scaler * q, k.transpose(2, 3))
        if self.rel_pos_h is not None:
            attn = _add_rel_pos(attn, q, thw, k_thw, self.rel_pos_h, self.rel_pos_w,
                                self.rel_pos_t)
        x = ember.matmul(attn.softmax(dim=-1), v)
        if self.residual_pool:
            x = _add_shortcut(x, q, self.residual_with_cls_embed)
        x = x.transpose(1, 2).reshape(b, -1, self.output_dim)
        return self.project(x), thw


class MultiscaleBlock(nn.Module):
    """Pre-norm block: multiscale attention and an MLP, each with stochastic depth and a
    residual (max-pooled where the queries are, projected where the width changes).

    Args:
        input_size (list of int): ``[T, H, W]`` of the input.
        cnf (MSBlockConfig): the block.
        residual_pool, residual_with_cls_embed, rel_pos_embed (bool): see
            :class:`MultiscaleAttention`.
        proj_after_attn (bool): change the width in the attention (V2) rather than the MLP.
        dropout (float): of the attention projection and the MLP. Default: 0.0.
        stochastic_depth_prob (float): Default: 0.0.
        norm_layer (callable): Default: ``nn.LayerNorm``.
    """

    def __init__(self, input_size: list[int], cnf: MSBlockConfig, residual_pool: bool,
                 residual_with_cls_embed: bool, rel_pos_embed: bool, proj_after_attn: bool,
                 dropout: float = 0.0, stochastic_depth_prob: float = 0.0,
                 norm_layer=nn.LayerNorm) -> None:
        super().__init__()
        self.proj_after_attn = proj_after_attn
        self.pool_skip = None
        if math.prod(cnf.stride_q) > 1:
            kernel_skip = [s + 1 if s > 1 else s for s in cnf.stride_q]
            self.pool_skip = Pool(nn.MaxPool3d(kernel_skip, stride=cnf.stride_q,
                                               padding=[k // 2 for k in kernel_skip]), None)
        attn_dim = cnf.output_channels if proj_after_attn else cnf.input_channels
        self.norm1 = norm_layer(cnf.input_channels)
        self.norm2 = norm_layer(attn_dim)
        self.needs_transposal = isinstance(self.norm1, nn.BatchNorm1d)
        self.attn = MultiscaleAttention(
            input_size, cnf.input_channels, attn_dim, cnf.num_heads, kernel_q=cnf.kernel_q,
            kernel_kv=cnf.kernel_kv, stride_q=cnf.stride_q, stride_kv=cnf.stride_kv,
            rel_pos_embed=rel_pos_embed, residual_pool=residual_pool,
            residual_with_cls_embed=residual_with_cls_embed, dropout=dropout,
            norm_layer=norm_layer)
        self.mlp = MLP(attn_dim, [4 * attn_dim, cnf.output_channels], activation_layer=nn.GELU,
                       dropout=dropout, inplace=None)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.project = None
        if cnf.input_channels != cnf.output_channels:
            self.project = nn.Linear(cnf.input_channels, cnf.output_channels)

    def _norm(self, norm, x):
        return norm(x.transpose(1, 2)).transpose(1, 2) if self.needs_transposal else norm(x)

    def forward(self, x, thw):
        x_norm1 = self._norm(self.norm1, x)
        x_attn, thw_new = self.attn(x_norm1, thw)
        if self.project is not None and self.proj_after_attn:
            x = self.project(x_norm1)
        x_skip = x if self.pool_skip is None else self.pool_skip(x, thw)[0]
        x = x_skip + self.stochastic_depth(x_attn)
        x_norm2 = self._norm(self.norm2, x)
        x_proj = x if self.project is None or self.proj_after_attn else self.project(x_norm2)
        return x_proj + self.stochastic_depth(self.mlp(x_norm2)), thw_new


class PositionalEncoding(nn.Module):
    """Prepends the class token and, in V1, adds the learned (separable: temporal + spatial)
    absolute position embedding.

    Args:
        embed_size (int): channels.
        spatial_size (tuple of int): ``(H, W)`` of the patches.
        temporal_size (int): ``T`` of the patches.
        rel_pos_embed (bool): V2, whose attention carries relative positions instead.
    """

    def __init__(self, embed_size: int, spatial_size: tuple[int, int], temporal_size: int,
                 rel_pos_embed: bool) -> None:
        super().__init__()
        self.spatial_size = spatial_size
        self.temporal_size = temporal_size
        self.class_token = nn.Parameter(ember.zeros(embed_size))
        self.spatial_pos = self.temporal_pos = self.class_pos = None
        if not rel_pos_embed:
            self.spatial_pos = nn.Parameter(
                ember.zeros(self.spatial_size[0] * self.spatial_size[1], embed_size))
            self.temporal_pos = nn.Parameter(ember.zeros(self.temporal_size, embed_size))
            self.class_pos = nn.Parameter(ember.zeros(embed_size))

    def forward(self, x):
        class_token = self.class_token.expand(x.size(0), -1).unsqueeze(1)
        x = ember.cat((class_token, x), dim=1)
        if self.spatial_pos is not None:
            hw_size, embed_size = self.spatial_pos.shape
            pos = ember.repeat_interleave(self.temporal_pos, hw_size, dim=0)
            pos = pos + self.spatial_pos.unsqueeze(0).expand(self.temporal_size, -1, -1).reshape(
                -1, embed_size)
            x = x + ember.cat((self.class_pos.unsqueeze(0), pos), dim=0).unsqueeze(0)
        return x


class MViT(nn.Module):
    """MViT on clips ``(N, 3, T, H, W)`` (or images ``(N, 3, H, W)``, as one frame) of exactly
    ``temporal_size x spatial_size``: a convolutional patch embedding, the multiscale blocks, a
    norm, and a linear head on the class token.

    Args:
        spatial_size (tuple of int): ``(H, W)`` of the input.
        temporal_size (int): ``T`` of the input.
        block_setting (sequence of MSBlockConfig): the blocks.
        residual_pool (bool): MViT V2's pooling residual.
        residual_with_cls_embed (bool): that residual includes the class token.
        rel_pos_embed (bool): MViT V2's relative positions (instead of absolute ones).
        proj_after_attn (bool): widen in the attention (V2) rather than in the MLP.
        dropout (float): before the head. Default: 0.5.
        attention_dropout (float): in the blocks. Default: 0.0.
        stochastic_depth_prob (float): reached by the last block. Default: 0.0.
        num_classes (int): Default: 400.
        block (callable, optional): Default: :class:`MultiscaleBlock`.
        norm_layer (callable, optional): Default: ``LayerNorm(eps=1e-6)``.
        patch_embed_kernel, patch_embed_stride, patch_embed_padding (tuple of int): of the
            patch embedding. Default: ``(3, 7, 7)``, ``(2, 4, 4)``, ``(1, 3, 3)``.
    """

    def __init__(self, spatial_size: tuple[int, int], temporal_size: int, block_setting,
                 residual_pool: bool, residual_with_cls_embed: bool, rel_pos_embed: bool,
                 proj_after_attn: bool, dropout: float = 0.5, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.0, num_classes: int = 400, block=None,
                 norm_layer=None, patch_embed_kernel: tuple[int, int, int] = (3, 7, 7),
                 patch_embed_stride: tuple[int, int, int] = (2, 4, 4),
                 patch_embed_padding: tuple[int, int, int] = (1, 3, 3)) -> None:
        super().__init__()
        total_stage_blocks = len(block_setting)
        if total_stage_blocks == 0:
            raise ValueError("The configuration parameter can't be empty.")
        block = MultiscaleBlock if block is None else block
        norm_layer = partial(nn.LayerNorm, eps=1e-6) if norm_layer is None else norm_layer
        self.conv_proj = nn.Conv3d(in_channels=3, out_channels=block_setting[0].input_channels,
                                   kernel_size=patch_embed_kernel, stride=patch_embed_stride,
                                   padding=patch_embed_padding)
        input_size = [size // stride for size, stride in
                      zip((temporal_size, *spatial_size), self.conv_proj.stride)]
        self.pos_encoding = PositionalEncoding(
            embed_size=block_setting[0].input_channels,
            spatial_size=(input_size[1], input_size[2]), temporal_size=input_size[0],
            rel_pos_embed=rel_pos_embed)
        self.blocks = nn.ModuleList()
        for stage_block_id, cnf in enumerate(block_setting):
            # stochastic depth grows linearly with depth (a one-block model divides 0 by 0, as
            # torchvision's does)
            sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
            self.blocks.append(block(
                input_size=input_size, cnf=cnf, residual_pool=residual_pool,
                residual_with_cls_embed=residual_with_cls_embed, rel_pos_embed=rel_pos_embed,
                proj_after_attn=proj_after_attn, dropout=attention_dropout,
                stochastic_depth_prob=sd_prob, norm_layer=norm_layer))
            if len(cnf.stride_q) > 0:
                input_size = [size // stride for size, stride in zip(input_size, cnf.stride_q)]
        self.norm = norm_layer(block_setting[-1].output_channels)
        self.head = nn.Sequential(nn.Dropout(dropout, inplace=True),
                                  nn.Linear(block_setting[-1].output_channels, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0.0)
            elif isinstance(m, nn.LayerNorm):
                if m.weight is not None:
                    nn.init.constant_(m.weight, 1.0)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0.0)
            elif isinstance(m, PositionalEncoding):
                for weights in m.parameters():
                    nn.init.trunc_normal_(weights, std=0.02)

    def forward(self, x):
        if x.dim() == 4:
            x = x.unsqueeze(2)  # an image: one frame
        elif x.dim() != 5:
            raise ValueError(f"Unsupported input dimension {x.shape}")
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = self.pos_encoding(x)
        thw = (self.pos_encoding.temporal_size, *self.pos_encoding.spatial_size)
        for block in self.blocks:
            x, thw = block(x, thw)
        return self.head(self.norm(x)[:, 0])


def _mvit(block_setting, stochastic_depth_prob: float, weights, progress: bool, **kwargs):
    if weights is not None:
        ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        ovewrite_named_param(kwargs, "spatial_size", weights.meta["min_size"])
        ovewrite_named_param(kwargs, "temporal_size", weights.meta["min_temporal_size"])
    spatial_size = kwargs.pop("spatial_size", (224, 224))
    temporal_size = kwargs.pop("temporal_size", 16)
    model = MViT(spatial_size=spatial_size, temporal_size=temporal_size,
                 block_setting=block_setting,
                 residual_pool=kwargs.pop("residual_pool", False),
                 residual_with_cls_embed=kwargs.pop("residual_with_cls_embed", True),
                 rel_pos_embed=kwargs.pop("rel_pos_embed", False),
                 proj_after_attn=kwargs.pop("proj_after_attn", False),
                 stochastic_depth_prob=stochastic_depth_prob, **kwargs)
    return with_weights(model, weights, progress)


def _block_setting(num_heads, input_channels, output_channels, pooled_q, kernel_q, stride_kv):
    """The 16 blocks of both variants: ``pooled_q`` lists the blocks whose queries are pooled
    (stride 1x2x2); ``kernel_q`` is the query kernel of the other blocks (V1: no pooling,
    ``[]``; V2: ``[3, 3, 3]`` at stride 1)."""
    setting = []
    for i, heads in enumerate(num_heads):
        if i in pooled_q:
            kq, sq = [3, 3, 3], [1, 2, 2]
        else:
            kq, sq = list(kernel_q), [1] * len(kernel_q)
        setting.append(MSBlockConfig(num_heads=heads, input_channels=input_channels[i],
                                     output_channels=output_channels[i], kernel_q=kq,
                                     kernel_kv=[3, 3, 3], stride_q=sq,
                                     stride_kv=list(stride_kv[i])))
    return setting


_HEADS = [1, 2, 2] + [4] * 11 + [8, 8]
_STRIDE_KV = [[1, 8, 8], [1, 4, 4], [1, 4, 4]] + [[1, 2, 2]] * 11 + [[1, 1, 1]] * 2
_COMMON = {"crop_size": (224, 224), "resize_size": (256,), "mean": (0.45, 0.45, 0.45),
           "std": (0.225, 0.225, 0.225), "min_size": (224, 224), "min_temporal_size": 16}
_DOCS = ("The weights were ported from the paper. The accuracies are estimated on video-level "
         "with parameters `frame_rate=7.5`, `clips_per_video=5`, and `clip_len=16`")


class MViT_V1_B_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "mvit_v1_b-dbeb1030", num_params=36610672, acc1=78.477, acc5=93.582, ops=70.599,
        file_size=139.764, docs=_DOCS,
        recipe="https://github.com/facebookresearch/pytorchvideo/blob/main/docs/source/"
               "model_zoo.md", **_COMMON)
    DEFAULT = KINETICS400_V1


class MViT_V2_S_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "mvit_v2_s-ae3be167", num_params=34537744, acc1=80.757, acc5=94.665, ops=64.224,
        file_size=131.884, docs=_DOCS,
        recipe="https://github.com/facebookresearch/SlowFast/blob/main/MODEL_ZOO.md", **_COMMON)
    DEFAULT = KINETICS400_V1


def _build_v1_b(weights, progress, **kwargs):
    setting = _block_setting(
        _HEADS, [96, 192, 192] + [384] * 11 + [768, 768], [192, 192] + [384] * 11 + [768] * 3,
        pooled_q={1, 3, 14}, kernel_q=[], stride_kv=_STRIDE_KV)
    return _mvit(spatial_size=(224, 224), temporal_size=16, block_setting=setting,
                 residual_pool=False, residual_with_cls_embed=False,
                 stochastic_depth_prob=kwargs.pop("stochastic_depth_prob", 0.2),
                 weights=weights, progress=progress, **kwargs)


def _build_v2_s(weights, progress, **kwargs):
    setting = _block_setting(
        _HEADS, [96, 96, 192, 192] + [384] * 11 + [768], [96, 192, 192] + [384] * 11 + [768] * 2,
        pooled_q={1, 3, 14}, kernel_q=[3, 3, 3], stride_kv=_STRIDE_KV)
    return _mvit(spatial_size=(224, 224), temporal_size=16, block_setting=setting,
                 residual_pool=True, residual_with_cls_embed=False, rel_pos_embed=True,
                 proj_after_attn=True,
                 stochastic_depth_prob=kwargs.pop("stochastic_depth_prob", 0.2),
                 weights=weights, progress=progress, **kwargs)


mvit_v1_b = make_builder(
    "mvit_v1_b", MViT_V1_B_Weights, _build_v1_b,
    "The base MViT V1 of `Multiscale Vision Transformers <https://arxiv.org/abs/2104.11227>`_ "
    "(input: 16 x 224 x 224 clips).")
mvit_v2_s = make_builder(
    "mvit_v2_s", MViT_V2_S_Weights, _build_v2_s,
    "The small MViT V2 of `MViTv2: Improved Multiscale Vision Transformers for Classification "
    "and Detection <https://arxiv.org/abs/2112.01526>`_ (input: 16 x 224 x 224 clips).")
