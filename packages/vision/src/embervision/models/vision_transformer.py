"""Vision Transformer (Dosovitskiy et al., 2020): ViT-B/16, B/32, L/16, L/32 and H/14."""

from __future__ import annotations

import math
from collections import OrderedDict
from functools import partial
from typing import NamedTuple

import ember
from ember import nn
from embervision.models._api import (
    WeightsEnum,
    classification_weights,
    make_builder,
    ovewrite_named_param,
)
from embervision.ops.misc import MLP, Conv2dNormActivation
from embervision.transforms._utils import InterpolationMode

__all__ = [
    "VisionTransformer",
    "ViT_B_16_Weights",
    "ViT_B_32_Weights",
    "ViT_L_16_Weights",
    "ViT_L_32_Weights",
    "ViT_H_14_Weights",
    "vit_b_16",
    "vit_b_32",
    "vit_l_16",
    "vit_l_32",
    "vit_h_14",
]

# The default norm layer of every part (a module-level value, so the defaults are one object).
_LAYER_NORM = partial(nn.LayerNorm, eps=1e-6)


class ConvStemConfig(NamedTuple):
    """One convolution of a convolutional stem (Xiao et al., 2021)."""

    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: type = nn.BatchNorm2d
    activation_layer: type = nn.ReLU


class MLPBlock(MLP):
    """The transformer's MLP: Linear, GELU, dropout, Linear, dropout."""

    # Version 1 named the linear layers linear_1 and linear_2; they load into 0 and 3.
    _version = 2

    def __init__(self, in_dim: int, mlp_dim: int, dropout: float):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(2):
                for kind in ("weight", "bias"):
                    old_key = f"{prefix}linear_{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class EncoderBlock(nn.Module):
    """Pre-norm transformer layer: self-attention and MLP, each with a residual."""

    def __init__(self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float,
                 attention_dropout: float, norm_layer=_LAYER_NORM):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(
                f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Learned position embedding, ``num_layers`` encoder blocks and a final norm."""

    def __init__(self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int,
                 mlp_dim: int, dropout: float, attention_dropout: float,
                 norm_layer=_LAYER_NORM):
        super().__init__()
        self.pos_embedding = nn.Parameter(
            ember.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers = OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                attention_dropout, norm_layer))
            for i in range(num_layers))
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(
                f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """Vision Transformer: the image cut into ``patch_size`` patches, embedded linearly, a
    class token prepended, a transformer encoder, and a head on the class token.

    Args:
        image_size (int): the side of the (square) input images.
        patch_size (int): the side of the patches; must divide ``image_size``.
        num_layers (int): encoder layers.
        num_heads (int): attention heads.
        hidden_dim (int): embedding width.
        mlp_dim (int): MLP width.
        dropout (float): Default: 0.0.
        attention_dropout (float): Default: 0.0.
        num_classes (int): Default: 1000.
        representation_size (int, optional): width of a Tanh pre-logits layer. Default: None.
        norm_layer (callable): Default: ``LayerNorm(eps=1e-6)``.
        conv_stem_configs (list of ConvStemConfig, optional): a convolutional stem instead
            of the patch projection. Default: None.

    Shape:
        - Input: :math:`(N, 3, \\text{image\\_size}, \\text{image\\_size})`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, image_size: int, patch_size: int, num_layers: int, num_heads: int,
                 hidden_dim: int, mlp_dim: int, dropout: float = 0.0,
                 attention_dropout: float = 0.0, num_classes: int = 1000,
                 representation_size: int | None = None,
                 norm_layer=_LAYER_NORM, conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise ValueError("Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        if conv_stem_configs is not None:
            seq_proj = nn.Sequential()
            prev = 3
            for i, cfg in enumerate(conv_stem_configs):
                seq_proj.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
                    in_channels=prev, out_channels=cfg.out_channels,
                    kernel_size=cfg.kernel_size, stride=cfg.stride, norm_layer=cfg.norm_layer,
                    activation_layer=cfg.activation_layer))
                prev = cfg.out_channels
            seq_proj.add_module("conv_last", nn.Conv2d(in_channels=prev, out_channels=hidden_dim,
                                                       kernel_size=1))
            self.conv_proj = seq_proj
        else:
            self.conv_proj = nn.Conv2d(in_channels=3, out_channels=hidden_dim,
                                       kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.class_token = nn.Parameter(ember.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)

        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = (self.conv_proj.in_channels * self.conv_proj.kernel_size[0]
                      * self.conv_proj.kernel_size[1])
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        else:
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            if last.bias is not None:
                nn.init.zeros_(last.bias)
        if "pre_logits" in heads:
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, _, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise ValueError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise ValueError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x).reshape(n, self.hidden_dim, (h // p) * (w // p))
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        token = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(ember.cat([token, x], dim=1))
        return self.heads(x[:, 0])


_SWAG = "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"
_B16 = "https://github.com/pytorch/vision/tree/main/references/classification#vit_b_16"
_SWAG_RECIPE = "https://github.com/facebookresearch/SWAG"
_SWAG_LC = "https://github.com/pytorch/vision/pull/5793"
_B32 = "https://github.com/pytorch/vision/tree/main/references/classification#vit_b_32"
_L16 = "https://github.com/pytorch/vision/tree/main/references/classification#vit_l_16"
_L32 = "https://github.com/pytorch/vision/tree/main/references/classification#vit_l_32"


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "vit_b_16-c867db91", 86567656, _B16, 81.072, 95.318, 17.564, 330.285, min_size=(224, 224))
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "vit_b_16_swag-9ac1b537", 86859496, _SWAG_RECIPE, 85.304, 97.65, 55.484, 331.398,
        min_size=(384, 384), license=_SWAG, crop_size=384, resize_size=384,
        interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "vit_b_16_lc_swag-4e70ced5", 86567656, _SWAG_LC, 81.886, 96.18, 17.564, 330.285,
        min_size=(224, 224), license=_SWAG, resize_size=224,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class ViT_B_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "vit_b_32-d86f8d99", 88224232, _B32, 75.912, 92.466, 4.409, 336.604, min_size=(224, 224))
    DEFAULT = IMAGENET1K_V1


