"""RetinaNet (Lin et al., 2017) with a ResNet-50-FPN backbone (v1 and v2)."""

from __future__ import annotations

import math
from functools import partial

import ember
from ember import nn
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models.detection import _utils as det_utils
from embervision.models.detection._utils import _RECIPES, detection_weights, overwrite_eps
from embervision.models.detection.anchor_utils import AnchorGenerator
from embervision.models.detection.backbone_utils import (
    _resnet_fpn_extractor,
    _validate_trainable_layers,
)
from embervision.models.detection.faster_rcnn import _load, _prepare, _resnet50_fpn_backbone
from embervision.models.detection.generalized_rcnn import (
    features_list,
    match_anchors,
    prepare_inputs,
)
from embervision.models.detection.transform import detection_transform
from embervision.models.resnet import ResNet50_Weights, resnet50
from embervision.ops import boxes as box_ops
from embervision.ops import misc as misc_nn_ops
from embervision.ops.feature_pyramid_network import LastLevelP6P7
from embervision.ops.focal_loss import sigmoid_focal_loss

__all__ = ["RetinaNet", "RetinaNet_ResNet50_FPN_V2_Weights", "RetinaNet_ResNet50_FPN_Weights",
           "retinanet_resnet50_fpn", "retinanet_resnet50_fpn_v2"]

_RESNET50_V1 = ResNet50_Weights.IMAGENET1K_V1


def _sum(x):
    res = x[0]
    for i in x[1:]:
        res = res + i
    return res


def _conv_tower(in_channels: int, norm_layer, depth: int = 4) -> nn.Sequential:
    # 3x3 convolutions (with ReLU, and the norm when given), initialized N(0, 0.01).
    tower = nn.Sequential(*[misc_nn_ops.Conv2dNormActivation(in_channels, in_channels,
                                                             norm_layer=norm_layer)
                            for _ in range(depth)])
    for layer in tower.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, std=0.01)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0)
    return tower


def _flatten_levels(outputs, channels: int):
    """Per-level ``(N, A*C, H, W)`` maps as one ``(N, sum(HWA), C)`` tensor."""
    flat = []
    for out in outputs:
        N, _, H, W = out.shape
        flat.append(out.reshape(N, -1, channels, H, W).permute(0, 3, 4, 1, 2)
                    .reshape(N, -1, channels))
    return ember.cat(flat, dim=1)


class _VersionedHead(nn.Module):
    _version = 2

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Version-1 towers were plain Sequential(conv, relu, conv, relu, ...).
        det_utils.rename_v1_keys(state_dict, local_metadata,
                                 [(f"{prefix}conv.{2 * i}.{k}", f"{prefix}conv.{i}.0.{k}")
                                  for i in range(4) for k in ("weight", "bias")])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class RetinaNetClassificationHead(_VersionedHead):
    """Four 3x3 convolutions, then a 3x3 convolution to ``num_anchors * num_classes`` logits
    (bias set for a prior probability of 0.01); sigmoid focal loss.

    Args:
        in_channels (int), num_anchors (int), num_classes (int),
        prior_probability (float): Default: 0.01. norm_layer (callable, optional).
    """

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 prior_probability: float = 0.01, norm_layer=None) -> None:
        super().__init__()
        self.conv = _conv_tower(in_channels, norm_layer)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3,
                                    stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias,
                          -math.log((1 - prior_probability) / prior_probability))
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.BETWEEN_THRESHOLDS = det_utils.Matcher.BETWEEN_THRESHOLDS

    def compute_loss(self, targets, head_outputs, matched_idxs):
        losses = []
        for target, logits, matched in zip(targets, head_outputs["cls_logits"], matched_idxs):
            foreground = matched >= 0
            num_foreground = int(foreground.sum())
            gt_classes = ember.zeros_like(logits)
            fg_idx = ember.where(foreground)[0]
            gt_classes[fg_idx, target["labels"][matched[fg_idx]]] = 1.0
            valid = matched != self.BETWEEN_THRESHOLDS
            losses.append(sigmoid_focal_loss(logits[valid], gt_classes[valid], reduction="sum")
                          / max(1, num_foreground))
        return _sum(losses) / len(targets)

    def forward(self, x):
        return _flatten_levels([self.cls_logits(self.conv(f)) for f in x], self.num_classes)


