"""Sizes, channels and frames of inputs; bounding-box formats and clamping."""

from __future__ import annotations

import math

import numpy as np

import ember
from embervision import tv_tensors
from embervision.transforms._utils import get_dimensions as _get_dimensions_classic
from embervision.transforms.v2.functional._utils import (
    _dispatch,
    _register_kernel_internal,
    is_pure_tensor,
)
from embervision.tv_tensors import BoundingBoxFormat, is_rotated_bounding_format
from embervision.tv_tensors._bounding_boxes import _parse_format
from embervision.tv_tensors._tv_tensor import _plain

__all__ = [
    "clamp_bounding_boxes",
    "clamp_keypoints",
    "convert_bounding_box_format",
    "get_dimensions",
    "get_dimensions_image",
    "get_dimensions_video",
    "get_image_num_channels",
    "get_num_channels",
    "get_num_channels_image",
    "get_num_channels_video",
    "get_num_frames",
    "get_num_frames_video",
    "get_size",
    "get_size_bounding_boxes",
    "get_size_image",
    "get_size_keypoints",
    "get_size_mask",
    "get_size_video",
]


# -- sizes ----------------------------------------------------------------------------------

def get_dimensions(inpt) -> list:
    """``[channels, height, width]`` of an image or video."""
    return _dispatch(get_dimensions, inpt)


@_register_kernel_internal(get_dimensions, ember.Tensor)
@_register_kernel_internal(get_dimensions, tv_tensors.Image, tv_tensor_wrapper=False)
def get_dimensions_image(image) -> list:
    """``[channels, height, width]`` of a ``(..., C, H, W)`` tensor (2-D: one channel)."""
    if image.ndim < 2:
        raise TypeError(f"Input tensor should have at least two dimensions, but got {image.ndim}")
    chw = list(image.shape[-3:])
    return [1, *chw] if len(chw) == 2 else chw


@_register_kernel_internal(get_dimensions, tv_tensors.Video, tv_tensor_wrapper=False)
def get_dimensions_video(video) -> list:
    """``[channels, height, width]`` of a ``(..., T, C, H, W)`` video."""
    return get_dimensions_image(video)


def _pil_dimensions(image):
    return _get_dimensions_classic(image)


def get_num_channels(inpt) -> int:
    """The number of channels of an image or video."""
    return _dispatch(get_num_channels, inpt)


@_register_kernel_internal(get_num_channels, ember.Tensor)
@_register_kernel_internal(get_num_channels, tv_tensors.Image, tv_tensor_wrapper=False)
def get_num_channels_image(image) -> int:
    """The number of channels of a ``(..., C, H, W)`` image tensor."""
    return get_dimensions_image(image)[0]


@_register_kernel_internal(get_num_channels, tv_tensors.Video, tv_tensor_wrapper=False)
def get_num_channels_video(video) -> int:
    """The number of channels of a ``(..., T, C, H, W)`` video."""
    return get_num_channels_image(video)


get_image_num_channels = get_num_channels


def get_size(inpt) -> list:
    """``[height, width]`` of an image, video, mask, or of the canvas of boxes and points."""
    return _dispatch(get_size, inpt)


@_register_kernel_internal(get_size, ember.Tensor)
@_register_kernel_internal(get_size, tv_tensors.Image, tv_tensor_wrapper=False)
def get_size_image(image) -> list:
    """``[height, width]`` of a ``(..., C, H, W)`` image tensor."""
    return get_dimensions_image(image)[1:]


@_register_kernel_internal(get_size, tv_tensors.Video, tv_tensor_wrapper=False)
def get_size_video(video) -> list:
    """``[height, width]`` of a ``(..., T, C, H, W)`` video."""
    return get_size_image(video)


@_register_kernel_internal(get_size, tv_tensors.Mask, tv_tensor_wrapper=False)
def get_size_mask(mask) -> list:
    """``[height, width]`` of a ``(..., H, W)`` mask."""
    return list(mask.shape[-2:])


