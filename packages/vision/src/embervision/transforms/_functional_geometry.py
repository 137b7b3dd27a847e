"""Geometric transforms of PIL images and ``(..., C, H, W)`` tensors.

Tensors go through ember's ``interpolate``, ``pad`` and ``grid_sample``, so batches of images
are transformed in one call.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageOps

import ember
import ember.nn.functional as F
from embervision.transforms._utils import (
    PIL_INTERPOLATION,
    InterpolationMode,
    as_batch,
    cast_back,
    check_image,
    from_batch,
    get_dimensions,
    interpolation_mode,
    is_pil,
    to_float,
)

__all__ = [
    "affine",
    "center_crop",
    "crop",
    "elastic_transform",
    "five_crop",
    "hflip",
    "pad",
    "perspective",
    "resize",
    "resized_crop",
    "rotate",
    "ten_crop",
    "vflip",
]


def _setup_size(size, what="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return int(size[0]), int(size[0])
    if not isinstance(size, Sequence) or len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {what}.")
    return int(size[0]), int(size[1])


def _resized_output_size(h: int, w: int, size, max_size):
    if size is None or len(size) == 1:
        if size is None:
            if max_size is None:
                raise ValueError("If size is None, then max_size must be a positive integer")
            long, short = (w, h) if w >= h else (h, w)
            new_long = max_size
            new_short = int(max_size * short / long)
        else:
            short, long = (w, h) if w <= h else (h, w)
            new_short, new_long = size[0], int(size[0] * long / short)
            if max_size is not None:
                if max_size <= size[0]:
                    raise ValueError(
                        f"max_size = {max_size} must be strictly greater than the requested "
                        f"size for the smaller edge size = {size}"
                    )
                if new_long > max_size:
                    new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)
    if max_size is not None:
        raise ValueError(
            "max_size should only be passed if size specifies the length of the smaller edge, "
            "i.e. size should be an int or a sequence of length 1 in torchscript mode."
        )
    return int(size[0]), int(size[1])


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resizes an image to ``size``.

    Args:
        img (PIL Image or Tensor): the image, ``(..., C, H, W)`` for a tensor.
        size (sequence or int): ``(h, w)``, or the length of the smaller edge (the larger one
            keeps the aspect ratio), or ``None`` with ``max_size``.
        interpolation (InterpolationMode): Default: ``BILINEAR``. Tensors take ``NEAREST``,
            ``NEAREST_EXACT``, ``BILINEAR`` and ``BICUBIC``.
        max_size (int, optional): the largest the longer edge may be.
        antialias (bool): antialias when downsampling tensors with bilinear or bicubic
            interpolation (PIL always antialiases). Default: ``True``.

    Examples::

        >>> resize(ember.rand(2, 3, 40, 60), 20).shape
        ember.Size([2, 3, 20, 30])
    """
    interpolation = interpolation_mode(interpolation)
    if isinstance(size, numbers.Number):
        size = [int(size)]
    elif size is not None:
        size = list(size)
        if len(size) not in (1, 2):
            raise ValueError(
                f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} "
                "element tuple/list"
            )
    _, h, w = get_dimensions(img)
    oh, ow = _resized_output_size(h, w, size, max_size)
    if is_pil(img):
        if (oh, ow) == (h, w):
            return img
        return img.resize((ow, oh), PIL_INTERPOLATION[interpolation])
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                             InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"Tensors take nearest, nearest-exact, bilinear and bicubic "
                         f"interpolation, not {interpolation.value}")
    if (oh, ow) == (h, w):
        return img
    batch, lead = as_batch(img)
    x, dtype = to_float(batch)
    if interpolation in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        out = F.interpolate(x, size=[oh, ow], mode=interpolation.value, align_corners=False,
                            antialias=antialias)
    else:
        out = F.interpolate(x, size=[oh, ow], mode=interpolation.value)
    return from_batch(cast_back(out, dtype), lead)


def _pad_amounts(padding):
    if isinstance(padding, numbers.Number):
        if not isinstance(padding, int):
            raise TypeError("Got inappropriate padding arg")
        return [padding] * 4
    if not isinstance(padding, Sequence) or len(padding) not in (1, 2, 4):
        raise ValueError(
            "Padding must be an int or a 1, 2, or 4 element tuple, not a "
            f"{len(padding) if isinstance(padding, Sequence) else type(padding).__name__} "
            "element tuple"
        )
    padding = [int(p) for p in padding]
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return padding  # left, top, right, bottom


