"""SqueezeNet (Iandola et al., 2016), versions 1.0 and 1.1."""

from __future__ import annotations

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = ["SqueezeNet", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "squeezenet1_0",
           "squeezenet1_1"]


class Fire(nn.Module):
    """Squeeze (1x1) then expand (1x1 and 3x3, concatenated)."""

    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return ember.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    """SqueezeNet.

    Args:
        version (str): ``"1_0"`` or ``"1_1"``. Default: ``"1_0"``.
        num_classes (int): Default: 1000.
        dropout (float): Default: 0.5.
    """

    def __init__(self, version: str = "1_0", num_classes: int = 1000, dropout: float = 0.5):
        super().__init__()
        self.num_classes = num_classes
        pool = nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), pool,
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), pool,
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256), pool, Fire(512, 64, 256, 256),
            )
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), pool,
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool,
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool,
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                Fire(512, 64, 256, 256),
            )
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return ember.flatten(self.classifier(self.features(x)), 1)


_RECIPE = "https://github.com/pytorch/vision/pull/49#issuecomment-277560717"


class SqueezeNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("squeezenet1_0-b66bff10", 1248424, _RECIPE, 58.092,
                                           80.42, 0.819, 4.778, min_size=(21, 21))
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_1_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("squeezenet1_1-b8a52dc0", 1235496, _RECIPE, 58.178,
                                           80.624, 0.349, 4.729, min_size=(17, 17))
    DEFAULT = IMAGENET1K_V1


def _maker(version):
    def build(weights, progress, **kwargs):
        model = SqueezeNet(version, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


squeezenet1_0 = make_builder("squeezenet1_0", SqueezeNet1_0_Weights, _maker("1_0"),
                             "SqueezeNet 1.0.")
squeezenet1_1 = make_builder("squeezenet1_1", SqueezeNet1_1_Weights, _maker("1_1"),
                             "SqueezeNet 1.1: 2.4x less computation than 1.0, as accurate.")
