"""FCOS (Tian et al., 2019): anchor-free one-stage detection, with a ResNet-50-FPN backbone."""

from __future__ import annotations

import math
from functools import partial

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models.detection import _utils as det_utils
from embervision.models.detection._utils import _RECIPES, detection_weights
from embervision.models.detection.anchor_utils import AnchorGenerator
from embervision.models.detection.faster_rcnn import _load, _prepare, _resnet50_fpn_backbone
from embervision.models.detection.generalized_rcnn import match_anchors
from embervision.models.detection.retinanet import (
    _flatten_levels,
    dense_forward,
    dense_postprocess,
)
from embervision.models.detection.transform import detection_transform
from embervision.models.resnet import ResNet50_Weights
from embervision.ops.feature_pyramid_network import LastLevelP6P7
from embervision.ops.focal_loss import sigmoid_focal_loss
from embervision.ops.iou_loss import generalized_box_iou_loss

__all__ = ["FCOS", "FCOS_ResNet50_FPN_Weights", "fcos_resnet50_fpn"]

_RESNET50_V1 = ResNet50_Weights.IMAGENET1K_V1


def _gn_tower(in_channels: int, num_convs: int, norm_layer) -> nn.Sequential:
    # 3x3 convolution, norm, ReLU, ``num_convs`` times; convolutions N(0, 0.01), zero bias.
    norm_layer = norm_layer or partial(nn.GroupNorm, 32)
    layers = []
    for _ in range(num_convs):
        layers += [nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1),
                   norm_layer(in_channels), nn.ReLU()]
    tower = nn.Sequential(*layers)
    for layer in tower.children():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.constant_(layer.bias, 0)
    return tower


class FCOSClassificationHead(nn.Module):
    """A tower of convolutions with GroupNorm, then per-class logits at each position.

    Args:
        in_channels (int), num_anchors (int), num_classes (int), num_convs (int): 4.
        prior_probability (float): 0.01. norm_layer (callable, optional): GroupNorm(32).
    """

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 num_convs: int = 4, prior_probability: float = 0.01, norm_layer=None) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.conv = _gn_tower(in_channels, num_convs, norm_layer)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3,
                                    stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias,
                          -math.log((1 - prior_probability) / prior_probability))

    def forward(self, x):
        return _flatten_levels([self.cls_logits(self.conv(f)) for f in x], self.num_classes)


class FCOSRegressionHead(nn.Module):
    """A tower of convolutions with GroupNorm, then the (ReLU) distances to the four box
    sides and a centerness logit at each position.

    Args:
        in_channels (int), num_anchors (int), num_convs (int): 4.
        norm_layer (callable, optional): GroupNorm(32).
    """

    def __init__(self, in_channels: int, num_anchors: int, num_convs: int = 4,
                 norm_layer=None) -> None:
        super().__init__()
        self.conv = _gn_tower(in_channels, num_convs, norm_layer)
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1,
                                  padding=1)
        self.bbox_ctrness = nn.Conv2d(in_channels, num_anchors, kernel_size=3, stride=1,
                                      padding=1)
        for layer in (self.bbox_reg, self.bbox_ctrness):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, x):
        feats = [self.conv(f) for f in x]
        regression = _flatten_levels([F.relu(self.bbox_reg(f)) for f in feats], 4)
        ctrness = _flatten_levels([self.bbox_ctrness(f) for f in feats], 1)
        return regression, ctrness


