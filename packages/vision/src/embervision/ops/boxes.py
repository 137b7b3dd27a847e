"""Box operations on ``(N, 4)`` tensors: conversion, area, IoU variants, NMS, clipping."""

from __future__ import annotations

import numpy as np

import ember

__all__ = [
    "batched_nms",
    "box_area",
    "box_convert",
    "box_iou",
    "clip_boxes_to_image",
    "complete_box_iou",
    "distance_box_iou",
    "generalized_box_iou",
    "masks_to_boxes",
    "nms",
    "remove_small_boxes",
]

_FORMATS = ("xyxy", "xywh", "cxcywh")


def _check_boxes(boxes, name="boxes"):
    if not isinstance(boxes, ember.Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(boxes).__name__}")
    if boxes.dim() < 1 or boxes.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4), got {tuple(boxes.shape)}")


def _upcast(t: ember.Tensor) -> ember.Tensor:
    # Products of int32/uint8 coordinates can overflow; floats keep their own precision.
    if t.is_floating_point():
        return t if t.dtype in (ember.float32, ember.float64) else t.float()
    return t if t.dtype in (ember.int32, ember.int64) else t.int()


def box_convert(boxes: ember.Tensor, in_fmt: str, out_fmt: str) -> ember.Tensor:
    """Converts boxes between ``"xyxy"``, ``"xywh"`` and ``"cxcywh"``.

    Args:
        boxes (Tensor[N, 4]): the boxes.
        in_fmt (str): their format.
        out_fmt (str): the wanted format.
    """
    if in_fmt not in _FORMATS or out_fmt not in _FORMATS:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    _check_boxes(boxes)
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return ember.stack([a, b, c, d], dim=-1)


def box_area(boxes: ember.Tensor) -> ember.Tensor:
    """Areas of ``(x1, y1, x2, y2)`` boxes: ``(x2 - x1) * (y2 - y1)``."""
    _check_boxes(boxes)
    boxes = _upcast(boxes)
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def _inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = ember.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = ember.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter, area1[:, None] + area2[None, :] - inter


def box_iou(boxes1: ember.Tensor, boxes2: ember.Tensor) -> ember.Tensor:
    """Intersection over union of every pair of ``(x1, y1, x2, y2)`` boxes.

    Args:
        boxes1 (Tensor[N, 4]), boxes2 (Tensor[M, 4]).

    Returns:
        Tensor[N, M]
    """
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    inter, union = _inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1: ember.Tensor, boxes2: ember.Tensor) -> ember.Tensor:
    """Generalized IoU (Rezatofighi et al., 2019) of every pair of boxes: ``[N, M]``."""
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    inter, union = _inter_union(boxes1, boxes2)
    iou = inter / union
    lti = ember.minimum(boxes1[:, None, :2], boxes2[None, :, :2])
    rbi = ember.maximum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    area_i = whi[..., 0] * whi[..., 1]
    return iou - (area_i - union) / area_i


def _diou_parts(boxes1, boxes2, eps):
    iou = box_iou(boxes1, boxes2)
    lti = ember.minimum(boxes1[:, None, :2], boxes2[None, :, :2])
    rbi = ember.maximum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    diag = whi[..., 0] ** 2 + whi[..., 1] ** 2 + eps
    c1 = (boxes1[:, :2] + boxes1[:, 2:]) / 2
    c2 = (boxes2[:, :2] + boxes2[:, 2:]) / 2
    dist = ((c1[:, None, :] - c2[None, :, :]) ** 2).sum(-1)
    return iou - dist / diag, iou


def distance_box_iou(boxes1: ember.Tensor, boxes2: ember.Tensor, eps: float = 1e-7):
    """Distance IoU (Zheng et al., 2020) of every pair of boxes: ``[N, M]``."""
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    return _diou_parts(_upcast(boxes1), _upcast(boxes2), eps)[0]


