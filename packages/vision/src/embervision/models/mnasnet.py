"""MNASNet (Tan et al., 2018), the B1 variant, at depth multipliers 0.5, 0.75, 1.0 and 1.3."""

from __future__ import annotations

import warnings

from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = [
    "MNASNet",
    "MNASNet0_5_Weights",
    "MNASNet0_75_Weights",
    "MNASNet1_0_Weights",
    "MNASNet1_3_Weights",
    "mnasnet0_5",
    "mnasnet0_75",
    "mnasnet1_0",
    "mnasnet1_3",
]

# The reference implementation's batch-norm decay of 0.9997, as a PyTorch momentum.
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel_size: int, stride: int,
                 expansion_factor: int, bn_momentum: float = 0.1):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in (3, 5):
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride,
                      groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, input):
        out = self.layers(input)
        return out + input if self.apply_residual else out


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    """``repeats`` inverted residuals; only the first changes width and stride."""
    if repeats < 1:
        raise ValueError(f"repeats should be >= 1, instead got {repeats}")
    blocks = [_InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum)]
    blocks += [_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, bn_momentum)
               for _ in range(1, repeats)]
    return nn.Sequential(*blocks)


def _round_to_multiple_of(val: float, divisor: int, round_up_bias: float = 0.9) -> int:
    """``val`` rounded to a multiple of ``divisor``, up unless that is no more than 10% above
    the multiple below: (83, 8) -> 80, (84, 8) -> 88."""
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError("round_up_bias should be greater than 0.0 and smaller than 1.0 "
                         f"instead of {round_up_bias}")
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha: float) -> list[int]:
    return [_round_to_multiple_of(d * alpha, 8) for d in (32, 16, 24, 40, 80, 96, 192, 320)]


def _stem(depths, first):
    """The stem (3x3 conv, depthwise 3x3, 1x1) and the first stack; version 1 of the model
    kept the stem at width ``first=(32, 16)`` for every ``alpha``."""
    a, b = first
    return [
        nn.Conv2d(3, a, 3, padding=1, stride=2, bias=False),
        nn.BatchNorm2d(a, momentum=_BN_MOMENTUM),
        nn.ReLU(inplace=True),
        nn.Conv2d(a, a, 3, padding=1, stride=1, groups=a, bias=False),
        nn.BatchNorm2d(a, momentum=_BN_MOMENTUM),
        nn.ReLU(inplace=True),
        nn.Conv2d(a, b, 1, padding=0, stride=1, bias=False),
        nn.BatchNorm2d(b, momentum=_BN_MOMENTUM),
        _stack(b, depths[2], 3, 2, 3, 3, _BN_MOMENTUM),
    ]


class MNASNet(nn.Module):
    """MNASNet-B1.

    Args:
        alpha (float): the depth multiplier.
        num_classes (int): Default: 1000.
        dropout (float): Default: 0.2.

    Shape:
        - Input: :math:`(N, 3, H, W)`
        - Output: :math:`(N, \\text{num\\_classes})`

    Examples::

        >>> model = MNASNet(1.0, num_classes=1000)
        >>> model(ember.rand(1, 3, 224, 224)).shape
        ember.Size([1, 1000])
    """

    # Version 2 scales the stem with alpha; version-1 checkpoints still load (see below).
    _version = 2

    def __init__(self, alpha: float, num_classes: int = 1000, dropout: float = 0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        self.num_classes = num_classes
        depths = _get_depths(alpha)
        layers = _stem(depths, (depths[0], depths[1])) + [
            _stack(depths[2], depths[3], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(depths[5], depths[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[6], depths[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(1280, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version not in (1, 2):
            raise ValueError(f"version should be set to 1 or 2 instead of {version}")
        if version == 1 and self.alpha != 1.0:
            for idx, layer in enumerate(_stem(_get_depths(self.alpha), (32, 16))):
                self.layers[idx] = layer
            self._version = 1
            warnings.warn(
                "A new version of MNASNet model has been implemented. Your checkpoint was saved "
                "using the previous version. This checkpoint will load and work as before, but "
                "you may want to upgrade by training a newer model or transfer learning from an "
                "updated ImageNet checkpoint.", UserWarning, stacklevel=2)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


_RECIPE = "https://github.com/1e100/mnasnet_trainer"
_NEW_RECIPE = "https://github.com/pytorch/vision/pull/6019"


class MNASNet0_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "mnasnet0.5_top1_67.823-3ffadce67e", 2218512, _RECIPE, 67.734, 87.49, 0.104, 8.591)
    DEFAULT = IMAGENET1K_V1


class MNASNet0_75_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "mnasnet0_75-7090bc5f", 3170208, _NEW_RECIPE, 71.18, 90.496, 0.215, 12.303, resize_size=232)
    DEFAULT = IMAGENET1K_V1


class MNASNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "mnasnet1.0_top1_73.512-f206786ef8", 4383312, _RECIPE, 73.456, 91.51, 0.314, 16.915)
    DEFAULT = IMAGENET1K_V1


class MNASNet1_3_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "mnasnet1_3-a4c69d6f", 6282256, _NEW_RECIPE, 76.506, 93.522, 0.526, 24.246, resize_size=232)
    DEFAULT = IMAGENET1K_V1


def _builder(arch, enum, alpha):
    def build(weights, progress, **kwargs):
        model = MNASNet(alpha, **kwargs)
        if weights is not None:
            model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
        return model

    doc = (f"MNASNet with depth multiplier {alpha} from `MnasNet: Platform-Aware Neural "
           "Architecture Search for Mobile <https://arxiv.org/abs/1807.11626>`_.")
    return make_builder(arch, enum, build, doc)


mnasnet0_5 = _builder("mnasnet0_5", MNASNet0_5_Weights, 0.5)
mnasnet0_75 = _builder("mnasnet0_75", MNASNet0_75_Weights, 0.75)
mnasnet1_0 = _builder("mnasnet1_0", MNASNet1_0_Weights, 1.0)
mnasnet1_3 = _builder("mnasnet1_3", MNASNet1_3_Weights, 1.3)
