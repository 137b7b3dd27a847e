"""What the detection models share: box encodings, the IoU matchers, the sampler of positive
and negative examples, and small helpers of the builders."""

from __future__ import annotations

import math
from collections import OrderedDict

import ember
from ember import nn
from ember.nn import functional as F
from embervision.ops import complete_box_iou_loss, distance_box_iou_loss, generalized_box_iou_loss
from embervision.ops.misc import FrozenBatchNorm2d

__all__ = ["BalancedPositiveNegativeSampler", "BoxCoder", "BoxLinearCoder", "Matcher",
           "SSDMatcher", "encode_boxes", "overwrite_eps", "retrieve_out_channels"]


def _assert(condition, message: str) -> None:
    # torchvision checks these with torch._assert, which raises AssertionError.
    if not condition:
        raise AssertionError(message)


class BalancedPositiveNegativeSampler:
    """Samples ``batch_size_per_image`` examples per image, at most ``positive_fraction`` of
    them positive.

    Args:
        batch_size_per_image (int): examples per image.
        positive_fraction (float): the largest share of positives.

    ``__call__(matched_idxs)`` takes per-image labels (``-1`` ignore, ``0`` negative, ``>= 1``
    positive) and returns two lists of uint8 masks: the sampled positives and negatives.
    """

    def __init__(self, batch_size_per_image: int, positive_fraction: float) -> None:
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, matched_idxs):
        pos_idx, neg_idx = [], []
        for matched in matched_idxs:
            positive = ember.where(matched >= 1)[0]
            negative = ember.where(matched == 0)[0]
            num_pos = min(positive.numel(), int(self.batch_size_per_image * self.positive_fraction))
            num_neg = min(negative.numel(), self.batch_size_per_image - num_pos)
            pos = positive[ember.randperm(positive.numel(), device=positive.device)[:num_pos]]
            neg = negative[ember.randperm(negative.numel(), device=negative.device)[:num_neg]]
            pos_mask = ember.zeros_like(matched, dtype=ember.uint8)
            neg_mask = ember.zeros_like(matched, dtype=ember.uint8)
            pos_mask[pos] = 1
            neg_mask[neg] = 1
            pos_idx.append(pos_mask)
            neg_idx.append(neg_mask)
        return pos_idx, neg_idx


def encode_boxes(reference_boxes: ember.Tensor, proposals: ember.Tensor,
                 weights: ember.Tensor) -> ember.Tensor:
    """The ``(dx, dy, dw, dh)`` regression targets of ``reference_boxes`` relative to
    ``proposals`` (both ``(N, 4)`` xyxy), scaled by ``weights``."""
    wx, wy, ww, wh = (weights[i] for i in range(4))
    ex_w = proposals[:, 2:3] - proposals[:, 0:1]
    ex_h = proposals[:, 3:4] - proposals[:, 1:2]
    ex_x = proposals[:, 0:1] + 0.5 * ex_w
    ex_y = proposals[:, 1:2] + 0.5 * ex_h
    gt_w = reference_boxes[:, 2:3] - reference_boxes[:, 0:1]
    gt_h = reference_boxes[:, 3:4] - reference_boxes[:, 1:2]
    gt_x = reference_boxes[:, 0:1] + 0.5 * gt_w
    gt_y = reference_boxes[:, 1:2] + 0.5 * gt_h
    return ember.cat([wx * (gt_x - ex_x) / ex_w, wy * (gt_y - ex_y) / ex_h,
                      ww * ember.log(gt_w / ex_w), wh * ember.log(gt_h / ex_h)], dim=1)


