"""ResNet (He et al., 2015), ResNeXt (Xie et al., 2016) and Wide ResNet (Zagoruyko and
Komodakis, 2016), with torchvision's module names so that its checkpoints load."""

from __future__ import annotations

from functools import partial

import ember
from ember import nn
from embervision.models._api import (
    Weights,
    WeightsEnum,
    ovewrite_named_param,
    register_model,
    weights_of,
)
from embervision.models._meta import IMAGENET_CATEGORIES
from embervision.transforms._presets import ImageClassification

__all__ = [
    "ResNet",
    "ResNet18_Weights",
    "ResNet34_Weights",
    "ResNet50_Weights",
    "ResNet101_Weights",
    "ResNet152_Weights",
    "ResNeXt50_32X4D_Weights",
    "ResNeXt101_32X8D_Weights",
    "ResNeXt101_64X4D_Weights",
    "Wide_ResNet50_2_Weights",
    "Wide_ResNet101_2_Weights",
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "resnet152",
    "resnext50_32x4d",
    "resnext101_32x8d",
    "resnext101_64x4d",
    "wide_resnet50_2",
    "wide_resnet101_2",
]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding, no bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution, no bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a shortcut (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise ValueError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1 - 3x3 (strided, grouped) - 1x1 convolutions and a shortcut (ResNet-50 and up)."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """The ResNet family.

    Args:
        block (type): ``BasicBlock`` or ``Bottleneck``.
        layers (list of int): blocks in each of the four stages.
        num_classes (int): Default: 1000.
        zero_init_residual (bool): zero the last norm of each block. Default: False.
        groups (int): groups of the 3x3 convolutions (ResNeXt). Default: 1.
        width_per_group (int): Default: 64.
        replace_stride_with_dilation (list of 3 bool, optional): dilate stages 2-4 instead
            of striding.
        norm_layer (callable, optional): Default: ``nn.BatchNorm2d``.

    Shape:
        - Input: :math:`(N, 3, H, W)`; Output: :math:`(N, \\text{num\\_classes})`.
    """

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError(
                "replace_stride_with_dilation should be None or a 3-element tuple, got "
                f"{replace_stride_with_dilation}"
            )
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = ember.flatten(self.avgpool(x), 1)
        return self.fc(x)


def _resnet(block, layers, weights, progress, **kwargs):
    if weights is not None:
        ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = ResNet(block, layers, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


_COMMON_META = {"min_size": (1, 1), "categories": IMAGENET_CATEGORIES}
_V1_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#resnet"
_NEW_RECIPE = "https://github.com/pytorch/vision/issues/3995#new-recipe"


def _weights(name, params, recipe, acc1, acc5, ops, size, resize=256):
    return Weights(
        url=f"https://download.pytorch.org/models/{name}.pth",
        transforms=partial(ImageClassification, crop_size=224, resize_size=resize),
        meta={**_COMMON_META, "num_params": params, "recipe": recipe,
              "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}},
              "_ops": ops, "_file_size": size},
    )


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet18-f37072fd", 11689512, _V1_RECIPE, 69.758, 89.078,
                             1.814, 44.661)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet34-b627a593", 21797672, _V1_RECIPE, 73.314, 91.42,
                             3.664, 83.275)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet50-0676ba61", 25557032, _V1_RECIPE, 76.13, 92.862,
                             4.089, 97.781)
    IMAGENET1K_V2 = _weights("resnet50-11ad3fa6", 25557032,
                             "https://github.com/pytorch/vision/issues/3995"
                             "#issuecomment-1013906621", 80.858, 95.434, 4.089, 97.79, 232)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet101-63fe2227", 44549160, _V1_RECIPE, 77.374, 93.546,
                             7.801, 170.511)
    IMAGENET1K_V2 = _weights("resnet101-cd907fc2", 44549160, _NEW_RECIPE, 81.886, 95.78,
                             7.801, 170.53, 232)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet152-394f9c45", 60192808, _V1_RECIPE, 78.312, 94.046,
                             11.514, 230.434)
    IMAGENET1K_V2 = _weights("resnet152-f82ba261", 60192808, _NEW_RECIPE, 82.284, 96.002,
                             11.514, 230.474, 232)
    DEFAULT = IMAGENET1K_V2


_RESNEXT_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#resnext"
_FIXRES = "https://github.com/pytorch/vision/issues/3995#new-recipe-with-fixres"
_WIDE_RECIPE = "https://github.com/pytorch/vision/pull/912#issue-445437439"


class ResNeXt50_32X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnext50_32x4d-7cdf4587", 25028904, _RESNEXT_RECIPE, 77.618,
                             93.698, 4.23, 95.789)
    IMAGENET1K_V2 = _weights("resnext50_32x4d-1a0047aa", 25028904, _NEW_RECIPE, 81.198, 95.34,
                             4.23, 95.833, 232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnext101_32x8d-8ba56ff5", 88791336, _RESNEXT_RECIPE, 79.312,
                             94.526, 16.414, 339.586)
    IMAGENET1K_V2 = _weights("resnext101_32x8d-110c445d", 88791336, _FIXRES, 82.834, 96.228,
                             16.414, 339.673, 232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnext101_64x4d-173b62eb", 83455272,
                             "https://github.com/pytorch/vision/pull/5935", 83.246, 96.454,
                             15.46, 319.318, 232)
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("wide_resnet50_2-95faca4d", 68883240, _WIDE_RECIPE, 78.468,
                             94.086, 11.398, 131.82)
    IMAGENET1K_V2 = _weights("wide_resnet50_2-9ba9bcbe", 68883240, _FIXRES, 81.602, 95.758,
                             11.398, 263.124, 232)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("wide_resnet101_2-32ee1156", 126886696, _WIDE_RECIPE, 78.848,
                             94.284, 22.753, 242.896)
    IMAGENET1K_V2 = _weights("wide_resnet101_2-d733dc28", 126886696, _NEW_RECIPE, 82.51, 96.02,
                             22.753, 484.747, 232)
    DEFAULT = IMAGENET1K_V2


def _builder(name, enum, block, layers, fixed=None):
    fixed = fixed or {}

    def build(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
        weights = enum.verify(weights)
        for key, value in fixed.items():
            ovewrite_named_param(kwargs, key, value)
        return _resnet(block, layers, weights, progress, **kwargs)

    build.__name__ = build.__qualname__ = name
    build.__module__ = __name__
    build.__doc__ = (
        f"{name} from torchvision's model zoo.\n\n"
        "    Args:\n"
        f"        weights (:class:`{enum.__name__}`, optional): pretrained weights; None for\n"
        "            random initialization.\n"
        "        progress (bool): show a download progress bar. Default: True.\n"
        "        **kwargs: passed to :class:`ResNet`.\n"
    )
    return register_model(name)(weights_of(enum)(build))


resnet18 = _builder("resnet18", ResNet18_Weights, BasicBlock, [2, 2, 2, 2])
resnet34 = _builder("resnet34", ResNet34_Weights, BasicBlock, [3, 4, 6, 3])
resnet50 = _builder("resnet50", ResNet50_Weights, Bottleneck, [3, 4, 6, 3])
resnet101 = _builder("resnet101", ResNet101_Weights, Bottleneck, [3, 4, 23, 3])
resnet152 = _builder("resnet152", ResNet152_Weights, Bottleneck, [3, 8, 36, 3])
resnext50_32x4d = _builder("resnext50_32x4d", ResNeXt50_32X4D_Weights, Bottleneck, [3, 4, 6, 3],
                           {"groups": 32, "width_per_group": 4})
resnext101_32x8d = _builder("resnext101_32x8d", ResNeXt101_32X8D_Weights, Bottleneck,
                            [3, 4, 23, 3], {"groups": 32, "width_per_group": 8})
resnext101_64x4d = _builder("resnext101_64x4d", ResNeXt101_64X4D_Weights, Bottleneck,
                            [3, 4, 23, 3], {"groups": 64, "width_per_group": 4})
wide_resnet50_2 = _builder("wide_resnet50_2", Wide_ResNet50_2_Weights, Bottleneck,
                           [3, 4, 6, 3], {"width_per_group": 128})
wide_resnet101_2 = _builder("wide_resnet101_2", Wide_ResNet101_2_Weights, Bottleneck,
                            [3, 4, 23, 3], {"width_per_group": 128})
