"""RoIHeads: the second stage of the R-CNN models (box classification and regression, and the
mask and keypoint branches), with their losses and post-processing."""

from __future__ import annotations

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models.detection import _utils as det_utils
from embervision.ops import boxes as box_ops
from embervision.ops.roi_align import roi_align

__all__ = ["RoIHeads", "fastrcnn_loss", "keypointrcnn_loss", "maskrcnn_loss",
           "paste_masks_in_image"]


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    """Cross-entropy over the classes and smooth L1 (beta 1/9) on the deltas of each positive
    proposal's own class, over the number of sampled proposals."""
    labels = ember.cat(labels, dim=0)
    regression_targets = ember.cat(regression_targets, dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    pos = ember.where(labels > 0)[0]
    labels_pos = labels[pos]
    N = class_logits.shape[0]
    box_regression = box_regression.reshape(N, box_regression.shape[-1] // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[pos, labels_pos], regression_targets[pos],
                                beta=1 / 9, reduction="sum")
    return classification_loss, box_loss / labels.numel()


def maskrcnn_inference(x, labels):
    """The mask probabilities of each detection's class, split per image:
    ``(K, 1, M, M)`` each."""
    mask_prob = x.sigmoid()
    boxes_per_image = [label.shape[0] for label in labels]
    labels = ember.cat(labels)
    index = ember.arange(x.shape[0], device=labels.device)
    return mask_prob[index, labels][:, None].split(boxes_per_image, dim=0)


def project_masks_on_boxes(gt_masks, boxes, matched_idxs, M: int):
    """The ground-truth masks cropped to ``boxes`` and resized to ``(M, M)`` (RoIAlign)."""
    matched_idxs = matched_idxs.to(boxes.dtype)
    rois = ember.cat([matched_idxs[:, None], boxes], dim=1)
    gt_masks = gt_masks[:, None].to(rois.dtype)
    return roi_align(gt_masks, rois, (M, M), 1.0)[:, 0]


def maskrcnn_loss(mask_logits, proposals, gt_masks, gt_labels, mask_matched_idxs):
    """Binary cross-entropy of each positive proposal's mask of its class against the
    matched ground-truth mask projected on the proposal."""
    size = mask_logits.shape[-1]
    labels = [gt_label[idxs] for gt_label, idxs in zip(gt_labels, mask_matched_idxs)]
    targets = [project_masks_on_boxes(m, p, i, size)
               for m, p, i in zip(gt_masks, proposals, mask_matched_idxs)]
    labels = ember.cat(labels, dim=0)
    targets = ember.cat(targets, dim=0)
    if targets.numel() == 0:
        return mask_logits.sum() * 0
    index = ember.arange(labels.shape[0], device=labels.device)
    return F.binary_cross_entropy_with_logits(mask_logits[index, labels], targets)


def keypoints_to_heatmap(keypoints, rois, heatmap_size: int):
    """Each keypoint's cell in a ``heatmap_size``-square grid over its roi (as a linear
    index) and whether it is visible and inside."""
    offset_x, offset_y = rois[:, 0][:, None], rois[:, 1][:, None]
    scale_x = (heatmap_size / (rois[:, 2] - rois[:, 0]))[:, None]
    scale_y = (heatmap_size / (rois[:, 3] - rois[:, 1]))[:, None]
    x, y = keypoints[..., 0], keypoints[..., 1]
    x_boundary = x == rois[:, 2][:, None]
    y_boundary = y == rois[:, 3][:, None]
    x = ((x - offset_x) * scale_x).floor().long()
    y = ((y - offset_y) * scale_y).floor().long()
    x = ember.where(x_boundary, ember.full_like(x, heatmap_size - 1), x)
    y = ember.where(y_boundary, ember.full_like(y, heatmap_size - 1), y)
    valid_loc = (x >= 0) & (y >= 0) & (x < heatmap_size) & (y < heatmap_size)
    valid = (valid_loc & (keypoints[..., 2] > 0)).long()
    return (y * heatmap_size + x) * valid, valid


def heatmaps_to_keypoints(maps, rois):
    """Keypoints ``(K, num_keypoints, 3)`` and their scores from heatmaps: each heatmap is
    resized (bicubic) to its roi's size and its maximum taken."""
    offset_x, offset_y = rois[:, 0], rois[:, 1]
    widths = (rois[:, 2] - rois[:, 0]).clamp(min=1)
    heights = (rois[:, 3] - rois[:, 1]).clamp(min=1)
    widths_ceil, heights_ceil = widths.ceil(), heights.ceil()
    num_keypoints = maps.shape[1]
    xy_preds, end_scores = [], []
    for i in range(len(rois)):
        roi_w, roi_h = int(widths_ceil[i].item()), int(heights_ceil[i].item())
        width_correction = widths[i] / roi_w
        height_correction = heights[i] / roi_h
        roi_map = F.interpolate(maps[i][:, None], size=(roi_h, roi_w), mode="bicubic",
                                align_corners=False)[:, 0]
        w = roi_map.shape[2]
        pos = roi_map.reshape(num_keypoints, -1).argmax(dim=1)
        x_int = pos % w
        y_int = ember.div(pos - x_int, w, rounding_mode="floor")
        x = (x_int.float() + 0.5) * width_correction
        y = (y_int.float() + 0.5) * height_correction
        xy_preds.append(ember.stack([x + offset_x[i], y + offset_y[i], ember.ones_like(x)]))
        end_scores.append(roi_map[ember.arange(num_keypoints, device=roi_map.device),
                                  y_int, x_int])
    if not xy_preds:
        return (ember.zeros(0, num_keypoints, 3, device=maps.device),
                ember.zeros(0, num_keypoints, device=maps.device))
    return ember.stack(xy_preds).permute(0, 2, 1), ember.stack(end_scores)


def keypointrcnn_loss(keypoint_logits, proposals, gt_keypoints, keypoint_matched_idxs):
    """Cross-entropy over the heatmap cells of each visible keypoint of each positive
    proposal."""
    N, K, H, W = keypoint_logits.shape
    if H != W:
        raise ValueError("keypoint_logits height and width (last two elements of shape) should "
                         f"be equal. Instead got H = {H} and W = {W}")
    heatmaps, valid = [], []
    for props, gt_kp, midx in zip(proposals, gt_keypoints, keypoint_matched_idxs):
        h, v = keypoints_to_heatmap(gt_kp[midx], props, H)
        heatmaps.append(h.reshape(-1))
        valid.append(v.reshape(-1))
    targets = ember.cat(heatmaps, dim=0)
    valid = ember.where(ember.cat(valid, dim=0) > 0)[0]
    if targets.numel() == 0 or len(valid) == 0:
        return keypoint_logits.sum() * 0
    keypoint_logits = keypoint_logits.reshape(N * K, H * W)
    return F.cross_entropy(keypoint_logits[valid], targets[valid])


def keypointrcnn_inference(x, boxes):
    kp_probs, kp_scores = [], []
    for xx, bb in zip(x.split([b.shape[0] for b in boxes], dim=0), boxes):
        prob, scores = heatmaps_to_keypoints(xx, bb)
        kp_probs.append(prob)
        kp_scores.append(scores)
    return kp_probs, kp_scores


def expand_boxes(boxes, scale: float):
    """Boxes scaled by ``scale`` about their centres."""
    w_half = (boxes[:, 2] - boxes[:, 0]) * 0.5 * scale
    h_half = (boxes[:, 3] - boxes[:, 1]) * 0.5 * scale
    x_c = (boxes[:, 2] + boxes[:, 0]) * 0.5
    y_c = (boxes[:, 3] + boxes[:, 1]) * 0.5
    return ember.stack([x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half], dim=1)


def expand_masks(mask, padding: int):
    M = mask.shape[-1]
    return F.pad(mask, (padding,) * 4), float(M + 2 * padding) / M


def paste_mask_in_image(mask, box, im_h: int, im_w: int):
    """One ``(M, M)`` mask resized (bilinear) to its integer box and placed into an
    ``(im_h, im_w)`` image of zeros."""
    x0b, y0b, x1b, y1b = (int(v) for v in box.tolist())
    w, h = max(x1b - x0b + 1, 1), max(y1b - y0b + 1, 1)
    mask = F.interpolate(mask.expand((1, 1, -1, -1)), size=(h, w), mode="bilinear",
                         align_corners=False)[0][0]
    x_0, x_1 = max(x0b, 0), min(x1b + 1, im_w)
    y_0, y_1 = max(y0b, 0), min(y1b + 1, im_h)
    im_mask = ember.zeros((im_h, im_w), dtype=mask.dtype, device=mask.device)
    if x_1 > x_0 and y_1 > y_0:
        im_mask[y_0:y_1, x_0:x_1] = mask[y_0 - y0b:y_1 - y0b, x_0 - x0b:x_1 - x0b]
    return im_mask


def paste_masks_in_image(masks, boxes, img_shape, padding: int = 1):
    """``(K, 1, M, M)`` mask probabilities pasted into ``(K, 1, H, W)`` images at ``boxes``."""
    masks, scale = expand_masks(masks, padding=padding)
    boxes = expand_boxes(boxes, scale).to(dtype=ember.int64)
    im_h, im_w = int(img_shape[0]), int(img_shape[1])
    res = [paste_mask_in_image(m[0], b, im_h, im_w) for m, b in zip(masks, boxes)]
    if res:
        return ember.stack(res, dim=0)[:, None]
    return masks.new_empty((0, 1, im_h, im_w))


class RoIHeads(nn.Module):
    """Pools each proposal's features, classifies it and refines its box (and predicts its
    mask and keypoints when those branches are given).

    Args:
        box_roi_pool (MultiScaleRoIAlign), box_head (nn.Module), box_predictor (nn.Module).
        fg_iou_thresh (float), bg_iou_thresh (float): IoU thresholds of the proposals.
        batch_size_per_image (int), positive_fraction (float): the sampled proposals.
        bbox_reg_weights (4 floats, optional): Default: ``(10, 10, 5, 5)``.
        score_thresh (float), nms_thresh (float), detections_per_img (int).
        mask_roi_pool, mask_head, mask_predictor (optional): the mask branch.
        keypoint_roi_pool, keypoint_head, keypoint_predictor (optional): the keypoint branch.
    """

    __annotations__ = {"box_coder": det_utils.BoxCoder, "proposal_matcher": det_utils.Matcher,
                       "fg_bg_sampler": det_utils.BalancedPositiveNegativeSampler}

    def __init__(self, box_roi_pool, box_head, box_predictor, fg_iou_thresh, bg_iou_thresh,
                 batch_size_per_image, positive_fraction, bbox_reg_weights, score_thresh,
                 nms_thresh, detections_per_img, mask_roi_pool=None, mask_head=None,
                 mask_predictor=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None) -> None:
        super().__init__()
        self.box_similarity = box_ops.box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh,
                                                  allow_low_quality_matches=False)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image,
                                                                       positive_fraction)
        if bbox_reg_weights is None:
            bbox_reg_weights = (10.0, 10.0, 5.0, 5.0)
        self.box_coder = det_utils.BoxCoder(bbox_reg_weights)
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.mask_roi_pool = mask_roi_pool
        self.mask_head = mask_head
        self.mask_predictor = mask_predictor
        self.keypoint_roi_pool = keypoint_roi_pool
        self.keypoint_head = keypoint_head
        self.keypoint_predictor = keypoint_predictor

    def has_mask(self) -> bool:
        return not (self.mask_roi_pool is None or self.mask_head is None
                    or self.mask_predictor is None)

    def has_keypoint(self) -> bool:
        return not (self.keypoint_roi_pool is None or self.keypoint_head is None
                    or self.keypoint_predictor is None)

    def assign_targets_to_proposals(self, proposals, gt_boxes, gt_labels):
        """Per image: the index of each proposal's ground truth (0 when none) and its label
        (0 background, -1 ignored)."""
        matched_idxs, labels = [], []
        for props, boxes, gt_lab in zip(proposals, gt_boxes, gt_labels):
            if boxes.numel() == 0:
                clamped = ember.zeros(props.shape[0], dtype=ember.int64, device=props.device)
                lab = ember.zeros(props.shape[0], dtype=ember.int64, device=props.device)
            else:
                matched = self.proposal_matcher(box_ops.box_iou(boxes, props))
                clamped = matched.clamp(min=0)
                lab = gt_lab[clamped].to(dtype=ember.int64)
                lab[matched == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0
                lab[matched == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1
            matched_idxs.append(clamped)
            labels.append(lab)
        return matched_idxs, labels

    def subsample(self, labels):
        pos, neg = self.fg_bg_sampler(labels)
        return [ember.where((p | n) > 0)[0] for p, n in zip(pos, neg)]

    def add_gt_proposals(self, proposals, gt_boxes):
        return [ember.cat((p, g)) for p, g in zip(proposals, gt_boxes)]

    def check_targets(self, targets) -> None:
        if targets is None:
            raise ValueError("targets should not be None")
        if not all("boxes" in t for t in targets):
            raise ValueError("Every element of targets should have a boxes key")
        if not all("labels" in t for t in targets):
            raise ValueError("Every element of targets should have a labels key")
        if self.has_mask() and not all("masks" in t for t in targets):
            raise ValueError("Every element of targets should have a masks key")

    def select_training_samples(self, proposals, targets):
        """The sampled proposals (ground truths added) with their matches, labels and
        regression targets."""
        self.check_targets(targets)
        dtype, device = proposals[0].dtype, proposals[0].device
        gt_boxes = [t["boxes"].to(dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]
        proposals = self.add_gt_proposals(proposals, gt_boxes)
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        sampled_inds = self.subsample(labels)
        matched_gt_boxes = []
        for i, inds in enumerate(sampled_inds):
            proposals[i] = proposals[i][inds]
            labels[i] = labels[i][inds]
            matched_idxs[i] = matched_idxs[i][inds]
            boxes = gt_boxes[i]
            if boxes.numel() == 0:
                boxes = ember.zeros((1, 4), dtype=dtype, device=device)
            matched_gt_boxes.append(boxes[matched_idxs[i]])
        regression_targets = self.box_coder.encode(matched_gt_boxes, proposals)
        return proposals, matched_idxs, labels, regression_targets

    def postprocess_detections(self, class_logits, box_regression, proposals, image_shapes):
        """Per image: the boxes of every class but the background scoring above
        ``score_thresh``, after NMS per class, at most ``detections_per_img``."""
        device = class_logits.device
        num_classes = class_logits.shape[-1]
        boxes_per_image = [p.shape[0] for p in proposals]
        pred_boxes = self.box_coder.decode(box_regression, proposals)
        pred_scores = F.softmax(class_logits, -1)
        all_boxes, all_scores, all_labels = [], [], []
        for boxes, scores, image_shape in zip(pred_boxes.split(boxes_per_image, 0),
                                              pred_scores.split(boxes_per_image, 0),
                                              image_shapes):
            boxes = box_ops.clip_boxes_to_image(boxes, image_shape)
            labels = ember.arange(num_classes, device=device).reshape(1, -1).expand_as(scores)
            boxes = boxes[:, 1:].reshape(-1, 4)
            scores = scores[:, 1:].reshape(-1)
            labels = labels[:, 1:].reshape(-1)
            inds = ember.where(scores > self.score_thresh)[0]
            boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
            keep = box_ops.remove_small_boxes(boxes, min_size=1e-2)
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = box_ops.batched_nms(boxes, scores, labels, self.nms_thresh)
            keep = keep[: self.detections_per_img]
            all_boxes.append(boxes[keep])
            all_scores.append(scores[keep])
            all_labels.append(labels[keep])
        return all_boxes, all_scores, all_labels

    def _check_target_types(self, targets) -> None:
        for t in targets:
            if t["boxes"].dtype not in (ember.float32, ember.float64, ember.float16):
                raise TypeError(f"target boxes must of float type, instead got {t['boxes'].dtype}")
            if t["labels"].dtype != ember.int64:
                raise TypeError("target labels must of int64 type, instead got "
                                f"{t['labels'].dtype}")
            if self.has_keypoint() and t["keypoints"].dtype != ember.float32:
                raise TypeError("target keypoints must of float type, instead got "
                                f"{t['keypoints'].dtype}")

    @staticmethod
    def _positive_proposals(proposals, labels, matched_idxs):
        props, idxs = [], []
        for p, lab, m in zip(proposals, labels, matched_idxs):
            pos = ember.where(lab > 0)[0]
            props.append(p[pos])
            idxs.append(m[pos])
        return props, idxs

    def forward(self, features, proposals, image_shapes, targets=None):
        """Returns the detections (a list of dicts ``boxes``/``labels``/``scores``, and
        ``masks``/``keypoints``/``keypoints_scores``; empty in training) and the losses
        (empty in eval mode)."""
        if targets is not None:
            self._check_target_types(targets)
        if self.training:
            proposals, matched_idxs, labels, regression_targets = \
                self.select_training_samples(proposals, targets)
        else:
            labels = regression_targets = matched_idxs = None
        box_features = self.box_head(self.box_roi_pool(features, proposals, image_shapes))
        class_logits, box_regression = self.box_predictor(box_features)
        result, losses = [], {}
        if self.training:
            loss_classifier, loss_box_reg = fastrcnn_loss(class_logits, box_regression, labels,
                                                          regression_targets)
            losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        else:
            boxes, scores, labels = self.postprocess_detections(class_logits, box_regression,
                                                                proposals, image_shapes)
            result = [{"boxes": b, "labels": lab, "scores": s}
                      for b, s, lab in zip(boxes, scores, labels)]
        if self.has_mask():
            if self.training:
                mask_proposals, pos_matched = self._positive_proposals(proposals, labels,
                                                                       matched_idxs)
            else:
                mask_proposals = [p["boxes"] for p in result]
            mask_features = self.mask_head(self.mask_roi_pool(features, mask_proposals,
                                                              image_shapes))
            mask_logits = self.mask_predictor(mask_features)
            if self.training:
                losses["loss_mask"] = maskrcnn_loss(
                    mask_logits, mask_proposals, [t["masks"] for t in targets],
                    [t["labels"] for t in targets], pos_matched)
            else:
                probs = maskrcnn_inference(mask_logits, [r["labels"] for r in result])
                for prob, r in zip(probs, result):
                    r["masks"] = prob
        if self.has_keypoint():
            if self.training:
                kp_proposals, pos_matched = self._positive_proposals(proposals, labels,
                                                                     matched_idxs)
            else:
                kp_proposals = [p["boxes"] for p in result]
            kp_features = self.keypoint_head(self.keypoint_roi_pool(features, kp_proposals,
                                                                    image_shapes))
            kp_logits = self.keypoint_predictor(kp_features)
            if self.training:
                losses["loss_keypoint"] = keypointrcnn_loss(
                    kp_logits, kp_proposals, [t["keypoints"] for t in targets], pos_matched)
            else:
                kp_probs, kp_scores = keypointrcnn_inference(kp_logits, kp_proposals)
                for prob, sc, r in zip(kp_probs, kp_scores, result):
                    r["keypoints"] = prob
                    r["keypoints_scores"] = sc
        return result, losses