class BoxCoder:
    """Encodes boxes as ``(dx, dy, dw, dh)`` offsets from reference boxes and decodes them.

    Args:
        weights (4 floats): the scales of the four offsets.
        bbox_xform_clip (float): the largest ``dw``/``dh`` decoded. Default: ``log(1000/16)``.
    """

    def __init__(self, weights, bbox_xform_clip: float = math.log(1000.0 / 16)) -> None:
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode(self, reference_boxes, proposals):
        """Per-image targets of ``reference_boxes`` against ``proposals`` (lists)."""
        boxes_per_image = [len(b) for b in reference_boxes]
        targets = self.encode_single(ember.cat(list(reference_boxes), dim=0),
                                     ember.cat(list(proposals), dim=0))
        return targets.split(boxes_per_image, 0)

    def encode_single(self, reference_boxes: ember.Tensor, proposals: ember.Tensor):
        weights = ember.as_tensor(self.weights, dtype=reference_boxes.dtype,
                                  device=reference_boxes.device)
        return encode_boxes(reference_boxes, proposals, weights)

    def decode(self, rel_codes: ember.Tensor, boxes) -> ember.Tensor:
        """Decodes ``rel_codes`` against the boxes of all images (a list): ``(N, K, 4)``."""
        if not isinstance(boxes, (list, tuple)):
            raise TypeError("boxes should be a list or a tuple of tensors")
        if not isinstance(rel_codes, ember.Tensor):
            raise TypeError("rel_codes should be a Tensor")
        concat_boxes = ember.cat(list(boxes), dim=0)
        box_sum = sum(int(b.shape[0]) for b in boxes)
        if box_sum > 0:
            rel_codes = rel_codes.reshape(box_sum, -1)
        pred_boxes = self.decode_single(rel_codes, concat_boxes)
        if box_sum > 0:
            pred_boxes = pred_boxes.reshape(box_sum, -1, 4)
        return pred_boxes

    def decode_single(self, rel_codes: ember.Tensor, boxes: ember.Tensor) -> ember.Tensor:
        """Boxes from ``rel_codes`` (``(N, 4k)``) against ``boxes`` (``(N, 4)``)."""
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = ember.clamp(rel_codes[:, 2::4] / ww, max=self.bbox_xform_clip)
        dh = ember.clamp(rel_codes[:, 3::4] / wh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        half_w = 0.5 * (ember.exp(dw) * widths[:, None])
        half_h = 0.5 * (ember.exp(dh) * heights[:, None])
        pred = ember.stack([pred_ctr_x - half_w, pred_ctr_y - half_h, pred_ctr_x + half_w,
                            pred_ctr_y + half_h], dim=2)
        return pred.flatten(1)


class BoxLinearCoder:
    """Encodes boxes as the distances ``(l, t, r, b)`` from the centres of reference boxes to
    their sides (FCOS), divided by the reference sizes with ``normalize_by_size``."""

    def __init__(self, normalize_by_size: bool = True) -> None:
        self.normalize_by_size = normalize_by_size

    @staticmethod
    def _centres_and_sizes(boxes):
        ctr_x = 0.5 * (boxes[..., 0] + boxes[..., 2])
        ctr_y = 0.5 * (boxes[..., 1] + boxes[..., 3])
        w = boxes[..., 2] - boxes[..., 0]
        h = boxes[..., 3] - boxes[..., 1]
        return ctr_x, ctr_y, ember.stack((w, h, w, h), dim=-1)

    def encode(self, reference_boxes: ember.Tensor, proposals: ember.Tensor) -> ember.Tensor:
        ctr_x, ctr_y, size = self._centres_and_sizes(reference_boxes)
        targets = ember.stack((ctr_x - proposals[..., 0], ctr_y - proposals[..., 1],
                               proposals[..., 2] - ctr_x, proposals[..., 3] - ctr_y), dim=-1)
        return targets / size if self.normalize_by_size else targets

    def decode(self, rel_codes: ember.Tensor, boxes: ember.Tensor) -> ember.Tensor:
        boxes = boxes.to(rel_codes.dtype)
        ctr_x, ctr_y, size = self._centres_and_sizes(boxes)
        if self.normalize_by_size:
            rel_codes = rel_codes * size
        return ember.stack((ctr_x - rel_codes[..., 0], ctr_y - rel_codes[..., 1],
                            ctr_x + rel_codes[..., 2], ctr_y + rel_codes[..., 3]), dim=-1)


class Matcher:
    """Matches each prediction (column of an ``(M ground truth, N predictions)`` quality
    matrix) to its best ground truth: its index where the quality is ``>= high_threshold``,
    ``BELOW_LOW_THRESHOLD`` (-1) below ``low_threshold`` and ``BETWEEN_THRESHOLDS`` (-2) in
    between.

    Args:
        high_threshold (float), low_threshold (float).
        allow_low_quality_matches (bool): also match each ground truth to the predictions it
            overlaps most, whatever the thresholds. Default: False.
    """

    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    __annotations__ = {"BELOW_LOW_THRESHOLD": int, "BETWEEN_THRESHOLDS": int}

    def __init__(self, high_threshold: float, low_threshold: float,
                 allow_low_quality_matches: bool = False) -> None:
        if low_threshold > high_threshold:
            raise ValueError("low_threshold should be <= high_threshold")
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix: ember.Tensor) -> ember.Tensor:
        if match_quality_matrix.numel() == 0:
            if match_quality_matrix.shape[0] == 0:
                raise ValueError("No ground-truth boxes available for one of the images "
                                 "during training")
            raise ValueError("No proposal boxes available for one of the images during "
                             "training")
        matched_vals, matches = match_quality_matrix.max(dim=0)
        all_matches = matches.clone() if self.allow_low_quality_matches else None
        below = matched_vals < self.low_threshold
        between = (matched_vals >= self.low_threshold) & (matched_vals < self.high_threshold)
        matches[below] = self.BELOW_LOW_THRESHOLD
        matches[between] = self.BETWEEN_THRESHOLDS
        if all_matches is not None:
            self.set_low_quality_matches_(matches, all_matches, match_quality_matrix)
        return matches

    def set_low_quality_matches_(self, matches, all_matches, match_quality_matrix) -> None:
        """Gives back to each ground truth the predictions it overlaps most (ties included)."""
        highest, _ = match_quality_matrix.max(dim=1)
        pred_inds = ember.where(match_quality_matrix == highest[:, None])[1]
        matches[pred_inds] = all_matches[pred_inds]


