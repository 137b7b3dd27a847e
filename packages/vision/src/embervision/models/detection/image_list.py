"""ImageList: a batch of padded images with their sizes before padding."""

from __future__ import annotations

import ember

__all__ = ["ImageList"]


class ImageList:
    """Images of different sizes padded into one tensor.

    Args:
        tensors (Tensor[N, C, H, W]): the padded batch.
        image_sizes (list of (int, int)): each image's ``(height, width)`` before padding.
    """

    def __init__(self, tensors: ember.Tensor, image_sizes) -> None:
        self.tensors = tensors
        self.image_sizes = image_sizes

    def to(self, device) -> ImageList:
        return ImageList(self.tensors.to(device), self.image_sizes)
