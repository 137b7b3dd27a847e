"""Lite R-ASPP (Howard et al., 2019) on a dilated MobileNetV3-Large backbone."""

from __future__ import annotations

from collections import OrderedDict

from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._utils import (
    IntermediateLayerGetter,
    _mobilenet_stage_indices,
    _ovewrite_value_param,
)
from embervision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from embervision.models.segmentation._utils import (
    _RECIPES,
    voc_weights,
)

__all__ = ["LRASPP", "LRASPP_MobileNet_V3_Large_Weights", "lraspp_mobilenet_v3_large"]


class LRASPPHead(nn.Module):
    """High-level features gated by their global average, upsampled to the low-level
    features' size, and both classified and summed."""

    def __init__(self, low_channels: int, high_channels: int, num_classes: int,
                 inter_channels: int):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1),
                                   nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=low.shape[-2:], mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


class LRASPP(nn.Module):
    """Lite R-ASPP: the forward returns ``{"out": logits}`` at the input size.

    Args:
        backbone (nn.Module): returns ``{"low", "high"}`` feature maps.
        low_channels (int), high_channels (int): their channels.
        num_classes (int): output classes (with the background).
        inter_channels (int): Default: 128.
    """

    def __init__(self, backbone: nn.Module, low_channels: int, high_channels: int,
                 num_classes: int, inter_channels: int = 128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        out = self.classifier(self.backbone(input))
        out = F.interpolate(out, size=input.shape[-2:], mode="bilinear", align_corners=False)
        return OrderedDict(out=out)


class LRASPP_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = voc_weights("lraspp_mobilenet_v3_large-d234d4ea", 3221538,
                                          f"{_RECIPES}#lraspp_mobilenet_v3_large", 57.9, 91.2,
                                          2.086, 12.49)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


@register_model()
@weights_of(LRASPP_MobileNet_V3_Large_Weights)
def lraspp_mobilenet_v3_large(
        *, weights: LRASPP_MobileNet_V3_Large_Weights | None = None, progress: bool = True,
        num_classes: int | None = None,
        weights_backbone: MobileNet_V3_Large_Weights | None = (
            MobileNet_V3_Large_Weights.IMAGENET1K_V1),
        **kwargs) -> LRASPP:
    """Lite R-ASPP with a dilated MobileNetV3-Large backbone, from `Searching for
    MobileNetV3 <https://arxiv.org/abs/1905.02244>`_.

    Args:
        weights (:class:`LRASPP_MobileNet_V3_Large_Weights`, optional): pretrained weights.
        progress (bool): show a download progress bar. Default: True.
        num_classes (int, optional): Default: 21.
        weights_backbone (:class:`MobileNet_V3_Large_Weights`, optional): the backbone's
            pretrained weights (downloaded); None for random initialization.
    """
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    if kwargs:
        raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
    weights = LRASPP_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes,
                                            len(weights.meta["categories"]))
    elif num_classes is None:
        num_classes = 21
    backbone = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = _mobilenet_stage_indices(backbone)
    low_pos, high_pos = stages[-4], stages[-1]
    getter = IntermediateLayerGetter(backbone,
                                     return_layers={str(low_pos): "low", str(high_pos): "high"})
    model = LRASPP(getter, backbone[low_pos].out_channels, backbone[high_pos].out_channels,
                   num_classes)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
