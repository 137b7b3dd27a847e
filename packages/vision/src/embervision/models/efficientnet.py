"""EfficientNet (Tan and Le, 2019) B0-B7 and EfficientNetV2 (Tan and Le, 2021) S/M/L."""

from __future__ import annotations

import copy
import math
from functools import partial

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.models._utils import make_divisible
from embervision.ops.misc import Conv2dNormActivation, SqueezeExcitation
from embervision.ops.stochastic_depth import StochasticDepth
from embervision.transforms._utils import InterpolationMode

__all__ = [
    "EfficientNet",
    "EfficientNet_B0_Weights",
    "EfficientNet_B1_Weights",
    "EfficientNet_B2_Weights",
    "EfficientNet_B3_Weights",
    "EfficientNet_B4_Weights",
    "EfficientNet_B5_Weights",
    "EfficientNet_B6_Weights",
    "EfficientNet_B7_Weights",
    "EfficientNet_V2_S_Weights",
    "EfficientNet_V2_M_Weights",
    "EfficientNet_V2_L_Weights",
    "efficientnet_b0",
    "efficientnet_b1",
    "efficientnet_b2",
    "efficientnet_b3",
    "efficientnet_b4",
    "efficientnet_b5",
    "efficientnet_b6",
    "efficientnet_b7",
    "efficientnet_v2_s",
    "efficientnet_v2_m",
    "efficientnet_v2_l",
]


class _MBConvConfig:
    """One stage: expansion ratio, kernel, stride, channels in and out, number of blocks and
    the block class."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 block):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
        self.block = block

    @staticmethod
    def adjust_channels(channels: int, width_mult: float, min_value: int | None = None) -> int:
        return make_divisible(channels * width_mult, 8, min_value)

    def __repr__(self) -> str:
        fields = ("expand_ratio", "kernel", "stride", "input_channels", "out_channels",
                  "num_layers")
        body = ", ".join(f"{k}={getattr(self, k)}" for k in fields)
        return f"{self.__class__.__name__}({body})"


class MBConvConfig(_MBConvConfig):
    """A stage of MBConv blocks, its channels scaled by ``width_mult`` and its depth by
    ``depth_mult`` (EfficientNet's compound scaling)."""

    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int,
                 out_channels: int, num_layers: int, width_mult: float = 1.0,
                 depth_mult: float = 1.0, block=None):
        super().__init__(expand_ratio, kernel, stride,
                         self.adjust_channels(input_channels, width_mult),
                         self.adjust_channels(out_channels, width_mult),
                         self.adjust_depth(num_layers, depth_mult), block or MBConv)

    @staticmethod
    def adjust_depth(num_layers: int, depth_mult: float) -> int:
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    """A stage of Fused-MBConv blocks (EfficientNetV2's early stages)."""

    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int,
                 out_channels: int, num_layers: int, block=None):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         block or FusedMBConv)


class MBConv(nn.Module):
    """Inverted residual: 1x1 expansion, depthwise convolution, squeeze-excitation, 1x1
    projection, with stochastic depth on the residual branch."""

    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer,
                 se_layer=SqueezeExcitation):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        squeeze = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded, squeeze, activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + input
        return result


class FusedMBConv(nn.Module):
    """Fused inverted residual: the expansion and depthwise convolutions replaced by one
    full convolution (EfficientNetV2)."""

    def __init__(self, cnf: FusedMBConvConfig, stochastic_depth_prob: float, norm_layer):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers = [
                Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=cnf.kernel,
                                     stride=cnf.stride, norm_layer=norm_layer,
                                     activation_layer=nn.SiLU),
                Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                     norm_layer=norm_layer, activation_layer=None),
            ]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels,
                                           kernel_size=cnf.kernel, stride=cnf.stride,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + input
        return result


