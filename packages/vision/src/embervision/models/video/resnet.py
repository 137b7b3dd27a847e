"""Video ResNets (Tran et al., 2018): R3D (3-D convolutions throughout), MC3 (3-D in the first
stage, 2-D after) and R(2+1)D (each 3-D convolution split into a spatial and a temporal one),
18 layers, with torchvision's module names so that its Kinetics-400 checkpoints load."""

from __future__ import annotations

from ember import nn
from embervision.models._api import WeightsEnum, make_builder
from embervision.models.video._utils import kinetics_weights, with_weights

__all__ = [
    "VideoResNet",
    "R3D_18_Weights",
    "MC3_18_Weights",
    "R2Plus1D_18_Weights",
    "r3d_18",
    "mc3_18",
    "r2plus1d_18",
]


class Conv3DSimple(nn.Conv3d):
    """A 3x3x3 convolution without bias (``midplanes`` is unused: the blocks pass it to every
    convolution builder)."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int | None = None,
                 stride: int = 1, padding: int = 1) -> None:
        super().__init__(in_channels=in_planes, out_channels=out_planes, kernel_size=(3, 3, 3),
                         stride=stride, padding=padding, bias=False)

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        return stride, stride, stride


class Conv2Plus1D(nn.Sequential):
    """A 1x3x3 spatial convolution to ``midplanes`` channels, batch norm, ReLU, then a 3x1x1
    temporal convolution: the (2+1)-D factorization of a 3x3x3 convolution."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int, stride: int = 1,
                 padding: int = 1) -> None:
        super().__init__(
            nn.Conv3d(in_planes, midplanes, kernel_size=(1, 3, 3), stride=(1, stride, stride),
                      padding=(0, padding, padding), bias=False),
            nn.BatchNorm3d(midplanes),
            nn.ReLU(inplace=True),
            nn.Conv3d(midplanes, out_planes, kernel_size=(3, 1, 1), stride=(stride, 1, 1),
                      padding=(padding, 0, 0), bias=False),
        )

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        return stride, stride, stride