class RetinaNetRegressionHead(_VersionedHead):
    """Four 3x3 convolutions, then a 3x3 convolution to 4 deltas per anchor; L1 loss (GIoU in
    v2, through ``_loss_type``).

    Args:
        in_channels (int), num_anchors (int), norm_layer (callable, optional).
    """

    __annotations__ = {"box_coder": det_utils.BoxCoder}

    def __init__(self, in_channels: int, num_anchors: int, norm_layer=None) -> None:
        super().__init__()
        self.conv = _conv_tower(in_channels, norm_layer)
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1,
                                  padding=1)
        nn.init.normal_(self.bbox_reg.weight, std=0.01)
        nn.init.zeros_(self.bbox_reg.bias)
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self._loss_type = "l1"

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        losses = []
        for target, regression, anchors_per_image, matched in zip(
                targets, head_outputs["bbox_regression"], anchors, matched_idxs):
            fg = ember.where(matched >= 0)[0]
            matched_gt = target["boxes"][matched[fg]]
            loss = det_utils._box_loss(self._loss_type, self.box_coder, anchors_per_image[fg],
                                       matched_gt, regression[fg])
            losses.append(loss / max(1, fg.numel()))
        return _sum(losses) / max(1, len(targets))

    def forward(self, x):
        return _flatten_levels([self.bbox_reg(self.conv(f)) for f in x], 4)


class RetinaNetHead(nn.Module):
    """The classification and regression heads of RetinaNet.

    Args:
        in_channels (int), num_anchors (int), num_classes (int),
        norm_layer (callable, optional).
    """

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 norm_layer=None) -> None:
        super().__init__()
        self.classification_head = RetinaNetClassificationHead(in_channels, num_anchors,
                                                               num_classes,
                                                               norm_layer=norm_layer)
        self.regression_head = RetinaNetRegressionHead(in_channels, num_anchors,
                                                       norm_layer=norm_layer)

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        return {"classification": self.classification_head.compute_loss(targets, head_outputs,
                                                                         matched_idxs),
                "bbox_regression": self.regression_head.compute_loss(targets, head_outputs,
                                                                     anchors, matched_idxs)}

    def forward(self, x):
        return {"cls_logits": self.classification_head(x),
                "bbox_regression": self.regression_head(x)}


def _default_anchorgen() -> AnchorGenerator:
    anchor_sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3)))
                         for x in [32, 64, 128, 256, 512])
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


def split_per_level(features, head_outputs, anchors):
    """The head outputs and anchors split by pyramid level (for the post-processing)."""
    hw = [x.shape[2] * x.shape[3] for x in features]
    A = head_outputs["cls_logits"].shape[1] // sum(hw)
    sizes = [n * A for n in hw]
    split_outputs = {k: list(v.split(sizes, dim=1)) for k, v in head_outputs.items()}
    return split_outputs, [list(a.split(sizes)) for a in anchors]


