"""Normalization, blurring, noise, dtype conversion and sanitizing of boxes and points."""

from __future__ import annotations

import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms import _functional_misc as _classic
from embervision.transforms._functional_conversion import convert_image_dtype
from embervision.transforms.v2.functional._meta import _convert_format
from embervision.transforms.v2.functional._utils import (
    _dispatch,
    _register_kernel_internal,
    is_pure_tensor,
)
from embervision.tv_tensors import BoundingBoxFormat
from embervision.tv_tensors._bounding_boxes import _parse_format
from embervision.tv_tensors._tv_tensor import _plain

__all__ = [
    "convert_image_dtype",
    "gaussian_blur", "gaussian_blur_image", "gaussian_blur_video",
    "gaussian_noise", "gaussian_noise_image", "gaussian_noise_video",
    "normalize", "normalize_image", "normalize_video",
    "sanitize_bounding_boxes", "sanitize_keypoints",
    "to_dtype", "to_dtype_image", "to_dtype_video",
]


def _register_tensor(functional, image_kernel, video_kernel, pil=False):
    _register_kernel_internal(functional, ember.Tensor)(image_kernel)
    _register_kernel_internal(functional, tv_tensors.Image)(image_kernel)
    _register_kernel_internal(functional, tv_tensors.Video)(video_kernel)
    if pil:
        _register_kernel_internal(functional, PIL.Image.Image)(image_kernel)


def normalize(inpt, mean, std, inplace=False):
    """Normalizes a float image or video channel by channel; see
    :class:`~embervision.transforms.v2.Normalize`."""
    return _dispatch(normalize, inpt, mean=mean, std=std, inplace=inplace)


def normalize_image(image, mean, std, inplace=False):
    """The image kernel of :func:`normalize`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.normalize(image, mean, std, inplace)


def normalize_video(video, mean, std, inplace=False):
    """The video kernel of :func:`normalize`: a ``(..., T, C, H, W)`` tensor."""
    return normalize_image(video, mean, std, inplace)


_register_tensor(normalize, normalize_image, normalize_video)


def gaussian_blur(inpt, kernel_size, sigma=None):
    """Gaussian blur of an image or video; see :class:`~embervision.transforms.v2.GaussianBlur`."""
    return _dispatch(gaussian_blur, inpt, kernel_size=kernel_size, sigma=sigma)


def gaussian_blur_image(image, kernel_size, sigma=None):
    """The image kernel of :func:`gaussian_blur`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.gaussian_blur(image, kernel_size, sigma)


def gaussian_blur_video(video, kernel_size, sigma=None):
    """The video kernel of :func:`gaussian_blur`: a ``(..., T, C, H, W)`` tensor."""
    return gaussian_blur_image(video, kernel_size, sigma)


_register_tensor(gaussian_blur, gaussian_blur_image, gaussian_blur_video, pil=True)


def gaussian_noise(inpt, mean=0.0, sigma=0.1, clip=True):
    """Adds Gaussian noise ``N(mean, sigma**2)`` to a float image or video in ``[0, 1]``; see
    :class:`~embervision.transforms.v2.GaussianNoise`."""
    return _dispatch(gaussian_noise, inpt, mean=mean, sigma=sigma, clip=clip)


def gaussian_noise_image(image, mean=0.0, sigma=0.1, clip=True):
    """The image kernel of :func:`gaussian_noise`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    if not image.is_floating_point():
        raise ValueError(f"Input tensor is expected to be in float dtype, got dtype={image.dtype}")
    if sigma < 0:
        raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
    out = image + (mean + ember.randn_like(image) * sigma)
    return out.clamp(0, 1) if clip else out


def gaussian_noise_video(video, mean=0.0, sigma=0.1, clip=True):
    """The video kernel of :func:`gaussian_noise`: a ``(..., T, C, H, W)`` tensor."""
    return gaussian_noise_image(video, mean, sigma, clip)


_register_tensor(gaussian_noise, gaussian_noise_image, gaussian_noise_video)


def to_dtype(inpt, dtype=ember.float32, scale=False):
    """Converts to ``dtype``; with ``scale`` image values are rescaled to the new dtype's
    range (masks, boxes and points are only cast); see
    :class:`~embervision.transforms.v2.ToDtype`."""
    return _dispatch(to_dtype, inpt, dtype=dtype, scale=scale)


def to_dtype_image(image, dtype=ember.float32, scale=False):
    """The image kernel of :func:`to_dtype`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    if not scale:
        return image.to(dtype)
    return convert_image_dtype(image, dtype)