class ViT_H_14_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "vit_h_14_swag-80465313", 633470440, _SWAG_RECIPE, 88.552, 98.694, 1016.717, 2416.643,
        min_size=(518, 518), license=_SWAG, crop_size=518, resize_size=518,
        interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "vit_h_14_lc_swag-c1eb923e", 632045800, _SWAG_LC, 85.708, 97.73, 167.295, 2411.209,
        min_size=(224, 224), license=_SWAG, resize_size=224,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


class ViT_L_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "vit_l_16-852ce7e3", 304326632, _L16, 79.662, 94.638, 61.555, 1161.023,
        min_size=(224, 224), resize_size=242)
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "vit_l_16_swag-4f3808c9", 305174504, _SWAG_RECIPE, 88.064, 98.512, 361.986, 1164.258,
        min_size=(512, 512), license=_SWAG, crop_size=512, resize_size=512,
        interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "vit_l_16_lc_swag-4d563306", 304326632, _SWAG_LC, 85.146, 97.422, 61.555, 1161.023,
        min_size=(224, 224), license=_SWAG, resize_size=224,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class ViT_L_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "vit_l_32-c7638314", 306535400, _L32, 76.972, 93.07, 15.378, 1169.449, min_size=(224, 224))
    DEFAULT = IMAGENET1K_V1