@_register_kernel_internal(get_size, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def get_size_bounding_boxes(bounding_box) -> list:
    """``[height, width]`` of the canvas of bounding boxes."""
    return list(bounding_box.canvas_size)


@_register_kernel_internal(get_size, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def get_size_keypoints(keypoints) -> list:
    """``[height, width]`` of the canvas of key points."""
    return list(keypoints.canvas_size)


def get_num_frames(inpt) -> int:
    """The number of frames of a video, ``(..., T, C, H, W)``."""
    return _dispatch(get_num_frames, inpt)


@_register_kernel_internal(get_num_frames, ember.Tensor)
@_register_kernel_internal(get_num_frames, tv_tensors.Video, tv_tensor_wrapper=False)
def get_num_frames_video(video) -> int:
    """The number of frames ``T`` of a ``(..., T, C, H, W)`` video."""
    return int(video.shape[-4])


def _register_pil(functional, kernel):
    import PIL.Image

    _register_kernel_internal(functional, PIL.Image.Image)(kernel)


_register_pil(get_dimensions, _pil_dimensions)
_register_pil(get_num_channels, lambda image: _pil_dimensions(image)[0])
_register_pil(get_size, lambda image: [image.height, image.width])


# -- bounding-box formats -------------------------------------------------------------------

def _half(t):
    # Integer boxes halve with floor division of the negative (torchvision's rounding).
    if t.is_floating_point():
        return t / 2
    return ember.floor_divide(t, -2).abs()


def _xyxy_to_xywh(b):
    x1, y1, x2, y2 = b.unbind(-1)
    return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)


def _xywh_to_xyxy(b):
    x, y, w, h = b.unbind(-1)
    return ember.stack([x, y, x + w, y + h], dim=-1)


def _xyxy_to_cxcywh(b):
    x1, y1, x2, y2 = b.unbind(-1)
    if b.is_floating_point():
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    else:
        cx, cy = ember.floor_divide(x1 + x2, 2), ember.floor_divide(y1 + y2, 2)
    return ember.stack([cx, cy, x2 - x1, y2 - y1], dim=-1)


def _cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    x1, y1 = cx - _half(w), cy - _half(h)
    return ember.stack([x1, y1, x1 + w, y1 + h], dim=-1)


# The rotated formats' conversions compute in torchvision's order of operations, so that
# clamping (which compares corners with isclose) sees the same float32 corners.

def _radians(r):
    return r * math.pi / 180.0


def _xywhr_to_xyxyxyxy(b):
    x1, y1, w, h, r = b.to(ember.float64).unbind(-1) if not b.is_floating_point() else b.unbind(-1)
    rad = _radians(r)
    cos, sin = ember.cos(rad), ember.sin(rad)
    x2, y2 = x1 + w * cos, y1 - w * sin
    x3, y3 = x1 + (w * cos + h * sin), y1 - (w * sin - h * cos)
    x4, y4 = x1 + h * sin, y1 + h * cos
    return ember.stack([x1, y1, x2, y2, x3, y3, x4, y4], dim=-1).to(b.dtype)


def _xyxyxyxy_to_xywhr(b):
    x1, y1, x2, y2, x3, y3, x4, y4 = b.unbind(-1)
    w = ember.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
    h = ember.sqrt((x3 - x2) ** 2 + (y3 - y2) ** 2)
    r = ember.atan2(y1 - y2, x2 - x1) / math.pi * 180.0
    return ember.stack([x1, y1, w, h, r], dim=-1)


def _xywhr_to_cxcywhr(b):
    x1, y1, w, h, r = b.unbind(-1)
    rad = _radians(r)
    cos, sin = ember.cos(rad), ember.sin(rad)
    cx = x1 + w / 2 * cos + h / 2 * sin
    cy = y1 - w / 2 * sin + h / 2 * cos
    return ember.stack([cx, cy, w, h, r], dim=-1)


def _cxcywhr_to_xywhr(b):
    cx, cy, w, h, r = b.unbind(-1)
    rad = _radians(r)
    cos, sin = ember.cos(rad), ember.sin(rad)
    x1 = cx - w / 2 * cos - h / 2 * sin
    y1 = cy + w / 2 * sin - h / 2 * cos
    return ember.stack([x1, y1, w, h, r], dim=-1)


_TO_HUB = {  # each format to XYXY (axis-aligned) or XYWHR (rotated)
    BoundingBoxFormat.XYXY: None, BoundingBoxFormat.XYWH: _xywh_to_xyxy,
    BoundingBoxFormat.CXCYWH: _cxcywh_to_xyxy, BoundingBoxFormat.XYWHR: None,
    BoundingBoxFormat.CXCYWHR: _cxcywhr_to_xywhr, BoundingBoxFormat.XYXYXYXY: _xyxyxyxy_to_xywhr,
}
_FROM_HUB = {
    BoundingBoxFormat.XYXY: None, BoundingBoxFormat.XYWH: _xyxy_to_xywh,
    BoundingBoxFormat.CXCYWH: _xyxy_to_cxcywh, BoundingBoxFormat.XYWHR: None,
    BoundingBoxFormat.CXCYWHR: _xywhr_to_cxcywhr, BoundingBoxFormat.XYXYXYXY: _xywhr_to_xyxyxyxy,
}


def _convert_format(boxes, old_format, new_format):
    if old_format == new_format:
        return boxes.clone()
    if is_rotated_bounding_format(old_format) != is_rotated_bounding_format(new_format):
        raise ValueError(f"Cannot convert between rotated and unrotated bounding box formats "
                         f"({old_format.name} -> {new_format.name}).")
    out = boxes
    if _TO_HUB[old_format] is not None:
        out = _TO_HUB[old_format](out)
    if _FROM_HUB[new_format] is not None:
        out = _FROM_HUB[new_format](out)
    return out.to(boxes.dtype) if out is not boxes else out.clone()


def convert_bounding_box_format(inpt, old_format=None, new_format=None, inplace=False):
    """Converts bounding boxes from ``old_format`` to ``new_format``.

    Args:
        inpt (Tensor or BoundingBoxes): the boxes; for a BoundingBoxes ``old_format`` is taken
            from it and must not be passed.
        old_format (BoundingBoxFormat or str): the format of a plain tensor's boxes.
        new_format (BoundingBoxFormat or str): the format to convert to.
        inplace (bool): write the result into ``inpt``. Default: ``False``.

    Examples::

        >>> F.convert_bounding_box_format(ember.tensor([[1., 2., 4., 6.]]), "XYXY", "XYWH")
        tensor([[1., 2., 3., 4.]])
    """
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: "
                        "'new_format'")
    new_format = _parse_format(new_format)
    if is_pure_tensor(inpt):
        if old_format is None:
            raise ValueError("For pure tensor inputs, `old_format` has to be passed.")
        out = _convert_format(inpt, _parse_format(old_format), new_format)
        if inplace:
            inpt.copy_(out)
            return inpt
        return out
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if old_format is not None:
            raise ValueError("For bounding box tv_tensor inputs, `old_format` must not be "
                             "passed.")
        out = _convert_format(_plain(inpt), inpt.format, new_format)
        if inplace:
            _plain(inpt).copy_(out)
            out = _plain(inpt)
        return tv_tensors.wrap(out, like=inpt, format=new_format)
    raise TypeError(f"Input can either be a plain tensor or a bounding box tv_tensor, but got "
                    f"{type(inpt)} instead.")