def complete_box_iou(boxes1: ember.Tensor, boxes2: ember.Tensor, eps: float = 1e-7):
    """Complete IoU (Zheng et al., 2020) of every pair of boxes: ``[N, M]``."""
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _diou_parts(boxes1, boxes2, eps)
    w1, h1 = boxes1[:, 2] - boxes1[:, 0], boxes1[:, 3] - boxes1[:, 1]
    w2, h2 = boxes2[:, 2] - boxes2[:, 0], boxes2[:, 3] - boxes2[:, 1]
    v = (4 / (np.pi ** 2)) * (ember.atan(w1 / h1)[:, None] - ember.atan(w2 / h2)[None, :]) ** 2
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def _nms_numpy(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    # Greedy NMS: visit boxes by decreasing score; each kept box suppresses, in one vector
    # step, the later boxes that overlap it by more than the threshold.
    order = np.argsort(-scores, kind="stable")
    boxes = boxes[order].astype(np.float64 if boxes.dtype == np.float64 else np.float32)
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    n = len(order)
    suppressed = np.zeros(n, dtype=bool)
    keep = []
    for i in range(n):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = slice(i + 1, n)
        w = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest] |= iou > iou_threshold
    return order[np.asarray(keep, dtype=np.int64)]


def nms(boxes: ember.Tensor, scores: ember.Tensor, iou_threshold: float) -> ember.Tensor:
    """Non-maximum suppression: keeps the boxes that overlap no higher-scoring kept box by
    more than ``iou_threshold``.

    Args:
        boxes (Tensor[N, 4]): ``(x1, y1, x2, y2)`` boxes.
        scores (Tensor[N]): their scores.
        iou_threshold (float): boxes with IoU ``> iou_threshold`` are discarded.

    Returns:
        Tensor[K] (int64): indices of the kept boxes, by decreasing score.
    """
    _check_boxes(boxes)
    if boxes.dim() != 2:
        raise ValueError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError(
            f"scores should be a 1d tensor of {boxes.shape[0]} elements, got {tuple(scores.shape)}"
        )
    keep = _nms_numpy(boxes.detach().cpu().numpy(), scores.detach().cpu().numpy(),
                      float(iou_threshold))
    return ember.from_numpy(keep).to(boxes.device)


def batched_nms(boxes: ember.Tensor, scores: ember.Tensor, idxs: ember.Tensor,
                iou_threshold: float) -> ember.Tensor:
    """NMS done independently per category ``idxs``.

    Boxes of different categories are moved apart by an offset larger than any coordinate,
    so that one NMS over all of them never lets them suppress each other.

    Returns:
        Tensor[K] (int64): indices of the kept boxes, by decreasing score.
    """
    _check_boxes(boxes)
    if boxes.numel() == 0:
        return ember.zeros(0, dtype=ember.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def remove_small_boxes(boxes: ember.Tensor, min_size: float) -> ember.Tensor:
    """Indices of the boxes whose width and height are both at least ``min_size``."""
    _check_boxes(boxes)
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return ember.where(keep)[0]


def clip_boxes_to_image(boxes: ember.Tensor, size) -> ember.Tensor:
    """Clips ``(x1, y1, x2, y2)`` boxes to an image of ``size = (height, width)``."""
    _check_boxes(boxes)
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return ember.stack([x, y], dim=-1).reshape(tuple(boxes.shape))


def masks_to_boxes(masks: ember.Tensor) -> ember.Tensor:
    """The ``(x1, y1, x2, y2)`` box around each of ``masks`` (``[N, H, W]``): ``[N, 4]`` float."""
    if masks.numel() == 0:
        return ember.zeros(0, 4, device=masks.device)
    if masks.dim() != 3:
        raise ValueError(f"masks should be of shape [N, H, W], got {tuple(masks.shape)}")
    arr = masks.cpu().numpy() != 0
    out = np.zeros((arr.shape[0], 4), dtype=np.float32)
    for k, m in enumerate(arr):
        ys, xs = np.nonzero(m)
        if ys.size == 0:
            raise ValueError(f"mask {k} is empty: it has no box")
        out[k] = [xs.min(), ys.min(), xs.max(), ys.max()]
    return ember.from_numpy(out).to(masks.device)
