"""Conversions in v2: PIL images, NumPy arrays, tensors and TVTensors."""

from __future__ import annotations

import numpy as np
import PIL.Image

from embervision import tv_tensors
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2.functional._utils import is_pure_tensor
from embervision.tv_tensors._tv_tensor import _plain

__all__ = ["PILToTensor", "ToImage", "ToPILImage", "ToPureTensor"]


class PILToTensor(Transform):
    """Converts PIL images to ``(C, H, W)`` tensors of the same dtype (no scaling)."""

    _transformed_types = (PIL.Image.Image,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToImage(Transform):
    """Converts pure tensors, ``(H, W, C)`` NumPy arrays and PIL images to
    :class:`~embervision.tv_tensors.Image`."""

    _transformed_types = (is_pure_tensor, PIL.Image.Image, np.ndarray)

    def transform(self, inpt, params):
        return F.to_image(inpt)


class ToPILImage(Transform):
    """Converts images (tensors or NumPy arrays) to PIL images.

    Args:
        mode (str, optional): the PIL mode; inferred when ``None``.
    """

    _transformed_types = (is_pure_tensor, tv_tensors.Image, np.ndarray)

    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode

    def transform(self, inpt, params):
        if isinstance(inpt, tv_tensors.TVTensor):
            inpt = _plain(inpt)
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
    """Converts every TVTensor to a plain ``ember.Tensor`` (sharing the data)."""

    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt, params):
        return _plain(inpt)