def _symmetric_index(n: int, before: int, after: int) -> ember.Tensor:
    idx = np.arange(-before, n + after)
    period = 2 * n
    idx = np.mod(idx, period)
    idx = np.where(idx >= n, period - 1 - idx, idx)
    return ember.from_numpy(idx.astype(np.int64))


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """Pads the image on each side.

    Args:
        img (PIL Image or Tensor): the image.
        padding (int or sequence): all sides, ``(left/right, top/bottom)`` or
            ``(left, top, right, bottom)``. Negative padding crops.
        fill (number or tuple): the value for ``constant`` mode.
        padding_mode (str): ``constant``, ``edge``, ``reflect`` or ``symmetric``.
    """
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _pad_amounts(padding)
    if is_pil(img):
        # Negative amounts crop first, then np.pad / ImageOps.expand pad the rest.
        w, h = img.size
        img = img.crop((max(-left, 0), max(-top, 0), w - max(-right, 0), h - max(-bottom, 0)))
        left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
        if padding_mode == "constant":
            if isinstance(fill, Sequence) and len(fill) == 1:
                fill = fill[0]
            if isinstance(fill, Sequence):
                fill = tuple(int(v) for v in fill)
            return ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
        mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
        arr = np.asarray(img)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
        out = np.pad(arr, widths, mode=mode)
        result = Image.fromarray(out, img.mode if img.mode != "P" else "P")
        if img.mode == "P":
            result.putpalette(img.getpalette())
        return result
    check_image(img)
    if padding_mode == "symmetric":
        h, w = img.shape[-2], img.shape[-1]
        if any(p < 0 for p in (left, top, right, bottom)):
            img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
            left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
            h, w = img.shape[-2], img.shape[-1]
        rows = _symmetric_index(h, top, bottom).to(img.device)
        cols = _symmetric_index(w, left, right).to(img.device)
        return img.index_select(-2, rows).index_select(-1, cols)
    batch, lead = as_batch(img)
    if padding_mode == "constant":
        x = batch
        if isinstance(fill, Sequence):
            if len(fill) != 1:
                raise ValueError("Tensor padding takes a number as fill")
            fill = fill[0]
        out = F.pad(x, (left, right, top, bottom), mode="constant", value=float(fill or 0))
        return from_batch(out.to(img.dtype), lead)
    mode = "replicate" if padding_mode == "edge" else "reflect"
    x, dtype = to_float(batch)
    out = F.pad(x, (left, right, top, bottom), mode=mode)
    return from_batch(out.to(dtype), lead)


def crop(img, top: int, left: int, height: int, width: int):
    """Crops ``img[..., top:top + height, left:left + width]``; outside the image is zero."""
    if is_pil(img):
        return img.crop((left, top, left + width, top + height))
    check_image(img)
    h, w = img.shape[-2], img.shape[-1]
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        inner = img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)]
        amounts = [max(-left, 0), max(-top, 0), max(right - w, 0), max(bottom - h, 0)]
        return pad(inner, amounts, fill=0)
    return img[..., top:bottom, left:right]


