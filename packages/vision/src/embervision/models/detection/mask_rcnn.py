"""Mask R-CNN (He et al., 2017) with a ResNet-50-FPN backbone (v1 and v2)."""

from __future__ import annotations

from collections import OrderedDict

from ember import nn
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models.detection._utils import (
    _RECIPES,
    detection_weights,
    rename_v1_keys,
)
from embervision.models.detection.faster_rcnn import (
    FasterRCNN,
    _faster_rcnn_arguments,
    _load,
    _prepare,
    _resnet50_fpn_backbone,
    _resnet50_fpn_detector,
    _v2_parts,
)
from embervision.models.resnet import ResNet50_Weights
from embervision.ops import misc as misc_nn_ops
from embervision.ops.poolers import MultiScaleRoIAlign

__all__ = ["MaskRCNN", "MaskRCNN_ResNet50_FPN_V2_Weights", "MaskRCNN_ResNet50_FPN_Weights",
           "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2"]

_RESNET50_V1 = ResNet50_Weights.IMAGENET1K_V1


class MaskRCNN(FasterRCNN):
    """Faster R-CNN with a mask branch: each detection also gets ``masks``, ``(N, 1, H, W)``
    probabilities in the original image; training targets need ``masks`` (``(N, H, W)``
    uint8) and the losses gain ``loss_mask``.

    Args: those of :class:`FasterRCNN`, and
        mask_roi_pool (MultiScaleRoIAlign, optional): 14x14 on "0"-"3" by default.
        mask_head (nn.Module, optional): four 3x3 convolutions of 256 by default.
        mask_predictor (nn.Module, optional): MaskRCNNPredictor(256, 256, num_classes).
    """

    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, rpn_anchor_generator=None, rpn_head=None,
                 rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000,
                 rpn_nms_thresh=0.7, rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3,
                 rpn_batch_size_per_image=256, rpn_positive_fraction=0.5, rpn_score_thresh=0.0,
                 box_roi_pool=None, box_head=None, box_predictor=None, box_score_thresh=0.05,
                 box_nms_thresh=0.5, box_detections_per_img=100, box_fg_iou_thresh=0.5,
                 box_bg_iou_thresh=0.5, box_batch_size_per_image=512, box_positive_fraction=0.25,
                 bbox_reg_weights=None, mask_roi_pool=None, mask_head=None, mask_predictor=None,
                 **kwargs) -> None:
        if not isinstance(mask_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError("mask_roi_pool should be of type MultiScaleRoIAlign or None instead "
                            f"of {type(mask_roi_pool)}")
        if num_classes is not None and mask_predictor is not None:
            raise ValueError("num_classes should be None when mask_predictor is specified")
        out_channels = backbone.out_channels
        if mask_roi_pool is None:
            mask_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"],
                                               output_size=14, sampling_ratio=2)
        if mask_head is None:
            mask_head = MaskRCNNHeads(out_channels, (256, 256, 256, 256), 1)
        if mask_predictor is None:
            mask_predictor = MaskRCNNPredictor(256, 256, num_classes)
        super().__init__(**_faster_rcnn_arguments(locals()), **kwargs)
        self.roi_heads.mask_roi_pool = mask_roi_pool
        self.roi_heads.mask_head = mask_head
        self.roi_heads.mask_predictor = mask_predictor


