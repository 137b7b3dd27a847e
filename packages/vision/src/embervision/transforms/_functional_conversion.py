"""Conversions between PIL images, NumPy arrays and image tensors, and between image dtypes."""

from __future__ import annotations

import numpy as np
from PIL import Image

import ember
from embervision.transforms._utils import _INT_MAX, is_pil

__all__ = ["convert_image_dtype", "pil_to_tensor", "to_pil_image", "to_tensor"]


def _pil_array(pic: Image.Image) -> np.ndarray:
    if pic.mode == "1":
        arr = np.asarray(pic, dtype=np.uint8) * 255
    elif pic.mode == "I;16":
        arr = np.asarray(pic, dtype=np.int32)
    else:
        arr = np.asarray(pic)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return np.ascontiguousarray(arr.transpose(2, 0, 1))


def pil_to_tensor(pic) -> ember.Tensor:
    """Converts a PIL image to a ``(C, H, W)`` tensor of the same dtype, without scaling.

    Args:
        pic (PIL Image): the image.

    Returns:
        Tensor: the image as a tensor (uint8 for 8-bit images).
    """
    if not is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    return ember.from_numpy(_pil_array(pic))


def to_tensor(pic) -> ember.Tensor:
    """Converts a PIL image or an ``(H, W, C)`` NumPy array to a ``(C, H, W)`` tensor.

    8-bit images are scaled to ``float32`` in ``[0, 1]``; other dtypes keep their values.

    Args:
        pic (PIL Image or numpy.ndarray): the image.
    """
    if is_pil(pic):
        arr = _pil_array(pic)
        if pic.mode == "1":
            arr = arr // 255
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        arr = np.ascontiguousarray(arr.transpose(2, 0, 1))
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if arr.dtype == np.uint8:
        return ember.from_numpy(arr.astype(np.float32) / np.float32(255))
    if arr.dtype == np.bool_ or (is_pil(pic) and pic.mode == "1"):
        return ember.from_numpy(arr.astype(np.float32))
    return ember.from_numpy(arr)


def convert_image_dtype(image: ember.Tensor, dtype=ember.float32) -> ember.Tensor:
    """Converts an image tensor to ``dtype``, scaling its values to the new range.

    Integer images span ``[0, MAX]`` of their dtype, float images ``[0, 1]``.

    Args:
        image (Tensor): the image.
        dtype (ember.dtype): the dtype of the result.

    Raises:
        RuntimeError: for float32 -> int32/int64 and float64 -> int64, which cannot be
            done without overflow.
    """
    if not isinstance(image, ember.Tensor):
        raise TypeError("Input img should be Tensor Image")
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or (
            image.dtype == ember.float64 and dtype == ember.int64
        ):
            raise RuntimeError(
                f"The cast from {image.dtype} to {dtype} cannot be performed safely."
            )
        # 1 - eps so that 1.0 maps to MAX and the bins are of equal width.
        eps = 1e-3
        return (image * (_INT_MAX[dtype] + 1.0 - eps)).to(dtype)
    in_max = _INT_MAX[image.dtype]
    if dtype.is_floating_point:
        return image.to(dtype) / in_max
    out_max = _INT_MAX[dtype]
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return (image.to(ember.int64) // factor).to(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return (image.to(dtype) * factor)


def to_pil_image(pic, mode=None) -> Image.Image:
    """Converts a ``(C, H, W)`` tensor or an ``(H, W, C)`` NumPy array to a PIL image.

    Float data is multiplied by 255 and truncated to uint8, unless ``mode`` is ``"F"``.

    Args:
        pic (Tensor or numpy.ndarray): the image.
        mode (str, optional): the PIL mode of the result; inferred from the channels and
            dtype when ``None``.
    """
    if isinstance(pic, ember.Tensor):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = (pic * 255).to(ember.uint8)
        arr = np.ascontiguousarray(pic.cpu().numpy().transpose(1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        if arr.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")

    channels = arr.shape[2]
    if channels == 1:
        arr = arr[:, :, 0]
        inferred = {np.uint8: "L", np.int16: "I;16", np.int32: "I", np.float32: "F"}
        expected = inferred.get(arr.dtype.type)
        if mode is not None and expected is not None and mode != expected and not (
            mode in ("L", "1") and arr.dtype == np.uint8
        ):
            raise ValueError(
                f"Incorrect mode ({mode}) supplied for input type {arr.dtype}. "
                f"Should be {expected}"
            )
        mode = mode or expected
        if mode is None:
            raise TypeError(f"Input type {arr.dtype} is not supported")
        if mode == "F" and arr.dtype != np.float32:
            arr = arr.astype(np.float32)
        return Image.fromarray(arr, mode) if mode != "1" else Image.fromarray(arr).convert("1")
    allowed = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[channels]
    if mode is not None and mode not in allowed:
        raise ValueError(f"Only modes {allowed} are supported for {channels}D inputs")
    if arr.dtype != np.uint8:
        raise TypeError(f"Input type {arr.dtype} is not supported for {channels} channels")
    return Image.fromarray(np.ascontiguousarray(arr), mode or allowed[0])
