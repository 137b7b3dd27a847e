"""GeneralizedRCNN: transform, backbone, region proposals and RoI heads in one model."""

from __future__ import annotations

from collections import OrderedDict

import ember
from ember import nn
from embervision.models.detection._utils import _assert

__all__ = ["GeneralizedRCNN"]


def check_training_targets(targets) -> None:
    """Training needs targets whose ``boxes`` are ``(N, 4)`` tensors."""
    _assert(targets is not None, "targets should not be none when in training mode")
    for target in targets:
        boxes = target["boxes"]
        _assert(isinstance(boxes, ember.Tensor),
                f"Expected target boxes to be of type Tensor, got {type(boxes)}.")
        _assert(boxes.dim() == 2 and boxes.shape[-1] == 4,
                f"Expected target boxes to be a tensor of shape [N, 4], got {boxes.shape}.")


def original_sizes(images):
    sizes = []
    for img in images:
        val = img.shape[-2:]
        _assert(len(val) == 2, "expecting the last two dimensions of the Tensor to be H and W "
                f"instead got {img.shape[-2:]}")
        sizes.append((int(val[0]), int(val[1])))
    return sizes


def check_degenerate_boxes(targets) -> None:
    """Every (transformed) target box must have a positive width and height."""
    for target_idx, target in enumerate(targets):
        boxes = target["boxes"]
        degenerate = boxes[:, 2:] <= boxes[:, :2]
        if bool(degenerate.any()):
            bb_idx = int(ember.where(degenerate.any(dim=1))[0][0])
            _assert(False, "All bounding boxes should have positive height and width. Found "
                    f"invalid box {boxes[bb_idx].tolist()} for target at index {target_idx}.")


def prepare_inputs(model, images, targets):
    """The checks and the transform that start every detector's forward: returns the
    ImageList, the transformed targets and the original image sizes."""
    if model.training:
        check_training_targets(targets)
    original_image_sizes = original_sizes(images)
    images, targets = model.transform(images, targets)
    if targets is not None:
        check_degenerate_boxes(targets)
    return images, targets, original_image_sizes


def match_anchors(anchors, targets, match):
    """Per image, ``match(anchors, gt_boxes)``'s ground-truth index of each anchor, or all -1
    for an image without boxes."""
    matched_idxs = []
    for anchors_per_image, target in zip(anchors, targets):
        if target["boxes"].numel() == 0:
            matched_idxs.append(ember.full((anchors_per_image.shape[0],), -1, dtype=ember.int64,
                                           device=anchors_per_image.device))
        else:
            matched_idxs.append(match(anchors_per_image, target["boxes"]))
    return matched_idxs


class GeneralizedRCNN(nn.Module):
    """The R-CNN skeleton: ``transform`` batches the images, ``backbone`` computes features,
    ``rpn`` proposes boxes and ``roi_heads`` turns them into detections.

    In training, ``forward(images, targets)`` returns the dict of losses; in eval mode,
    ``forward(images)`` returns one dict per image with ``boxes`` (xyxy, in the original image
    coordinates), ``labels`` and ``scores`` (and ``masks``/``keypoints`` with those heads).

    Args:
        backbone (nn.Module), rpn (nn.Module), roi_heads (nn.Module),
        transform (nn.Module): e.g. GeneralizedRCNNTransform.
    """

    def __init__(self, backbone: nn.Module, rpn: nn.Module, roi_heads: nn.Module,
                 transform: nn.Module) -> None:
        super().__init__()
        self.transform = transform
        self.backbone = backbone
        self.rpn = rpn
        self.roi_heads = roi_heads

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def forward(self, images, targets=None):
        images, targets, original_image_sizes = prepare_inputs(self, images, targets)
        features = self.backbone(images.tensors)
        if isinstance(features, ember.Tensor):
            features = OrderedDict([("0", features)])
        proposals, proposal_losses = self.rpn(images, features, targets)
        detections, detector_losses = self.roi_heads(features, proposals, images.image_sizes,
                                                     targets)
        detections = self.transform.postprocess(detections, images.image_sizes,
                                                original_image_sizes)
        losses = {}
        losses.update(detector_losses)
        losses.update(proposal_losses)
        return self.eager_outputs(losses, detections)


def features_list(features):
    """The backbone's output as a list of maps (a lone tensor is one level)."""
    if isinstance(features, ember.Tensor):
        return [features]
    return list(features.values())