class Conv3DNoTemporal(nn.Conv3d):
    """A 1x3x3 convolution (spatial only, the frames kept apart) without bias."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int | None = None,
                 stride: int = 1, padding: int = 1) -> None:
        super().__init__(in_channels=in_planes, out_channels=out_planes, kernel_size=(1, 3, 3),
                         stride=(1, stride, stride), padding=(0, padding, padding), bias=False)

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        return 1, stride, stride


def _midplanes(inplanes: int, planes: int) -> int:
    # The width that gives a (2+1)-D convolution the parameters of the 3x3x3 one it replaces.
    return (inplanes * planes * 3 * 3 * 3) // (inplanes * 3 * 3 + 3 * planes)


class BasicBlock(nn.Module):
    """Two convolutions from ``conv_builder`` with batch norm, and the residual.

    Args:
        inplanes (int), planes (int): channels in and out.
        conv_builder (callable): :class:`Conv3DSimple`, :class:`Conv3DNoTemporal` or
            :class:`Conv2Plus1D`.
        stride (int): of the first convolution. Default: 1.
        downsample (nn.Module, optional): applied to the residual.
    """

    expansion = 1

    def __init__(self, inplanes: int, planes: int, conv_builder, stride: int = 1,
                 downsample: nn.Module | None = None) -> None:
        midplanes = _midplanes(inplanes, planes)
        super().__init__()
        self.conv1 = nn.Sequential(conv_builder(inplanes, planes, midplanes, stride),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(conv_builder(planes, planes, midplanes),
                                   nn.BatchNorm3d(planes))
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu(self.conv2(self.conv1(x)) + residual)


class Bottleneck(nn.Module):
    """1x1x1 reduction, a ``conv_builder`` convolution, 1x1x1 expansion (x4), and the residual.

    Args: as :class:`BasicBlock`.
    """

    expansion = 4

    def __init__(self, inplanes: int, planes: int, conv_builder, stride: int = 1,
                 downsample: nn.Module | None = None) -> None:
        super().__init__()
        midplanes = _midplanes(inplanes, planes)
        self.conv1 = nn.Sequential(nn.Conv3d(inplanes, planes, kernel_size=1, bias=False),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(conv_builder(planes, planes, midplanes, stride),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))
        self.conv3 = nn.Sequential(
            nn.Conv3d(planes, planes * self.expansion, kernel_size=1, bias=False),
            nn.BatchNorm3d(planes * self.expansion))
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu(self.conv3(self.conv2(self.conv1(x))) + residual)


class BasicStem(nn.Sequential):
    """The default stem: a 3x7x7 convolution (spatial stride 2), batch norm, ReLU."""

    def __init__(self) -> None:
        super().__init__(
            nn.Conv3d(3, 64, kernel_size=(3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3),
                      bias=False),
            nn.BatchNorm3d(64),
            nn.ReLU(inplace=True),
        )


class R2Plus1dStem(nn.Sequential):
    """The R(2+1)D stem: the 3x7x7 convolution split into 1x7x7 (to 45 channels) and 3x1x1."""

    def __init__(self) -> None:
        super().__init__(
            nn.Conv3d(3, 45, kernel_size=(1, 7, 7), stride=(1, 2, 2), padding=(0, 3, 3),
                      bias=False),
            nn.BatchNorm3d(45),
            nn.ReLU(inplace=True),
            nn.Conv3d(45, 64, kernel_size=(3, 1, 1), stride=(1, 1, 1), padding=(1, 0, 0),
                      bias=False),
            nn.BatchNorm3d(64),
            nn.ReLU(inplace=True),
        )


class VideoResNet(nn.Module):
    """A ResNet on clips ``(N, 3, T, H, W)``: a stem, four stages (64, 128, 256, 512 channels
    times the block's expansion; stride 2 from the second), global average pooling and a
    linear classifier.

    Args:
        block (type): :class:`BasicBlock` or :class:`Bottleneck`.
        conv_makers (list of type): the convolution builder of each stage.
        layers (list of int): blocks per stage.
        stem (callable): builds the stem (:class:`BasicStem`, :class:`R2Plus1dStem`).
        num_classes (int): Default: 400.
        zero_init_residual (bool): start each bottleneck's last batch norm at zero.
            Default: False.
    """

    def __init__(self, block, conv_makers, layers: list[int], stem, num_classes: int = 400,
                 zero_init_residual: bool = False) -> None:
        super().__init__()
        self.inplanes = 64
        self.stem = stem()
        self.layer1 = self._make_layer(block, conv_makers[0], 64, layers[0], stride=1)
        self.layer2 = self._make_layer(block, conv_makers[1], 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, conv_makers[2], 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, conv_makers[3], 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv3d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.BatchNorm3d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            # torchvision names a `bn3` that its Bottleneck lacks (an AttributeError there);
            # the norm it means is conv3's.
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.conv3[1].weight, 0)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))

    def _make_layer(self, block, conv_builder, planes: int, blocks: int,
                    stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv3d(self.inplanes, planes * block.expansion, kernel_size=1,
                          stride=conv_builder.get_downsample_stride(stride), bias=False),
                nn.BatchNorm3d(planes * block.expansion))
        layers = [block(self.inplanes, planes, conv_builder, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, conv_builder) for _ in range(1, blocks)]
        return nn.Sequential(*layers)


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/video_classification"
_DOCS = ("The weights reproduce closely the accuracy of the paper. The accuracies are estimated "
         "on video-level with parameters `frame_rate=15`, `clips_per_video=5`, and "
         "`clip_len=16`.")
_PRESET = {"crop_size": (112, 112), "resize_size": (128, 171)}


class R3D_18_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "r3d_18-b3b3357e", num_params=33371472, acc1=63.200, acc5=83.479, ops=40.697,
        file_size=127.359, recipe=_RECIPE, docs=_DOCS, **_PRESET)
    DEFAULT = KINETICS400_V1


class MC3_18_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "mc3_18-a90a0ba3", num_params=11695440, acc1=63.960, acc5=84.130, ops=43.343,
        file_size=44.672, recipe=_RECIPE, docs=_DOCS, **_PRESET)
    DEFAULT = KINETICS400_V1


class R2Plus1D_18_Weights(WeightsEnum):
    KINETICS400_V1 = kinetics_weights(
        "r2plus1d_18-91a641e6", num_params=31505325, acc1=67.463, acc5=86.175, ops=40.519,
        file_size=120.318, recipe=_RECIPE, docs=_DOCS, **_PRESET)
    DEFAULT = KINETICS400_V1


def _builder(name, enum, conv_makers, stem, title):
    def build(weights, progress, **kwargs):
        return with_weights(VideoResNet(BasicBlock, conv_makers, [2, 2, 2, 2], stem, **kwargs),
                            weights, progress)

    doc = (f"{title} of `A Closer Look at Spatiotemporal Convolutions for Action Recognition "
           "<https://arxiv.org/abs/1711.11248>`_.")
    return make_builder(name, enum, build, doc)


r3d_18 = _builder("r3d_18", R3D_18_Weights, [Conv3DSimple] * 4, BasicStem,
                  "The 18-layer ResNet3D")
mc3_18 = _builder("mc3_18", MC3_18_Weights, [Conv3DSimple] + [Conv3DNoTemporal] * 3, BasicStem,
                  "The 18-layer Mixed Convolution network")
r2plus1d_18 = _builder("r2plus1d_18", R2Plus1D_18_Weights, [Conv2Plus1D] * 4, R2Plus1dStem,
                       "The 18-layer R(2+1)D network")
