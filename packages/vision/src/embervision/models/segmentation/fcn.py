"""FCN (Long et al., 2015) on dilated ResNet-50/101 backbones."""

from __future__ import annotations

from ember import nn
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._utils import IntermediateLayerGetter, _ovewrite_value_param
from embervision.models.resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from embervision.models.segmentation._utils import (
    _RECIPES,
    _SimpleSegmentationModel,
    voc_weights,
)

__all__ = ["FCN", "FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "fcn_resnet50",
           "fcn_resnet101"]


class FCN(_SimpleSegmentationModel):
    """Fully convolutional network: a backbone returning ``{"out", "aux"}`` feature maps and
    heads on them; the forward returns ``{"out": logits, "aux": logits}`` at the input size.

    Args:
        backbone (nn.Module): the feature extractor.
        classifier (nn.Module): the head on ``"out"``.
        aux_classifier (nn.Module, optional): the head on ``"aux"``.
    """


class FCNHead(nn.Sequential):
    """3x3 convolution to a quarter of the channels, BN, ReLU, dropout 0.1, 1x1 to
    ``channels``."""

    def __init__(self, in_channels: int, channels: int):
        inter = in_channels // 4
        super().__init__(nn.Conv2d(in_channels, inter, 3, padding=1, bias=False),
                         nn.BatchNorm2d(inter), nn.ReLU(), nn.Dropout(0.1),
                         nn.Conv2d(inter, channels, 1))


class FCN_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = voc_weights("fcn_resnet50_coco-1167a1af", 35322218,
                                          f"{_RECIPES}#fcn_resnet50", 60.5, 91.4, 152.717,
                                          135.009)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class FCN_ResNet101_Weights(WeightsEnum):
    # torchvision's recipe link for these weights points at the DeepLabV3 section.
    COCO_WITH_VOC_LABELS_V1 = voc_weights("fcn_resnet101_coco-7ecb50ca", 54314346,
                                          f"{_RECIPES}#deeplabv3_resnet101", 63.7, 91.9,
                                          232.738, 207.711)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


def _resnet_segmentation(head, backbone, num_classes: int, aux: bool | None, model_cls):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    getter = IntermediateLayerGetter(backbone, return_layers=return_layers)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    return model_cls(getter, head(2048, num_classes), aux_classifier)


def _build_resnet_segmentation(weights, progress, num_classes, aux_loss, weights_backbone,
                               backbone_builder, head, model_cls, kwargs):
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes,
                                            len(weights.meta["categories"]))
        aux_loss = _ovewrite_value_param("aux_loss", aux_loss, True)
    elif num_classes is None:
        num_classes = 21
    backbone = backbone_builder(weights=weights_backbone,
                                replace_stride_with_dilation=[False, True, True])
    if kwargs:
        raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
    model = _resnet_segmentation(head, backbone, num_classes, aux_loss, model_cls)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


@register_model()
@weights_of(FCN_ResNet50_Weights)
def fcn_resnet50(*, weights: FCN_ResNet50_Weights | None = None, progress: bool = True,
                 num_classes: int | None = None, aux_loss: bool | None = None,
                 weights_backbone: ResNet50_Weights | None = ResNet50_Weights.IMAGENET1K_V1,
                 **kwargs) -> FCN:
    """FCN with a ResNet-50 backbone, from `Fully Convolutional Networks for Semantic
    Segmentation <https://arxiv.org/abs/1411.4038>`_.

    Args:
        weights (:class:`FCN_ResNet50_Weights`, optional): pretrained weights.
        progress (bool): show a download progress bar. Default: True.
        num_classes (int, optional): Default: 21.
        aux_loss (bool, optional): add the auxiliary head (True with ``weights``).
        weights_backbone (:class:`ResNet50_Weights`, optional): the backbone's pretrained
            weights (downloaded); None for random initialization. Default: IMAGENET1K_V1.
    """
    weights = FCN_ResNet50_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    return _build_resnet_segmentation(weights, progress, num_classes, aux_loss,
                                      weights_backbone, resnet50, FCNHead, FCN, kwargs)


@register_model()
@weights_of(FCN_ResNet101_Weights)
def fcn_resnet101(*, weights: FCN_ResNet101_Weights | None = None, progress: bool = True,
                  num_classes: int | None = None, aux_loss: bool | None = None,
                  weights_backbone: ResNet101_Weights | None = ResNet101_Weights.IMAGENET1K_V1,
                  **kwargs) -> FCN:
    """FCN with a ResNet-101 backbone; the arguments of :func:`fcn_resnet50`."""
    weights = FCN_ResNet101_Weights.verify(weights)
    weights_backbone = ResNet101_Weights.verify(weights_backbone)
    return _build_resnet_segmentation(weights, progress, num_classes, aux_loss,
                                      weights_backbone, resnet101, FCNHead, FCN, kwargs)