class SSDMatcher(Matcher):
    """The Matcher with one threshold that also gives each ground truth its best default
    box (SSD)."""

    def __init__(self, threshold: float) -> None:
        super().__init__(threshold, threshold, allow_low_quality_matches=False)

    def __call__(self, match_quality_matrix: ember.Tensor) -> ember.Tensor:
        matches = super().__call__(match_quality_matrix)
        _, best_pred = match_quality_matrix.max(dim=1)
        matches[best_pred] = ember.arange(best_pred.shape[0], dtype=ember.int64,
                                          device=best_pred.device)
        return matches


def rename_v1_keys(state_dict, local_metadata, renames) -> None:
    """Renames the keys of a checkpoint saved before a module's version 2 (``renames``:
    (old, new) pairs of full keys)."""
    version = local_metadata.get("version", None) if local_metadata else None
    if version is None or version < 2:
        for old, new in renames:
            if old in state_dict:
                state_dict[new] = state_dict.pop(old)


def overwrite_eps(model: nn.Module, eps: float) -> None:
    """Sets ``eps`` of every FrozenBatchNorm2d in ``model`` (the first COCO weights were
    trained with 0)."""
    for module in model.modules():
        if isinstance(module, FrozenBatchNorm2d):
            module.eps = eps


def retrieve_out_channels(model: nn.Module, size) -> list[int]:
    """The channels of each output of ``model``, found by running it on a zero image of
    ``size = (h, w)``."""
    was_training = model.training
    model.eval()
    with ember.no_grad():
        device = next(model.parameters()).device
        out = model(ember.zeros((1, 3, size[1], size[0]), device=device))
        if isinstance(out, ember.Tensor):
            out = OrderedDict([("0", out)])
        channels = [x.shape[1] for x in out.values()]
    if was_training:
        model.train()
    return channels


def _topk_min(input: ember.Tensor, orig_kval: int, axis: int) -> int:
    return min(orig_kval, input.shape[axis])


def _box_loss(type: str, box_coder: BoxCoder, anchors_per_image, matched_gt_boxes_per_image,
              bbox_regression_per_image, cnf: dict | None = None) -> ember.Tensor:
    if type not in ("l1", "smooth_l1", "ciou", "diou", "giou"):
        raise ValueError(f"Unsupported loss: {type}")
    if type == "l1":
        target = box_coder.encode_single(matched_gt_boxes_per_image, anchors_per_image)
        return F.l1_loss(bbox_regression_per_image, target, reduction="sum")
    if type == "smooth_l1":
        target = box_coder.encode_single(matched_gt_boxes_per_image, anchors_per_image)
        beta = cnf["beta"] if cnf is not None and "beta" in cnf else 1.0
        return F.smooth_l1_loss(bbox_regression_per_image, target, reduction="sum", beta=beta)
    decoded = box_coder.decode_single(bbox_regression_per_image, anchors_per_image)
    eps = cnf["eps"] if cnf is not None and "eps" in cnf else 1e-7
    loss = {"ciou": complete_box_iou_loss, "diou": distance_box_iou_loss,
            "giou": generalized_box_iou_loss}[type]
    return loss(decoded, matched_gt_boxes_per_image, reduction="sum", eps=eps)


_RECIPES = "https://github.com/pytorch/vision/tree/main/references/detection"


def detection_weights(stem: str, num_params: int, recipe: str, metrics: dict, ops: float,
                      file_size: float, docs: str, categories=None, **meta):
    """COCO detection weights at download.pytorch.org/models/<stem>.pth with the
    ObjectDetection preset; ``metrics`` are the COCO-val2017 ones (``{"box_map": 37.0}``)."""
    from embervision.models._api import Weights
    from embervision.models._meta import COCO_CATEGORIES
    from embervision.transforms._presets import ObjectDetection

    return Weights(
        url=f"https://download.pytorch.org/models/{stem}.pth", transforms=ObjectDetection,
        meta={"categories": COCO_CATEGORIES if categories is None else categories,
              "min_size": (1, 1), **meta, "num_params": num_params, "recipe": recipe,
              "_metrics": {"COCO-val2017": metrics}, "_ops": ops, "_file_size": file_size,
              "_docs": docs})
