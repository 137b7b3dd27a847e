"""Colour transforms: jitter, grayscale, inversion, posterization, solarization, sharpness,
contrast and histogram equalization."""

from __future__ import annotations

import numbers

import ember
from ember import nn
from embervision.transforms import _functional_color as F
from embervision.transforms._utils import get_dimensions

__all__ = [
    "ColorJitter",
    "Grayscale",
    "RandomAdjustSharpness",
    "RandomAutocontrast",
    "RandomEqualize",
    "RandomGrayscale",
    "RandomInvert",
    "RandomPosterize",
    "RandomSolarize",
]


def _uniform(lo, hi):
    return float(ember.empty(1).uniform_(lo, hi).item())


class ColorJitter(nn.Module):
    """Randomly changes brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness (float or (min, max)): factor range, ``[max(0, 1 - b), 1 + b]`` for a number.
        contrast (float or (min, max)): likewise.
        saturation (float or (min, max)): likewise.
        hue (float or (min, max)): shift range, ``[-h, h]`` for a number, within
            ``[-0.5, 0.5]``.
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """A random order of the four adjustments and their factors (``None`` when off)."""
        order = ember.randperm(4)
        factors = [None if r is None else _uniform(r[0], r[1])
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def forward(self, img):
        order, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation,
                                            self.hue)
        for fn_id in order.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def extra_repr(self) -> str:
        return (f"brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue}")


class Grayscale(nn.Module):
    """Converts the image to grayscale with ``num_output_channels`` (1 or 3) channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(nn.Module):
    """Converts the image to grayscale (keeping its channel count) with probability ``p``."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        channels = get_dimensions(img)[0]
        if ember.rand(1).item() < self.p:
            return F.rgb_to_grayscale(img, channels)
        return img


class _RandomApplied(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, img):
        if ember.rand(1).item() < self.p:
            return self._apply(img)
        return img


class RandomInvert(_RandomApplied):
    """Inverts the colours with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        super().__init__(p)

    def _apply(self, img):
        return F.invert(img)


class RandomPosterize(_RandomApplied):
    """Keeps ``bits`` bits of each channel with probability ``p`` (default 0.5)."""

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _apply(self, img):
        return F.posterize(img, self.bits)


class RandomSolarize(_RandomApplied):
    """Inverts the pixels above ``threshold`` with probability ``p`` (default 0.5)."""

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _apply(self, img):
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomApplied):
    """Adjusts the sharpness by ``sharpness_factor`` with probability ``p`` (default 0.5)."""

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)


class RandomAutocontrast(_RandomApplied):
    """Maximizes the contrast of each channel with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        super().__init__(p)

    def _apply(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomApplied):
    """Equalizes the histogram with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        super().__init__(p)

    def _apply(self, img):
        return F.equalize(img)
