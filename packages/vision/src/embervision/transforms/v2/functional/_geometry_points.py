"""Geometric kernels for bounding boxes and key points.

Every geometric transform moves points: a box is moved through its four corners (an
axis-aligned box becomes the envelope of its moved corners, a rotated box the rectangle
closest to the moved parallelogram), key points are moved as they are. Boxes are then
clamped to the new canvas where torchvision clamps them; key points are not clamped
(``clamp_keypoints`` / ``SanitizeKeyPoints`` do that explicitly).
"""

from __future__ import annotations

import math

import numpy as np

import ember
from embervision.transforms import _functional_geometry as _classic
from embervision.transforms.v2.functional._meta import (
    _boxes_to_corners,
    _clamp_boxes,
    _convert_format,
)
from embervision.tv_tensors import BoundingBoxFormat, is_rotated_bounding_format
from embervision.tv_tensors._bounding_boxes import _parse_format

__all__ = [
    "affine_bounding_boxes",
    "affine_keypoints",
    "center_crop_bounding_boxes",
    "center_crop_keypoints",
    "crop_bounding_boxes",
    "crop_keypoints",
    "elastic_bounding_boxes",
    "elastic_keypoints",
    "horizontal_flip_bounding_boxes",
    "horizontal_flip_keypoints",
    "pad_bounding_boxes",
    "pad_keypoints",
    "perspective_bounding_boxes",
    "perspective_keypoints",
    "resize_bounding_boxes",
    "resize_keypoints",
    "resized_crop_bounding_boxes",
    "resized_crop_keypoints",
    "rotate_bounding_boxes",
    "rotate_keypoints",
    "vertical_flip_bounding_boxes",
    "vertical_flip_keypoints",
]


def _float(t):
    return t if t.is_floating_point() else t.to(ember.float32)


def _parallelogram_to_rectangle(p):
    # The rectangle keeping the two corners of the parallelogram's longest diagonal.
    x1, y1, x2, y2, x3, y3, x4, y4 = p.unbind(-1)
    cx, cy = (x1 + x3) / 2, (y1 + y3) / 2
    wp = ember.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
    hp = ember.sqrt((x4 - x1) ** 2 + (y4 - y1) ** 2)
    r12 = ember.atan2(y1 - y2, x2 - x1)
    r14 = ember.atan2(y1 - y4, x4 - x1)
    r = r12 - r14
    sign = ember.where(r > math.pi / 2, -ember.ones_like(r), ember.ones_like(r))
    cos, sin = ember.cos(r), ember.sin(r)
    w = ember.where(wp < hp, wp * sin, wp + hp * cos * sign)
    h = ember.where(wp > hp, hp * sin, hp + wp * cos * sign)
    r = ember.where(hp > wp, r14 + math.pi / 2, r12)
    cos, sin = ember.cos(r), ember.sin(r)
    return ember.stack([
        cx - w / 2 * cos - h / 2 * sin, cy - h / 2 * cos + w / 2 * sin,
        cx + w / 2 * cos - h / 2 * sin, cy - h / 2 * cos - w / 2 * sin,
        cx + w / 2 * cos + h / 2 * sin, cy + h / 2 * cos - w / 2 * sin,
        cx - w / 2 * cos + h / 2 * sin, cy + h / 2 * cos + w / 2 * sin,
    ], dim=-1)


def _move_boxes(boxes, format, move_points, canvas_size, clamping_mode, int_convert=False,
                int_envelope=False):
    """Moves the corners of ``boxes`` with ``move_points((M, 2)) -> (M, 2)``.

    Integer boxes are converted to XYXY after the cast to float, or before it with
    ``int_convert`` (and the envelope is cast back before clamping with ``int_envelope``), as
    torchvision's kernels each do.
    """
    format = _parse_format(format)
    shape, dtype = boxes.shape, boxes.dtype
    rotated = is_rotated_bounding_format(format)
    flat = boxes.reshape(-1, shape[-1]) if boxes.numel() else boxes.reshape(0, shape[-1])
    corners = _float(_boxes_to_corners(flat, format) if int_convert
                     else _boxes_to_corners(_float(flat), format))
    moved = move_points(corners.reshape(-1, 2)).reshape(-1, 4, 2)
    if rotated:
        rect = _parallelogram_to_rectangle(moved.reshape(-1, 8))
        if clamping_mode is not None:
            rect = _clamp_boxes(rect, BoundingBoxFormat.XYXYXYXY, canvas_size, clamping_mode)
        out = _convert_format(rect, BoundingBoxFormat.XYXYXYXY, format)
    else:
        xyxy = ember.cat([moved.amin(dim=1), moved.amax(dim=1)], dim=-1)
        if int_envelope:
            xyxy = xyxy.to(dtype)
        if clamping_mode is not None:
            xyxy = _clamp_boxes(xyxy, BoundingBoxFormat.XYXY, canvas_size, clamping_mode)
        out = _convert_format(xyxy, BoundingBoxFormat.XYXY, format)
    return out.to(dtype).reshape(shape)


