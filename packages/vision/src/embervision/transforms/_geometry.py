"""Geometric transforms: resizing, cropping, padding, flipping, rotating, warping."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import ember
from ember import nn
from embervision.transforms import _functional_geometry as F
from embervision.transforms._functional_misc import gaussian_blur
from embervision.transforms._utils import InterpolationMode, get_dimensions, interpolation_mode

__all__ = [
    "CenterCrop",
    "ElasticTransform",
    "FiveCrop",
    "Pad",
    "RandomAffine",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomPerspective",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
]


def _uniform(lo: float, hi: float) -> float:
    return float(ember.empty(1).uniform_(lo, hi).item())


def _randint(lo: int, hi: int) -> int:
    return int(ember.randint(lo, hi, (1,)).item())


def _check_range(value, name, center=0.0, bound=(float("-inf"), float("inf"))):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        return [center - value, center + value]
    if not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"If {name} is a sequence, it must be of len 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}")
    return [float(value[0]), float(value[1])]


class Resize(nn.Module):
    """Resizes the image to ``size``; see :func:`~embervision.transforms.functional.resize`.

    Args:
        size (sequence or int): ``(h, w)``, or the length of the smaller edge.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        max_size (int, optional): the largest the longer edge may be.
        antialias (bool): Default: ``True``.
    """

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)) and size is not None:
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def extra_repr(self) -> str:
        return (f"size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias}")


class CenterCrop(nn.Module):
    """Crops the centre of the image to ``size`` (an int gives a square)."""

    def __init__(self, size):
        super().__init__()
        self.size = F._setup_size(size)

    def forward(self, img):
        return F.center_crop(img, self.size)

    def extra_repr(self) -> str:
        return f"size={self.size}"


class Pad(nn.Module):
    """Pads the image; see :func:`~embervision.transforms.functional.pad`."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        F._pad_amounts(padding)
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode}"


