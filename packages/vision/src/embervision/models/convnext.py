"""ConvNeXt (Liu et al., 2022): tiny, small, base and large."""

from __future__ import annotations

from functools import partial

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.ops.misc import Conv2dNormActivation, Permute
from embervision.ops.stochastic_depth import StochasticDepth

__all__ = [
    "ConvNeXt",
    "ConvNeXt_Tiny_Weights",
    "ConvNeXt_Small_Weights",
    "ConvNeXt_Base_Weights",
    "ConvNeXt_Large_Weights",
    "convnext_tiny",
    "convnext_small",
    "convnext_base",
    "convnext_large",
]


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an ``(N, C, H, W)`` tensor."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    """Depthwise 7x7 convolution, LayerNorm, an inverted MLP (4x) with GELU, layer scale and
    stochastic depth, plus the shortcut."""

    def __init__(self, dim, layer_scale: float, stochastic_depth_prob: float, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),
            norm_layer(dim),
            nn.Linear(in_features=dim, out_features=4 * dim, bias=True),
            nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(ember.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        return self.stochastic_depth(self.layer_scale * self.block(input)) + input


class CNBlockConfig:
    """One stage: its width, the width after its downsampling layer (None for the last
    stage) and its number of blocks."""

    def __init__(self, input_channels: int, out_channels: int | None, num_layers: int):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(input_channels={self.input_channels}, "
                f"out_channels={self.out_channels}, num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    """ConvNeXt from a list of :class:`CNBlockConfig`.

    Args:
        block_setting (list of CNBlockConfig): the stages.
        stochastic_depth_prob (float): the drop probability of the last block (it grows
            linearly from 0). Default: 0.0.
        layer_scale (float): the initial layer scale. Default: 1e-6.
        num_classes (int): Default: 1000.
        block (callable, optional): Default: :class:`CNBlock`.
        norm_layer (callable, optional): Default: ``LayerNorm2d(eps=1e-6)``.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, block_setting, stochastic_depth_prob: float = 0.0,
                 layer_scale: float = 1e-6, num_classes: int = 1000, block=None,
                 norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        if not all(isinstance(s, CNBlockConfig) for s in block_setting):
            raise TypeError("The block_setting should be List[CNBlockConfig]")
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4,
                                       stride=4, padding=0, norm_layer=norm_layer,
                                       activation_layer=None, bias=True)]
        total = sum(cnf.num_layers for cnf in block_setting)
        block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * block_id / (total - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(
                    norm_layer(cnf.input_channels),
                    nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        last_channels = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(last_channels), nn.Flatten(1),
                                        nn.Linear(last_channels, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#convnext"


class ConvNeXt_Base_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "convnext_base-6075fbad", 88591464, _RECIPE, 84.062, 96.87, 15.355, 338.064,
        min_size=(32, 32), resize_size=232)
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "convnext_large-ea097f82", 197767336, _RECIPE, 84.414, 96.976, 34.361, 754.537,
        min_size=(32, 32), resize_size=232)
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "convnext_small-0c510722", 50223688, _RECIPE, 83.616, 96.65, 8.684, 191.703,
        min_size=(32, 32), resize_size=230)
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Tiny_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "convnext_tiny-983f1562", 28589128, _RECIPE, 82.52, 96.146, 4.456, 109.119,
        min_size=(32, 32), resize_size=236)
    DEFAULT = IMAGENET1K_V1


# name: (weights enum, stages as (width, next width, blocks), default stochastic depth)
_VARIANTS = {
    "convnext_tiny": (ConvNeXt_Tiny_Weights,
                      [(96, 192, 3), (192, 384, 3), (384, 768, 9), (768, None, 3)], 0.1),
    "convnext_small": (ConvNeXt_Small_Weights,
                       [(96, 192, 3), (192, 384, 3), (384, 768, 27), (768, None, 3)], 0.4),
    "convnext_base": (ConvNeXt_Base_Weights,
                      [(128, 256, 3), (256, 512, 3), (512, 1024, 27), (1024, None, 3)], 0.5),
    "convnext_large": (ConvNeXt_Large_Weights,
                       [(192, 384, 3), (384, 768, 3), (768, 1536, 27), (1536, None, 3)], 0.5),
}


def _builder(arch):
    enum, stages, sd_default = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        block_setting = [CNBlockConfig(*s) for s in stages]
        sd_prob = kwargs.pop("stochastic_depth_prob", sd_default)
        model = ConvNeXt(block_setting, stochastic_depth_prob=sd_prob, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    doc = (f"ConvNeXt {arch.split('_')[1].capitalize()} from `A ConvNet for the 2020s "
           "<https://arxiv.org/abs/2201.03545>`_.")
    return make_builder(arch, enum, build, doc)


convnext_tiny = _builder("convnext_tiny")
convnext_small = _builder("convnext_small")
convnext_base = _builder("convnext_base")
convnext_large = _builder("convnext_large")