def _move_keypoints(keypoints, move_points):
    shape, dtype = keypoints.shape, keypoints.dtype
    moved = move_points(_float(keypoints).reshape(-1, 2))
    return moved.to(dtype).reshape(shape)


# -- flips ----------------------------------------------------------------------------------

def _flip_boxes(boxes, format, canvas_size, axis):
    format = _parse_format(format)
    size = canvas_size[1] if axis == 0 else canvas_size[0]
    shape = boxes.shape
    b = boxes.clone().reshape(-1, shape[-1])
    lo, hi = (0, 2) if axis == 0 else (1, 3)
    if format == BoundingBoxFormat.XYXY:
        first, second = b[:, lo].clone(), b[:, hi].clone()
        b[:, lo] = size - second
        b[:, hi] = size - first
    elif format == BoundingBoxFormat.XYWH:
        b[:, lo] = size - (b[:, lo] + b[:, hi])
    elif format == BoundingBoxFormat.CXCYWH:
        b[:, lo] = size - b[:, lo]
    elif format in (BoundingBoxFormat.XYWHR, BoundingBoxFormat.CXCYWHR):
        # Angles as torchvision leaves them: -r (horizontal), 180 - r (vertical), not wrapped.
        rad = b[:, 4] * (math.pi / 180.0)
        if format == BoundingBoxFormat.XYWHR:
            x1 = b[:, 0] + b[:, 2] * ember.cos(rad)
            y1 = b[:, 1] - b[:, 2] * ember.sin(rad)
            b[:, 0], b[:, 1] = (size - x1, y1) if axis == 0 else (x1, size - y1)
        else:
            b[:, axis] = size - b[:, axis]
        b[:, 4] = -b[:, 4] if axis == 0 else 180.0 - b[:, 4]
    else:
        pts = _convert_format(b, format, BoundingBoxFormat.XYXYXYXY).reshape(-1, 4, 2).clone()
        pts[..., axis] = size - pts[..., axis]
        # Mirroring swaps left and right (or top and bottom): reorder to TL, TR, BR, BL.
        pts = pts[:, [1, 0, 3, 2]]
        b = _convert_format(pts.reshape(-1, 8), BoundingBoxFormat.XYXYXYXY, format).to(b.dtype)
    return b.reshape(shape)


def horizontal_flip_bounding_boxes(bounding_boxes, format, canvas_size):
    """Flips boxes left to right on a canvas of ``canvas_size = (H, W)``."""
    return _flip_boxes(bounding_boxes, format, canvas_size, 0)


def vertical_flip_bounding_boxes(bounding_boxes, format, canvas_size):
    """Flips boxes top to bottom on a canvas of ``canvas_size = (H, W)``."""
    return _flip_boxes(bounding_boxes, format, canvas_size, 1)


def horizontal_flip_keypoints(keypoints, canvas_size):
    """Flips points left to right: ``x -> W - 1 - x``."""
    out = keypoints.clone()
    out[..., 0] = (canvas_size[1] - 1) - out[..., 0]
    return out


def vertical_flip_keypoints(keypoints, canvas_size):
    """Flips points top to bottom: ``y -> H - 1 - y``."""
    out = keypoints.clone()
    out[..., 1] = (canvas_size[0] - 1) - out[..., 1]
    return out


# -- resize ---------------------------------------------------------------------------------

def _resized_size(canvas_size, size, max_size):
    h, w = canvas_size
    if isinstance(size, int):
        size = [size]
    elif size is not None:
        size = list(size)
    return _classic._resized_output_size(h, w, size, max_size)


def _scale(ratios):
    def move(points):
        return points * ember.tensor(ratios, dtype=points.dtype, device=points.device)
    return move


