"""ShuffleNet V2 (Ma et al., 2018): 0.5x, 1.0x, 1.5x and 2.0x."""

from __future__ import annotations

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights",
           "ShuffleNet_V2_X1_5_Weights", "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]


def channel_shuffle(x, groups: int):
    """Interleaves the channels of ``groups`` groups."""
    b, c, h, w = x.shape
    return x.reshape(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


def _depthwise(i, o, kernel_size, stride=1, padding=0, bias=False):
    return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)


class InvertedResidual(nn.Module):
    """A ShuffleNet V2 unit: split (or two strided branches), convolve, concatenate, shuffle."""

    def __init__(self, inp: int, oup: int, stride: int):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        bf = oup // 2
        if stride == 1 and inp != bf << 1:
            raise ValueError(f"Invalid combination of stride {stride}, inp {inp} and oup {oup} "
                             "values. If stride == 1 then inp should be equal to oup // 2 << 1.")
        if stride > 1:
            self.branch1 = nn.Sequential(
                _depthwise(inp, inp, 3, stride, 1), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, bf, 1, 1, 0, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else bf, bf, 1, 1, 0, bias=False), nn.BatchNorm2d(bf),
            nn.ReLU(inplace=True), _depthwise(bf, bf, 3, stride, 1), nn.BatchNorm2d(bf),
            nn.Conv2d(bf, bf, 1, 1, 0, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = ember.cat([x1, self.branch2(x2)], 1)
        else:
            out = ember.cat([self.branch1(x), self.branch2(x)], 1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """ShuffleNet V2.

    Args:
        stages_repeats (list of 3 int): units per stage.
        stages_out_channels (list of 5 int): channels of conv1, the three stages and conv5.
        num_classes (int): Default: 1000.
        inverted_residual (callable): the unit. Default: ``InvertedResidual``.
    """

    def __init__(self, stages_repeats, stages_out_channels, num_classes: int = 1000,
                 inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = list(stages_out_channels)
        channels = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, channels, 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(channels), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        inp = channels
        for name, repeats, out in zip(("stage2", "stage3", "stage4"), stages_repeats,
                                      stages_out_channels[1:]):
            units = [inverted_residual(inp, out, 2)]
            units += [inverted_residual(out, out, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*units))
            inp = out
        out = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(inp, out, 1, 1, 0, bias=False), nn.BatchNorm2d(out),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(out, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))


_OLD = "https://github.com/ericsun99/Shufflenet-v2-Pytorch"
_NEW = "https://github.com/pytorch/vision/pull/5906"


class ShuffleNet_V2_X0_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("shufflenetv2_x0.5-f707e7126e", 1366792, _OLD, 60.552,
                                           81.746, 0.04, 5.282)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("shufflenetv2_x1-5666bf0f80", 2278604, _OLD, 69.362,
                                           88.316, 0.145, 8.791)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("shufflenetv2_x1_5-3c479a10", 3503624, _NEW, 72.996,
                                           91.086, 0.296, 13.557, resize_size=232)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X2_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights("shufflenetv2_x2_0-8be3c8ee", 7393996, _NEW, 76.23,
                                           93.006, 0.583, 28.433, resize_size=232)
    DEFAULT = IMAGENET1K_V1


def _maker(repeats, channels):
    def build(weights, progress, **kwargs):
        model = ShuffleNetV2(repeats, channels, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    return build


shufflenet_v2_x0_5 = make_builder("shufflenet_v2_x0_5", ShuffleNet_V2_X0_5_Weights,
                                  _maker([4, 8, 4], [24, 48, 96, 192, 1024]), "ShuffleNet V2 0.5x.")
shufflenet_v2_x1_0 = make_builder("shufflenet_v2_x1_0", ShuffleNet_V2_X1_0_Weights,
                                  _maker([4, 8, 4], [24, 116, 232, 464, 1024]),
                                  "ShuffleNet V2 1.0x.")
shufflenet_v2_x1_5 = make_builder("shufflenet_v2_x1_5", ShuffleNet_V2_X1_5_Weights,
                                  _maker([4, 8, 4], [24, 176, 352, 704, 1024]),
                                  "ShuffleNet V2 1.5x.")
shufflenet_v2_x2_0 = make_builder("shufflenet_v2_x2_0", ShuffleNet_V2_X2_0_Weights,
                                  _maker([4, 8, 4], [24, 244, 488, 976, 2048]),
                                  "ShuffleNet V2 2.0x.")
