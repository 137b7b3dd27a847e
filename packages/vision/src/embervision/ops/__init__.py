"""``embervision.ops``: box operations, NMS, region pooling, losses and model blocks."""

from embervision.ops.boxes import (
    batched_nms,
    box_area,
    box_convert,
    box_iou,
    clip_boxes_to_image,
    complete_box_iou,
    distance_box_iou,
    generalized_box_iou,
    masks_to_boxes,
    nms,
    remove_small_boxes,
)
from embervision.ops.deform_conv import DeformConv2d, deform_conv2d
from embervision.ops.drop_block import DropBlock2d, DropBlock3d, drop_block2d, drop_block3d
from embervision.ops.feature_pyramid_network import FeaturePyramidNetwork
from embervision.ops.focal_loss import sigmoid_focal_loss
from embervision.ops.iou_loss import (
    complete_box_iou_loss,
    distance_box_iou_loss,
    generalized_box_iou_loss,
)
from embervision.ops.misc import (
    MLP,
    Conv2dNormActivation,
    Conv3dNormActivation,
    FrozenBatchNorm2d,
    Permute,
    SqueezeExcitation,
)
from embervision.ops.poolers import MultiScaleRoIAlign
from embervision.ops.ps_roi_align import PSRoIAlign, ps_roi_align
from embervision.ops.ps_roi_pool import PSRoIPool, ps_roi_pool
from embervision.ops.roi_align import RoIAlign, roi_align
from embervision.ops.roi_pool import RoIPool, roi_pool
from embervision.ops.stochastic_depth import StochasticDepth, stochastic_depth

__all__ = [
    "MLP",
    "MultiScaleRoIAlign",
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "DeformConv2d",
    "DropBlock2d",
    "DropBlock3d",
    "FeaturePyramidNetwork",
    "FrozenBatchNorm2d",
    "PSRoIAlign",
    "PSRoIPool",
    "Permute",
    "RoIAlign",
    "RoIPool",
    "SqueezeExcitation",
    "StochasticDepth",
    "batched_nms",
    "box_area",
    "box_convert",
    "box_iou",
    "clip_boxes_to_image",
    "complete_box_iou",
    "complete_box_iou_loss",
    "deform_conv2d",
    "distance_box_iou",
    "distance_box_iou_loss",
    "drop_block2d",
    "drop_block3d",
    "generalized_box_iou",
    "generalized_box_iou_loss",
    "masks_to_boxes",
    "nms",
    "ps_roi_align",
    "ps_roi_pool",
    "remove_small_boxes",
    "roi_align",
    "roi_pool",
    "sigmoid_focal_loss",
    "stochastic_depth",
]