class MaskRCNNHeads(nn.Sequential):
    """3x3 convolutions with ReLU (and ``norm_layer``) on the pooled mask features.

    Args:
        in_channels (int), layers (list of int): the widths.
        dilation (int), norm_layer (callable, optional).
    """

    _version = 2

    def __init__(self, in_channels: int, layers, dilation: int, norm_layer=None) -> None:
        blocks = []
        previous = in_channels
        for features in layers:
            blocks.append(misc_nn_ops.Conv2dNormActivation(
                previous, features, kernel_size=3, stride=1, padding=dilation,
                dilation=dilation, norm_layer=norm_layer))
            previous = features
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Version-1 checkpoints name the convolutions mask_fcn1, mask_fcn2...
        rename_v1_keys(state_dict, local_metadata,
                       [(f"{prefix}mask_fcn{i + 1}.{k}", f"{prefix}{i}.0.{k}")
                        for i in range(len(self)) for k in ("weight", "bias")])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class MaskRCNNPredictor(nn.Sequential):
    """A 2x2 stride-2 transposed convolution, ReLU and a 1x1 convolution to one mask logit
    map per class.

    Args:
        in_channels (int), dim_reduced (int), num_classes (int).
    """

    def __init__(self, in_channels: int, dim_reduced: int, num_classes: int) -> None:
        super().__init__(OrderedDict([
            ("conv5_mask", nn.ConvTranspose2d(in_channels, dim_reduced, 2, 2, 0)),
            ("relu", nn.ReLU(inplace=True)),
            ("mask_fcn_logits", nn.Conv2d(dim_reduced, num_classes, 1, 1, 0)),
        ]))
        for name, param in self.named_parameters():
            if "weight" in name:
                nn.init.kaiming_normal_(param, mode="fan_out", nonlinearity="relu")


class MaskRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "maskrcnn_resnet50_fpn_coco-bf2d0c1e", 44401393, f"{_RECIPES}#mask-r-cnn",
        {"box_map": 37.9, "mask_map": 34.6}, 134.38, 169.84,
        "These weights were produced by following a similar training recipe as on the paper.")
    DEFAULT = COCO_V1


class MaskRCNN_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "maskrcnn_resnet50_fpn_v2_coco-73cbd019", 46359409,
        "https://github.com/pytorch/vision/pull/5773", {"box_map": 47.4, "mask_map": 41.8},
        333.577, 177.219,
        "These weights were produced using an enhanced training recipe to boost the model "
        "accuracy.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(MaskRCNN_ResNet50_FPN_Weights)
def maskrcnn_resnet50_fpn(*, weights: MaskRCNN_ResNet50_FPN_Weights | None = None,
                          progress: bool = True, num_classes: int | None = None,
                          weights_backbone: ResNet50_Weights | None = _RESNET50_V1,
                          trainable_backbone_layers: int | None = None, **kwargs) -> MaskRCNN:
    """Mask R-CNN with a ResNet-50-FPN backbone, from `Mask R-CNN
    <https://arxiv.org/abs/1703.06870>`_. Arguments as
    :func:`~embervision.models.detection.fasterrcnn_resnet50_fpn`."""
    weights = MaskRCNN_ResNet50_FPN_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    return _resnet50_fpn_detector(MaskRCNN, weights, weights_backbone, progress, num_classes,
                                  trainable_backbone_layers, kwargs)


@register_model()
@weights_of(MaskRCNN_ResNet50_FPN_V2_Weights)
def maskrcnn_resnet50_fpn_v2(*, weights: MaskRCNN_ResNet50_FPN_V2_Weights | None = None,
                             progress: bool = True, num_classes: int | None = None,
                             weights_backbone: ResNet50_Weights | None = None,
                             trainable_backbone_layers: int | None = None,
                             **kwargs) -> MaskRCNN:
    """Mask R-CNN v2 (`Benchmarking Detection Transfer Learning with Vision Transformers
    <https://arxiv.org/abs/2111.11429>`_): BatchNorm in the FPN and heads, two RPN
    convolutions. Arguments as :func:`maskrcnn_resnet50_fpn`."""
    weights = MaskRCNN_ResNet50_FPN_V2_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers, v2=True)
    mask_head = MaskRCNNHeads(backbone.out_channels, [256, 256, 256, 256], 1,
                              norm_layer=nn.BatchNorm2d)
    model = MaskRCNN(backbone, num_classes=num_classes, **_v2_parts(backbone.out_channels),
                     mask_head=mask_head, **kwargs)
    _load(model, weights, progress)
    return model
