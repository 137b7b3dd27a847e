"""S3D (Xie et al., 2018): an Inception network whose 3-D convolutions are separated into a
spatial and a temporal one, with torchvision's module names so that its Kinetics-400
checkpoint loads."""

from __future__ import annotations

from functools import partial

import ember
from ember import nn
from embervision.models._api import WeightsEnum, make_builder
from embervision.models.video._utils import kinetics_weights, with_weights
from embervision.ops.misc import Conv3dNormActivation

__all__ = [
    "S3D",
    "S3D_Weights",
    "s3d",
]


class TemporalSeparableConv(nn.Sequential):
    """A ``1 x k x k`` convolution then a ``k x 1 x 1`` one, each with its norm and ReLU."""

    def __init__(self, in_planes: int, out_planes: int, kernel_size: int, stride: int,
                 padding: int, norm_layer):
        super().__init__(
            Conv3dNormActivation(in_planes, out_planes, kernel_size=(1, kernel_size, kernel_size),
                                 stride=(1, stride, stride), padding=(0, padding, padding),
                                 bias=False, norm_layer=norm_layer),
            Conv3dNormActivation(out_planes, out_planes, kernel_size=(kernel_size, 1, 1),
                                 stride=(stride, 1, 1), padding=(padding, 0, 0), bias=False,
                                 norm_layer=norm_layer),
        )


class SepInceptionBlock3D(nn.Module):
    """Four branches concatenated along the channels: 1x1x1; 1x1x1 then separable 3x3x3
    (twice, of different widths); 3x3x3 max pooling then 1x1x1."""

    def __init__(self, in_planes: int, b0_out: int, b1_mid: int, b1_out: int, b2_mid: int,
                 b2_out: int, b3_out: int, norm_layer):
        super().__init__()
        unit = partial(Conv3dNormActivation, kernel_size=1, stride=1, norm_layer=norm_layer)
        self.branch0 = unit(in_planes, b0_out)
        self.branch1 = nn.Sequential(
            unit(in_planes, b1_mid),
            TemporalSeparableConv(b1_mid, b1_out, kernel_size=3, stride=1, padding=1,
                                  norm_layer=norm_layer))
        self.branch2 = nn.Sequential(
            unit(in_planes, b2_mid),
            TemporalSeparableConv(b2_mid, b2_out, kernel_size=3, stride=1, padding=1,
                                  norm_layer=norm_layer))
        self.branch3 = nn.Sequential(nn.MaxPool3d(kernel_size=(3, 3, 3), stride=1, padding=1),
                                     unit(in_planes, b3_out))

    def forward(self, x):
        return ember.cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class S3D(nn.Module):
    """S3D on clips ``(N, 3, T, H, W)``; the final ``2 x 7 x 7`` average pooling needs at least
    14 frames of 224 x 224 (``min_temporal_size``, ``min_size`` of the weights).

    Args:
        num_classes (int): Default: 400.
        dropout (float): before the classifier. Default: 0.2.
        norm_layer (callable, optional): Default: ``BatchNorm3d(eps=0.001, momentum=0.001)``.
    """

    def __init__(self, num_classes: int = 400, dropout: float = 0.2, norm_layer=None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = partial(nn.BatchNorm3d, eps=0.001, momentum=0.001)
        inception = partial(SepInceptionBlock3D, norm_layer=norm_layer)
        self.features = nn.Sequential(
            TemporalSeparableConv(3, 64, 7, 2, 3, norm_layer),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            Conv3dNormActivation(64, 64, kernel_size=1, stride=1, norm_layer=norm_layer),
            TemporalSeparableConv(64, 192, 3, 1, 1, norm_layer),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            inception(192, 64, 96, 128, 16, 32, 32),
            inception(256, 128, 128, 192, 32, 96, 64),
            nn.MaxPool3d(kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1)),
            inception(480, 192, 96, 208, 16, 48, 64),
            inception(512, 160, 112, 224, 24, 64, 64),
            inception(512, 128, 128, 256, 24, 64, 64),
            inception(512, 112, 144, 288, 32, 64, 64),
            inception(528, 256, 160, 320, 32, 128, 128),
            nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0)),
            inception(832, 256, 160, 320, 32, 128, 128),
            inception(832, 384, 192, 384, 48, 128, 128),
        )
        self.avgpool = nn.AvgPool3d(kernel_size=(2, 7, 7), stride=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Conv3d(1024, num_classes, kernel_size=1, stride=1, bias=True),
        )

    def forward(self, x):
        x = self.classifier(self.avgpool(self.features(x)))
        return ember.mean(x, dim=(2, 3, 4))


class S3D_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "s3d-d76dad2f", num_params=8320048, acc1=68.368, acc5=88.050, ops=17.979,
        file_size=31.972,
        recipe="https://github.com/pytorch/vision/tree/main/references/video_classification#s3d",
        docs=("The weights aim to approximate the accuracy of the paper. The accuracies are "
              "estimated on clip-level with parameters `frame_rate=15`, `clips_per_video=1`, "
              "and `clip_len=128`."),
        min_size=(224, 224), min_temporal_size=14, crop_size=(224, 224), resize_size=(256, 256))
    DEFAULT = KINETICS400_V1


def _build(weights, progress, **kwargs):
    return with_weights(S3D(**kwargs), weights, progress)


s3d = make_builder("s3d", S3D_Weights, _build,
                   "Separable 3D CNN of `Rethinking Spatiotemporal Feature Learning "
                   "<https://arxiv.org/abs/1712.04851>`_.")