class FCOSHead(nn.Module):
    """The classification and regression heads of FCOS, and its losses (focal, GIoU and
    centerness binary cross-entropy).

    Args:
        in_channels (int), num_anchors (int), num_classes (int), num_convs (int): 4.
    """

    __annotations__ = {"box_coder": det_utils.BoxLinearCoder}

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 num_convs: int = 4) -> None:
        super().__init__()
        self.box_coder = det_utils.BoxLinearCoder(normalize_by_size=True)
        self.classification_head = FCOSClassificationHead(in_channels, num_anchors,
                                                          num_classes, num_convs)
        self.regression_head = FCOSRegressionHead(in_channels, num_anchors, num_convs)

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        cls_logits = head_outputs["cls_logits"]
        bbox_regression = head_outputs["bbox_regression"]
        bbox_ctrness = head_outputs["bbox_ctrness"]
        all_classes, all_boxes = [], []
        for target, matched in zip(targets, matched_idxs):
            if len(target["labels"]) == 0:
                classes = target["labels"].new_zeros((len(matched),))
                boxes = target["boxes"].new_zeros((len(matched), 4))
            else:
                classes = target["labels"][matched.clamp(min=0)]
                boxes = target["boxes"][matched.clamp(min=0)]
            all_classes.append(ember.where(matched < 0, ember.full_like(classes, -1), classes))
            all_boxes.append(boxes)
        gt_boxes, gt_classes = ember.stack(all_boxes), ember.stack(all_classes)
        anchors = ember.stack(list(anchors))
        foreground = gt_classes >= 0
        num_foreground = max(1, int(foreground.sum().item()))
        classes_target = ember.zeros_like(cls_logits)
        fg_img, fg_anchor = ember.where(foreground)
        classes_target[fg_img, fg_anchor, gt_classes[fg_img, fg_anchor]] = 1.0
        loss_cls = sigmoid_focal_loss(cls_logits, classes_target, reduction="sum")
        pred_boxes = self.box_coder.decode(bbox_regression, anchors)
        loss_bbox_reg = generalized_box_iou_loss(pred_boxes[foreground], gt_boxes[foreground],
                                                 reduction="sum")
        reg_targets = self.box_coder.encode(anchors, gt_boxes)
        if len(reg_targets) == 0:
            ctrness_targets = reg_targets.new_zeros(tuple(reg_targets.shape[:-1]))
        else:
            left_right = reg_targets[:, :, [0, 2]]
            top_bottom = reg_targets[:, :, [1, 3]]
            ctrness_targets = ember.sqrt(
                (left_right.min(dim=-1)[0] / left_right.max(dim=-1)[0])
                * (top_bottom.min(dim=-1)[0] / top_bottom.max(dim=-1)[0]))
        pred_ctrness = bbox_ctrness.squeeze(dim=2)
        loss_ctrness = F.binary_cross_entropy_with_logits(pred_ctrness[foreground],
                                                          ctrness_targets[foreground],
                                                          reduction="sum")
        return {"classification": loss_cls / num_foreground,
                "bbox_regression": loss_bbox_reg / num_foreground,
                "bbox_ctrness": loss_ctrness / num_foreground}

    def forward(self, x):
        regression, ctrness = self.regression_head(x)
        return {"cls_logits": self.classification_head(x), "bbox_regression": regression,
                "bbox_ctrness": ctrness}


