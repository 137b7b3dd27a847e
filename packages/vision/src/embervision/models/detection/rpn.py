"""The Region Proposal Network of the R-CNN models: RPNHead and RegionProposalNetwork."""

from __future__ import annotations

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models.detection import _utils as det_utils
from embervision.models.detection.anchor_utils import AnchorGenerator
from embervision.models.detection.image_list import ImageList
from embervision.ops import boxes as box_ops
from embervision.ops.misc import Conv2dNormActivation

__all__ = ["AnchorGenerator", "RPNHead", "RegionProposalNetwork"]


class RPNHead(nn.Module):
    """``conv_depth`` 3x3 convolutions with ReLU, then 1x1 convolutions to an objectness logit
    and 4 box deltas per anchor, on each feature map.

    Args:
        in_channels (int): the channels of the feature maps.
        num_anchors (int): anchors per position.
        conv_depth (int): Default: 1.
    """

    _version = 2

    def __init__(self, in_channels: int, num_anchors: int, conv_depth: int = 1) -> None:
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels,
                                                         kernel_size=3, norm_layer=None)
                                    for _ in range(conv_depth)])
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, kernel_size=1, stride=1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=1, stride=1)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.normal_(layer.weight, std=0.01)
                if layer.bias is not None:
                    nn.init.constant_(layer.bias, 0)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Version-1 checkpoints hold the single convolution as "conv.weight".
        det_utils.rename_v1_keys(state_dict, local_metadata,
                                 [(f"{prefix}conv.{k}", f"{prefix}conv.0.0.{k}")
                                  for k in ("weight", "bias")])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        logits, bbox_reg = [], []
        for feature in x:
            t = self.conv(feature)
            logits.append(self.cls_logits(t))
            bbox_reg.append(self.bbox_pred(t))
        return logits, bbox_reg


def permute_and_flatten(layer: ember.Tensor, N: int, A: int, C: int, H: int, W: int):
    """``(N, A*C, H, W)`` to ``(N, H*W*A, C)``."""
    return layer.reshape(N, -1, C, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, C)


def concat_box_prediction_layers(box_cls, box_regression):
    """The per-level ``(N, A*C, H, W)`` logits and ``(N, A*4, H, W)`` deltas as one
    ``(N*sum(HWA), C)`` and one ``(N*sum(HWA), 4)`` tensor, anchors in AnchorGenerator's
    order."""
    cls_flat, reg_flat = [], []
    for cls_level, reg_level in zip(box_cls, box_regression):
        N, AxC, H, W = cls_level.shape
        A = reg_level.shape[1] // 4
        C = AxC // A
        cls_flat.append(permute_and_flatten(cls_level, N, A, C, H, W))
        reg_flat.append(permute_and_flatten(reg_level, N, A, 4, H, W))
    return ember.cat(cls_flat, dim=1).flatten(0, -2), ember.cat(reg_flat, dim=1).reshape(-1, 4)


