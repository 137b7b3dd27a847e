"""VGG (Simonyan and Zisserman, 2014), with and without batch norm."""

from __future__ import annotations

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = [
    "VGG", "VGG11_BN_Weights", "VGG11_Weights", "VGG13_BN_Weights", "VGG13_Weights",
    "VGG16_BN_Weights", "VGG16_Weights", "VGG19_BN_Weights", "VGG19_Weights", "vgg11",
    "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
]


class VGG(nn.Module):
    """VGG on a given convolutional ``features`` stack.

    Args:
        features (nn.Module): the convolutional layers (see :func:`make_layers`).
        num_classes (int): Default: 1000.
        init_weights (bool): Default: True.
        dropout (float): Default: 0.5.
    """

    def __init__(self, features, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


def make_layers(cfg, batch_norm: bool = False) -> nn.Sequential:
    """3x3 convolutions (+ batch norm) + ReLU for each number in ``cfg``, 2x2 max pooling for
    each ``"M"``."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
          "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512,
          512, 512, 512, "M"],
}

_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg"


def _w(stem, params, acc1, acc5, ops, size):
    return classification_weights(stem, params, _RECIPE, acc1, acc5, ops, size, min_size=(32, 32))


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg11-8a719046", 132863336, 69.02, 88.628, 7.609, 506.84)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg11_bn-6002323d", 132868840, 70.37, 89.81, 7.609, 506.881)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg13-19584684", 133047848, 69.928, 89.246, 11.308, 507.545)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg13_bn-abd245e5", 133053736, 71.586, 90.374, 11.308, 507.59)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg16-397923af", 138357544, 71.592, 90.382, 15.47, 527.796)
    # The SSD feature extractor's weights: the classifier is not trained, hence no accuracy.
    IMAGENET1K_FEATURES = classification_weights(
        "vgg16_features-amdegroot-88682ab5", 138357544,
        "https://github.com/amdegroot/ssd.pytorch#training-ssd", float("nan"), float("nan"),
        15.47, 527.802, min_size=(32, 32), categories=None, mean=(0.48235, 0.45882, 0.40784),
        std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0))
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg16_bn-6c64b313", 138365992, 73.36, 91.516, 15.47, 527.866)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg19-dcbb9e9d", 143667240, 72.376, 90.876, 19.632, 548.051)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("vgg19_bn-c79401a0", 143678248, 74.218, 91.842, 19.632, 548.143)
    DEFAULT = IMAGENET1K_V1


def _maker(cfg, batch_norm):
    def build(weights, progress, **kwargs):
        if weights is not None:
            kwargs["init_weights"] = False
        model = VGG(make_layers(CFGS[cfg], batch_norm=batch_norm), **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


vgg11 = make_builder("vgg11", VGG11_Weights, _maker("A", False), "VGG-11.")
vgg11_bn = make_builder("vgg11_bn", VGG11_BN_Weights, _maker("A", True), "VGG-11 with batch norm.")
vgg13 = make_builder("vgg13", VGG13_Weights, _maker("B", False), "VGG-13.")
vgg13_bn = make_builder("vgg13_bn", VGG13_BN_Weights, _maker("B", True), "VGG-13 with batch norm.")
vgg16 = make_builder("vgg16", VGG16_Weights, _maker("D", False), "VGG-16.")
vgg16_bn = make_builder("vgg16_bn", VGG16_BN_Weights, _maker("D", True), "VGG-16 with batch norm.")
vgg19 = make_builder("vgg19", VGG19_Weights, _maker("E", False), "VGG-19.")
vgg19_bn = make_builder("vgg19_bn", VGG19_BN_Weights, _maker("E", True), "VGG-19 with batch norm.")