def resize_bounding_boxes(bounding_boxes, canvas_size, size, max_size=None,
                          format=BoundingBoxFormat.XYXY, clamping_mode="soft"):
    """Scales boxes for an image resized to ``size``; returns ``(boxes, new_canvas_size)``."""
    new_h, new_w = _resized_size(canvas_size, size, max_size)
    if (new_h, new_w) == tuple(canvas_size):
        return bounding_boxes, tuple(canvas_size)
    ratios = [new_w / canvas_size[1], new_h / canvas_size[0]]
    format = _parse_format(format)
    if is_rotated_bounding_format(format):
        out = _move_boxes(bounding_boxes, format, _scale(ratios), (new_h, new_w), clamping_mode)
    else:
        r = ember.tensor(ratios * 2, device=bounding_boxes.device)
        out = bounding_boxes.mul(r).to(bounding_boxes.dtype)
    return out, (new_h, new_w)


def resize_keypoints(keypoints, size, canvas_size, max_size=None):
    """Scales points for an image resized to ``size``; returns ``(points, new_canvas_size)``."""
    new_h, new_w = _resized_size(canvas_size, size, max_size)
    if (new_h, new_w) == tuple(canvas_size):
        return keypoints, tuple(canvas_size)
    ratios = ember.tensor([new_w / canvas_size[1], new_h / canvas_size[0]],
                          device=keypoints.device)
    return keypoints.mul(ratios).to(keypoints.dtype), (new_h, new_w)


# -- crop and pad ---------------------------------------------------------------------------

def _translate(dx, dy):
    def move(points):
        return points + ember.tensor([dx, dy], dtype=points.dtype, device=points.device)
    return move


def crop_bounding_boxes(bounding_boxes, format, top, left, height, width, clamping_mode="soft"):
    """Moves boxes into a crop at ``(top, left)`` of size ``(height, width)``, clamped to it;
    returns ``(boxes, (height, width))``."""
    format = _parse_format(format)
    shift = {BoundingBoxFormat.XYXY: [left, top, left, top],
             BoundingBoxFormat.XYXYXYXY: [left, top] * 4,
             BoundingBoxFormat.XYWHR: [left, top, 0, 0, 0],
             BoundingBoxFormat.CXCYWHR: [left, top, 0, 0, 0]}.get(format, [left, top, 0, 0])
    out = bounding_boxes - ember.tensor(shift, device=bounding_boxes.device).to(
        bounding_boxes.dtype)
    if format == BoundingBoxFormat.XYXYXYXY:
        out = _parallelogram_to_rectangle(out.reshape(-1, 8)).reshape(out.shape)
    canvas = (height, width)
    return _clamp_boxes(out, format, canvas, clamping_mode), canvas


def crop_keypoints(keypoints, top, left, height, width):
    """Moves points into a crop; returns ``(points, (height, width))``."""
    shift = ember.tensor([left, top], device=keypoints.device).to(keypoints.dtype)
    return keypoints - shift, (height, width)


def _pad_ltrb(padding):
    return _classic._pad_amounts(padding)


def pad_bounding_boxes(bounding_boxes, format, canvas_size, padding, padding_mode="constant",
                       clamping_mode="soft"):
    """Moves boxes for a padded image; returns ``(boxes, new_canvas_size)``."""
    if padding_mode not in ("constant",):
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with bounding boxes")
    left, top, right, bottom = _pad_ltrb(padding)
    h, w = canvas_size
    canvas = (h + top + bottom, w + left + right)
    return crop_bounding_boxes(bounding_boxes, format, -top, -left, canvas[0], canvas[1],
                               clamping_mode)[0], canvas


def pad_keypoints(keypoints, canvas_size, padding, padding_mode="constant"):
    """Moves points for a padded image; returns ``(points, new_canvas_size)``."""
    if padding_mode not in ("constant",):
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with keypoints")
    left, top, right, bottom = _pad_ltrb(padding)
    h, w = canvas_size
    return crop_keypoints(keypoints, -top, -left, h + top + bottom, w + left + right)


def _center_crop_anchor(output_size, canvas_size):
    ch, cw = _classic._setup_size(output_size, "output_size")
    h, w = canvas_size
    return int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0)), ch, cw


def center_crop_bounding_boxes(bounding_boxes, format, canvas_size, output_size,
                               clamping_mode="soft"):
    """Moves boxes into the central crop; returns ``(boxes, output_size)``."""
    top, left, ch, cw = _center_crop_anchor(output_size, canvas_size)
    return crop_bounding_boxes(bounding_boxes, format, top, left, ch, cw, clamping_mode)


def center_crop_keypoints(keypoints, canvas_size, output_size):
    """Moves points into the central crop; returns ``(points, output_size)``."""
    top, left, ch, cw = _center_crop_anchor(output_size, canvas_size)
    return crop_keypoints(keypoints, top, left, ch, cw)