def center_crop(img, output_size):
    """Crops the centre of the image; pads with zeros where the crop is larger."""
    ch, cw = _setup_size(output_size, "output_size")
    _, h, w = get_dimensions(img)
    if ch > h or cw > w:
        amounts = [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                   (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0]
        img = pad(img, amounts, fill=0)
        _, h, w = get_dimensions(img)
        if (ch, cw) == (h, w):
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def resized_crop(img, top: int, left: int, height: int, width: int, size,
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
    """Crops the image, then resizes the crop to ``size``."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def hflip(img):
    """Flips the image left to right."""
    if is_pil(img):
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    check_image(img)
    return img.flip(-1)


def vflip(img):
    """Flips the image top to bottom."""
    if is_pil(img):
        return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    check_image(img)
    return img.flip(-2)


def five_crop(img, size):
    """The four corner crops and the central crop: ``(tl, tr, bl, br, center)``."""
    ch, cw = _setup_size(size)
    _, h, w = get_dimensions(img)
    if ch > h or cw > w:
        raise ValueError(f"Requested crop size {(ch, cw)} is bigger than input size {(h, w)}")
    return (crop(img, 0, 0, ch, cw), crop(img, 0, w - cw, ch, cw), crop(img, h - ch, 0, ch, cw),
            crop(img, h - ch, w - cw, ch, cw), center_crop(img, [ch, cw]))


def ten_crop(img, size, vertical_flip: bool = False):
    """:func:`five_crop` of the image and of its flipped version (horizontal by default)."""
    first = five_crop(img, size)
    flipped = vflip(img) if vertical_flip else hflip(img)
    return first + five_crop(flipped, size)


def _inverse_affine_matrix(center, angle, translate, scale, shear):
    # The forward map is T * C * R * S * Sh * C^-1 (translate, centre, rotate-scale-shear);
    # images are resampled by the inverse, which is returned as a 2x3 row-major list.
    rot = math.radians(angle)
    sx, sy = (math.radians(s) for s in shear)
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _fill_list(fill, channels):
    if fill is None:
        return None
    if isinstance(fill, numbers.Number):
        return [float(fill)] * channels
    fill = [float(v) for v in fill]
    if len(fill) == 1:
        return fill * channels
    if len(fill) != channels:
        raise ValueError(
            f"The number of elements in 'fill' does not match the number of channels of the "
            f"image ({len(fill)} != {channels})"
        )
    return fill


def _apply_grid(img: ember.Tensor, grid: ember.Tensor, mode: InterpolationMode, fill):
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR,
                    InterpolationMode.BICUBIC):
        raise ValueError(f"Tensors are resampled with nearest, bilinear or bicubic "
                         f"interpolation, not {mode.value}")
    batch, lead = as_batch(img)
    x, dtype = to_float(batch)
    n, c = x.shape[0], x.shape[1]
    if grid.shape[0] != n:
        grid = grid.expand(n, *grid.shape[1:])
    fill = _fill_list(fill, c)
    if fill is not None:
        x = ember.cat([x, ember.ones(n, 1, *x.shape[2:], dtype=x.dtype, device=x.device)], dim=1)
    out = F.grid_sample(x, grid.to(x.dtype), mode=mode.value, padding_mode="zeros",
                        align_corners=False)
    if fill is not None:
        mask = out[:, -1:]
        out = out[:, :-1]
        fill_t = ember.tensor(fill, dtype=out.dtype, device=out.device).reshape(1, c, 1, 1)
        if mode == InterpolationMode.NEAREST:
            out = ember.where(mask > 0.5, out, fill_t.expand_as(out))
        else:
            out = out * mask + (1.0 - mask) * fill_t
    return from_batch(cast_back(out, dtype), lead)


def _affine_grid(theta, w, h, ow, oh):
    # Output pixel centres in pixels about the image centre, mapped by theta, then normalized
    # to [-1, 1] of the input (align_corners=False).
    # In float32, as torchvision computes it: nearest sampling at half-pixel positions is
    # decided by the last bit.
    f32 = np.float32
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=f32)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh, dtype=f32)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((oh, ow), f32)),
                    axis=-1)
    t = np.asarray(theta, dtype=f32).reshape(2, 3)
    rescaled = t.T / np.array([0.5 * w, 0.5 * h], dtype=f32)
    grid = base.reshape(-1, 3) @ rescaled
    return ember.from_numpy(np.ascontiguousarray(grid.reshape(1, oh, ow, 2)))


def _pil_fill(fill, img):
    if fill is None:
        return None
    bands = len(img.getbands())
    if isinstance(fill, numbers.Number):
        fill = [fill]
    fill = [int(v) if img.mode != "F" else float(v) for v in fill]
    if len(fill) == 1:
        return fill[0] if bands == 1 else tuple(fill * bands)
    if len(fill) != bands:
        raise ValueError(
            f"The number of elements in 'fill' does not match the number of bands of the "
            f"image ({len(fill)} != {bands})"
        )
    return tuple(fill) if bands > 1 else fill[0]


def affine(img, angle: float, translate, scale: float, shear,
           interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """Affine transform about the centre, keeping the image size.

    Args:
        img (PIL Image or Tensor): the image.
        angle (number): rotation in degrees, counter-clockwise.
        translate (sequence of int): horizontal and vertical translation in pixels.
        scale (float): overall scale.
        shear (number or sequence): shear angle(s) in degrees, ``(x, y)``.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number or sequence, optional): the value outside the image. Default: 0.
        center (sequence, optional): the centre in pixels, ``(x, y)``; the image centre when
            ``None``.
    """
    interpolation = interpolation_mode(interpolation)
    if not isinstance(translate, Sequence) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, h, w = get_dimensions(img)
    if is_pil(img):
        center_px = [w * 0.5, h * 0.5] if center is None else list(center)
        matrix = _inverse_affine_matrix(center_px, angle, translate, scale, shear)
        return img.transform((w, h), Image.Transform.AFFINE, matrix,
                             PIL_INTERPOLATION[interpolation], fillcolor=_pil_fill(fill, img))
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, (w, h))]
    matrix = _inverse_affine_matrix(center_f, angle, [float(t) for t in translate], scale, shear)
    grid = _affine_grid(matrix, w, h, w, h).to(img.device)
    return _apply_grid(img, grid, interpolation, fill)


def _expanded_size(matrix, w, h):
    corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                        [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], dtype=np.float32)
    # float32 as torchvision computes it, so that the sizes agree to the pixel.
    theta = np.array(matrix, dtype=np.float32).reshape(2, 3)
    pts = corners @ theta.T
    shift = np.array([0.5 * w, 0.5 * h], dtype=np.float32)
    lo, hi = pts.min(axis=0) + shift, pts.max(axis=0) + shift
    # Truncating to 1e-4 first keeps ceil(1e-15) from adding a pixel (Pillow's rule).
    tol = 1e-4
    size = np.ceil(np.trunc(hi / tol) * tol) - np.floor(np.trunc(lo / tol) * tol)
    return int(size[0]), int(size[1])


def rotate(img, angle: float, interpolation=InterpolationMode.NEAREST, expand: bool = False,
           center=None, fill=None):
    """Rotates the image by ``angle`` degrees counter-clockwise.

    Args:
        img (PIL Image or Tensor): the image.
        angle (number): degrees, counter-clockwise.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        expand (bool): grow the output to hold the whole rotated image. Default: ``False``.
        center (sequence, optional): the centre of rotation ``(x, y)`` in pixels.
        fill (number or sequence, optional): the value outside the image. Default: 0.
    """
    interpolation = interpolation_mode(interpolation)
    if is_pil(img):
        return img.rotate(angle, PIL_INTERPOLATION[interpolation], expand, center,
                          fillcolor=_pil_fill(fill, img))
    check_image(img)
    _, h, w = get_dimensions(img)
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, (w, h))]
    matrix = _inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    ow, oh = _expanded_size(matrix, w, h) if expand else (w, h)
    grid = _affine_grid(matrix, w, h, ow, oh).to(img.device)
    return _apply_grid(img, grid, interpolation, fill)


def _perspective_coeffs(startpoints, endpoints):
    # The projective map taking end points to start points: what resampling needs.
    a = np.zeros((8, 8))
    for i, ((ex, ey), (sx, sy)) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey]
        a[2 * i + 1] = [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]
    b = np.asarray(startpoints, dtype=np.float64).reshape(8)
    return np.linalg.lstsq(a, b, rcond=None)[0].tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Perspective transform taking the four ``startpoints`` to the ``endpoints``.

    Args:
        img (PIL Image or Tensor): the image.
        startpoints (list of [x, y]): the corners of the original image: top-left, top-right,
            bottom-right, bottom-left.
        endpoints (list of [x, y]): where those corners go.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number or sequence, optional): the value outside the image. Default: 0.
    """
    interpolation = interpolation_mode(interpolation)
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError("Please provide exactly four corners for startpoints and endpoints")
    coeffs = _perspective_coeffs(startpoints, endpoints)
    if is_pil(img):
        return img.transform(img.size, Image.Transform.PERSPECTIVE, coeffs,
                             PIL_INTERPOLATION[interpolation], fillcolor=_pil_fill(fill, img))
    check_image(img)
    return _perspective_tensor(img, coeffs, interpolation, fill)


def _perspective_tensor(img, coeffs, interpolation, fill):
    _, h, w = get_dimensions(img)
    a, b, c, d, e, f, g, hh = coeffs
    xs, ys = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    den = g * xs + hh * ys + 1.0
    gx = (a * xs + b * ys + c) / den / (0.5 * w) - 1.0
    gy = (d * xs + e * ys + f) / den / (0.5 * h) - 1.0
    grid = ember.from_numpy(np.stack([gx, gy], axis=-1)[None].astype(np.float32))
    return _apply_grid(img, grid.to(img.device), interpolation, fill)


def elastic_transform(img, displacement: ember.Tensor, interpolation=InterpolationMode.BILINEAR,
                      fill=None):
    """Moves each pixel by ``displacement``, a ``(1, H, W, 2)`` tensor in ``grid_sample``'s
    normalized coordinates.

    PIL images are converted to tensors and back.
    """
    interpolation = interpolation_mode(interpolation)
    if is_pil(img):
        from embervision.transforms._functional_conversion import pil_to_tensor, to_pil_image

        out = elastic_transform(pil_to_tensor(img), displacement, interpolation, fill)
        return to_pil_image(out, mode=img.mode)
    check_image(img)
    _, h, w = get_dimensions(img)
    if tuple(displacement.shape) != (1, h, w, 2):
        raise ValueError(f"Argument displacement shape should be {(1, h, w, 2)}, "
                         f"but given {tuple(displacement.shape)}")
    xs = (np.arange(w) * 2.0 + 1.0) / w - 1.0
    ys = (np.arange(h) * 2.0 + 1.0) / h - 1.0
    identity = np.stack(np.meshgrid(xs, ys), axis=-1)[None].astype(np.float32)
    grid = ember.from_numpy(identity).to(img.device) + displacement.to(ember.float32)
    return _apply_grid(img, grid, interpolation, fill)
