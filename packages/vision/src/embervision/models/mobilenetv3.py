"""MobileNetV3 (Howard et al., 2019), large and small."""

from __future__ import annotations

from functools import partial

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.models._utils import make_divisible
from embervision.ops.misc import Conv2dNormActivation, SqueezeExcitation

__all__ = ["MobileNetV3", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights",
           "mobilenet_v3_large", "mobilenet_v3_small"]


class InvertedResidualConfig:
    """One block of a MobileNetV3: kernel, channels, squeeze-excitation, activation
    (``"RE"`` ReLU or ``"HS"`` hard swish), stride and dilation."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, dilation, width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels: int, width_mult: float) -> int:
        return make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    """Expansion, depthwise convolution, optional squeeze-excitation, projection."""

    def __init__(self, cnf: InvertedResidualConfig, norm_layer, se_layer=None):
        super().__init__()
        se_layer = se_layer or partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=activation))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels,
                                           kernel_size=cnf.kernel, stride=stride,
                                           dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation))
        if cnf.use_se:
            squeeze = make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(se_layer(cnf.expanded_channels, squeeze))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, x):
        out = self.block(x)
        return out + x if self.use_res_connect else out


class MobileNetV3(nn.Module):
    """MobileNetV3 from a list of :class:`InvertedResidualConfig`.

    Args:
        inverted_residual_setting (list): the blocks.
        last_channel (int): width of the penultimate layer.
        num_classes (int): Default: 1000.
        block (callable, optional): Default: ``InvertedResidual``.
        norm_layer (callable, optional): Default: ``BatchNorm2d(eps=0.001, momentum=0.01)``.
        dropout (float): Default: 0.2.
    """

    def __init__(self, inverted_residual_setting, last_channel: int, num_classes: int = 1000,
                 block=None, norm_layer=None, dropout: float = 0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[InvertedResidualConfig]")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(last_out, last_channel), nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


def _mobilenet_v3_conf(arch: str, width_mult: float = 1.0, reduced_tail: bool = False,
                       dilated: bool = False):
    rd = 2 if reduced_tail else 1
    dil = 2 if dilated else 1
    c = partial(InvertedResidualConfig, width_mult=width_mult)
    if arch == "mobilenet_v3_large":
        rows = [(16, 3, 16, 16, False, "RE", 1, 1), (16, 3, 64, 24, False, "RE", 2, 1),
                (24, 3, 72, 24, False, "RE", 1, 1), (24, 5, 72, 40, True, "RE", 2, 1),
                (40, 5, 120, 40, True, "RE", 1, 1), (40, 5, 120, 40, True, "RE", 1, 1),
                (40, 3, 240, 80, False, "HS", 2, 1), (80, 3, 200, 80, False, "HS", 1, 1),
                (80, 3, 184, 80, False, "HS", 1, 1), (80, 3, 184, 80, False, "HS", 1, 1),
                (80, 3, 480, 112, True, "HS", 1, 1), (112, 3, 672, 112, True, "HS", 1, 1),
                (112, 5, 672, 160 // rd, True, "HS", 2, dil),
                (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dil),
                (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dil)]
        last = 1280 // rd
    elif arch == "mobilenet_v3_small":
        rows = [(16, 3, 16, 16, True, "RE", 2, 1), (16, 3, 72, 24, False, "RE", 2, 1),
                (24, 3, 88, 24, False, "RE", 1, 1), (24, 5, 96, 40, True, "HS", 2, 1),
                (40, 5, 240, 40, True, "HS", 1, 1), (40, 5, 240, 40, True, "HS", 1, 1),
                (40, 5, 120, 48, True, "HS", 1, 1), (48, 5, 144, 48, True, "HS", 1, 1),
                (48, 5, 288, 96 // rd, True, "HS", 2, dil),
                (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dil),
                (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dil)]
        last = 1024 // rd
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return [c(*r) for r in rows], InvertedResidualConfig.adjust_channels(last, width_mult)


_RECIPE = ("https://github.com/pytorch/vision/tree/main/references/classification"
           "#mobilenetv3-large--small")


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("mobilenet_v3_large-8738ca79", 5483032, _RECIPE,
                                           74.042, 91.34, 0.217, 21.114)
    IMAGENET1K_V2 = classification_weights(
        "mobilenet_v3_large-5c1a4163", 5483032,
        "https://github.com/pytorch/vision/issues/3995#new-recipe-with-reg-tuning",
        75.274, 92.566, 0.217, 21.107, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("mobilenet_v3_small-047dcff4", 2542856, _RECIPE,
                                           67.668, 87.402, 0.057, 9.829)
    DEFAULT = IMAGENET1K_V1


def _maker(arch):
    def build(weights, progress, **kwargs):
        conf_keys = ("width_mult", "reduced_tail", "dilated")
        conf = {k: kwargs.pop(k) for k in conf_keys if k in kwargs}
        setting, last = _mobilenet_v3_conf(arch, **conf)
        model = MobileNetV3(setting, last, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


mobilenet_v3_large = make_builder("mobilenet_v3_large", MobileNet_V3_Large_Weights,
                                  _maker("mobilenet_v3_large"), "MobileNetV3 large.")
mobilenet_v3_small = make_builder("mobilenet_v3_small", MobileNet_V3_Small_Weights,
                                  _maker("mobilenet_v3_small"), "MobileNetV3 small.")
