"""Transforms between PIL images, NumPy arrays and tensors, and between dtypes."""

from __future__ import annotations

import ember
from ember import nn
from embervision.transforms import _functional_conversion as F

__all__ = ["ConvertImageDtype", "PILToTensor", "ToPILImage", "ToTensor"]


class ToTensor:
    """Converts a PIL image or an ``(H, W, C)`` uint8 array to a ``(C, H, W)`` float tensor
    in ``[0, 1]``; see :func:`~embervision.transforms.functional.to_tensor`."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """Converts a PIL image to a ``(C, H, W)`` tensor of the same dtype, without scaling."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """Converts a ``(C, H, W)`` tensor or an ``(H, W, C)`` array to a PIL image.

    Args:
        mode (str, optional): the PIL mode; inferred when ``None``.
    """

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mode={self.mode})"


class ConvertImageDtype(nn.Module):
    """Converts an image tensor to ``dtype``, scaling its values; see
    :func:`~embervision.transforms.functional.convert_image_dtype`."""

    def __init__(self, dtype=ember.float32):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)
