"""MobileNetV2 (Sandler et al., 2018)."""

from __future__ import annotations

import ember
import ember.nn.functional as F
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder
from embervision.models._utils import make_divisible
from embervision.ops.misc import Conv2dNormActivation

__all__ = ["MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2"]


class InvertedResidual(nn.Module):
    """1x1 expansion, 3x3 depthwise, linear 1x1 projection; a shortcut when shapes allow."""

    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int, norm_layer=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = norm_layer or nn.BatchNorm2d
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                 norm_layer=norm_layer, activation_layer=nn.ReLU6),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    """MobileNetV2.

    Args:
        num_classes (int): Default: 1000.
        width_mult (float): channel multiplier. Default: 1.0.
        inverted_residual_setting (list, optional): ``[t, c, n, s]`` rows.
        round_nearest (int): channels are multiples of this. Default: 8.
        block (callable, optional): Default: ``InvertedResidual``.
        norm_layer (callable, optional): Default: ``nn.BatchNorm2d``.
        dropout (float): Default: 0.2.
    """

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0,
                 inverted_residual_setting=None, round_nearest: int = 8, block=None,
                 norm_layer=None, dropout: float = 0.2):
        super().__init__()
        block = block or InvertedResidual
        norm_layer = norm_layer or nn.BatchNorm2d
        input_channel, last_channel = 32, 1280
        if inverted_residual_setting is None:
            inverted_residual_setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2],
                                         [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                                         [6, 320, 1, 1]]
        if not inverted_residual_setting or any(len(r) != 4 for r in inverted_residual_setting):
            raise ValueError("inverted_residual_setting should be non-empty and a 4-element "
                             f"list, got {inverted_residual_setting}")
        input_channel = make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1,
                                      expand_ratio=t, norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))
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
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(ember.flatten(x, 1))


class MobileNet_V2_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "mobilenet_v2-b0353104", 3504872,
        "https://github.com/pytorch/vision/tree/main/references/classification#mobilenetv2",
        71.878, 90.286, 0.301, 13.555)
    IMAGENET1K_V2 = classification_weights(
        "mobilenet_v2-7ebf99e0", 3504872,
        "https://github.com/pytorch/vision/issues/3995#new-recipe-with-reg-tuning",
        72.154, 90.822, 0.301, 13.598, resize_size=232)
    DEFAULT = IMAGENET1K_V2


def _build(weights, progress, **kwargs):
    model = MobileNetV2(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


mobilenet_v2 = make_builder("mobilenet_v2", MobileNet_V2_Weights, _build, "MobileNetV2.")
