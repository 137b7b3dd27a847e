"""DeepLabV3 (Chen et al., 2017) on dilated ResNet-50/101 and MobileNetV3-Large backbones."""

from __future__ import annotations

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._utils import (
    IntermediateLayerGetter,
    _mobilenet_stage_indices,
    _ovewrite_value_param,
)
from embervision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from embervision.models.resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from embervision.models.segmentation._utils import (
    _RECIPES,
    _SimpleSegmentationModel,
    voc_weights,
)
from embervision.models.segmentation.fcn import FCNHead, _build_resnet_segmentation

__all__ = [
    "DeepLabV3",
    "DeepLabV3_ResNet50_Weights",
    "DeepLabV3_ResNet101_Weights",
    "DeepLabV3_MobileNet_V3_Large_Weights",
    "deeplabv3_mobilenet_v3_large",
    "deeplabv3_resnet50",
    "deeplabv3_resnet101",
]


class DeepLabV3(_SimpleSegmentationModel):
    """DeepLabV3: a backbone returning ``{"out", "aux"}`` and an ASPP head; the forward
    returns ``{"out": logits, "aux": logits}`` at the input size.

    Args:
        backbone (nn.Module): the feature extractor.
        classifier (nn.Module): the head on ``"out"``.
        aux_classifier (nn.Module, optional): the head on ``"aux"``.
    """


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels: int, out_channels: int, dilation: int):
        super().__init__(nn.Conv2d(in_channels, out_channels, 3, padding=dilation,
                                   dilation=dilation, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class ASPPPooling(nn.Sequential):
    """Image-level features: global average, 1x1 convolution, upsampled back."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(nn.AdaptiveAvgPool2d(1),
                         nn.Conv2d(in_channels, out_channels, 1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for module in self:
            x = module(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    """Atrous spatial pyramid pooling: a 1x1 branch, one dilated 3x3 branch per rate and the
    image-level branch, concatenated and projected.

    Args:
        in_channels (int): input channels.
        atrous_rates (list of int): the dilations.
        out_channels (int): Default: 256.
    """

    def __init__(self, in_channels: int, atrous_rates, out_channels: int = 256):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                 nn.BatchNorm2d(out_channels), nn.ReLU())]
        modules += [ASPPConv(in_channels, out_channels, rate) for rate in atrous_rates]
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        return self.project(ember.cat([conv(x) for conv in self.convs], dim=1))


class DeepLabHead(nn.Sequential):
    """ASPP, a 3x3 convolution, BN, ReLU and a 1x1 classifier."""

    def __init__(self, in_channels: int, num_classes: int, atrous_rates=(12, 24, 36)):
        super().__init__(ASPP(in_channels, atrous_rates),
                         nn.Conv2d(256, 256, 3, padding=1, bias=False), nn.BatchNorm2d(256),
                         nn.ReLU(), nn.Conv2d(256, num_classes, 1))


class DeepLabV3_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = voc_weights("deeplabv3_resnet50_coco-cd0a2569", 42004074,
                                          f"{_RECIPES}#deeplabv3_resnet50", 66.4, 92.4,
                                          178.722, 160.515)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_ResNet101_Weights(WeightsEnum):
    # torchvision's recipe link for these weights points at the FCN section.
    COCO_WITH_VOC_LABELS_V1 = voc_weights("deeplabv3_resnet101_coco-586e9e4e", 60996202,
                                          f"{_RECIPES}#fcn_resnet101", 67.4, 92.4, 258.743,
                                          233.217)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = voc_weights("deeplabv3_mobilenet_v3_large-fc3c493d", 11029328,
                                          f"{_RECIPES}#deeplabv3_mobilenet_v3_large", 60.3,
                                          91.2, 10.452, 42.301)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


@register_model()
@weights_of(DeepLabV3_ResNet50_Weights)
def deeplabv3_resnet50(*, weights: DeepLabV3_ResNet50_Weights | None = None,
                       progress: bool = True, num_classes: int | None = None,
                       aux_loss: bool | None = None,
                       weights_backbone: ResNet50_Weights | None = ResNet50_Weights.IMAGENET1K_V1,
                       **kwargs) -> DeepLabV3:
    """DeepLabV3 with a ResNet-50 backbone, from `Rethinking Atrous Convolution for Semantic
    Image Segmentation <https://arxiv.org/abs/1706.05587>`_.

    Args:
        weights (:class:`DeepLabV3_ResNet50_Weights`, optional): pretrained weights.
        progress (bool): show a download progress bar. Default: True.
        num_classes (int, optional): Default: 21.
        aux_loss (bool, optional): add the auxiliary FCN head (True with ``weights``).
        weights_backbone (:class:`ResNet50_Weights`, optional): the backbone's pretrained
            weights (downloaded); None for random initialization. Default: IMAGENET1K_V1.
    """
    weights = DeepLabV3_ResNet50_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    return _build_resnet_segmentation(weights, progress, num_classes, aux_loss,
                                      weights_backbone, resnet50, DeepLabHead, DeepLabV3,
                                      kwargs)


@register_model()
@weights_of(DeepLabV3_ResNet101_Weights)
def deeplabv3_resnet101(*, weights: DeepLabV3_ResNet101_Weights | None = None,
                        progress: bool = True, num_classes: int | None = None,
                        aux_loss: bool | None = None,
                        weights_backbone: ResNet101_Weights | None = (
                            ResNet101_Weights.IMAGENET1K_V1),
                        **kwargs) -> DeepLabV3:
    """DeepLabV3 with a ResNet-101 backbone; the arguments of :func:`deeplabv3_resnet50`."""
    weights = DeepLabV3_ResNet101_Weights.verify(weights)
    weights_backbone = ResNet101_Weights.verify(weights_backbone)
    return _build_resnet_segmentation(weights, progress, num_classes, aux_loss,
                                      weights_backbone, resnet101, DeepLabHead, DeepLabV3,
                                      kwargs)


@register_model()
@weights_of(DeepLabV3_MobileNet_V3_Large_Weights)
def deeplabv3_mobilenet_v3_large(
        *, weights: DeepLabV3_MobileNet_V3_Large_Weights | None = None, progress: bool = True,
        num_classes: int | None = None, aux_loss: bool | None = None,
        weights_backbone: MobileNet_V3_Large_Weights | None = (
            MobileNet_V3_Large_Weights.IMAGENET1K_V1),
        **kwargs) -> DeepLabV3:
    """DeepLabV3 with a dilated MobileNetV3-Large backbone; the arguments of
    :func:`deeplabv3_resnet50`."""
    weights = DeepLabV3_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes,
                                            len(weights.meta["categories"]))
        aux_loss = _ovewrite_value_param("aux_loss", aux_loss, True)
    elif num_classes is None:
        num_classes = 21
    if kwargs:
        raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
    backbone = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = _mobilenet_stage_indices(backbone)
    out_pos, aux_pos = stages[-1], stages[-4]
    return_layers = {str(out_pos): "out"}
    if aux_loss:
        return_layers[str(aux_pos)] = "aux"
    aux_classifier = FCNHead(backbone[aux_pos].out_channels, num_classes) if aux_loss else None
    classifier = DeepLabHead(backbone[out_pos].out_channels, num_classes)
    model = DeepLabV3(IntermediateLayerGetter(backbone, return_layers=return_layers), classifier,
                      aux_classifier)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
