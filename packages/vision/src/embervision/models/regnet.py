"""RegNet (Radosavovic et al., 2020): the X and Y design spaces, with torchvision's module
names so that its checkpoints load."""

from __future__ import annotations

import math
from collections import OrderedDict
from functools import partial

import numpy as np

from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.models._utils import make_divisible
from embervision.ops.misc import Conv2dNormActivation, SqueezeExcitation
from embervision.transforms._utils import InterpolationMode

__all__ = [
    "RegNet",
    "RegNet_Y_400MF_Weights",
    "RegNet_Y_800MF_Weights",
    "RegNet_Y_1_6GF_Weights",
    "RegNet_Y_3_2GF_Weights",
    "RegNet_Y_8GF_Weights",
    "RegNet_Y_16GF_Weights",
    "RegNet_Y_32GF_Weights",
    "RegNet_Y_128GF_Weights",
    "RegNet_X_400MF_Weights",
    "RegNet_X_800MF_Weights",
    "RegNet_X_1_6GF_Weights",
    "RegNet_X_3_2GF_Weights",
    "RegNet_X_8GF_Weights",
    "RegNet_X_16GF_Weights",
    "RegNet_X_32GF_Weights",
    "regnet_y_400mf",
    "regnet_y_800mf",
    "regnet_y_1_6gf",
    "regnet_y_3_2gf",
    "regnet_y_8gf",
    "regnet_y_16gf",
    "regnet_y_32gf",
    "regnet_y_128gf",
    "regnet_x_400mf",
    "regnet_x_800mf",
    "regnet_x_1_6gf",
    "regnet_x_3_2gf",
    "regnet_x_8gf",
    "regnet_x_16gf",
    "regnet_x_32gf",
]


