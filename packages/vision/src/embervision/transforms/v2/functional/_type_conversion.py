"""Conversions between PIL images, NumPy arrays, tensors and :class:`tv_tensors.Image`."""

from __future__ import annotations

import numpy as np
import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms._functional_conversion import pil_to_tensor, to_pil_image

__all__ = ["pil_to_tensor", "to_image", "to_pil_image"]


def to_image(inpt) -> tv_tensors.Image:
    """Converts a tensor, an ``(H, W, C)`` NumPy array or a PIL image to a
    :class:`~embervision.tv_tensors.Image` (``(C, H, W)``, values unchanged).

    Examples::

        >>> F.to_image(np.zeros((4, 5, 3), np.uint8)).shape
        ember.Size([3, 4, 5])
    """
    if isinstance(inpt, np.ndarray):
        arr = inpt[..., None] if inpt.ndim == 2 else inpt
        output = ember.from_numpy(np.ascontiguousarray(np.moveaxis(arr, -1, -3)))
    elif isinstance(inpt, PIL.Image.Image):
        output = pil_to_tensor(inpt)
    elif isinstance(inpt, ember.Tensor):
        output = inpt
    else:
        raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but "
                        f"got {type(inpt)} instead.")
    return tv_tensors.Image(output)