def resized_crop_bounding_boxes(bounding_boxes, format, top, left, height, width, size,
                                clamping_mode="soft"):
    """:func:`crop_bounding_boxes` then :func:`resize_bounding_boxes`."""
    boxes, canvas = crop_bounding_boxes(bounding_boxes, format, top, left, height, width,
                                        clamping_mode)
    return resize_bounding_boxes(boxes, canvas, size, format=format, clamping_mode=clamping_mode)


def resized_crop_keypoints(keypoints, top, left, height, width, size):
    """:func:`crop_keypoints` then :func:`resize_keypoints`."""
    points, canvas = crop_keypoints(keypoints, top, left, height, width)
    return resize_keypoints(points, size, canvas)


# -- affine, rotate ---------------------------------------------------------------------------

def _forward_affine_matrix(center, angle, translate, scale, shear):
    # The forward map T * C * RSS * C^-1 as a 2x3 list (the inverse is what images use).
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -(a * math.tan(sx) + math.sin(rot))
    c = math.sin(rot - sy) / math.cos(sy)
    d = math.cos(rot) - c * math.tan(sx)
    m = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
    m[2] += cx + tx - m[0] * cx - m[1] * cy
    m[5] += cy + ty - m[3] * cx - m[4] * cy
    return m


def _parse_shear(shear):
    if isinstance(shear, (int, float)):
        return [float(shear), 0.0]
    shear = [float(s) for s in shear]
    return shear * 2 if len(shear) == 1 else shear


def _affine_points(canvas_size, angle, translate, scale, shear, center, expand):
    """``(move_points, new_canvas_size)`` of an affine map of the canvas."""
    h, w = canvas_size
    shear = _parse_shear(shear)
    center = [w * 0.5, h * 0.5] if center is None else [float(c) for c in center]
    m = _forward_affine_matrix(center, angle, [float(t) for t in translate], scale, shear)
    offset = [0.0, 0.0]
    new_canvas = (h, w)
    if expand:
        corners = np.array([[0.0, 0.0], [0.0, h], [w, h], [w, 0.0]], dtype=np.float32)
        mat = np.array(m, dtype=np.float32).reshape(2, 3)
        moved = corners @ mat[:, :2].T + mat[:, 2]
        offset = (-moved.min(axis=0)).tolist()
        inverse = _classic._inverse_affine_matrix(center, angle, translate, scale, shear)
        new_w, new_h = _classic._expanded_size(inverse, w, h)
        new_canvas = (new_h, new_w)

    def move(points):
        mat = ember.tensor(m, dtype=points.dtype, device=points.device).reshape(2, 3)
        out = points @ mat[:, :2].T + mat[:, 2]
        if expand:
            out = out + ember.tensor(offset, dtype=points.dtype, device=points.device)
        return out

    return move, new_canvas


def affine_bounding_boxes(bounding_boxes, format, canvas_size, angle, translate, scale, shear,
                          center=None, clamping_mode="soft"):
    """Moves boxes by an affine map about ``center`` (the canvas centre by default)."""
    move, _ = _affine_points(canvas_size, angle, translate, scale, shear, center, False)
    return _move_boxes(bounding_boxes, format, move, canvas_size, clamping_mode)


def affine_keypoints(keypoints, canvas_size, angle, translate, scale, shear, center=None):
    """Moves points by an affine map; returns ``(points, canvas_size)``."""
    move, canvas = _affine_points(canvas_size, angle, translate, scale, shear, center, False)
    return _move_keypoints(keypoints, move), canvas


def rotate_bounding_boxes(bounding_boxes, format, canvas_size, angle, expand=False, center=None,
                          clamping_mode="soft"):
    """Rotates boxes by ``angle`` degrees counter-clockwise; returns
    ``(boxes, new_canvas_size)`` (larger with ``expand``)."""
    move, canvas = _affine_points(canvas_size, -angle, [0.0, 0.0], 1.0, [0.0, 0.0], center,
                                  expand)
    return _move_boxes(bounding_boxes, format, move, canvas, clamping_mode), canvas


def rotate_keypoints(keypoints, canvas_size, angle, expand=False, center=None):
    """Rotates points; returns ``(points, new_canvas_size)``."""
    move, canvas = _affine_points(canvas_size, -angle, [0.0, 0.0], 1.0, [0.0, 0.0], center,
                                  expand)
    return _move_keypoints(keypoints, move), canvas


# -- perspective, elastic ---------------------------------------------------------------------