class SimpleStemIN(Conv2dNormActivation):
    """The stem: a stride-2 3x3 convolution, norm and activation."""

    def __init__(self, width_in: int, width_out: int, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """The residual branch: 1x1 (``a``), grouped 3x3 (``b``), optional squeeze-excitation
    (``se``), 1x1 (``c``)."""

    def __init__(self, width_in: int, width_out: int, stride: int, norm_layer, activation_layer,
                 group_width: int, bottleneck_multiplier: float, se_ratio: float | None):
        w_b = int(round(width_out * bottleneck_multiplier))
        groups = w_b // group_width
        layers = OrderedDict()
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=groups,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        if se_ratio:
            # The squeeze width is relative to the block's input width.
            layers["se"] = SqueezeExcitation(w_b, int(round(se_ratio * width_in)),
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """A bottleneck transform plus a shortcut, projected when the shape changes."""

    def __init__(self, width_in: int, width_out: int, stride: int, norm_layer, activation_layer,
                 group_width: int = 1, bottleneck_multiplier: float = 1.0,
                 se_ratio: float | None = None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer,
                                     group_width, bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        shortcut = x if self.proj is None else self.proj(x)
        return self.activation(shortcut + self.f(x))


class AnyStage(nn.Sequential):
    """``depth`` blocks, named ``block<stage>-<i>``; the first one changes width and stride."""

    def __init__(self, width_in: int, width_out: int, stride: int, depth: int,
                 block_constructor, norm_layer, activation_layer, group_width: int,
                 bottleneck_multiplier: float, se_ratio: float | None = None,
                 stage_index: int = 0):
        super().__init__()
        for i in range(depth):
            block = block_constructor(width_in if i == 0 else width_out, width_out,
                                      stride if i == 0 else 1, norm_layer, activation_layer,
                                      group_width, bottleneck_multiplier, se_ratio)
            self.add_module(f"block{stage_index}-{i}", block)


class BlockParams:
    """Per-stage depths, widths, group widths, bottleneck multipliers and strides."""

    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides,
                 se_ratio: float | None = None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth: int, w_0: int, w_a: float, w_m: float, group_width: int,
                         bottleneck_multiplier: float = 1.0, se_ratio: float | None = None,
                         **kwargs) -> BlockParams:
        """The stages of a RegNet from its design parameters: block ``j`` has the continuous
        width ``w_0 + w_a * j``, quantized in log space with step ``w_m`` and rounded to a
        multiple of 8; consecutive blocks of equal width form a stage."""
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        # In float32, as torchvision computes it, so that the rounding agrees.
        f32 = np.float32
        widths_cont = np.arange(depth).astype(f32) * f32(w_a) + f32(w_0)
        capacity = np.round(np.log(widths_cont / f32(w_0)) / f32(math.log(w_m)))
        quantized = np.round(f32(w_0) * np.power(f32(w_m), capacity) / f32(8)) * f32(8)
        block_widths = [int(w) for w in quantized.astype(np.int32)]
        starts = [i for i, w in enumerate(block_widths) if i == 0 or w != block_widths[i - 1]]
        stage_widths = [block_widths[i] for i in starts]
        stage_depths = [b - a for a, b in zip(starts, [*starts[1:], depth])]
        n = len(stage_widths)
        multipliers = [bottleneck_multiplier] * n
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, multipliers, [group_width] * n)
        return cls(stage_depths, stage_widths, group_widths, multipliers, [2] * n, se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths,
                   self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        """Rounds the bottleneck widths to multiples of the group widths."""
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths_min = [min(g, w) for g, w in zip(group_widths, widths)]
        ws_bot = [make_divisible(w, g) for w, g in zip(widths, group_widths_min)]
        return [int(w / b) for w, b in zip(ws_bot, bottleneck_ratios)], group_widths_min


class RegNet(nn.Module):
    """RegNet from its :class:`BlockParams`.

    Args:
        block_params (BlockParams): the stages.
        num_classes (int): Default: 1000.
        stem_width (int): Default: 32.
        stem_type (callable, optional): Default: :class:`SimpleStemIN`.
        block_type (callable, optional): Default: :class:`ResBottleneckBlock`.
        norm_layer (callable, optional): Default: ``nn.BatchNorm2d``.
        activation (callable, optional): Default: ``nn.ReLU``.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, block_params: BlockParams, num_classes: int = 1000, stem_width: int = 32,
                 stem_type=None, block_type=None, norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f"block{i + 1}", AnyStage(
                width, width_out, stride, depth, block_type, norm_layer, activation, group_width,
                multiplier, block_params.se_ratio, stage_index=i + 1)))
            width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


_SWAG = "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"
_MEDIUM = "https://github.com/pytorch/vision/tree/main/references/classification#medium-models"
_NEW = "https://github.com/pytorch/vision/issues/3995#new-recipe"
_SMALL = "https://github.com/pytorch/vision/tree/main/references/classification#small-models"
_FIXRES = "https://github.com/pytorch/vision/issues/3995#new-recipe-with-fixres"
_LARGE = "https://github.com/pytorch/vision/tree/main/references/classification#large-models"
_SWAG_RECIPE = "https://github.com/facebookresearch/SWAG"
_SWAG_LC = "https://github.com/pytorch/vision/pull/5793"


class RegNet_X_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_16gf-2007eb11", 54278536, _MEDIUM, 80.058, 94.944, 15.941, 207.627)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_16gf-ba3796d7", 54278536, _NEW, 82.716, 96.196, 15.941, 207.627, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_1_6gf-e3633e7f", 9190136, _SMALL, 77.04, 93.44, 1.603, 35.339)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_1_6gf-a12f2b72", 9190136, _FIXRES, 79.668, 94.922, 1.603, 35.339, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_32gf-9d47f8d0", 107811560, _LARGE, 80.622, 95.248, 31.736, 412.039)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_32gf-6eb8fdc6", 107811560, _NEW, 83.014, 96.288, 31.736, 412.039, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_3_2gf-f342aeae", 15296552, _MEDIUM, 78.364, 93.992, 3.177, 58.756)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_3_2gf-7071aa85", 15296552, _NEW, 81.196, 95.43, 3.177, 58.756, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_400mf-adf1edd5", 5495976, _SMALL, 72.834, 90.95, 0.414, 21.258)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_400mf-62229a5f", 5495976, _FIXRES, 74.864, 92.322, 0.414, 21.257, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_800mf-ad17e45c", 7259656, _SMALL, 75.212, 92.348, 0.8, 27.945)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_800mf-94a99ebd", 7259656, _FIXRES, 77.522, 93.826, 0.8, 27.945, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_x_8gf-03ceed89", 39572648, _MEDIUM, 79.344, 94.686, 7.995, 151.456)
    IMAGENET1K_V2 = classification_weights(
        "regnet_x_8gf-2b70d774", 39572648, _NEW, 81.682, 95.678, 7.995, 151.456, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_128GF_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "regnet_y_128gf_swag-c8ce3e52", 644812894, _SWAG_RECIPE, 88.228, 98.682, 374.57, 2461.564,
        license=_SWAG, crop_size=384, resize_size=384, interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "regnet_y_128gf_lc_swag-cbe8ce12", 644812894, _SWAG_LC, 86.068, 97.844, 127.518, 2461.564,
        license=_SWAG, resize_size=224, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


class RegNet_Y_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_16gf-9e6ed7dd", 83590140, _LARGE, 80.424, 95.24, 15.912, 319.49)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_16gf-3e4a00f9", 83590140, _NEW, 82.886, 96.328, 15.912, 319.49, resize_size=232)
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "regnet_y_16gf_swag-43afe44d", 83590140, _SWAG_RECIPE, 86.012, 98.054, 46.735, 319.49,
        license=_SWAG, crop_size=384, resize_size=384, interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "regnet_y_16gf_lc_swag-f3ec0043", 83590140, _SWAG_LC, 83.976, 97.244, 15.912, 319.49,
        license=_SWAG, resize_size=224, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_1_6gf-b11a554e", 11202430, _SMALL, 77.95, 93.966, 1.612, 43.152)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_1_6gf-0d7bc02a", 11202430, _NEW, 80.876, 95.444, 1.612, 43.152, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_32gf-4dee3f7a", 145046770, _LARGE, 80.878, 95.34, 32.28, 554.076)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_32gf-8db6d4b5", 145046770, _NEW, 83.368, 96.498, 32.28, 554.076, resize_size=232)
    IMAGENET1K_SWAG_E2E_V1 = classification_weights(
        "regnet_y_32gf_swag-04fdfa75", 145046770, _SWAG_RECIPE, 86.838, 98.362, 94.826, 554.076,
        license=_SWAG, crop_size=384, resize_size=384, interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_SWAG_LINEAR_V1 = classification_weights(
        "regnet_y_32gf_lc_swag-e1583746", 145046770, _SWAG_LC, 84.622, 97.48, 32.28, 554.076,
        license=_SWAG, resize_size=224, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_3_2gf-b5a9779c", 19436338, _MEDIUM, 78.948, 94.576, 3.176, 74.567)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_3_2gf-9180c971", 19436338, _NEW, 81.982, 95.972, 3.176, 74.567, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_400mf-c65dace8", 4344144, _SMALL, 74.046, 91.716, 0.402, 16.806)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_400mf-e6988f5f", 4344144, _NEW, 75.804, 92.742, 0.402, 16.806, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_800mf-1b27b58c", 6432512, _SMALL, 76.42, 93.136, 0.834, 24.774)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_800mf-58fc7688", 6432512, _NEW, 78.828, 94.502, 0.834, 24.774, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "regnet_y_8gf-d0d0e4a8", 39381472, _MEDIUM, 80.032, 95.048, 8.473, 150.701)
    IMAGENET1K_V2 = classification_weights(
        "regnet_y_8gf-dc2b1b54", 39381472, _NEW, 82.828, 96.33, 8.473, 150.701, resize_size=232)
    DEFAULT = IMAGENET1K_V2


# name: (weights enum, depth, w_0, w_a, w_m, group_width, se_ratio)
_VARIANTS = {
    "regnet_y_400mf": (RegNet_Y_400MF_Weights, 16, 48, 27.89, 2.09, 8, 0.25),
    "regnet_y_800mf": (RegNet_Y_800MF_Weights, 14, 56, 38.84, 2.4, 16, 0.25),
    "regnet_y_1_6gf": (RegNet_Y_1_6GF_Weights, 27, 48, 20.71, 2.65, 24, 0.25),
    "regnet_y_3_2gf": (RegNet_Y_3_2GF_Weights, 21, 80, 42.63, 2.66, 24, 0.25),
    "regnet_y_8gf": (RegNet_Y_8GF_Weights, 17, 192, 76.82, 2.19, 56, 0.25),
    "regnet_y_16gf": (RegNet_Y_16GF_Weights, 18, 200, 106.23, 2.48, 112, 0.25),
    "regnet_y_32gf": (RegNet_Y_32GF_Weights, 20, 232, 115.89, 2.53, 232, 0.25),
    "regnet_y_128gf": (RegNet_Y_128GF_Weights, 27, 456, 160.83, 2.52, 264, 0.25),
    "regnet_x_400mf": (RegNet_X_400MF_Weights, 22, 24, 24.48, 2.54, 16, None),
    "regnet_x_800mf": (RegNet_X_800MF_Weights, 16, 56, 35.73, 2.28, 16, None),
    "regnet_x_1_6gf": (RegNet_X_1_6GF_Weights, 18, 80, 34.01, 2.25, 24, None),
    "regnet_x_3_2gf": (RegNet_X_3_2GF_Weights, 25, 88, 26.31, 2.25, 48, None),
    "regnet_x_8gf": (RegNet_X_8GF_Weights, 23, 80, 49.56, 2.88, 120, None),
    "regnet_x_16gf": (RegNet_X_16GF_Weights, 22, 216, 55.59, 2.1, 128, None),
    "regnet_x_32gf": (RegNet_X_32GF_Weights, 23, 320, 69.86, 2.0, 168, None),
}


def _maker(arch):
    _, depth, w_0, w_a, w_m, group_width, se_ratio = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        params = BlockParams.from_init_params(depth=depth, w_0=w_0, w_a=w_a, w_m=w_m,
                                              group_width=group_width, se_ratio=se_ratio,
                                              **kwargs)
        norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
        model = RegNet(params, norm_layer=norm_layer, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


def _builder(arch):
    parts = arch.split("_")
    size = ".".join(parts[2:]).upper()
    doc = (f"RegNet{parts[1].upper()}_{size} from `Designing Network Design Spaces "
           "<https://arxiv.org/abs/2003.13678>`_.")
    return make_builder(arch, _VARIANTS[arch][0], _maker(arch), doc)


regnet_y_400mf = _builder("regnet_y_400mf")
regnet_y_800mf = _builder("regnet_y_800mf")
regnet_y_1_6gf = _builder("regnet_y_1_6gf")
regnet_y_3_2gf = _builder("regnet_y_3_2gf")
regnet_y_8gf = _builder("regnet_y_8gf")
regnet_y_16gf = _builder("regnet_y_16gf")
regnet_y_32gf = _builder("regnet_y_32gf")
regnet_y_128gf = _builder("regnet_y_128gf")
regnet_x_400mf = _builder("regnet_x_400mf")
regnet_x_800mf = _builder("regnet_x_800mf")
regnet_x_1_6gf = _builder("regnet_x_1_6gf")
regnet_x_3_2gf = _builder("regnet_x_3_2gf")
regnet_x_8gf = _builder("regnet_x_8gf")
regnet_x_16gf = _builder("regnet_x_16gf")
regnet_x_32gf = _builder("regnet_x_32gf")
