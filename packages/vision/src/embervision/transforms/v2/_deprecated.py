"""v1 conversions kept in v2 for compatibility."""

from __future__ import annotations

import warnings

import numpy as np
import PIL.Image

from embervision.transforms._functional_conversion import to_tensor
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2.functional._utils import is_pure_tensor

__all__ = ["ToTensor"]


class ToTensor(Transform):
    """Deprecated: use ``Compose([ToImage(), ToDtype(ember.float32, scale=True)])``.

    Converts PIL images and ``(H, W, C)`` NumPy arrays to float ``(C, H, W)`` tensors in
    ``[0, 1]``.
    """

    _transformed_types = (is_pure_tensor, PIL.Image.Image, np.ndarray)

    def __init__(self) -> None:
        warnings.warn("The transform `ToTensor()` is deprecated and will be removed in a future "
                      "release. Instead, please use `v2.Compose([v2.ToImage(), "
                      "v2.ToDtype(torch.float32, scale=True)])`.", stacklevel=2)
        super().__init__()

    def transform(self, inpt, params):
        return to_tensor(inpt)