def _boxes_to_corners(boxes, format):
    """``(N, K)`` boxes -> ``(N, 4, 2)`` corners TL, TR, BR, BL."""
    if is_rotated_bounding_format(format):
        pts = _convert_format(boxes, format, BoundingBoxFormat.XYXYXYXY)
        return pts.reshape(-1, 4, 2)
    xyxy = _convert_format(boxes, format, BoundingBoxFormat.XYXY).reshape(-1, 4)
    x1, y1, x2, y2 = xyxy.unbind(-1)
    return ember.stack([ember.stack([x1, y1], -1), ember.stack([x2, y1], -1),
                        ember.stack([x2, y2], -1), ember.stack([x1, y2], -1)], dim=1)


# -- clamping -------------------------------------------------------------------------------

def _clamp_boxes(boxes, format, canvas_size, clamping_mode):
    if clamping_mode is None:
        return boxes.clone()
    if is_rotated_bounding_format(format):
        return _clamp_rotated_boxes(boxes, format, canvas_size, clamping_mode)
    h, w = canvas_size
    dtype = boxes.dtype
    xyxy = _convert_format(boxes if dtype.is_floating_point else boxes.to(ember.float32),
                           format, BoundingBoxFormat.XYXY)
    x1, y1, x2, y2 = xyxy.unbind(-1)
    xyxy = ember.stack([x1.clamp(0, w), y1.clamp(0, h), x2.clamp(0, w), y2.clamp(0, h)], dim=-1)
    return _convert_format(xyxy, BoundingBoxFormat.XYXY, format).to(dtype)


