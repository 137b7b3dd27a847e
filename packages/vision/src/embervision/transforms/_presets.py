"""The inference transforms that go with pretrained weights."""

from __future__ import annotations

import ember
from ember import nn
from embervision.transforms import functional as F
from embervision.transforms._utils import InterpolationMode, interpolation_mode

__all__ = ["ImageClassification", "ObjectDetection", "SemanticSegmentation"]


class ImageClassification(nn.Module):
    """Resize, centre crop, scale to ``[0, 1]`` and normalize: the evaluation preprocessing of
    the classification weights.

    Args:
        crop_size (int): the side of the central crop.
        resize_size (int): the smaller edge after resizing. Default: 256.
        mean (tuple): Default: ImageNet's ``(0.485, 0.456, 0.406)``.
        std (tuple): Default: ImageNet's ``(0.229, 0.224, 0.225)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: True.
    """

    def __init__(self, *, crop_size: int, resize_size: int = 256,
                 mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, ember.float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def extra_repr(self) -> str:
        return (f"crop_size={self.crop_size}, resize_size={self.resize_size}, mean={self.mean}, "
                f"std={self.std}, interpolation={self.interpolation}")


class ObjectDetection(nn.Module):
    """Scale to ``[0, 1]`` float: the evaluation preprocessing of the detection weights (the
    models normalize and resize by themselves)."""

    def forward(self, img):
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        return F.convert_image_dtype(img, ember.float32)

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class SemanticSegmentation(nn.Module):
    """Resize (the smaller edge), scale to ``[0, 1]`` and normalize: the evaluation
    preprocessing of the segmentation weights.

    Args:
        resize_size (int, optional): the smaller edge after resizing; None keeps the size.
        mean (tuple): Default: ImageNet's ``(0.485, 0.456, 0.406)``.
        std (tuple): Default: ImageNet's ``(0.229, 0.224, 0.225)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: True.
    """

    def __init__(self, *, resize_size: int | None, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def forward(self, img):
        if self.resize_size is not None:
            img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                           antialias=self.antialias)
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, ember.float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def extra_repr(self) -> str:
        return (f"resize_size={self.resize_size}, mean={self.mean}, std={self.std}, "
                f"interpolation={self.interpolation}")
