"""Box operations on ``(N, 4)`` tensors: conversion, area, IoU variants, NMS, clipping."""

from __future__ import annotations

import numpy as np

import ember
from ember import library
from ember._dtype import TORCH_NAMES
from embervision.ops import _nms

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


# NOTE [ NMS as torchvision computes it ] (ops/_nms.pyx): the compiled CPU kernel is
# registered for "cpu"; the array-module implementation below runs on other devices until
# they have a kernel of their own under the same name.
NMS_KERNEL = "embervision_nms"
_NMS_DTYPES = (np.float16, np.float32, np.float64)
library.register_kernel(NMS_KERNEL, "cpu", _nms.nms, dtypes=_NMS_DTYPES)
# torch.sort(descending=True)'s order on the CPU, equal values included (its std::sort)
SORT_KERNEL = "embervision_argsort_descending"
library.register_kernel(SORT_KERNEL, "cpu", _nms.argsort_descending, dtypes=_NMS_DTYPES)


@library.register_kernel(SORT_KERNEL, "any")
def _argsort_descending_any(values):
    # descending, NaN first, equal values in index order (a stable sort)
    xp = library.array_module(values)
    order = xp.argsort(-values, kind="stable")
    nan = xp.isnan(values[order])
    return xp.concatenate([order[nan], order[~nan]])


def _std_max(a, b, xp):
    # std::max(a, b) is `a < b ? b : a` and std::min(a, b) `b < a ? b : a`: what a NaN gives
    return xp.where(a < b, b, a)


def _std_min(a, b, xp):
    return xp.where(b < a, b, a)


@library.register_kernel(NMS_KERNEL, "any")
def _nms_any(boxes, scores, iou_threshold, idxs=None):
    """NMS on any device's arrays: the compiled kernel's steps, one vector step per kept box
    (``idxs``: class ids; boxes suppress only boxes of their class, and the kept indices
    come in increasing order)."""
    xp = library.array_module(boxes)
    n = boxes.shape[0]
    if boxes.dtype == xp.float16:
        boxes = boxes.astype(xp.float32)  # as torchvision under autocast
    order = _argsort_descending_any(scores)  # stable; NaN scores sort first in torch
    x1, y1, x2, y2 = (boxes[order, k] for k in range(4))
    areas = (x2 - x1) * (y2 - y1)
    cls = None if idxs is None else idxs[order]
    thr = np.float64(iou_threshold)  # compared in double, as torchvision does
    zero = xp.zeros((), boxes.dtype)
    suppressed = xp.zeros(n, dtype=bool)
    keep = []
    for i in range(n):
        if bool(suppressed[i]):
            continue
        keep.append(i)
        rest = slice(i + 1, n)
        w = _std_max(zero, _std_min(x2[i], x2[rest], xp) - _std_max(x1[i], x1[rest], xp), xp)
        h = _std_max(zero, _std_min(y2[i], y2[rest], xp) - _std_max(y1[i], y1[rest], xp), xp)
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            over = (inter / (areas[i] + areas[rest] - inter)).astype(np.float64) > thr
        if cls is not None:
            over &= cls[rest] == cls[i]
        suppressed[rest] |= over
    keep = order[xp.asarray(keep, dtype=xp.int64)]
    return keep if idxs is None else xp.sort(keep)


class NMS(library.Node):
    """The kept indices of NMS (an op without gradient: it passes the dispatch point); with
    class ids ``idxs`` in torchvision's order of its per-class loop: by decreasing score,
    equal scores as torch's CPU sort leaves them."""

    differentiable = False

    def forward(self, boxes, scores, iou_threshold, idxs):
        keep = library.kernel(NMS_KERNEL, boxes)(boxes, scores, iou_threshold, idxs)
        if idxs is None:
            return keep
        return keep[library.kernel(SORT_KERNEL, scores)(scores[keep])]


