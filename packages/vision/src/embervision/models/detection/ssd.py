"""SSD (Liu et al., 2015) with a VGG-16 backbone: SSD300."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models.detection import _utils as det_utils
from embervision.models.detection._utils import _RECIPES, _assert, detection_weights
from embervision.models.detection.anchor_utils import DefaultBoxGenerator
from embervision.models.detection.backbone_utils import (
    _freeze_stages,
    _validate_trainable_layers,
)
from embervision.models.detection.faster_rcnn import _load, _prepare
from embervision.models.detection.generalized_rcnn import (
    features_list,
    match_anchors,
    prepare_inputs,
)
from embervision.models.detection.transform import detection_transform
from embervision.models.vgg import VGG16_Weights, vgg16
from embervision.ops import boxes as box_ops

__all__ = ["SSD", "SSD300_VGG16_Weights", "ssd300_vgg16"]


def _xavier_init(conv: nn.Module) -> None:
    for layer in conv.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0.0)


class SSDScoringHead(nn.Module):
    """One module per feature map; the outputs ``(N, A*C, H, W)`` flattened to one
    ``(N, sum(HWA), num_columns)`` tensor.

    Args:
        module_list (nn.ModuleList), num_columns (int).
    """

    def __init__(self, module_list: nn.ModuleList, num_columns: int) -> None:
        super().__init__()
        self.module_list = module_list
        self.num_columns = num_columns

    def _get_result_from_module_list(self, x, idx: int):
        return self.module_list[idx](x)

    def forward(self, x):
        results = []
        for i, features in enumerate(x):
            out = self._get_result_from_module_list(features, i)
            N, _, H, W = out.shape
            results.append(out.reshape(N, -1, self.num_columns, H, W).permute(0, 3, 4, 1, 2)
                           .reshape(N, -1, self.num_columns))
        return ember.cat(results, dim=1)


class SSDClassificationHead(SSDScoringHead):
    """A 3x3 convolution to ``num_anchors * num_classes`` logits per map.

    Args:
        in_channels (list of int), num_anchors (list of int), num_classes (int).
    """

    def __init__(self, in_channels, num_anchors, num_classes: int) -> None:
        cls_logits = nn.ModuleList([nn.Conv2d(c, num_classes * a, kernel_size=3, padding=1)
                                    for c, a in zip(in_channels, num_anchors)])
        _xavier_init(cls_logits)
        super().__init__(cls_logits, num_classes)


class SSDRegressionHead(SSDScoringHead):
    """A 3x3 convolution to 4 deltas per anchor per map.

    Args:
        in_channels (list of int), num_anchors (list of int).
    """

    def __init__(self, in_channels, num_anchors) -> None:
        bbox_reg = nn.ModuleList([nn.Conv2d(c, 4 * a, kernel_size=3, padding=1)
                                  for c, a in zip(in_channels, num_anchors)])
        _xavier_init(bbox_reg)
        super().__init__(bbox_reg, 4)


class SSDHead(nn.Module):
    """The classification and regression heads of SSD.

    Args:
        in_channels (list of int), num_anchors (list of int), num_classes (int).
    """

    def __init__(self, in_channels, num_anchors, num_classes: int) -> None:
        super().__init__()
        self.classification_head = SSDClassificationHead(in_channels, num_anchors, num_classes)
        self.regression_head = SSDRegressionHead(in_channels, num_anchors)

    def forward(self, x):
        return {"bbox_regression": self.regression_head(x),
                "cls_logits": self.classification_head(x)}


class SSD(nn.Module):
    """SSD: class scores and box deltas for the default boxes of several feature maps, images
    resized to a fixed ``size``; hard negative mining in training.

    Inputs and outputs as :class:`FasterRCNN`; the training losses are ``bbox_regression``
    and ``classification``.

    Args:
        backbone (nn.Module): returns an OrderedDict of maps.
        anchor_generator (DefaultBoxGenerator), size (int, int): the input size.
        num_classes (int): with the background.
        image_mean, image_std (3 floats, optional).
        head (nn.Module, optional): SSDHead on the backbone's channels by default.
        score_thresh (float): 0.01. nms_thresh: 0.45. detections_per_img: 200.
        iou_thresh (float): 0.5. topk_candidates (int): 400. positive_fraction (float): 0.25.
        **kwargs: passed to GeneralizedRCNNTransform.
    """

    __annotations__ = {"box_coder": det_utils.BoxCoder, "proposal_matcher": det_utils.Matcher}

    def __init__(self, backbone: nn.Module, anchor_generator: DefaultBoxGenerator, size,
                 num_classes: int, image_mean=None, image_std=None, head=None,
                 score_thresh: float = 0.01, nms_thresh: float = 0.45,
                 detections_per_img: int = 200, iou_thresh: float = 0.5,
                 topk_candidates: int = 400, positive_fraction: float = 0.25,
                 **kwargs) -> None:
        super().__init__()
        self.backbone = backbone
        self.anchor_generator = anchor_generator
        self.box_coder = det_utils.BoxCoder(weights=(10.0, 10.0, 5.0, 5.0))
        if head is None:
            if hasattr(backbone, "out_channels"):
                out_channels = backbone.out_channels
            else:
                out_channels = det_utils.retrieve_out_channels(backbone, size)
            if len(out_channels) != len(anchor_generator.aspect_ratios):
                raise ValueError(
                    f"The length of the output channels from the backbone ({len(out_channels)}) "
                    "do not match the length of the anchor generator aspect ratios "
                    f"({len(anchor_generator.aspect_ratios)})")
            head = SSDHead(out_channels, anchor_generator.num_anchors_per_location(),
                           num_classes)
        self.head = head
        self.proposal_matcher = det_utils.SSDMatcher(iou_thresh)
        self.transform = detection_transform(min(size), max(size), image_mean, image_std,
                                             size_divisible=1, fixed_size=size, **kwargs)
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates
        self.neg_to_pos_ratio = (1.0 - positive_fraction) / positive_fraction
        self._has_warned = False

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        """Smooth L1 on the matched default boxes and cross-entropy on them and on the
        hardest negatives (``neg_to_pos_ratio`` per positive), over the positives."""
        num_foreground = 0
        bbox_loss, cls_targets = [], []
        for target, regression, logits, anchors_per_image, matched in zip(
                targets, head_outputs["bbox_regression"], head_outputs["cls_logits"], anchors,
                matched_idxs):
            fg = ember.where(matched >= 0)[0]
            fg_matched = matched[fg]
            num_foreground += fg_matched.numel()
            target_regression = self.box_coder.encode_single(target["boxes"][fg_matched],
                                                             anchors_per_image[fg])
            bbox_loss.append(F.smooth_l1_loss(regression[fg], target_regression,
                                              reduction="sum"))
            classes = ember.zeros(logits.shape[0], dtype=target["labels"].dtype,
                                  device=target["labels"].device)
            classes[fg] = target["labels"][fg_matched]
            cls_targets.append(classes)
        bbox_loss = ember.stack(bbox_loss)
        cls_targets = ember.stack(cls_targets)
        cls_logits = head_outputs["cls_logits"]
        num_classes = cls_logits.shape[-1]
        cls_loss = F.cross_entropy(cls_logits.reshape(-1, num_classes), cls_targets.reshape(-1),
                                   reduction="none").reshape(tuple(cls_targets.shape))
        foreground = cls_targets > 0
        num_negative = self.neg_to_pos_ratio * foreground.sum(1, keepdim=True)
        # The hardest negatives: the positives sort last (-inf), then rank < num_negative.
        negative_loss = ember.where(foreground, ember.full_like(cls_loss, float("-inf")),
                                    cls_loss.detach())
        _, idx = negative_loss.sort(1, descending=True)
        background = idx.sort(1)[1] < num_negative
        N = max(1, num_foreground)
        return {"bbox_regression": bbox_loss.sum() / N,
                "classification": (cls_loss[foreground].sum() + cls_loss[background].sum()) / N}

    def postprocess_detections(self, head_outputs, image_anchors, image_shapes):
        """Per image and class (but the background): the ``topk_candidates`` best boxes
        scoring above ``score_thresh``; then NMS per class and ``detections_per_img``."""
        pred_scores = F.softmax(head_outputs["cls_logits"], dim=-1)
        num_classes = pred_scores.shape[-1]
        device = pred_scores.device
        detections = []
        for boxes, scores, anchors, image_shape in zip(head_outputs["bbox_regression"],
                                                       pred_scores, image_anchors, image_shapes):
            boxes = box_ops.clip_boxes_to_image(self.box_coder.decode_single(boxes, anchors),
                                                image_shape)
            image_boxes, image_scores, image_labels = [], [], []
            for label in range(1, num_classes):
                score = scores[:, label]
                keep = score > self.score_thresh
                score, box = score[keep], boxes[keep]
                score, idxs = score.topk(det_utils._topk_min(score, self.topk_candidates, 0))
                image_boxes.append(box[idxs])
                image_scores.append(score)
                image_labels.append(ember.full_like(score, label, dtype=ember.int64,
                                                    device=device))
            image_boxes = ember.cat(image_boxes, dim=0)
            image_scores = ember.cat(image_scores, dim=0)
            image_labels = ember.cat(image_labels, dim=0)
            keep = box_ops.batched_nms(image_boxes, image_scores, image_labels, self.nms_thresh)
            keep = keep[: self.detections_per_img]
            detections.append({"boxes": image_boxes[keep], "scores": image_scores[keep],
                               "labels": image_labels[keep]})
        return detections

    def forward(self, images, targets=None):
        images, targets, original_image_sizes = prepare_inputs(self, images, targets)
        features = features_list(self.backbone(images.tensors))
        head_outputs = self.head(features)
        anchors = self.anchor_generator(images, features)
        if self.training:
            matched_idxs = match_anchors(
                anchors, targets,
                lambda a, boxes: self.proposal_matcher(box_ops.box_iou(boxes, a)))
            return self.eager_outputs(self.compute_loss(targets, head_outputs, anchors,
                                                        matched_idxs), [])
        detections = self.postprocess_detections(head_outputs, anchors, images.image_sizes)
        detections = self.transform.postprocess(detections, images.image_sizes,
                                                original_image_sizes)
        return self.eager_outputs({}, detections)


class SSDFeatureExtractorVGG(nn.Module):
    """VGG-16 cut into SSD's feature maps: conv4_3 (L2-normalized and rescaled by a learned
    per-channel weight), then fc6/fc7 as convolutions and the extra layers.

    Args:
        backbone (nn.Module): VGG's ``features``.
        highres (bool): add the extra layer of SSD512.
    """

    def __init__(self, backbone: nn.Module, highres: bool) -> None:
        super().__init__()
        pools = [i for i, layer in enumerate(backbone) if isinstance(layer, nn.MaxPool2d)]
        maxpool3_pos, maxpool4_pos = pools[2], pools[3]
        # ceil_mode on maxpool3 gives the paper's map sizes (38x38 for 300x300).
        backbone[maxpool3_pos].ceil_mode = True
        self.scale_weight = nn.Parameter(ember.ones(512) * 20)
        self.features = nn.Sequential(*backbone[:maxpool4_pos])  # up to conv4_3

        def block(c_in, c_mid, c_out, **conv):
            return nn.Sequential(nn.Conv2d(c_in, c_mid, kernel_size=1), nn.ReLU(inplace=True),
                                 nn.Conv2d(c_mid, c_out, **conv), nn.ReLU(inplace=True))

        extra = nn.ModuleList([
            block(1024, 256, 512, kernel_size=3, padding=1, stride=2),  # conv8_2
            block(512, 128, 256, kernel_size=3, padding=1, stride=2),  # conv9_2
            block(256, 128, 256, kernel_size=3),  # conv10_2
            block(256, 128, 256, kernel_size=3),  # conv11_2
        ])
        if highres:
            extra.append(block(256, 128, 256, kernel_size=4))  # conv12_2 (SSD512)
        _xavier_init(extra)
        fc = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=False),  # pool5
            nn.Conv2d(in_channels=512, out_channels=1024, kernel_size=3, padding=6,
                      dilation=6),  # fc6, atrous
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=1024, out_channels=1024, kernel_size=1),  # fc7
            nn.ReLU(inplace=True),
        )
        _xavier_init(fc)
        # conv5_3 without maxpool5, then fc6/fc7.
        extra.insert(0, nn.Sequential(*backbone[maxpool4_pos:-1], fc))
        self.extra = extra

    def forward(self, x):
        x = self.features(x)
        output = [self.scale_weight.reshape(1, -1, 1, 1) * F.normalize(x)]
        for block in self.extra:
            x = block(x)
            output.append(x)
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


def _vgg_extractor(backbone, highres: bool, trainable_layers: int) -> SSDFeatureExtractorVGG:
    backbone = backbone.features
    # The blocks end at the max-poolings: the first layer and each pooling but the last.
    stage_indices = [0] + [i for i, b in enumerate(backbone) if isinstance(b, nn.MaxPool2d)][:-1]
    num_stages = len(stage_indices)
    _assert(0 <= trainable_layers <= num_stages,
            f"trainable_layers should be in the range [0, {num_stages}]. Instead got "
            f"{trainable_layers}")
    _freeze_stages(backbone, stage_indices, trainable_layers)
    return SSDFeatureExtractorVGG(backbone, highres)


def _drop_size(kwargs: dict) -> None:
    if "size" in kwargs:
        warnings.warn("The size of the model is already fixed; ignoring the parameter.",
                      stacklevel=3)
        kwargs.pop("size")


class SSD300_VGG16_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "ssd300_vgg16_coco-b556d3b4", 35641826, f"{_RECIPES}#ssd300-vgg16", {"box_map": 25.1},
        34.858, 135.988,
        "These weights were produced by following a similar training recipe as on the paper.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(SSD300_VGG16_Weights)
def ssd300_vgg16(*, weights: SSD300_VGG16_Weights | None = None, progress: bool = True,
                 num_classes: int | None = None,
                 weights_backbone: VGG16_Weights | None = VGG16_Weights.IMAGENET1K_FEATURES,
                 trainable_backbone_layers: int | None = None, **kwargs) -> SSD:
    """SSD300 with a VGG-16 backbone, from `SSD: Single Shot MultiBox Detector
    <https://arxiv.org/abs/1512.02325>`_. Images are resized to 300x300.

    Args:
        weights (:class:`SSD300_VGG16_Weights`, optional): pretrained weights.
        progress (bool): Default: True.
        num_classes (int, optional): with the background. Default: 91.
        weights_backbone (:class:`VGG16_Weights`, optional): Default: IMAGENET1K_FEATURES.
        trainable_backbone_layers (int, optional): 0 to 5; 4 by default with pretrained
            weights, 5 without.
        **kwargs: passed to :class:`SSD`.
    """
    weights = SSD300_VGG16_Weights.verify(weights)
    weights_backbone = VGG16_Weights.verify(weights_backbone)
    _drop_size(kwargs)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable = _validate_trainable_layers(is_trained, trainable_backbone_layers, 5, 4)
    backbone = _vgg_extractor(vgg16(weights=weights_backbone, progress=progress), False,
                              trainable)
    anchor_generator = DefaultBoxGenerator(
        [[2], [2, 3], [2, 3], [2, 3], [2], [2]],
        scales=[0.07, 0.15, 0.33, 0.51, 0.69, 0.87, 1.05], steps=[8, 16, 32, 64, 100, 300])
    # VGG's weights expect 0-255 inputs, less the mean.
    defaults = {"image_mean": [0.48235, 0.45882, 0.40784],
                "image_std": [1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0]}
    model = SSD(backbone, anchor_generator, (300, 300), num_classes, **{**defaults, **kwargs})
    _load(model, weights, progress)
    return model