# inf and nan (from vertical edges, parallel lines) are part of the rule, silently as in
# torchvision
@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def _clamp_rotated_boxes(boxes, format, canvas_size, clamping_mode):
    # NOTE [ Clamping rotated boxes ]
    # torchvision's rule (0.23 on), followed step by step so that the numbers are its numbers.
    # The box goes to its four corners and each side of the canvas is handled in turn as the
    # left one (x = 0), the frame turning a quarter counterclockwise in between. For one side:
    # the corners are rolled so that the leftmost comes first (ties to the lowest y; torchvision
    # rolls them once more after the step and keeps that order), the four edges are written as
    # lines y = a x + b, and their intercepts b at x = 0 are moved, the slopes kept. "soft"
    # keeps the smallest box of the same angle around the part inside the canvas; "hard" the
    # largest inside it; either way no intercept passes those of the unclamped box. The new
    # corners are where consecutive edges meet. An axis-aligned box only has its left x clamped
    # to 0; a box wholly left of the canvas, or flat, collapses to a point (zeros in that
    # step's frame).
    if clamping_mode is None:
        return boxes.clone()
    corners = _convert_format(_as_float(boxes), format, BoundingBoxFormat.XYXYXYXY)
    corners = corners.reshape(-1, 4, 2)
    x, y = corners[..., 0], corners[..., 1]  # (N, 4): the corners in order
    x0, y0 = x, y  # the unclamped box, moved along
    height, width = canvas_size
    for _ in range(4):
        start = _leftmost_corner(x, y)
        x, y, x0, y0 = (_roll_corners(t, start) for t in (x, y, x0, y0))
        x, y = _clamp_to_left_side(x, y, y0 - _edge_slopes(x0, y0) * x0, (height, width),
                                   clamping_mode)
        x, y, x0, y0 = (_roll_corners(t, start) for t in (x, y, x0, y0))
        x, y, x0, y0 = y, width - x, y0, width - x0
        height, width = width, height
    corners = ember.stack([x, y], dim=-1).reshape(-1, 8)
    out = _convert_format(corners, BoundingBoxFormat.XYXYXYXY, format)
    return out.reshape(boxes.shape).to(boxes.dtype)


def _leftmost_corner(x, y):
    """The index of each box's leftmost corner (of the lowest y among equals)."""
    key = y / y.abs().amax(1, keepdim=True) + (x / x.abs().amax(1, keepdim=True)) * 100
    return key.argmin(1)


def _roll_corners(t, start):
    """``t[:, (start + i) % 4]`` for i = 0..3: each box's corners from ``start`` on."""
    order = (start.unsqueeze(1) + ember.arange(4, device=t.device)) % 4
    return t.gather(1, order)


def _edge_slopes(x, y):
    """The slope of each edge, corner i to corner i + 1."""
    return (y.roll(-1, 1) - y) / (x.roll(-1, 1) - x)


def _clamp_to_left_side(x, y, b_unclamped, canvas_size, clamping_mode):
    """One side of NOTE [ Clamping rotated boxes ]: ``x``, ``y`` (N, 4) with the leftmost
    corner first; ``b_unclamped`` the unclamped box's intercepts, in the same order."""
    a = _edge_slopes(x, y)
    b = _clamped_intercepts(a, y - a * x, b_unclamped, canvas_size, clamping_mode)
    # corner i is where edges i - 1 and i meet
    met_x = -(b - b.roll(1, 1)) / (a - a.roll(1, 1))
    met_y = a * met_x + b
    x1, x2, x3, x4 = x.unbind(1)
    y1, y2, y3, y4 = y.unbind(1)
    met = (x1 < 0) & ~(met_x.isnan().any(1) | met_y.isnan().any(1))
    axis_aligned = ember.isclose(y1, y2) | ember.isclose(y3, y4)
    degenerate = ((x <= 0).all(1) | ember.isclose(y1, y4) | ember.isclose(y2, y3)
                  | (axis_aligned & ember.isclose(x1, x2)))
    x_aligned = ember.stack([x1.clamp(min=0), x2, x3, x4.clamp(min=0)], dim=1)
    new_x = ember.where(met.unsqueeze(1), met_x, x)
    new_y = ember.where(met.unsqueeze(1), met_y, y)
    new_x = ember.where(axis_aligned.unsqueeze(1), x_aligned, new_x)
    new_y = ember.where(axis_aligned.unsqueeze(1), y, new_y)
    zero = ember.zeros((), dtype=x.dtype, device=x.device)
    return (ember.where(degenerate.unsqueeze(1), zero, new_x),
            ember.where(degenerate.unsqueeze(1), zero, new_y))