class FCOS(nn.Module):
    """FCOS: per-position classification, box-side distances and centerness on each FPN
    level, one "anchor" (a point with a size for the scale ranges) per position.

    Inputs and outputs as :class:`FasterRCNN`; the training losses are ``classification``,
    ``bbox_regression`` and ``bbox_ctrness``.

    Args:
        backbone (nn.Module): with ``out_channels``.
        num_classes (int): with the background.
        min_size (int), max_size (int): Default: 800, 1333.
        image_mean, image_std (3 floats, optional).
        anchor_generator (AnchorGenerator, optional): sizes 8-128, one per position.
        head (nn.Module, optional): FCOSHead by default.
        center_sampling_radius (float): 1.5. score_thresh (float): 0.2.
        nms_thresh (float): 0.6. detections_per_img (int): 100. topk_candidates (int): 1000.
        **kwargs: passed to GeneralizedRCNNTransform.
    """

    __annotations__ = {"box_coder": det_utils.BoxLinearCoder}

    def __init__(self, backbone, num_classes, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, anchor_generator=None, head=None, center_sampling_radius=1.5,
                 score_thresh=0.2, nms_thresh=0.6, detections_per_img=100, topk_candidates=1000,
                 **kwargs) -> None:
        super().__init__()
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the "
                             "number of output channels (assumed to be the same for all the "
                             "levels)")
        self.backbone = backbone
        if not isinstance(anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("anchor_generator should be of type AnchorGenerator or None, "
                            f"instead  got {type(anchor_generator)}")
        if anchor_generator is None:
            anchor_sizes = ((8,), (16,), (32,), (64,), (128,))  # the strides of the levels
            anchor_generator = AnchorGenerator(anchor_sizes, ((1.0,),) * len(anchor_sizes))
        self.anchor_generator = anchor_generator
        if self.anchor_generator.num_anchors_per_location()[0] != 1:
            raise ValueError("anchor_generator.num_anchors_per_location()[0] should be 1 "
                             f"instead of {anchor_generator.num_anchors_per_location()[0]}")
        if head is None:
            head = FCOSHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0],
                            num_classes)
        self.head = head
        self.box_coder = det_utils.BoxLinearCoder(normalize_by_size=True)
        self.transform = detection_transform(min_size, max_size, image_mean, image_std, **kwargs)
        self.center_sampling_radius = center_sampling_radius
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates
        self._has_warned = False

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def _match(self, anchors_per_image, gt_boxes, num_anchors_per_level):
        # An anchor point matches the smallest ground truth that contains it, whose centre is
        # within center_sampling_radius anchor sizes, and whose extent fits the anchor's level.
        gt_centers = (gt_boxes[:, :2] + gt_boxes[:, 2:]) / 2
        anchor_centers = (anchors_per_image[:, :2] + anchors_per_image[:, 2:]) / 2
        anchor_sizes = anchors_per_image[:, 2] - anchors_per_image[:, 0]
        match = ((anchor_centers[:, None, :] - gt_centers[None, :, :]).abs().max(dim=2)[0]
                 < self.center_sampling_radius * anchor_sizes[:, None])
        x, y = anchor_centers[:, 0:1], anchor_centers[:, 1:2]
        x0, y0, x1, y1 = (gt_boxes[None, :, i] for i in range(4))
        dist = ember.stack([x - x0, y - y0, x1 - x, y1 - y], dim=2)
        match = match & (dist.min(dim=2)[0] > 0)
        lower = anchor_sizes * 4
        upper = anchor_sizes * 8
        n_first, n_last = num_anchors_per_level[0], num_anchors_per_level[-1]
        lower = ember.cat([ember.zeros_like(lower[:n_first]), lower[n_first:]])
        upper = ember.cat([upper[:-n_last], ember.full_like(upper[-n_last:], float("inf"))])
        dist = dist.max(dim=2)[0]
        match = match & (dist > lower[:, None]) & (dist < upper[:, None])
        gt_areas = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
        weighted = match.to(ember.float32) * (1e8 - gt_areas[None, :])
        min_values, matched = weighted.max(dim=1)
        matched[min_values < 1e-5] = -1
        return matched

    def compute_loss(self, targets, head_outputs, anchors, num_anchors_per_level):
        matched_idxs = match_anchors(
            anchors, targets, lambda a, boxes: self._match(a, boxes, num_anchors_per_level))
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs)

    def postprocess_detections(self, head_outputs, anchors, image_sizes):
        return dense_postprocess(
            self, head_outputs, anchors, image_sizes,
            lambda outputs: ember.sqrt(ember.sigmoid(outputs[0]) * ember.sigmoid(outputs[1])),
            self.box_coder.decode)

    def forward(self, images, targets=None):
        def loss(t, outputs, anchors, features):
            return self.compute_loss(t, outputs, anchors,
                                     [f.shape[2] * f.shape[3] for f in features])

        return dense_forward(self, images, targets, loss)


class FCOS_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "fcos_resnet50_fpn_coco-99b0c9b7", 32269600, f"{_RECIPES}#fcos-resnet-50-fpn",
        {"box_map": 39.2}, 128.207, 123.608,
        "These weights were produced by following a similar training recipe as on the paper.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(FCOS_ResNet50_FPN_Weights)
def fcos_resnet50_fpn(*, weights: FCOS_ResNet50_FPN_Weights | None = None,
                      progress: bool = True, num_classes: int | None = None,
                      weights_backbone: ResNet50_Weights | None = _RESNET50_V1,
                      trainable_backbone_layers: int | None = None, **kwargs) -> FCOS:
    """FCOS with a ResNet-50-FPN backbone (P3-P7), from `FCOS: Fully Convolutional One-Stage
    Object Detection <https://arxiv.org/abs/1904.01355>`_. Arguments as
    :func:`~embervision.models.detection.fasterrcnn_resnet50_fpn`."""
    weights = FCOS_ResNet50_FPN_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers, returned_layers=[2, 3, 4],
                                      extra_blocks=LastLevelP6P7(256, 256))
    model = FCOS(backbone, num_classes, **kwargs)
    _load(model, weights, progress)
    return model