def dense_postprocess(model, head_outputs, anchors, image_shapes, score_fn, decode_fn):
    """The detections of a dense detector (RetinaNet, FCOS) from its per-level outputs: on
    each level the ``model.topk_candidates`` best (anchor, class) pairs scoring above
    ``model.score_thresh``, decoded and clipped; then NMS per class over the levels and at
    most ``model.detections_per_img``. ``score_fn`` gets the level's outputs (the logits
    first) and returns the ``(HWA, C)`` scores."""
    keys = list(head_outputs)
    detections = []
    for index, image_shape in enumerate(image_shapes):
        image_boxes, image_scores, image_labels = [], [], []
        levels = zip(*[[level[index] for level in head_outputs[k]] for k in keys],
                     anchors[index])
        for *outputs, level_anchors in levels:
            outputs = dict(zip(keys, outputs))
            regression = outputs.pop("bbox_regression")
            logits = outputs["cls_logits"]
            num_classes = logits.shape[-1]
            scores = score_fn(list(outputs.values())).flatten()
            keep = scores > model.score_thresh
            scores = scores[keep]
            topk_idxs = ember.where(keep)[0]
            scores, idxs = scores.topk(det_utils._topk_min(topk_idxs, model.topk_candidates, 0))
            topk_idxs = topk_idxs[idxs]
            anchor_idxs = ember.div(topk_idxs, num_classes, rounding_mode="floor")
            boxes = decode_fn(regression[anchor_idxs], level_anchors[anchor_idxs])
            image_boxes.append(box_ops.clip_boxes_to_image(boxes, image_shape))
            image_scores.append(scores)
            image_labels.append(topk_idxs % num_classes)
        boxes = ember.cat(image_boxes, 0)
        scores = ember.cat(image_scores, 0)
        labels = ember.cat(image_labels, 0)
        keep = box_ops.batched_nms(boxes, scores, labels, model.nms_thresh)
        keep = keep[: model.detections_per_img]
        detections.append({"boxes": boxes[keep], "scores": scores[keep], "labels": labels[keep]})
    return detections


def dense_forward(model, images, targets, compute_loss):
    """The forward of the dense detectors: transform, backbone, head and anchors, then the
    losses (training: ``compute_loss(targets, head_outputs, anchors, features)``) or the
    post-processed detections."""
    images, targets, original_image_sizes = prepare_inputs(model, images, targets)
    features = features_list(model.backbone(images.tensors))
    head_outputs = model.head(features)
    anchors = model.anchor_generator(images, features)
    if model.training:
        return compute_loss(targets, head_outputs, anchors, features)
    split_outputs, split_anchors = split_per_level(features, head_outputs, anchors)
    detections = model.postprocess_detections(split_outputs, split_anchors, images.image_sizes)
    return model.transform.postprocess(detections, images.image_sizes, original_image_sizes)


class RetinaNet(nn.Module):
    """RetinaNet: a one-stage detector with a focal-loss classification head and a box
    regression head on each level of a feature pyramid.

    Inputs and outputs as :class:`FasterRCNN`; the training losses are ``classification``
    and ``bbox_regression``.

    Args:
        backbone (nn.Module): with ``out_channels``.
        num_classes (int): with the background.
        min_size (int), max_size (int): Default: 800, 1333.
        image_mean, image_std (3 floats, optional).
        anchor_generator (AnchorGenerator, optional): 3 sizes x 3 ratios per level.
        head (nn.Module, optional): RetinaNetHead by default.
        proposal_matcher (optional): Matcher(fg_iou_thresh, bg_iou_thresh, low quality).
        score_thresh (float): 0.05. nms_thresh: 0.5. detections_per_img: 300.
        fg_iou_thresh (float): 0.5. bg_iou_thresh: 0.4. topk_candidates (int): 1000.
        **kwargs: passed to GeneralizedRCNNTransform.
    """

    __annotations__ = {"box_coder": det_utils.BoxCoder, "proposal_matcher": det_utils.Matcher}

    def __init__(self, backbone, num_classes, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, anchor_generator=None, head=None, proposal_matcher=None,
                 score_thresh=0.05, nms_thresh=0.5, detections_per_img=300, fg_iou_thresh=0.5,
                 bg_iou_thresh=0.4, topk_candidates=1000, **kwargs) -> None:
        super().__init__()
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the "
                             "number of output channels (assumed to be the same for all the "
                             "levels)")
        self.backbone = backbone
        if not isinstance(anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("anchor_generator should be of type AnchorGenerator or None "
                            f"instead of {type(anchor_generator)}")
        if anchor_generator is None:
            anchor_generator = _default_anchorgen()
        self.anchor_generator = anchor_generator
        if head is None:
            head = RetinaNetHead(backbone.out_channels,
                                 anchor_generator.num_anchors_per_location()[0], num_classes)
        self.head = head
        if proposal_matcher is None:
            proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh,
                                                 allow_low_quality_matches=True)
        self.proposal_matcher = proposal_matcher
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self.transform = detection_transform(min_size, max_size, image_mean, image_std, **kwargs)
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates
        self._has_warned = False

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def compute_loss(self, targets, head_outputs, anchors):
        matched_idxs = match_anchors(
            anchors, targets, lambda a, boxes: self.proposal_matcher(box_ops.box_iou(boxes, a)))
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs)

    def postprocess_detections(self, head_outputs, anchors, image_shapes):
        return dense_postprocess(self, head_outputs, anchors, image_shapes,
                                 lambda outputs: ember.sigmoid(outputs[0]),
                                 self.box_coder.decode_single)

    def forward(self, images, targets=None):
        return dense_forward(self, images, targets,
                             lambda t, outputs, anchors, _: self.compute_loss(t, outputs, anchors))