def _perspective_coefficients(startpoints, endpoints, coefficients):
    if coefficients is not None:
        if startpoints is not None or endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be "
                             "defined concurrently.")
        if len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
        return [float(c) for c in coefficients]
    if startpoints is None or endpoints is None:
        raise ValueError("Either the startpoints/endpoints or the coefficients must have "
                         "non `None` values.")
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError("Please provide exactly four corners for startpoints and endpoints")
    return _classic._perspective_coeffs(startpoints, endpoints)


def _perspective_points(startpoints, endpoints, coefficients):
    c = _perspective_coefficients(startpoints, endpoints, coefficients)
    # The coefficients map output to input pixels; points need the inverse map, normalized.
    m = np.array([[c[0], c[1], c[2]], [c[3], c[4], c[5]], [c[6], c[7], 1.0]])
    inv = np.linalg.inv(m)
    inv = (inv / inv[2, 2]).reshape(-1).tolist()

    def move(points):
        t = ember.tensor(inv, dtype=points.dtype, device=points.device).reshape(3, 3)
        num = points @ t[:2, :2].T + t[:2, 2]
        den = points @ t[2, :2] + t[2, 2]
        return num / den.unsqueeze(-1)

    return move


def perspective_bounding_boxes(bounding_boxes, format, canvas_size, startpoints, endpoints,
                               coefficients=None, clamping_mode="soft"):
    """Moves boxes by the perspective map taking ``startpoints`` to ``endpoints``."""
    move = _perspective_points(startpoints, endpoints, coefficients)
    return _move_boxes(bounding_boxes, format, move, canvas_size, clamping_mode,
                       int_convert=True)


def perspective_keypoints(keypoints, canvas_size, startpoints, endpoints, coefficients=None):
    """Moves points by the perspective map taking ``startpoints`` to ``endpoints``."""
    return _move_keypoints(keypoints,
                           _perspective_points(startpoints, endpoints, coefficients))


def _elastic_points(canvas_size, displacement, ceil):
    h, w = canvas_size
    if tuple(displacement.shape) != (1, h, w, 2):
        raise ValueError(f"Argument displacement shape should be {(1, h, w, 2)}, but given "
                         f"{tuple(displacement.shape)}")

    def move(points):
        disp = displacement.to(points.dtype).to(points.device)
        xs = (ember.arange(w, dtype=points.dtype) * 2 + 1) / w - 1
        ys = (ember.arange(h, dtype=points.dtype) * 2 + 1) / h - 1
        gx = xs.reshape(1, w).expand(h, w) - disp[0, ..., 0]
        gy = ys.reshape(h, 1).expand(h, w) - disp[0, ..., 1]
        p = ember.ceil(points) if ceil else points
        ix = p[:, 0].to(ember.int64).clamp(0, w - 1)
        iy = p[:, 1].to(ember.int64).clamp(0, h - 1)
        x = (gx[iy, ix] + 1) * (0.5 * w) - 0.5
        y = (gy[iy, ix] + 1) * (0.5 * h) - 0.5
        return ember.stack([x, y], dim=-1)

    return move


def elastic_bounding_boxes(bounding_boxes, format, canvas_size, displacement,
                           clamping_mode="soft"):
    """Moves boxes by the inverse of an elastic displacement field ``(1, H, W, 2)``."""
    format = _parse_format(format)
    move = _elastic_points(canvas_size, displacement, ceil=True)
    if bounding_boxes.numel() == 0:
        return bounding_boxes
    if is_rotated_bounding_format(format):
        # A rotated box moves with its centre; its size and angle stay.
        shape, dtype = bounding_boxes.shape, bounding_boxes.dtype
        c = _convert_format(bounding_boxes.reshape(-1, shape[-1]), format,
                            BoundingBoxFormat.CXCYWHR)
        moved = ember.cat([move(c[:, :2].clone()), c[:, 2:]], dim=1)
        if clamping_mode is not None:
            moved = _clamp_boxes(moved, BoundingBoxFormat.CXCYWHR, canvas_size, clamping_mode)
        return _convert_format(moved, BoundingBoxFormat.CXCYWHR, format).to(dtype).reshape(shape)
    return _move_boxes(bounding_boxes, format, move, canvas_size, clamping_mode,
                       int_convert=True, int_envelope=True)


def elastic_keypoints(keypoints, canvas_size, displacement):
    """Moves points by the inverse of an elastic displacement field ``(1, H, W, 2)``."""
    return _move_keypoints(keypoints, _elastic_points(canvas_size, displacement, ceil=False))
