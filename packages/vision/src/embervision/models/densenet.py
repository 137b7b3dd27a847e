"""DenseNet (Huang et al., 2016): 121, 161, 169 and 201."""

from __future__ import annotations

import re
from collections import OrderedDict

import ember
import ember.nn.functional as F
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = ["DenseNet", "DenseNet121_Weights", "DenseNet161_Weights", "DenseNet169_Weights",
           "DenseNet201_Weights", "densenet121", "densenet161", "densenet169", "densenet201"]


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate,
                 memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        # Checkpointing to save memory is not done: the flag is kept for the signature.
        self.memory_efficient = memory_efficient

    def forward(self, input):
        prev = [input] if isinstance(input, ember.Tensor) else input
        bottleneck = self.conv1(self.relu1(self.norm1(ember.cat(prev, 1))))
        new = self.conv2(self.relu2(self.norm2(bottleneck)))
        if self.drop_rate > 0:
            new = F.dropout(new, p=self.drop_rate, training=self.training)
        return new


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate,
                 memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1}",
                            _DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                        bn_size, drop_rate, memory_efficient))

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return ember.cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1,
                              bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """DenseNet-BC.

    Args:
        growth_rate (int): channels each layer adds. Default: 32.
        block_config (tuple of 4 int): layers per dense block. Default: ``(6, 12, 24, 16)``.
        num_init_features (int): Default: 64.
        bn_size (int): bottleneck width factor. Default: 4.
        drop_rate (float): dropout after each layer. Default: 0.
        num_classes (int): Default: 1000.
        memory_efficient (bool): accepted for torchvision's signature; no checkpointing is
            done. Default: False.
    """

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64,
                 bn_size=4, drop_rate=0.0, num_classes=1000, memory_efficient=False):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3,
                                bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module(f"denseblock{i + 1}", _DenseBlock(
                num_layers, num_features, bn_size, growth_rate, drop_rate, memory_efficient))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}",
                                         _Transition(num_features, num_features // 2))
                num_features //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x))
        out = F.adaptive_avg_pool2d(out, (1, 1))
        return self.classifier(ember.flatten(out, 1))


# The published checkpoints name the layers' modules "norm.1", "conv.2"...; they were
# renamed "norm1", "conv2" when dots became illegal in module names.
_OLD_KEY = re.compile(
    r"^(.*denselayer\d+\.(?:norm|relu|conv))\."
    r"((?:[12])\.(?:weight|bias|running_mean|running_var|num_batches_tracked))$"
)


def _load_state_dict(model, weights, progress):
    state_dict = weights.get_state_dict(progress=progress, check_hash=True)
    for key in list(state_dict):
        match = _OLD_KEY.match(key)
        if match:
            state_dict[match.group(1) + match.group(2)] = state_dict.pop(key)
    model.load_state_dict(state_dict)


_RECIPE = "https://github.com/pytorch/vision/pull/116"


def _w(stem, params, acc1, acc5, ops, size):
    return classification_weights(stem, params, _RECIPE, acc1, acc5, ops, size, min_size=(29, 29))


class DenseNet121_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("densenet121-a639ec97", 7978856, 74.434, 91.972, 2.834, 30.845)
    DEFAULT = IMAGENET1K_V1


class DenseNet161_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("densenet161-8d451a50", 28681000, 77.138, 93.56, 7.728, 110.369)
    DEFAULT = IMAGENET1K_V1


class DenseNet169_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("densenet169-b2777c0a", 14149480, 75.6, 92.806, 3.36, 54.708)
    DEFAULT = IMAGENET1K_V1


class DenseNet201_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("densenet201-c1103571", 20013928, 76.896, 93.37, 4.291, 77.373)
    DEFAULT = IMAGENET1K_V1


def _maker(growth_rate, block_config, num_init_features):
    def build(weights, progress, **kwargs):
        model = DenseNet(growth_rate, block_config, num_init_features, **kwargs)
        if weights is not None:
            _load_state_dict(model, weights, progress)
        return model

    return build


densenet121 = make_builder("densenet121", DenseNet121_Weights, _maker(32, (6, 12, 24, 16), 64),
                           "DenseNet-121.")
densenet161 = make_builder("densenet161", DenseNet161_Weights, _maker(48, (6, 12, 36, 24), 96),
                           "DenseNet-161.")
densenet169 = make_builder("densenet169", DenseNet169_Weights, _maker(32, (6, 12, 32, 32), 64),
                           "DenseNet-169.")
densenet201 = make_builder("densenet201", DenseNet201_Weights, _maker(32, (6, 12, 48, 32), 64),
                           "DenseNet-201.")
