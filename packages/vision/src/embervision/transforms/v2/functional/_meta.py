"""Sizes, channels and frames of inputs; bounding-box formats and clamping."""

from __future__ import annotations

import math

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


def _xywhr_to_xyxyxyxy(b):
    x1, y1, w, h, r = b.to(ember.float64).unbind(-1) if not b.is_floating_point() else b.unbind(-1)
    rad = r * (math.pi / 180.0)
    cos, sin = ember.cos(rad), ember.sin(rad)
    x2, y2 = x1 + w * cos, y1 - w * sin
    x3, y3 = x2 + h * sin, y2 + h * cos
    x4, y4 = x1 + h * sin, y1 + h * cos
    return ember.stack([x1, y1, x2, y2, x3, y3, x4, y4], dim=-1).to(b.dtype)


def _xyxyxyxy_to_xywhr(b):
    x1, y1, x2, y2, x3, y3, x4, y4 = b.unbind(-1)
    w = ember.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
    h = ember.sqrt((x4 - x1) ** 2 + (y4 - y1) ** 2)
    r = ember.atan2(y1 - y2, x2 - x1) * (180.0 / math.pi)
    return ember.stack([x1, y1, w, h, r], dim=-1)


def _xywhr_to_cxcywhr(b):
    x1, y1, w, h, r = b.unbind(-1)
    rad = r * (math.pi / 180.0)
    cos, sin = ember.cos(rad), ember.sin(rad)
    cx = x1 + w / 2 * cos + h / 2 * sin
    cy = y1 - w / 2 * sin + h / 2 * cos
    return ember.stack([cx, cy, w, h, r], dim=-1)


def _cxcywhr_to_xywhr(b):
    cx, cy, w, h, r = b.unbind(-1)
    rad = r * (math.pi / 180.0)
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
        return _clamp_rotated_boxes(boxes, format, canvas_size)
    h, w = canvas_size
    dtype = boxes.dtype
    xyxy = _convert_format(boxes if dtype.is_floating_point else boxes.to(ember.float32),
                           format, BoundingBoxFormat.XYXY)
    x1, y1, x2, y2 = xyxy.unbind(-1)
    xyxy = ember.stack([x1.clamp(0, w), y1.clamp(0, h), x2.clamp(0, w), y2.clamp(0, h)], dim=-1)
    return _convert_format(xyxy, BoundingBoxFormat.XYXY, format).to(dtype)


def _clamp_rotated_boxes(boxes, format, canvas_size):
    # NOTE [ Clamping rotated boxes ]
    # A rotated box inside its canvas is left as it is (passing through the corner format,
    # which normalizes the angle, as torchvision's clamping does). torchvision's soft and hard
    # clamping of rotated boxes that leave the canvas (an iterative rule moving vertices
    # along the box's edges) is not implemented: such boxes raise rather than come back
    # unclamped.
    h, w = canvas_size
    corners = _convert_format(_as_float(boxes), format, BoundingBoxFormat.XYXYXYXY)
    xs, ys = corners[..., 0::2], corners[..., 1::2]
    tol = 1e-4
    inside = bool(((xs >= -tol) & (xs <= w + tol) & (ys >= -tol) & (ys <= h + tol)).all())
    if not inside:
        raise ValueError(
            "embervision cannot clamp rotated bounding boxes that reach outside their canvas "
            f"{tuple(canvas_size)} (torchvision's soft/hard clamping of rotated boxes is not "
            "implemented); create the BoundingBoxes with clamping_mode=None to keep them "
            "unclamped.")
    return _convert_format(corners, BoundingBoxFormat.XYXYXYXY, format).to(boxes.dtype)


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
            ``"auto"`` (a BoundingBoxes' own mode; plain tensors must name one).
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

