"""The inference transforms that go with pretrained weights."""

from __future__ import annotations

import ember
from ember import nn
from embervision.transforms import functional as F
from embervision.transforms._utils import InterpolationMode, interpolation_mode

__all__ = ["ImageClassification", "ObjectDetection", "SemanticSegmentation",
           "VideoClassification"]


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


class VideoClassification(nn.Module):
    """Resize each frame, centre crop, scale to ``[0, 1]``, normalize and move the channels
    first: the evaluation preprocessing of the video weights.

    Takes a clip ``(T, C, H, W)`` or a batch of clips ``(N, T, C, H, W)`` and returns
    ``(C, T, h, w)`` or ``(N, C, T, h, w)``, the layout the video models take.

    Args:
        crop_size (tuple of int): ``(h, w)`` of the central crop.
        resize_size (tuple of int): ``(size,)`` for the smaller edge or ``(height, width)``;
            the frames are resized without antialiasing, as the weights were evaluated.
        mean (tuple): Default: Kinetics-400's ``(0.43216, 0.394666, 0.37645)``.
        std (tuple): Default: Kinetics-400's ``(0.22803, 0.22145, 0.216989)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
    """

    def __init__(self, *, crop_size, resize_size, mean=(0.43216, 0.394666, 0.37645),
                 std=(0.22803, 0.22145, 0.216989),
                 interpolation=InterpolationMode.BILINEAR):
        super().__init__()
        self.crop_size = list(crop_size)
        self.resize_size = list(resize_size)
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation_mode(interpolation)

    def forward(self, vid):
        single = vid.ndim < 5
        if single:
            vid = vid.unsqueeze(0)
        n, t, c, h, w = vid.shape
        vid = vid.reshape(-1, c, h, w)
        vid = F.resize(vid, self.resize_size, interpolation=self.interpolation, antialias=False)
        vid = F.center_crop(vid, self.crop_size)
        vid = F.convert_image_dtype(vid, ember.float32)
        vid = F.normalize(vid, mean=self.mean, std=self.std)
        vid = vid.reshape(n, t, c, *self.crop_size).permute(0, 2, 1, 3, 4)
        return vid.squeeze(0) if single else vid

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n"
                f"    resize_size={self.resize_size}\n    mean={self.mean}\n    std={self.std}\n"
                f"    interpolation={self.interpolation}\n)")

    def describe(self) -> str:
        return ("Accepts batched ``(B, T, C, H, W)`` and single ``(T, C, H, W)`` video frame "
                "tensors. The frames are resized to "
                f"``resize_size={self.resize_size}`` using ``interpolation={self.interpolation}``, "
                f"followed by a central crop of ``crop_size={self.crop_size}``. Finally the "
                "values are first rescaled to ``[0.0, 1.0]`` and then normalized using "
                f"``mean={self.mean}`` and ``std={self.std}``. Finally the output dimensions are "
                "permuted to ``(..., C, T, H, W)`` tensors.")