def _check_nms(boxes, scores, iou_threshold) -> float:
    """torchvision's checks of nms's arguments (its messages, RuntimeError); returns the
    threshold as a float."""
    for name, value in (("boxes", boxes), ("scores", scores)):
        if not isinstance(value, ember.Tensor):
            raise TypeError(f"nms(): argument '{name}' must be Tensor, not "
                            f"{type(value).__name__}")
    if isinstance(iou_threshold, ember.Tensor):
        iou_threshold = iou_threshold.item()
    if not isinstance(iou_threshold, (int, float, np.integer, np.floating, np.bool_)):
        raise RuntimeError(
            "nms() Expected a value of type 'float' for argument 'iou_threshold' but instead "
            f"found type '{type(iou_threshold).__name__}'.")
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.shape[1] != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.shape[1]}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if boxes.shape[0] != scores.shape[0]:
        raise RuntimeError("boxes and scores should have same number of elements in dimension "
                           f"0, got {boxes.shape[0]} and {scores.shape[0]}")
    if boxes.dtype not in (ember.float16, ember.float32, ember.float64):
        name = TORCH_NAMES.get(boxes.dtype.name, boxes.dtype.name)
        raise RuntimeError(f'"nms_kernel" not implemented for \'{name}\'')
    if boxes.dtype != scores.dtype:
        raise RuntimeError("dets should have the same type as scores")
    return float(iou_threshold)


def _run_nms(boxes, scores, iou_threshold, idxs=None) -> ember.Tensor:
    return library.apply(NMS, boxes, scores, iou_threshold, idxs)


def nms(boxes: ember.Tensor, scores: ember.Tensor, iou_threshold: float) -> ember.Tensor:
    """Non-maximum suppression: keeps the boxes that overlap no higher-scoring kept box by
    more than ``iou_threshold``.

    Boxes are visited by decreasing score (equal scores in their input order, NaN scores
    first) and the IoU is computed in the boxes' dtype, as torchvision's kernel computes it
    (NOTE [ NMS as torchvision computes it ] in ops/_nms.pyx), so the kept indices are
    torchvision's. float16 boxes, which torchvision's CPU kernel refuses, are computed in
    float32, as torchvision does under autocast.

    Args:
        boxes (Tensor[N, 4]): ``(x1, y1, x2, y2)`` boxes, float32, float64 or float16.
        scores (Tensor[N]): their scores, of the same dtype.
        iou_threshold (float): boxes with IoU ``> iou_threshold`` are discarded.

    Returns:
        Tensor[K] (int64): indices of the kept boxes, by decreasing score.
    """
    iou_threshold = _check_nms(boxes, scores, iou_threshold)
    if boxes.shape[0] == 0:
        return ember.zeros(0, dtype=ember.int64, device=boxes.device)
    return _run_nms(boxes, scores, iou_threshold)


def batched_nms(boxes: ember.Tensor, scores: ember.Tensor, idxs: ember.Tensor,
                iou_threshold: float) -> ember.Tensor:
    """NMS done independently per category ``idxs``.

    As in torchvision: up to 4000 coordinates (1000 boxes; 20000 off the CPU) the boxes of
    different categories are moved apart by an offset larger than any coordinate and one
    NMS runs over all of them (the offsets are added in the boxes' dtype, as torchvision
    adds them); above that, each category is suppressed on its own (one kernel call).

    Returns:
        Tensor[K] (int64): indices of the kept boxes, by decreasing score.
    """
    _check_boxes(boxes)
    if boxes.numel() > (4000 if boxes.device.type == "cpu" else 20000):
        return _batched_nms_per_class(boxes, scores, idxs, iou_threshold)
    if boxes.numel() == 0:
        return ember.zeros(0, dtype=ember.int64, device=boxes.device)
    offsets = idxs.to(boxes.dtype) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _batched_nms_per_class(boxes, scores, idxs, iou_threshold):
    iou_threshold = _check_nms(boxes, scores, iou_threshold)
    if idxs.shape != (boxes.shape[0],):
        raise RuntimeError(f"idxs should be a 1d tensor of {boxes.shape[0]} elements, got "
                           f"shape {tuple(idxs.shape)}")
    if not idxs.is_floating_point():
        return _run_nms(boxes, scores, iou_threshold, idxs.long())
    # Float categories: equal values share a category; a NaN category matches no box
    # (torchvision's `idxs == class_id`), so its boxes are never kept.
    ordinary = ember.where(~idxs.isnan())[0]
    classes = ember.unique(idxs[ordinary], return_inverse=True)[1]
    return ordinary[_run_nms(boxes[ordinary], scores[ordinary], iou_threshold, classes)]


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