class RetinaNet_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "retinanet_resnet50_fpn_coco-eeacb38b", 34014999, f"{_RECIPES}#retinanet",
        {"box_map": 36.4}, 151.54, 130.267,
        "These weights were produced by following a similar training recipe as on the paper.")
    DEFAULT = COCO_V1


class RetinaNet_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "retinanet_resnet50_fpn_v2_coco-5905b1c5", 38198935,
        "https://github.com/pytorch/vision/pull/5756", {"box_map": 41.5}, 152.238, 146.037,
        "These weights were produced using an enhanced training recipe to boost the model "
        "accuracy.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(RetinaNet_ResNet50_FPN_Weights)
def retinanet_resnet50_fpn(*, weights: RetinaNet_ResNet50_FPN_Weights | None = None,
                           progress: bool = True, num_classes: int | None = None,
                           weights_backbone: ResNet50_Weights | None = _RESNET50_V1,
                           trainable_backbone_layers: int | None = None,
                           **kwargs) -> RetinaNet:
    """RetinaNet with a ResNet-50-FPN backbone (P3-P7), from `Focal Loss for Dense Object
    Detection <https://arxiv.org/abs/1708.02002>`_. Arguments as
    :func:`~embervision.models.detection.fasterrcnn_resnet50_fpn`."""
    weights = RetinaNet_ResNet50_FPN_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    # P2 is left out: it makes too many anchors (the paper).
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers, returned_layers=[2, 3, 4],
                                      extra_blocks=LastLevelP6P7(256, 256))
    model = RetinaNet(backbone, num_classes, **kwargs)
    _load(model, weights, progress)
    if weights == RetinaNet_ResNet50_FPN_Weights.COCO_V1:
        overwrite_eps(model, 0.0)
    return model


@register_model()
@weights_of(RetinaNet_ResNet50_FPN_V2_Weights)
def retinanet_resnet50_fpn_v2(*, weights: RetinaNet_ResNet50_FPN_V2_Weights | None = None,
                              progress: bool = True, num_classes: int | None = None,
                              weights_backbone: ResNet50_Weights | None = None,
                              trainable_backbone_layers: int | None = None,
                              **kwargs) -> RetinaNet:
    """RetinaNet v2 (`Bridging the Gap Between Anchor-based and Anchor-free Detection
    <https://arxiv.org/abs/1912.02424>`_): P6 from C5, GroupNorm in the heads, GIoU loss.
    Arguments as :func:`retinanet_resnet50_fpn`."""
    weights = RetinaNet_ResNet50_FPN_V2_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable = _validate_trainable_layers(is_trained, trainable_backbone_layers, 5, 3)
    backbone = resnet50(weights=weights_backbone, progress=progress)
    backbone = _resnet_fpn_extractor(backbone, trainable, returned_layers=[2, 3, 4],
                                     extra_blocks=LastLevelP6P7(2048, 256))
    anchor_generator = _default_anchorgen()
    head = RetinaNetHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0],
                         num_classes, norm_layer=partial(nn.GroupNorm, 32))
    head.regression_head._loss_type = "giou"
    model = RetinaNet(backbone, num_classes, anchor_generator=anchor_generator, head=head,
                      **kwargs)
    _load(model, weights, progress)
    return model