class RegionProposalNetwork(nn.Module):
    """Proposes object boxes: scores and refines the anchors, keeps the ``pre_nms_top_n`` best
    per level, clips, drops tiny and low-scoring boxes, runs NMS per level and keeps
    ``post_nms_top_n``. In training it also returns the objectness and box losses.

    Args:
        anchor_generator (AnchorGenerator), head (nn.Module): e.g. RPNHead.
        fg_iou_thresh (float), bg_iou_thresh (float): IoU of an anchor with a ground-truth box
            above which it is positive, below which it is negative.
        batch_size_per_image (int), positive_fraction (float): the sampled anchors.
        pre_nms_top_n (dict), post_nms_top_n (dict): ``{"training": n, "testing": n}``.
        nms_thresh (float), score_thresh (float): Default: 0.0.
    """

    __annotations__ = {"box_coder": det_utils.BoxCoder, "proposal_matcher": det_utils.Matcher,
                       "fg_bg_sampler": det_utils.BalancedPositiveNegativeSampler}

    def __init__(self, anchor_generator: AnchorGenerator, head: nn.Module, fg_iou_thresh: float,
                 bg_iou_thresh: float, batch_size_per_image: int, positive_fraction: float,
                 pre_nms_top_n: dict, post_nms_top_n: dict, nms_thresh: float,
                 score_thresh: float = 0.0) -> None:
        super().__init__()
        self.anchor_generator = anchor_generator
        self.head = head
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self.box_similarity = box_ops.box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh,
                                                  allow_low_quality_matches=True)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image,
                                                                       positive_fraction)
        self._pre_nms_top_n = pre_nms_top_n
        self._post_nms_top_n = post_nms_top_n
        self.nms_thresh = nms_thresh
        self.score_thresh = score_thresh
        self.min_size = 1e-3

    def pre_nms_top_n(self) -> int:
        return self._pre_nms_top_n["training" if self.training else "testing"]

    def post_nms_top_n(self) -> int:
        return self._post_nms_top_n["training" if self.training else "testing"]

    def assign_targets_to_anchors(self, anchors, targets):
        """Per image: each anchor's label (1 object, 0 background, -1 ignored) and the box
        of the ground truth it matches."""
        labels, matched_gt_boxes = [], []
        for anchors_per_image, target in zip(anchors, targets):
            gt_boxes = target["boxes"]
            if gt_boxes.numel() == 0:
                device = anchors_per_image.device
                matched = ember.zeros(tuple(anchors_per_image.shape), dtype=ember.float32,
                                      device=device)
                labels_per_image = ember.zeros(anchors_per_image.shape[0], dtype=ember.float32,
                                               device=device)
            else:
                quality = self.box_similarity(gt_boxes, anchors_per_image)
                matched_idxs = self.proposal_matcher(quality)
                matched = gt_boxes[matched_idxs.clamp(min=0)]
                labels_per_image = (matched_idxs >= 0).to(dtype=ember.float32)
                labels_per_image[matched_idxs == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0.0
                labels_per_image[matched_idxs == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1.0
            labels.append(labels_per_image)
            matched_gt_boxes.append(matched)
        return labels, matched_gt_boxes

    def _get_top_n_idx(self, objectness: ember.Tensor, num_anchors_per_level):
        result, offset = [], 0
        for ob in objectness.split(num_anchors_per_level, 1):
            num_anchors = ob.shape[1]
            k = det_utils._topk_min(ob, self.pre_nms_top_n(), 1)
            _, top_n_idx = ob.topk(k, dim=1)
            result.append(top_n_idx + offset)
            offset += num_anchors
        return ember.cat(result, dim=1)

    def filter_proposals(self, proposals, objectness, image_shapes, num_anchors_per_level):
        num_images = proposals.shape[0]
        device = proposals.device
        objectness = objectness.detach().reshape(num_images, -1)
        levels = ember.cat([ember.full((n,), idx, dtype=ember.int64, device=device)
                            for idx, n in enumerate(num_anchors_per_level)], 0)
        levels = levels.reshape(1, -1).expand_as(objectness)
        top_n_idx = self._get_top_n_idx(objectness, num_anchors_per_level)
        batch_idx = ember.arange(num_images, device=device)[:, None]
        objectness = objectness[batch_idx, top_n_idx]
        levels = levels[batch_idx, top_n_idx]
        proposals = proposals[batch_idx, top_n_idx]
        objectness_prob = ember.sigmoid(objectness)
        final_boxes, final_scores = [], []
        for boxes, scores, lvl, img_shape in zip(proposals, objectness_prob, levels,
                                                 image_shapes):
            boxes = box_ops.clip_boxes_to_image(boxes, img_shape)
            keep = box_ops.remove_small_boxes(boxes, self.min_size)
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = ember.where(scores >= self.score_thresh)[0]
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = box_ops.batched_nms(boxes, scores, lvl, self.nms_thresh)
            keep = keep[: self.post_nms_top_n()]
            final_boxes.append(boxes[keep])
            final_scores.append(scores[keep])
        return final_boxes, final_scores

    def compute_loss(self, objectness, pred_bbox_deltas, labels, regression_targets):
        """The objectness (binary cross-entropy) and box (smooth L1, beta 1/9) losses over the
        sampled anchors."""
        pos, neg = self.fg_bg_sampler(labels)
        pos = ember.where(ember.cat(pos, dim=0))[0]
        neg = ember.where(ember.cat(neg, dim=0))[0]
        sampled = ember.cat([pos, neg], dim=0)
        objectness = objectness.flatten()
        labels = ember.cat(labels, dim=0)
        regression_targets = ember.cat(regression_targets, dim=0)
        box_loss = F.smooth_l1_loss(pred_bbox_deltas[pos], regression_targets[pos],
                                    beta=1 / 9, reduction="sum") / sampled.numel()
        objectness_loss = F.binary_cross_entropy_with_logits(objectness[sampled],
                                                             labels[sampled])
        return objectness_loss, box_loss

    def forward(self, images: ImageList, features, targets=None):
        """Returns the proposals (a list of ``(K, 4)`` boxes per image) and the losses (empty
        in eval mode)."""
        features = list(features.values())
        objectness, pred_bbox_deltas = self.head(features)
        anchors = self.anchor_generator(images, features)
        num_images = len(anchors)
        num_anchors_per_level = [o.shape[1] * o.shape[2] * o.shape[3] for o in objectness]
        objectness, pred_bbox_deltas = concat_box_prediction_layers(objectness,
                                                                    pred_bbox_deltas)
        proposals = self.box_coder.decode(pred_bbox_deltas.detach(), anchors)
        proposals = proposals.reshape(num_images, -1, 4)
        boxes, _ = self.filter_proposals(proposals, objectness, images.image_sizes,
                                         num_anchors_per_level)
        losses = {}
        if self.training:
            if targets is None:
                raise ValueError("targets should not be None")
            labels, matched_gt_boxes = self.assign_targets_to_anchors(anchors, targets)
            regression_targets = self.box_coder.encode(matched_gt_boxes, anchors)
            loss_objectness, loss_rpn_box_reg = self.compute_loss(
                objectness, pred_bbox_deltas, labels, regression_targets)
            losses = {"loss_objectness": loss_objectness, "loss_rpn_box_reg": loss_rpn_box_reg}
        return boxes, losses
