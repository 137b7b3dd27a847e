"""GoogLeNet (Inception v1; Szegedy et al., 2014) with its two auxiliary classifiers."""

from __future__ import annotations

import warnings
from collections import namedtuple

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import (
    WeightsEnum,
    classification_weights,
    make_builder,
    ovewrite_named_param,
)

__all__ = ["GoogLeNet", "GoogLeNetOutputs", "_GoogLeNetOutputs", "GoogLeNet_Weights", "googlenet"]

GoogLeNetOutputs = namedtuple("GoogLeNetOutputs", ["logits", "aux_logits2", "aux_logits1"])
_GoogLeNetOutputs = GoogLeNetOutputs


def transform_input_imagenet(x):
    """Maps an input normalized with ImageNet's mean and std to one normalized with 0.5 and
    0.5, the preprocessing of the ported weights."""
    channels = [ember.unsqueeze(x[:, i], 1) * (s / 0.5) + (m - 0.5) / 0.5
                for i, (m, s) in enumerate(zip((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)))]
    return ember.cat(channels, 1)


class BasicConv2d(nn.Module):
    """Convolution without bias, batch norm (eps 0.001), ReLU."""

    def __init__(self, in_channels: int, out_channels: int, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


class Inception(nn.Module):
    """Four parallel branches (1x1; 1x1-3x3; 1x1-3x3; max-pool-1x1) concatenated."""

    def __init__(self, in_channels: int, ch1x1: int, ch3x3red: int, ch3x3: int, ch5x5red: int,
                 ch5x5: int, pool_proj: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch1 = conv_block(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(conv_block(in_channels, ch3x3red, kernel_size=1),
                                     conv_block(ch3x3red, ch3x3, kernel_size=3, padding=1))
        # 3x3, not 5x5: the kernel of the ported checkpoint (torchvision's known deviation).
        self.branch3 = nn.Sequential(conv_block(in_channels, ch5x5red, kernel_size=1),
                                     conv_block(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            conv_block(in_channels, pool_proj, kernel_size=1))

    def forward(self, x):
        return ember.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


class InceptionAux(nn.Module):
    """An auxiliary classifier on an intermediate feature map."""

    def __init__(self, in_channels: int, num_classes: int, conv_block=None,
                 dropout: float = 0.7):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.conv = conv_block(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        x = ember.flatten(self.conv(F.adaptive_avg_pool2d(x, (4, 4))), 1)
        return self.fc2(self.dropout(F.relu(self.fc1(x), inplace=True)))


class GoogLeNet(nn.Module):
    """GoogLeNet. In training mode with ``aux_logits`` it returns :class:`GoogLeNetOutputs`
    ``(logits, aux_logits2, aux_logits1)``, otherwise the logits.

    Args:
        num_classes (int): Default: 1000.
        aux_logits (bool): build the auxiliary classifiers. Default: True.
        transform_input (bool): re-normalize ImageNet-normalized inputs to the 0.5/0.5
            normalization of the ported weights. Default: False.
        init_weights (bool, optional): truncated-normal initialization; None means True with a
            FutureWarning, as torchvision does. Default: None.
        blocks (list, optional): the conv, inception and auxiliary block classes.
        dropout (float): Default: 0.2.
        dropout_aux (float): Default: 0.7.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    __constants__ = ["aux_logits", "transform_input"]

    def __init__(self, num_classes: int = 1000, aux_logits: bool = True,
                 transform_input: bool = False, init_weights: bool | None = None, blocks=None,
                 dropout: float = 0.2, dropout_aux: float = 0.7):
        super().__init__()
        blocks = blocks or [BasicConv2d, Inception, InceptionAux]
        if init_weights is None:
            warnings.warn(
                "The default weight initialization of GoogleNet will be changed in future "
                "releases of torchvision. If you wish to keep the old behavior (which leads to "
                "long initialization times due to scipy/scipy#11299), please set "
                "init_weights=True.", FutureWarning, stacklevel=2)
            init_weights = True
        if len(blocks) != 3:
            raise ValueError(f"blocks length should be 3 instead of {len(blocks)}")
        conv_block, inception_block, aux_block = blocks
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.conv1 = conv_block(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = conv_block(64, 64, kernel_size=1)
        self.conv3 = conv_block(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = inception_block(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = inception_block(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = inception_block(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = inception_block(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = inception_block(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = inception_block(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = inception_block(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = inception_block(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = inception_block(832, 384, 192, 384, 48, 128, 128)
        if aux_logits:
            self.aux1 = aux_block(512, num_classes, dropout=dropout_aux)
            self.aux2 = aux_block(528, num_classes, dropout=dropout_aux)
        else:
            self.aux1 = None
            self.aux2 = None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(1024, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=0.01, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

    def _transform_input(self, x):
        return transform_input_imagenet(x) if self.transform_input else x

    def _forward(self, x):
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        x = self.inception4a(x)
        aux1 = self.aux1(x) if self.aux1 is not None and self.training else None
        x = self.inception4d(self.inception4c(self.inception4b(x)))
        aux2 = self.aux2(x) if self.aux2 is not None and self.training else None
        x = self.maxpool4(self.inception4e(x))
        x = self.inception5b(self.inception5a(x))
        x = self.fc(self.dropout(ember.flatten(self.avgpool(x), 1)))
        return x, aux2, aux1

    def eager_outputs(self, x, aux2, aux1):
        if self.training and self.aux_logits:
            return _GoogLeNetOutputs(x, aux2, aux1)
        return x

    def forward(self, x):
        x, aux2, aux1 = self._forward(self._transform_input(x))
        return self.eager_outputs(x, aux2, aux1)


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#googlenet"


class GoogLeNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "googlenet-1378be20", 6624904, _RECIPE, 69.778, 89.53, 1.498, 49.731, min_size=(15, 15))
    DEFAULT = IMAGENET1K_V1


def _build(weights, progress, **kwargs):
    original_aux_logits = kwargs.get("aux_logits", False)
    if weights is not None:
        if "transform_input" not in kwargs:
            ovewrite_named_param(kwargs, "transform_input", True)
        ovewrite_named_param(kwargs, "aux_logits", True)
        ovewrite_named_param(kwargs, "init_weights", False)
    model = GoogLeNet(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        if not original_aux_logits:
            model.aux_logits = False
            model.aux1 = None
            model.aux2 = None
        else:
            warnings.warn("auxiliary heads in the pretrained googlenet model are NOT pretrained, "
                          "so make sure to train them", stacklevel=2)
    return model


googlenet = make_builder(
    "googlenet", GoogLeNet_Weights, _build,
    "GoogLeNet (Inception v1) from `Going Deeper with Convolutions "
    "<http://arxiv.org/abs/1409.4842>`_. With weights, ``transform_input`` defaults to True and\n"
    "    the (untrained) auxiliary heads are dropped unless ``aux_logits=True``.")