def _clamped_intercepts(a, b, b_unclamped, canvas_size, clamping_mode):
    """The edges' intercepts at x = 0 moved by the soft or hard rule (edge 1 and edge 4 meet
    at the leftmost corner)."""
    height, width = canvas_size
    a1, a2, a3, a4 = a.unbind(1)
    b1, b2, b3, b4 = b.unbind(1)
    m1, m2, m3, m4 = b_unclamped.unbind(1)
    first = b2.clamp(b1, b3).clamp(0, height)
    last = b3.clamp(b2, b4).clamp(0, height)
    if clamping_mode == "hard":
        # the two edges through the leftmost corner meet the side at one point, and the
        # other two are pulled in until every corner is inside the canvas
        first = (first + last) / 2
        second = ember.stack([first * a2 / a1, b3 * a2 / a3, (a1 - a2) * width + first,
                              (a3 - a2) * width + b3], dim=1).amax(1).clamp(max=b2)
        third = ember.stack([height * (1 - a3 / a4) + first * a3 / a4,
                             height * (1 - a3 / a2) + second * a3 / a2,
                             (a2 - a3) * width + second, (a4 - a3) * width + first],
                            dim=1).amin(1).clamp(min=b3)
        # torchvision's first and last intercepts are one tensor from here, clamped twice
        last = first = first.clamp(m1, m3).clamp(m2, m4)
    else:
        first, second, third, last = first.clamp(m1, m3), b2, b3, last.clamp(m2, m4)
    return ember.stack([first, second.clamp(m2, m4), third.clamp(m1, m3), last], dim=1)


def _as_float(t):
    return t if t.is_floating_point() else t.to(ember.float32)


def clamp_bounding_boxes(inpt, format=None, canvas_size=None, clamping_mode="auto"):
    """Clamps bounding boxes to their canvas.

    Args:
        inpt (Tensor or BoundingBoxes): the boxes; a BoundingBoxes carries its format,
            canvas size and clamping mode.
        format (BoundingBoxFormat or str): the format of a plain tensor's boxes.
        canvas_size (tuple of int): ``(height, width)`` for a plain tensor.
        clamping_mode (str or None): ``"soft"``, ``"hard"``, ``None`` (nothing is done) or
            ``"auto"`` (a BoundingBoxes' own mode; plain tensors must name one). Axis-aligned
            boxes are clamped the same way in both modes. A rotated box keeps its angle:
            ``"soft"`` gives the smallest box around its part inside the canvas (corners may
            stay outside), ``"hard"`` the largest box inside both (NOTE [ Clamping rotated
            boxes ]).
    """
    if clamping_mode is not None and clamping_mode not in ("soft", "hard", "auto"):
        raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
    if is_pure_tensor(inpt):
        if format is None or canvas_size is None or clamping_mode == "auto":
            raise ValueError("For pure tensor inputs, `format`, `canvas_size` and "
                             "`clamping_mode` have to be passed.")
        return _clamp_boxes(inpt, _parse_format(format), canvas_size, clamping_mode)
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("For bounding box tv_tensor inputs, `format` and `canvas_size` "
                             "must not be passed.")
        mode = inpt.clamping_mode if clamping_mode == "auto" else clamping_mode
        out = _clamp_boxes(_plain(inpt), inpt.format, inpt.canvas_size, mode)
        return tv_tensors.wrap(out, like=inpt)
    raise TypeError(f"Input can either be a plain tensor or a bounding box tv_tensor, but got "
                    f"{type(inpt)} instead.")


def _clamp_points(points, canvas_size):
    h, w = canvas_size
    dtype = points.dtype
    x = points[..., 0].clamp(0, w - 1)
    y = points[..., 1].clamp(0, h - 1)
    return ember.stack([x, y], dim=-1).to(dtype)


def clamp_keypoints(inpt, canvas_size=None):
    """Clamps key points to their canvas: ``0 <= x <= W - 1``, ``0 <= y <= H - 1``.

    Args:
        inpt (Tensor or KeyPoints): the points, ``(..., 2)``.
        canvas_size (tuple of int): ``(height, width)`` for a plain tensor.
    """
    if is_pure_tensor(inpt):
        if canvas_size is None:
            raise ValueError("For pure tensor inputs, `canvas_size` has to be passed.")
        return _clamp_points(inpt, canvas_size)
    if isinstance(inpt, tv_tensors.KeyPoints):
        if canvas_size is not None:
            raise ValueError("For keypoints tv_tensor inputs, `canvas_size` must not be passed.")
        return tv_tensors.wrap(_clamp_points(_plain(inpt), inpt.canvas_size), like=inpt)
    raise TypeError(f"Input can either be a plain tensor or a keypoints tv_tensor, but got "
                    f"{type(inpt)} instead.")

