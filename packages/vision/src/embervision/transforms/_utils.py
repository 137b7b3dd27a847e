"""Helpers shared by the functional transforms: image kinds, sizes, dtypes and interpolation."""

from __future__ import annotations

from enum import Enum

from PIL import Image

import ember

__all__ = ["InterpolationMode"]


class InterpolationMode(Enum):
    """Interpolation modes: ``NEAREST``, ``NEAREST_EXACT``, ``BILINEAR``, ``BICUBIC``; ``BOX``,
    ``HAMMING`` and ``LANCZOS`` for PIL images only."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


PIL_INTERPOLATION = {
    InterpolationMode.NEAREST: Image.Resampling.NEAREST,
    InterpolationMode.NEAREST_EXACT: Image.Resampling.NEAREST,
    InterpolationMode.BILINEAR: Image.Resampling.BILINEAR,
    InterpolationMode.BICUBIC: Image.Resampling.BICUBIC,
    InterpolationMode.BOX: Image.Resampling.BOX,
    InterpolationMode.HAMMING: Image.Resampling.HAMMING,
    InterpolationMode.LANCZOS: Image.Resampling.LANCZOS,
}
_FROM_PIL = {
    0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
    4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS,
}

_INT_MAX = {
    ember.uint8: 255, ember.int8: 127, ember.int16: 32767, ember.int32: 2**31 - 1,
    ember.int64: 2**63 - 1, ember.bool: 1,
}


def interpolation_mode(value) -> InterpolationMode:
    """An InterpolationMode from an InterpolationMode, its string value or a PIL constant."""
    if isinstance(value, InterpolationMode):
        return value
    if isinstance(value, str):
        return InterpolationMode(value)
    if isinstance(value, int) and value in _FROM_PIL:
        return _FROM_PIL[value]
    raise TypeError(
        f"interpolation should be an InterpolationMode, a string or a PIL constant, got {value!r}"
    )


def is_pil(img) -> bool:
    return isinstance(img, Image.Image)


def check_image(img) -> None:
    if is_pil(img):
        return
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be a PIL Image or a Tensor, got {type(img).__name__}")
    if img.dim() < 2:
        raise TypeError(f"Tensor is not an image: expected at least 2 dims, got {img.dim()}")


def max_value(dtype) -> float:
    """The value that means 'full intensity' for an image of this dtype (1.0 for floats)."""
    if dtype.is_floating_point:
        return 1.0
    return _INT_MAX[dtype]


def get_dimensions(img) -> list[int]:
    """Returns ``[channels, height, width]`` of a PIL image or a ``(..., C, H, W)`` tensor."""
    check_image(img)
    if is_pil(img):
        channels = len(img.getbands())
        return [channels, img.height, img.width]
    channels = 1 if img.dim() == 2 else int(img.shape[-3])
    return [channels, int(img.shape[-2]), int(img.shape[-1])]


def get_image_size(img) -> list[int]:
    """Returns ``[width, height]`` of an image."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img) -> int:
    """Returns the number of channels of an image."""
    return get_dimensions(img)[0]


def as_batch(img: ember.Tensor):
    """(..., C, H, W) -> (N, C, H, W) and the leading shape to restore."""
    if img.dim() == 2:
        return img.reshape(1, 1, *img.shape), None
    lead = tuple(img.shape[:-3])
    return img.reshape(-1, *img.shape[-3:]), lead


def from_batch(out: ember.Tensor, lead):
    if lead is None:
        return out.reshape(*out.shape[-2:])
    return out.reshape(*lead, *out.shape[-3:])


def to_float(img: ember.Tensor):
    """A float copy of an image for computing, and whether the result must be cast back."""
    if img.is_floating_point():
        return img, img.dtype
    return img.to(ember.float32), img.dtype


def cast_back(out: ember.Tensor, dtype):
    """Casts a float result to an integer image dtype by rounding, as torchvision does."""
    if dtype.is_floating_point:
        return out.to(dtype)
    return out.round().clamp(0, max_value(dtype)).to(dtype)