class RandomCrop(nn.Module):
    """Crops the image at a random place.

    Args:
        size (sequence or int): ``(h, w)`` of the crop.
        padding (int or sequence, optional): padding applied first.
        pad_if_needed (bool): pad an image smaller than the crop. Default: ``False``.
        fill (number or tuple): fill of the padding. Default: 0.
        padding_mode (str): Default: ``"constant"``.
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = F._setup_size(size)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img, output_size):
        """Random ``(top, left, height, width)`` of a crop of ``output_size``."""
        _, h, w = get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(
                f"Required crop size {(th, tw)} is larger than input image size {(h, w)}"
            )
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = get_dimensions(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = F.pad(img, [tw - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = F.pad(img, [0, th - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def extra_repr(self) -> str:
        return f"size={self.size}, padding={self.padding}"


class RandomResizedCrop(nn.Module):
    """Crops a random area and aspect ratio of the image and resizes it to ``size``.

    Args:
        size (int or sequence): the output size ``(h, w)``.
        scale (tuple of float): range of the crop's area relative to the image.
            Default: ``(0.08, 1.0)``.
        ratio (tuple of float): range of the crop's aspect ratio (log-uniform).
            Default: ``(3/4, 4/3)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: ``True``.
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = F._setup_size(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    @staticmethod
    def get_params(img, scale, ratio):
        """Random ``(top, left, height, width)`` of a crop; ten tries, then a central crop."""
        _, height, width = get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def extra_repr(self) -> str:
        return f"size={self.size}, scale={self.scale}, ratio={self.ratio}"


class FiveCrop(nn.Module):
    """The four corner crops and the central crop of ``size``: a tuple of five images."""

    def __init__(self, size):
        super().__init__()
        self.size = F._setup_size(size)

    def forward(self, img):
        return F.five_crop(img, self.size)


class TenCrop(nn.Module):
    """:class:`FiveCrop` of the image and of its flipped version: a tuple of ten images."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = F._setup_size(size)
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)


class RandomHorizontalFlip(nn.Module):
    """Flips the image left to right with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if ember.rand(1).item() < self.p else img

    def extra_repr(self) -> str:
        return f"p={self.p}"


class RandomVerticalFlip(nn.Module):
    """Flips the image top to bottom with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.vflip(img) if ember.rand(1).item() < self.p else img

    def extra_repr(self) -> str:
        return f"p={self.p}"


def _fill_for(img, fill):
    if isinstance(img, ember.Tensor) and isinstance(fill, (int, float)):
        return [float(fill)] * get_dimensions(img)[0]
    return fill


class RandomRotation(nn.Module):
    """Rotates the image by a random angle in ``degrees`` (``(-d, d)`` for a number ``d``).

    Args:
        degrees (number or sequence): the range of angles.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        expand (bool): grow the output to hold the rotated image. Default: ``False``.
        center (sequence, optional): the centre ``(x, y)``.
        fill (number or sequence): the value outside the image. Default: 0.
    """

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _check_range(degrees, "degrees")
        self.interpolation = interpolation_mode(interpolation)
        self.expand = expand
        self.center = center
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        """A random angle in ``degrees``."""
        return _uniform(float(degrees[0]), float(degrees[1]))

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center,
                        _fill_for(img, self.fill))


class RandomAffine(nn.Module):
    """A random affine transform: rotation, translation, scale and shear.

    Args:
        degrees (number or sequence): range of rotation angles; 0 for none.
        translate (tuple, optional): largest horizontal and vertical shifts, as fractions of
            the width and height.
        scale (tuple, optional): range of the scale factor.
        shear (number or sequence, optional): range(s) of the x (and y) shear angles.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number or sequence): Default: 0.
        center (sequence, optional): the centre ``(x, y)``.
    """

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        self.degrees = _check_range(degrees, "degrees")
        if translate is not None:
            if len(translate) != 2 or not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            if len(scale) != 2 or any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        self.scale = scale
        if shear is not None:
            if isinstance(shear, numbers.Number):
                shear = _check_range(shear, "shear")
            elif len(shear) not in (2, 4):
                raise ValueError("shear should be a sequence of length 2 or 4.")
            shear = [float(s) for s in shear]
        self.shear = shear
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """Random ``(angle, (tx, ty), scale, (shear_x, shear_y))``; ``img_size`` is ``(w, h)``."""
        angle = _uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            translations = (int(round(_uniform(-max_dx, max_dx))),
                            int(round(_uniform(-max_dy, max_dy))))
        else:
            translations = (0, 0)
        scale = 1.0 if scale_ranges is None else _uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        _, h, w = get_dimensions(img)
        angle, translate, scale, shear = self.get_params(self.degrees, self.translate,
                                                         self.scale, self.shear, [w, h])
        return F.affine(img, angle, list(translate), scale, list(shear), self.interpolation,
                        _fill_for(img, self.fill), self.center)


class RandomPerspective(nn.Module):
    """A random perspective transform with probability ``p``.

    Args:
        distortion_scale (float): how far the corners may move, 0 to 1. Default: 0.5.
        p (float): the probability. Default: 0.5.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number or sequence): Default: 0.
    """

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__()
        if not 0 <= distortion_scale <= 1:
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.p = p
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    @staticmethod
    def get_params(width, height, distortion_scale):
        """Random ``(startpoints, endpoints)`` of the four corners."""
        half_h, half_w = height // 2, width // 2
        dh, dw = int(distortion_scale * half_h), int(distortion_scale * half_w)
        topleft = [_randint(0, dw + 1), _randint(0, dh + 1)]
        topright = [_randint(width - dw - 1, width), _randint(0, dh + 1)]
        botright = [_randint(width - dw - 1, width), _randint(height - dh - 1, height)]
        botleft = [_randint(0, dw + 1), _randint(height - dh - 1, height)]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [topleft, topright, botright, botleft]

    def forward(self, img):
        if ember.rand(1).item() >= self.p:
            return img
        _, h, w = get_dimensions(img)
        start, end = self.get_params(w, h, self.distortion_scale)
        return F.perspective(img, start, end, self.interpolation, _fill_for(img, self.fill))


class ElasticTransform(nn.Module):
    """Moves pixels by a random smooth displacement field (elastic deformation).

    Args:
        alpha (float or sequence): strength of the displacement. Default: 50.0.
        sigma (float or sequence): smoothness of the displacement. Default: 5.0.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number or sequence): Default: 0.
    """

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = [float(alpha)] * 2 if isinstance(alpha, numbers.Number) else list(alpha)
        self.sigma = [float(sigma)] * 2 if isinstance(sigma, numbers.Number) else list(sigma)
        if len(self.alpha) == 1:
            self.alpha = self.alpha * 2
        if len(self.sigma) == 1:
            self.sigma = self.sigma * 2
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    @staticmethod
    def get_params(alpha, sigma, size):
        """A random ``(1, H, W, 2)`` displacement for an image of ``size = [H, W]``."""
        parts = []
        for k in range(2):
            d = ember.rand(1, 1, *size) * 2 - 1
            if sigma[k] > 0.0:
                ks = int(8 * sigma[k] + 1)
                ks += 1 - ks % 2
                d = gaussian_blur(d, [ks, ks], [sigma[k], sigma[k]])
            parts.append(d * alpha[k] / size[k])
        return ember.cat(parts, dim=1).permute(0, 2, 3, 1).contiguous()

    def forward(self, img):
        _, h, w = get_dimensions(img)
        displacement = self.get_params(self.alpha, self.sigma, [h, w])
        return F.elastic_transform(img, displacement, self.interpolation,
                                   _fill_for(img, self.fill))
