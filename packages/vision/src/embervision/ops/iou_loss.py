"""Box regression losses on paired boxes: GIoU, DIoU and CIoU losses."""

from __future__ import annotations

import math

import ember

__all__ = ["complete_box_iou_loss", "distance_box_iou_loss", "generalized_box_iou_loss"]


def _reduce(loss: ember.Tensor, reduction: str) -> ember.Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")


def _pairs(boxes1, boxes2):
    if not boxes1.is_floating_point():
        boxes1 = boxes1.float()
    if not boxes2.is_floating_point():
        boxes2 = boxes2.float()
    return boxes1.unbind(-1), boxes2.unbind(-1)


def _inter_union(b1, b2):
    x1, y1, x2, y2 = b1
    x1g, y1g, x2g, y2g = b2
    w = (ember.minimum(x2, x2g) - ember.maximum(x1, x1g)).clamp(min=0)
    h = (ember.minimum(y2, y2g) - ember.maximum(y1, y1g)).clamp(min=0)
    inter = w * h
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    return inter, union


def generalized_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
    """``1 - GIoU`` of each pair ``(boxes1[i], boxes2[i])`` of ``(x1, y1, x2, y2)`` boxes.

    Args:
        boxes1, boxes2 (Tensor[N, 4] or Tensor[4]): predicted and target boxes.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"none"``.
        eps (float): keeps the divisions finite. Default: 1e-7.
    """
    b1, b2 = _pairs(boxes1, boxes2)
    inter, union = _inter_union(b1, b2)
    iou = inter / (union + eps)
    x1, y1, x2, y2 = b1
    x1g, y1g, x2g, y2g = b2
    area_c = (ember.maximum(x2, x2g) - ember.minimum(x1, x1g)) * (
        ember.maximum(y2, y2g) - ember.minimum(y1, y1g))
    return _reduce(1 - (iou - (area_c - union) / (area_c + eps)), reduction)


def _diou_iou_loss(b1, b2, eps):
    inter, union = _inter_union(b1, b2)
    iou = inter / (union + eps)
    x1, y1, x2, y2 = b1
    x1g, y1g, x2g, y2g = b2
    diag = ((ember.maximum(x2, x2g) - ember.minimum(x1, x1g)) ** 2
            + (ember.maximum(y2, y2g) - ember.minimum(y1, y1g)) ** 2 + eps)
    centers = ((x1 + x2) / 2 - (x1g + x2g) / 2) ** 2 + ((y1 + y2) / 2 - (y1g + y2g) / 2) ** 2
    return 1 - iou + centers / diag, iou


def distance_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
    """``1 - DIoU`` of each pair of boxes: IoU loss plus the squared distance of the centres
    over the squared diagonal of the enclosing box. Arguments as
    :func:`generalized_box_iou_loss`."""
    b1, b2 = _pairs(boxes1, boxes2)
    loss, _ = _diou_iou_loss(b1, b2, eps)
    return _reduce(loss, reduction)


def complete_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
    """``1 - CIoU`` of each pair of boxes: the DIoU loss plus an aspect-ratio term. Arguments as
    :func:`generalized_box_iou_loss`."""
    b1, b2 = _pairs(boxes1, boxes2)
    diou_loss, iou = _diou_iou_loss(b1, b2, eps)
    x1, y1, x2, y2 = b1
    x1g, y1g, x2g, y2g = b2
    v = (4 / math.pi ** 2) * (ember.atan((x2g - x1g) / (y2g - y1g))
                              - ember.atan((x2 - x1) / (y2 - y1))) ** 2
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou_loss + alpha * v, reduction)
