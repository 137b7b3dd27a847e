"""Inception v3 (Szegedy et al., 2015) with its auxiliary classifier."""

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
from embervision.models.googlenet import BasicConv2d, transform_input_imagenet

__all__ = ["Inception3", "InceptionOutputs", "_InceptionOutputs", "Inception_V3_Weights",
           "inception_v3"]

InceptionOutputs = namedtuple("InceptionOutputs", ["logits", "aux_logits"])
_InceptionOutputs = InceptionOutputs


class InceptionA(nn.Module):
    """35x35 block: 1x1; 1x1-5x5; 1x1-3x3-3x3; avg-pool-1x1."""

    def __init__(self, in_channels: int, pool_features: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch1x1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch5x5_1 = conv_block(in_channels, 48, kernel_size=1)
        self.branch5x5_2 = conv_block(48, 64, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = conv_block(96, 96, kernel_size=3, padding=1)
        self.branch_pool = conv_block(in_channels, pool_features, kernel_size=1)

    def forward(self, x):
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return ember.cat([self.branch1x1(x), b5, b3, pool], 1)


class InceptionB(nn.Module):
    """Grid reduction 35 -> 17: stride-2 3x3; 1x1-3x3-stride-2 3x3; max pool."""

    def __init__(self, in_channels: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch3x3 = conv_block(in_channels, 384, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = conv_block(96, 96, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return ember.cat([self.branch3x3(x), b3, F.max_pool2d(x, kernel_size=3, stride=2)], 1)


class InceptionC(nn.Module):
    """17x17 block with factorized 7x7 convolutions (1x7 and 7x1)."""

    def __init__(self, in_channels: int, channels_7x7: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        c7 = channels_7x7
        self.branch1x1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch7x7_1 = conv_block(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = conv_block(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = conv_block(c7, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = conv_block(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = conv_block(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = conv_block(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = conv_block(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = conv_block(c7, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = conv_block(in_channels, 192, kernel_size=1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        d = x
        for conv in (self.branch7x7dbl_1, self.branch7x7dbl_2, self.branch7x7dbl_3,
                     self.branch7x7dbl_4, self.branch7x7dbl_5):
            d = conv(d)
        pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return ember.cat([self.branch1x1(x), b7, d, pool], 1)


class InceptionD(nn.Module):
    """Grid reduction 17 -> 8."""

    def __init__(self, in_channels: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch3x3_1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch3x3_2 = conv_block(192, 320, kernel_size=3, stride=2)
        self.branch7x7x3_1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch7x7x3_2 = conv_block(192, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = conv_block(192, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = conv_block(192, 192, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        return ember.cat([b3, b7, F.max_pool2d(x, kernel_size=3, stride=2)], 1)


class InceptionE(nn.Module):
    """8x8 block with expanded (1x3 and 3x1 side by side) filter banks."""

    def __init__(self, in_channels: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch1x1 = conv_block(in_channels, 320, kernel_size=1)
        self.branch3x3_1 = conv_block(in_channels, 384, kernel_size=1)
        self.branch3x3_2a = conv_block(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = conv_block(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = conv_block(in_channels, 448, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(448, 384, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = conv_block(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = conv_block(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = conv_block(in_channels, 192, kernel_size=1)

    def forward(self, x):
        b3 = self.branch3x3_1(x)
        b3 = ember.cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], 1)
        d = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        d = ember.cat([self.branch3x3dbl_3a(d), self.branch3x3dbl_3b(d)], 1)
        pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return ember.cat([self.branch1x1(x), b3, d, pool], 1)


class InceptionAux(nn.Module):
    """The auxiliary classifier on the 17x17 grid."""

    def __init__(self, in_channels: int, num_classes: int, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.conv0 = conv_block(in_channels, 128, kernel_size=1)
        self.conv1 = conv_block(128, 768, kernel_size=5)
        self.conv1.stddev = 0.01
        self.fc = nn.Linear(768, num_classes)
        self.fc.stddev = 0.001

    def forward(self, x):
        x = self.conv1(self.conv0(F.avg_pool2d(x, kernel_size=5, stride=3)))
        return self.fc(ember.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class Inception3(nn.Module):
    """Inception v3. In training mode with ``aux_logits`` it returns
    :class:`InceptionOutputs` ``(logits, aux_logits)``, otherwise the logits.

    Args:
        num_classes (int): Default: 1000.
        aux_logits (bool): build the auxiliary classifier. Default: True.
        transform_input (bool): re-normalize ImageNet-normalized inputs to the 0.5/0.5
            normalization of the ported weights. Default: False.
        inception_blocks (list, optional): the seven block classes (conv, A-E, aux).
        init_weights (bool, optional): truncated-normal initialization; None means True with a
            FutureWarning, as torchvision does. Default: None.
        dropout (float): Default: 0.5.

    Shape:
        - Input: :math:`(N, 3, H, W)` with :math:`H, W \\geq 75`
        - Output: :math:`(N, \\text{num\\_classes})`
    """

    def __init__(self, num_classes: int = 1000, aux_logits: bool = True,
                 transform_input: bool = False, inception_blocks=None,
                 init_weights: bool | None = None, dropout: float = 0.5):
        super().__init__()
        inception_blocks = inception_blocks or [BasicConv2d, InceptionA, InceptionB, InceptionC,
                                                InceptionD, InceptionE, InceptionAux]
        if init_weights is None:
            warnings.warn(
                "The default weight initialization of inception_v3 will be changed in future "
                "releases of torchvision. If you wish to keep the old behavior (which leads to "
                "long initialization times due to scipy/scipy#11299), please set "
                "init_weights=True.", FutureWarning, stacklevel=2)
            init_weights = True
        if len(inception_blocks) != 7:
            raise ValueError(
                f"length of inception_blocks should be 7 instead of {len(inception_blocks)}")
        conv_block, block_a, block_b, block_c, block_d, block_e, block_aux = inception_blocks
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.Conv2d_1a_3x3 = conv_block(3, 32, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = conv_block(32, 32, kernel_size=3)
        self.Conv2d_2b_3x3 = conv_block(32, 64, kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = conv_block(64, 80, kernel_size=1)
        self.Conv2d_4a_3x3 = conv_block(80, 192, kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = block_a(192, pool_features=32)
        self.Mixed_5c = block_a(256, pool_features=64)
        self.Mixed_5d = block_a(288, pool_features=64)
        self.Mixed_6a = block_b(288)
        self.Mixed_6b = block_c(768, channels_7x7=128)
        self.Mixed_6c = block_c(768, channels_7x7=160)
        self.Mixed_6d = block_c(768, channels_7x7=160)
        self.Mixed_6e = block_c(768, channels_7x7=192)
        self.AuxLogits = block_aux(768, num_classes) if aux_logits else None
        self.Mixed_7a = block_d(768)
        self.Mixed_7b = block_e(1280)
        self.Mixed_7c = block_e(2048)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(2048, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    stddev = float(getattr(m, "stddev", 0.1))
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=stddev, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

    def _transform_input(self, x):
        return transform_input_imagenet(x) if self.transform_input else x

    def _forward(self, x):
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = self.maxpool2(self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(self.maxpool1(x))))
        for block in (self.Mixed_5b, self.Mixed_5c, self.Mixed_5d, self.Mixed_6a, self.Mixed_6b,
                      self.Mixed_6c, self.Mixed_6d, self.Mixed_6e):
            x = block(x)
        aux = self.AuxLogits(x) if self.AuxLogits is not None and self.training else None
        x = self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x)))
        x = self.fc(ember.flatten(self.dropout(self.avgpool(x)), 1))
        return x, aux

    def eager_outputs(self, x, aux):
        if self.training and self.aux_logits:
            return InceptionOutputs(x, aux)
        return x

    def forward(self, x):
        x, aux = self._forward(self._transform_input(x))
        return self.eager_outputs(x, aux)


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#inception-v3"


class Inception_V3_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "inception_v3_google-0cc3c7bd", 27161264, _RECIPE, 77.294, 93.45, 5.713, 103.903,
        min_size=(75, 75), crop_size=299, resize_size=342)
    DEFAULT = IMAGENET1K_V1


def _build(weights, progress, **kwargs):
    original_aux_logits = kwargs.get("aux_logits", True)
    if weights is not None:
        if "transform_input" not in kwargs:
            ovewrite_named_param(kwargs, "transform_input", True)
        ovewrite_named_param(kwargs, "aux_logits", True)
        ovewrite_named_param(kwargs, "init_weights", False)
    model = Inception3(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        if not original_aux_logits:
            model.aux_logits = False
            model.AuxLogits = None
    return model


inception_v3 = make_builder(
    "inception_v3", Inception_V3_Weights, _build,
    "Inception v3 from `Rethinking the Inception Architecture for Computer Vision "
    "<http://arxiv.org/abs/1512.00567>`_.\n    The weights expect 299x299 inputs; with weights, "
    "``transform_input`` defaults to True.")
