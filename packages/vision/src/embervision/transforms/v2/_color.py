"""Colour v2 transforms."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import ember
from embervision import transforms as _v1
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform, _RandomApplyTransform
from embervision.transforms.v2._utils import _rand, _uniform, query_chw

__all__ = [
    "ColorJitter", "Grayscale", "RGB", "RandomAdjustSharpness", "RandomAutocontrast",
    "RandomChannelPermutation", "RandomEqualize", "RandomGrayscale", "RandomInvert",
    "RandomPhotometricDistort", "RandomPosterize", "RandomSolarize",
]


class Grayscale(Transform):
    """Converts images and videos to grayscale with ``num_output_channels`` (1 or 3)."""

    _v1_transform_cls = _v1.Grayscale

    def __init__(self, num_output_channels: int = 1):
        super().__init__()
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return self._call_kernel(F.rgb_to_grayscale, inpt,
                                 num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    """Converts to grayscale with probability ``p`` (default 0.1), keeping the number of
    channels."""

    _v1_transform_cls = _v1.RandomGrayscale

    def __init__(self, p: float = 0.1):
        super().__init__(p=p)

    def make_params(self, flat_inputs):
        return dict(num_input_channels=query_chw(flat_inputs)[0])

    def transform(self, inpt, params):
        return self._call_kernel(F.rgb_to_grayscale, inpt,
                                 num_output_channels=params["num_input_channels"])


class RGB(Transform):
    """Converts images and videos to RGB (one channel is repeated; RGB is kept)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.grayscale_to_rgb, inpt)


class ColorJitter(Transform):
    """Randomly changes brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness (float or tuple, optional): factor range ``[max(0, 1 - b), 1 + b]`` or
            ``(min, max)``.
        contrast (float or tuple, optional): as brightness.
        saturation (float or tuple, optional): as brightness.
        hue (float or tuple, optional): ``[-h, h]`` or ``(min, max)`` in ``[-0.5, 0.5]``.
    """

    _v1_transform_cls = _v1.ColorJitter

    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1.0, bound=(0, float("inf")), clip_first_on_zero=True):
        if value is None:
            return None
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - value, center + value]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, Sequence) and len(value) == 2:
            value = [float(v) for v in value]
        else:
            raise TypeError(f"{name}={value} should be a single number or a sequence with "
                            "length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        return None if value[0] == value[1] == center else (float(value[0]), float(value[1]))

    @staticmethod
    def _generate_value(left, right):
        return _uniform(left, right)

    def make_params(self, flat_inputs):
        def draw(r):
            return None if r is None else self._generate_value(r[0], r[1])

        return dict(fn_idx=ember.randperm(4).tolist(), brightness_factor=draw(self.brightness),
                    contrast_factor=draw(self.contrast),
                    saturation_factor=draw(self.saturation), hue_factor=draw(self.hue))

    def transform(self, inpt, params):
        out = inpt
        ops = [(F.adjust_brightness, params["brightness_factor"]),
               (F.adjust_contrast, params["contrast_factor"]),
               (F.adjust_saturation, params["saturation_factor"]),
               (F.adjust_hue, params["hue_factor"])]
        for fn_id in params["fn_idx"]:
            fn, factor = ops[fn_id]
            if factor is not None:
                out = self._call_kernel(fn, out, factor)
        return out


class RandomChannelPermutation(Transform):
    """Permutes the channels of images and videos at random."""

    def make_params(self, flat_inputs):
        return dict(permutation=ember.randperm(query_chw(flat_inputs)[0]).tolist())

    def transform(self, inpt, params):
        return self._call_kernel(F.permute_channels, inpt, params["permutation"])


class RandomPhotometricDistort(Transform):
    """The photometric distortions of SSD: brightness, contrast (before or after), saturation,
    hue and a channel permutation, each with probability ``p``.

    Args:
        brightness (tuple of float): Default: ``(0.875, 1.125)``.
        contrast (tuple of float): Default: ``(0.5, 1.5)``.
        saturation (tuple of float): Default: ``(0.5, 1.5)``.
        hue (tuple of float): Default: ``(-0.05, 0.05)``.
        p (float): Default: 0.5.
    """

    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5),
                 hue=(-0.05, 0.05), p=0.5):
        super().__init__()
        self.brightness = ColorJitter._check_input(brightness, "brightness")
        self.contrast = ColorJitter._check_input(contrast, "contrast")
        self.saturation = ColorJitter._check_input(saturation, "saturation")
        self.hue = ColorJitter._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                            clip_first_on_zero=False)
        self.p = p

    def make_params(self, flat_inputs):
        num_channels = query_chw(flat_inputs)[0]
        params = {}
        for key, r in (("brightness_factor", self.brightness), ("contrast_factor", self.contrast),
                       ("saturation_factor", self.saturation), ("hue_factor", self.hue)):
            params[key] = (ColorJitter._generate_value(r[0], r[1])
                           if _rand() < self.p and r is not None else None)
        params["contrast_before"] = _rand() < 0.5
        params["channel_permutation"] = (ember.randperm(num_channels).tolist()
                                         if _rand() < self.p else None)
        return params

    def transform(self, inpt, params):
        if params["brightness_factor"] is not None:
            inpt = self._call_kernel(F.adjust_brightness, inpt, params["brightness_factor"])
        if params["contrast_factor"] is not None and params["contrast_before"]:
            inpt = self._call_kernel(F.adjust_contrast, inpt, params["contrast_factor"])
        if params["saturation_factor"] is not None:
            inpt = self._call_kernel(F.adjust_saturation, inpt, params["saturation_factor"])
        if params["hue_factor"] is not None:
            inpt = self._call_kernel(F.adjust_hue, inpt, params["hue_factor"])
        if params["contrast_factor"] is not None and not params["contrast_before"]:
            inpt = self._call_kernel(F.adjust_contrast, inpt, params["contrast_factor"])
        if params["channel_permutation"] is not None:
            inpt = self._call_kernel(F.permute_channels, inpt, params["channel_permutation"])
        return inpt


class RandomEqualize(_RandomApplyTransform):
    """Equalizes the histogram with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomEqualize

    def transform(self, inpt, params):
        return self._call_kernel(F.equalize, inpt)


class RandomInvert(_RandomApplyTransform):
    """Inverts the colours with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomInvert

    def transform(self, inpt, params):
        return self._call_kernel(F.invert, inpt)


class RandomPosterize(_RandomApplyTransform):
    """Keeps ``bits`` bits per channel with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomPosterize

    def __init__(self, bits, p=0.5):
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt, params):
        return self._call_kernel(F.posterize, inpt, bits=self.bits)


class RandomSolarize(_RandomApplyTransform):
    """Inverts pixels at or above ``threshold`` with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomSolarize

    def __init__(self, threshold, p=0.5):
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt, params):
        return self._call_kernel(F.solarize, inpt, threshold=self.threshold)


class RandomAutocontrast(_RandomApplyTransform):
    """Autocontrast with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomAutocontrast

    def transform(self, inpt, params):
        return self._call_kernel(F.autocontrast, inpt)


class RandomAdjustSharpness(_RandomApplyTransform):
    """Adjusts the sharpness by ``sharpness_factor`` with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomAdjustSharpness

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt, params):
        return self._call_kernel(F.adjust_sharpness, inpt, sharpness_factor=self.sharpness_factor)