def to_dtype_video(video, dtype=ember.float32, scale=False):
    """The video kernel of :func:`to_dtype`: a ``(..., T, C, H, W)`` tensor."""
    return to_dtype_image(video, dtype, scale)


def _to_dtype_cast(inpt, dtype, scale=False):
    return inpt.to(dtype)


_register_tensor(to_dtype, to_dtype_image, to_dtype_video)
for _cls in (tv_tensors.Mask, tv_tensors.BoundingBoxes, tv_tensors.KeyPoints):
    _register_kernel_internal(to_dtype, _cls, tv_tensor_wrapper=False)(_to_dtype_cast)


def _valid_boxes(boxes, format, canvas_size, min_size, min_area):
    xyxy = _convert_format(boxes, format, BoundingBoxFormat.XYXY)
    ws, hs = xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]
    h, w = canvas_size
    valid = (ws >= min_size) & (hs >= min_size) & (xyxy >= 0).all(dim=-1)
    valid = valid & (xyxy[:, 0] <= w) & (xyxy[:, 2] <= w) & (xyxy[:, 1] <= h) & (xyxy[:, 3] <= h)
    return valid & (ws * hs >= min_area)


def sanitize_bounding_boxes(bounding_boxes, format=None, canvas_size=None, min_size=1.0,
                            min_area=1.0):
    """Removes degenerate boxes: smaller than ``min_size`` on a side or ``min_area`` in area,
    or reaching outside the canvas.

    Returns:
        ``(boxes, valid)``: the boxes kept and the boolean mask of those kept.
    """
    if is_pure_tensor(bounding_boxes):
        if format is None or canvas_size is None:
            raise ValueError("format and canvas_size cannot be None if bounding_boxes is a pure "
                             "tensor.")
        format = _parse_format(format)
        valid = _valid_boxes(bounding_boxes, format, canvas_size, min_size, min_area)
        return bounding_boxes[valid], valid
    if isinstance(bounding_boxes, tv_tensors.BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("format and canvas_size must be None when bounding_boxes is a "
                             "tv_tensors.BoundingBoxes instance.")
        valid = _valid_boxes(_plain(bounding_boxes), bounding_boxes.format,
                             bounding_boxes.canvas_size, min_size, min_area)
        return tv_tensors.wrap(_plain(bounding_boxes)[valid], like=bounding_boxes), valid
    raise ValueError("bounding_boxes must be a tv_tensors.BoundingBoxes instance or a pure "
                     f"tensor, got {type(bounding_boxes)} instead.")


def _valid_points(points, canvas_size):
    h, w = canvas_size
    x, y = points[..., 0], points[..., 1]
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    if points.ndim <= 2:
        return inside.reshape(-1)
    return inside.reshape(points.shape[0], -1).all(dim=1)


def sanitize_keypoints(key_points, canvas_size=None):
    """Removes key points outside the canvas (``0 <= x < W``, ``0 <= y < H``); for groups
    ``(N, ..., 2)`` a group goes when any of its points is outside.

    Returns:
        ``(points, valid)``: the points kept and the boolean mask over the first dimension.
    """
    if is_pure_tensor(key_points):
        if canvas_size is None:
            raise ValueError("canvas_size cannot be None if key_points is a pure tensor.")
        valid = _valid_points(key_points, canvas_size)
        return key_points[valid], valid
    if isinstance(key_points, tv_tensors.KeyPoints):
        if canvas_size is not None:
            raise ValueError("canvas_size must be None when key_points is a tv_tensors.KeyPoints "
                             "instance.")
        valid = _valid_points(_plain(key_points), key_points.canvas_size)
        return tv_tensors.wrap(_plain(key_points)[valid], like=key_points), valid
    raise ValueError("key_points must be a tv_tensors.KeyPoints instance or a pure tensor, got "
                     f"{type(key_points)} instead.")