# name: (weights enum, patch_size, num_layers, num_heads, hidden_dim, mlp_dim)
_VARIANTS = {
    "vit_b_16": (ViT_B_16_Weights, 16, 12, 12, 768, 3072),
    "vit_b_32": (ViT_B_32_Weights, 32, 12, 12, 768, 3072),
    "vit_l_16": (ViT_L_16_Weights, 16, 24, 16, 1024, 4096),
    "vit_l_32": (ViT_L_32_Weights, 32, 24, 16, 1024, 4096),
    "vit_h_14": (ViT_H_14_Weights, 14, 32, 16, 1280, 5120),
}


def _builder(arch):
    enum, patch_size, num_layers, num_heads, hidden_dim, mlp_dim = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        if weights is not None:
            # Each set of weights has its own resolution (and position-embedding length).
            ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
        image_size = kwargs.pop("image_size", 224)
        model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                                  num_layers=num_layers, num_heads=num_heads,
                                  hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    name = arch[4:].upper().replace("_", "/")
    doc = (f"ViT-{name} from `An Image is Worth 16x16 Words: Transformers for Image "
           "Recognition at Scale <https://arxiv.org/abs/2010.11929>`_.\n    ``image_size`` "
           "(default 224, or that of the weights) sets the input resolution.")
    return make_builder(arch, enum, build, doc)


vit_b_16 = _builder("vit_b_16")
vit_b_32 = _builder("vit_b_32")
vit_l_16 = _builder("vit_l_16")
vit_l_32 = _builder("vit_l_32")
vit_h_14 = _builder("vit_h_14")


def interpolate_embeddings(image_size: int, patch_size: int, model_state,
                           interpolation_mode: str = "bicubic", reset_heads: bool = False):
    """Resizes the position embedding of a ViT state dict to another image size, for
    fine-tuning pretrained weights at a new resolution.

    The patch positions' embeddings, a square grid, are interpolated (``align_corners=True``)
    to the ``image_size // patch_size`` grid; the class token's is kept.

    Args:
        image_size (int): the new image size.
        patch_size (int): the model's patch size.
        model_state (dict): the state dict, with ``"encoder.pos_embedding"`` of shape
            ``(1, seq_length, hidden_dim)``; its entry is replaced.
        interpolation_mode (str): an :func:`ember.nn.functional.interpolate` mode for 4-D
            input. Default: ``"bicubic"``.
        reset_heads (bool): leave the ``heads`` entries out of the returned state (when the
            embedding was resized). Default: False.

    Returns:
        OrderedDict: the state with the resized embedding.

    Examples::

        >>> state = vit_b_16().state_dict()
        >>> state = interpolate_embeddings(384, 16, state)
        >>> vit_b_16(image_size=384).load_state_dict(state)
    """
    pos_embedding = model_state["encoder.pos_embedding"]
    n, seq_length, hidden_dim = pos_embedding.shape
    if n != 1:
        raise ValueError(f"Unexpected position embedding shape: {pos_embedding.shape}")
    new_seq_length = (image_size // patch_size) ** 2 + 1
    if new_seq_length == seq_length:
        return model_state
    # The class token's embedding is not a grid position: it is kept as it is.
    token, grid = pos_embedding[:, :1, :], pos_embedding[:, 1:, :]
    side = math.isqrt(seq_length - 1)
    if side * side != seq_length - 1:
        raise ValueError(f"seq_length is not a perfect square! Instead got seq_length_1d * "
                         f"seq_length_1d = {side * side} and seq_length = {seq_length - 1}")
    new_side = image_size // patch_size
    grid = grid.permute(0, 2, 1).reshape(1, hidden_dim, side, side)
    grid = nn.functional.interpolate(grid, size=new_side, mode=interpolation_mode,
                                     align_corners=True)
    grid = grid.reshape(1, hidden_dim, new_side * new_side).permute(0, 2, 1)
    model_state["encoder.pos_embedding"] = ember.cat([token, grid], dim=1)
    if reset_heads:
        model_state = OrderedDict((k, v) for k, v in model_state.items()
                                  if not k.startswith("heads"))
    return model_state