class EfficientNet(nn.Module):
    """EfficientNet V1 and V2 from a list of stage configurations.

    Args:
        inverted_residual_setting (list of MBConvConfig / FusedMBConvConfig): the stages.
        dropout (float): dropout before the classifier.
        stochastic_depth_prob (float): the largest drop probability, reached by the last
            block (it grows linearly with depth). Default: 0.2.
        num_classes (int): Default: 1000.
        norm_layer (callable, optional): Default: ``nn.BatchNorm2d``.
        last_channel (int, optional): channels of the last convolution. Default: 4 times
            those of the last stage.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, inverted_residual_setting, dropout: float,
                 stochastic_depth_prob: float = 0.2, num_classes: int = 1000, norm_layer=None,
                 last_channel: int | None = None, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, _MBConvConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        if kwargs.get("block") is not None:
            for s in inverted_residual_setting:
                if isinstance(s, MBConvConfig):
                    s.block = kwargs["block"]
        norm_layer = norm_layer or nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels,
                                       kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(block_id) / total
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


def _efficientnet_conf(arch: str, width_mult: float = 1.0, depth_mult: float = 1.0):
    if arch.startswith("efficientnet_b"):
        c = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
        rows = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
                (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
                (6, 3, 1, 192, 320, 1)]
        return [c(*r) for r in rows], None
    # EfficientNetV2: (fused?, expand, kernel, stride, in, out, layers)
    tables = {
        "efficientnet_v2_s": [(1, 1, 3, 1, 24, 24, 2), (1, 4, 3, 2, 24, 48, 4),
                              (1, 4, 3, 2, 48, 64, 4), (0, 4, 3, 2, 64, 128, 6),
                              (0, 6, 3, 1, 128, 160, 9), (0, 6, 3, 2, 160, 256, 15)],
        "efficientnet_v2_m": [(1, 1, 3, 1, 24, 24, 3), (1, 4, 3, 2, 24, 48, 5),
                              (1, 4, 3, 2, 48, 80, 5), (0, 4, 3, 2, 80, 160, 7),
                              (0, 6, 3, 1, 160, 176, 14), (0, 6, 3, 2, 176, 304, 18),
                              (0, 6, 3, 1, 304, 512, 5)],
        "efficientnet_v2_l": [(1, 1, 3, 1, 32, 32, 4), (1, 4, 3, 2, 32, 64, 7),
                              (1, 4, 3, 2, 64, 96, 7), (0, 4, 3, 2, 96, 192, 10),
                              (0, 6, 3, 1, 192, 224, 19), (0, 6, 3, 2, 224, 384, 25),
                              (0, 6, 3, 1, 384, 640, 7)],
    }
    if arch not in tables:
        raise ValueError(f"Unsupported model type {arch}")
    return [(FusedMBConvConfig if fused else MBConvConfig)(*r) for fused, *r in tables[arch]], 1280


_V1 = "https://github.com/pytorch/vision/tree/main/references/classification#efficientnet-v1"
_TUNED = "https://github.com/pytorch/vision/issues/3995#new-recipe-with-lr-wd-crop-tuning"
_V2 = "https://github.com/pytorch/vision/tree/main/references/classification#efficientnet-v2"


class EfficientNet_B0_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b0_rwightman-7f5810bc", 5288548, _V1, 77.692, 93.532, 0.386, 20.451,
        interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B1_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b1_rwightman-bac287d4", 7794184, _V1, 78.642, 94.186, 0.687, 30.134,
        crop_size=240, interpolation=InterpolationMode.BICUBIC)
    IMAGENET1K_V2 = classification_weights(
        "efficientnet_b1-c27df63c", 7794184, _TUNED, 79.838, 94.934, 0.687, 30.136, crop_size=240,
        resize_size=255)
    DEFAULT = IMAGENET1K_V2


class EfficientNet_B2_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b2_rwightman-c35c1473", 9109994, _V1, 80.608, 95.31, 1.088, 35.174,
        crop_size=288, resize_size=288, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B3_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b3_rwightman-b3899882", 12233232, _V1, 82.008, 96.054, 1.827, 47.184,
        crop_size=300, resize_size=320, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B4_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b4_rwightman-23ab8bcd", 19341616, _V1, 83.384, 96.594, 4.394, 74.489,
        crop_size=380, resize_size=384, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B5_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b5_lukemelas-1a07897c", 30389784, _V1, 83.444, 96.628, 10.266, 116.864,
        crop_size=456, resize_size=456, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B6_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b6_lukemelas-24a108a5", 43040704, _V1, 84.008, 96.916, 19.068, 165.362,
        crop_size=528, resize_size=528, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B7_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_b7_lukemelas-c5b4e57e", 66347960, _V1, 84.122, 96.908, 37.746, 254.675,
        crop_size=600, resize_size=600, interpolation=InterpolationMode.BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_L_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_v2_l-59c71312", 118515272, _V2, 85.808, 97.788, 56.08, 454.573,
        min_size=(33, 33), crop_size=480, resize_size=480, interpolation=InterpolationMode.BICUBIC,
        mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_M_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_v2_m-dc08266a", 54139356, _V2, 85.112, 97.156, 24.582, 208.01,
        min_size=(33, 33), crop_size=480, resize_size=480)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "efficientnet_v2_s-dd5fe13b", 21458488, _V2, 84.228, 96.878, 8.366, 82.704,
        min_size=(33, 33), crop_size=384, resize_size=384)
    DEFAULT = IMAGENET1K_V1


# name: (weights enum, width_mult, depth_mult, dropout, batch-norm eps/momentum or None)
_VARIANTS = {
    "efficientnet_b0": (EfficientNet_B0_Weights, 1.0, 1.0, 0.2, None),
    "efficientnet_b1": (EfficientNet_B1_Weights, 1.0, 1.1, 0.2, None),
    "efficientnet_b2": (EfficientNet_B2_Weights, 1.1, 1.2, 0.3, None),
    "efficientnet_b3": (EfficientNet_B3_Weights, 1.2, 1.4, 0.3, None),
    "efficientnet_b4": (EfficientNet_B4_Weights, 1.4, 1.8, 0.4, None),
    "efficientnet_b5": (EfficientNet_B5_Weights, 1.6, 2.2, 0.4, (0.001, 0.01)),
    "efficientnet_b6": (EfficientNet_B6_Weights, 1.8, 2.6, 0.5, (0.001, 0.01)),
    "efficientnet_b7": (EfficientNet_B7_Weights, 2.0, 3.1, 0.5, (0.001, 0.01)),
    "efficientnet_v2_s": (EfficientNet_V2_S_Weights, 1.0, 1.0, 0.2, (0.001, 0.1)),
    "efficientnet_v2_m": (EfficientNet_V2_M_Weights, 1.0, 1.0, 0.3, (0.001, 0.1)),
    "efficientnet_v2_l": (EfficientNet_V2_L_Weights, 1.0, 1.0, 0.4, (0.001, 0.1)),
}


def _maker(arch):
    _, width, depth, dropout, bn = _VARIANTS[arch]

    def build(weights, progress, **kwargs):
        setting, last_channel = _efficientnet_conf(arch, width_mult=width, depth_mult=depth)
        if bn is not None:
            kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=bn[0], momentum=bn[1]))
        model = EfficientNet(setting, dropout, last_channel=last_channel, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


def _doc(arch):
    if "_v2_" in arch:
        return (f"EfficientNetV2-{arch[-1].upper()} from `EfficientNetV2: Smaller Models and "
                "Faster Training <https://arxiv.org/abs/2104.00298>`_.")
    return (f"EfficientNet {arch[-2:].upper()} from `EfficientNet: Rethinking Model Scaling for "
            "Convolutional Neural Networks <https://arxiv.org/abs/1905.11946>`_.")


efficientnet_b0 = make_builder("efficientnet_b0", EfficientNet_B0_Weights,
                               _maker("efficientnet_b0"), _doc("efficientnet_b0"))
efficientnet_b1 = make_builder("efficientnet_b1", EfficientNet_B1_Weights,
                               _maker("efficientnet_b1"), _doc("efficientnet_b1"))
efficientnet_b2 = make_builder("efficientnet_b2", EfficientNet_B2_Weights,
                               _maker("efficientnet_b2"), _doc("efficientnet_b2"))
efficientnet_b3 = make_builder("efficientnet_b3", EfficientNet_B3_Weights,
                               _maker("efficientnet_b3"), _doc("efficientnet_b3"))
efficientnet_b4 = make_builder("efficientnet_b4", EfficientNet_B4_Weights,
                               _maker("efficientnet_b4"), _doc("efficientnet_b4"))
efficientnet_b5 = make_builder("efficientnet_b5", EfficientNet_B5_Weights,
                               _maker("efficientnet_b5"), _doc("efficientnet_b5"))
efficientnet_b6 = make_builder("efficientnet_b6", EfficientNet_B6_Weights,
                               _maker("efficientnet_b6"), _doc("efficientnet_b6"))
efficientnet_b7 = make_builder("efficientnet_b7", EfficientNet_B7_Weights,
                               _maker("efficientnet_b7"), _doc("efficientnet_b7"))
efficientnet_v2_s = make_builder("efficientnet_v2_s", EfficientNet_V2_S_Weights,
                                 _maker("efficientnet_v2_s"), _doc("efficientnet_v2_s"))
efficientnet_v2_m = make_builder("efficientnet_v2_m", EfficientNet_V2_M_Weights,
                                 _maker("efficientnet_v2_m"), _doc("efficientnet_v2_m"))
efficientnet_v2_l = make_builder("efficientnet_v2_l", EfficientNet_V2_L_Weights,
                                 _maker("efficientnet_v2_l"), _doc("efficientnet_v2_l"))
