"""Learned and random augmentation policies: AutoAugment (Cubuk et al., 2018), RandAugment
(Cubuk et al., 2019), TrivialAugment Wide (Müller and Hutter, 2021) and AugMix (Hendrycks et al.,
2019)."""

from __future__ import annotations

import math
from enum import Enum

import numpy as np

import ember
from ember import nn
from embervision.transforms import functional as F
from embervision.transforms._utils import InterpolationMode, interpolation_mode

__all__ = ["AugMix", "AutoAugment", "AutoAugmentPolicy", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name: str, magnitude: float, interpolation, fill):
    """Applies one named augmentation of the policies with the given magnitude."""
    if op_name in ("ShearX", "ShearY"):
        angle = math.degrees(math.atan(magnitude))
        shear = [angle, 0.0] if op_name == "ShearX" else [0.0, angle]
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=shear,
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name in ("TranslateX", "TranslateY"):
        shift = [int(magnitude), 0] if op_name == "TranslateX" else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=shift, scale=1.0, shear=[0.0, 0.0],
                        interpolation=interpolation, fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    enhance = {"Brightness": F.adjust_brightness, "Color": F.adjust_saturation,
               "Contrast": F.adjust_contrast, "Sharpness": F.adjust_sharpness}
    if op_name in enhance:
        return enhance[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert,
             "Identity": lambda x: x}
    if op_name in plain:
        return plain[op_name](img)
    raise ValueError(f"The provided operator {op_name} is not recognized.")


class AutoAugmentPolicy(Enum):
    """The AutoAugment policies learned on ImageNet, CIFAR-10 and SVHN."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# Each sub-policy is two (operation, probability, magnitude bin) steps; "-" has no magnitude.
# Sub-policies are separated by "|" or by line breaks.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: """
        Posterize .4 8 Rotate .6 9 | Solarize .6 5 AutoContrast .6 - | Equalize .8 - Equalize .6 -
        Posterize .6 7 Posterize .6 6 | Equalize .4 - Solarize .2 4 | Equalize .4 - Rotate .8 8
        Solarize .6 3 Equalize .6 - | Posterize .8 5 Equalize 1 - | Rotate .2 3 Solarize .6 8
        Equalize .6 - Posterize .4 6 | Rotate .8 8 Color .4 0 | Rotate .4 9 Equalize .6 -
        Equalize 0 - Equalize .8 - | Invert .6 - Equalize 1 - | Color .6 4 Contrast 1 8
        Rotate .8 8 Color 1 2 | Color .8 8 Solarize .8 7 | Sharpness .4 7 Invert .6 -
        ShearX .6 5 Equalize 1 - | Color .4 0 Equalize .6 - | Equalize .4 - Solarize .2 4
        Solarize .6 5 AutoContrast .6 - | Invert .6 - Equalize 1 - | Color .6 4 Contrast 1 8
        Equalize .8 - Equalize .6 -""",
    AutoAugmentPolicy.CIFAR10: """
        Invert .1 - Contrast .2 6 | Rotate .7 2 TranslateX .3 9 | Sharpness .8 1 Sharpness .9 3
        ShearY .5 8 TranslateY .7 9 | AutoContrast .5 - Equalize .9 - | ShearY .2 7 Posterize .3 7
        Color .4 3 Brightness .6 7 | Sharpness .3 9 Brightness .7 9 | Equalize .6 - Equalize .5 -
        Contrast .6 7 Sharpness .6 5 | Color .7 7 TranslateX .5 8 | Equalize .3 - AutoContrast .4 -
        TranslateY .4 3 Sharpness .2 6 | Brightness .9 6 Color .2 8 | Solarize .5 2 Invert 0 -
        Equalize .2 - AutoContrast .6 - | Equalize .2 - Equalize .6 - | Color .9 9 Equalize .6 -
        AutoContrast .8 - Solarize .2 8 | Brightness .1 3 Color .7 0
        Solarize .4 5 AutoContrast .9 - | TranslateY .9 9 TranslateY .7 9
        AutoContrast .9 - Solarize .8 3 | Equalize .8 - Invert .1 -
        TranslateY .7 9 AutoContrast .9 -""",
    AutoAugmentPolicy.SVHN: """
        ShearX .9 4 Invert .2 - | ShearY .9 8 Invert .7 - | Equalize .6 - Solarize .6 6
        Invert .9 - Equalize .6 - | Equalize .6 - Rotate .9 3 | ShearX .9 4 AutoContrast .8 -
        ShearY .9 8 Invert .4 - | ShearY .9 5 Solarize .2 6 | Invert .9 - AutoContrast .8 -
        Equalize .6 - Rotate .9 3 | ShearX .9 4 Solarize .3 3 | ShearY .8 8 Invert .7 -
        Equalize .9 - TranslateY .6 6 | Invert .9 - Equalize .6 - | Contrast .3 3 Rotate .8 4
        Invert .8 - TranslateY 0 2 | ShearY .7 6 Solarize .4 8 | Invert .6 - Rotate .8 4
        ShearY .3 7 TranslateX .9 3 | ShearX .1 6 Invert .6 - | Solarize .7 2 TranslateY .6 7
        ShearY .8 4 Invert .8 - | ShearX .7 9 TranslateY .8 3 | ShearY .8 5 AutoContrast .7 -
        ShearX .7 2 Invert .1 -""",
}


def _parse_policy(text):
    policies = []
    for sub in text.replace("\n", "|").split("|"):
        words = sub.split()
        if not words:
            continue
        steps = []
        for k in range(0, len(words), 3):
            name, p, m = words[k:k + 3]
            steps.append((name, float(p), None if m == "-" else int(m)))
        policies.append(tuple(steps))
    return policies


def _posterize_bins(num_bins, span):
    return (8 - np.round(np.arange(num_bins) / ((num_bins - 1) / span))).astype(np.int64)


def _fill_for(img, fill):
    if isinstance(img, ember.Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


def _randint(n: int) -> int:
    return int(ember.randint(0, n, (1,)).item())


class AutoAugment(nn.Module):
    """AutoAugment: one of the learned sub-policies, picked at random, applied to the image.

    Tensors should be uint8 ``(..., 1 or 3, H, W)``; PIL images ``L`` or ``RGB``.

    Args:
        policy (AutoAugmentPolicy): Default: ``IMAGENET``.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number or sequence, optional): the value outside the image after geometric ops.
    """

    def __init__(self, policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self.policies = self._get_policies(policy)

    @staticmethod
    def _get_policies(policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _parse_policy(_POLICIES[policy])

    @staticmethod
    def _augmentation_space(num_bins: int, image_size):
        h, w = image_size
        lin = np.linspace
        return {
            "ShearX": (lin(0.0, 0.3, num_bins), True),
            "ShearY": (lin(0.0, 0.3, num_bins), True),
            "TranslateX": (lin(0.0, 150.0 / 331.0 * w, num_bins), True),
            "TranslateY": (lin(0.0, 150.0 / 331.0 * h, num_bins), True),
            "Rotate": (lin(0.0, 30.0, num_bins), True),
            "Brightness": (lin(0.0, 0.9, num_bins), True),
            "Color": (lin(0.0, 0.9, num_bins), True),
            "Contrast": (lin(0.0, 0.9, num_bins), True),
            "Sharpness": (lin(0.0, 0.9, num_bins), True),
            "Posterize": (_posterize_bins(num_bins, 4), False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
            "Invert": (None, False),
        }

    @staticmethod
    def get_params(transform_num: int):
        """A random sub-policy index, two probabilities and two signs."""
        return _randint(transform_num), ember.rand(2), ember.randint(0, 2, (2,))

    def forward(self, img):
        fill = _fill_for(img, self.fill)
        _, h, w = F.get_dimensions(img)
        policy_id, probs, signs = self.get_params(len(self.policies))
        space = self._augmentation_space(10, (h, w))
        for i, (op_name, p, bin_id) in enumerate(self.policies[policy_id]):
            if float(probs[i]) <= p:
                magnitudes, signed = space[op_name]
                magnitude = float(magnitudes[bin_id]) if bin_id is not None else 0.0
                if signed and int(signs[i]) == 0:
                    magnitude = -magnitude
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(nn.Module):
    """RandAugment: ``num_ops`` operations picked uniformly, all at one ``magnitude``.

    Args:
        num_ops (int): Default: 2.
        magnitude (int): the magnitude bin. Default: 9.
        num_magnitude_bins (int): Default: 31.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number or sequence, optional).
    """

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    @staticmethod
    def _augmentation_space(num_bins: int, image_size):
        space = AutoAugment._augmentation_space(num_bins, image_size)
        del space["Invert"]
        return {"Identity": (None, False), **space}

    def forward(self, img):
        fill = _fill_for(img, self.fill)
        _, h, w = F.get_dimensions(img)
        space = self._augmentation_space(self.num_magnitude_bins, (h, w))
        names = list(space)
        for _ in range(self.num_ops):
            op_name = names[_randint(len(names))]
            magnitudes, signed = space[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes is not None else 0.0
            if signed and _randint(2):
                magnitude = -magnitude
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    """TrivialAugment Wide: one operation and one magnitude, both uniformly random.

    Args:
        num_magnitude_bins (int): Default: 31.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number or sequence, optional).
    """

    def __init__(self, num_magnitude_bins: int = 31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    @staticmethod
    def _augmentation_space(num_bins: int):
        lin = np.linspace
        return {
            "Identity": (None, False),
            "ShearX": (lin(0.0, 0.99, num_bins), True),
            "ShearY": (lin(0.0, 0.99, num_bins), True),
            "TranslateX": (lin(0.0, 32.0, num_bins), True),
            "TranslateY": (lin(0.0, 32.0, num_bins), True),
            "Rotate": (lin(0.0, 135.0, num_bins), True),
            "Brightness": (lin(0.0, 0.99, num_bins), True),
            "Color": (lin(0.0, 0.99, num_bins), True),
            "Contrast": (lin(0.0, 0.99, num_bins), True),
            "Sharpness": (lin(0.0, 0.99, num_bins), True),
            "Posterize": (_posterize_bins(num_bins, 6), False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        }

    def forward(self, img):
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        names = list(space)
        op_name = names[_randint(len(names))]
        magnitudes, signed = space[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))]) if magnitudes is not None else 0.0
        if signed and _randint(2):
            magnitude = -magnitude
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


def _sample_dirichlet(alpha, rows: int) -> ember.Tensor:
    # ember has no Dirichlet sampler: a NumPy generator seeded from ember's default generator
    # draws it, so ember.manual_seed still makes AugMix repeatable.
    seed = int(ember.randint(0, 2 ** 62, (1,)).item())
    draws = np.random.default_rng(seed).dirichlet(alpha, size=rows)
    return ember.from_numpy(draws.astype(np.float32))


class AugMix(nn.Module):
    """AugMix (Hendrycks et al., 2019): a Dirichlet-weighted mix of ``mixture_width`` chains of
    random operations, blended with the original by a Beta-distributed weight.

    Tensors should be uint8 ``(..., 1 or 3, H, W)``; PIL images ``L`` or ``RGB``.

    Args:
        severity (int): the largest magnitude bin, 1 to 10. Default: 3.
        mixture_width (int): the number of chains. Default: 3.
        chain_depth (int): operations per chain; a random 1 to 3 when ``<= 0``. Default: -1.
        alpha (float): the Dirichlet and Beta parameter. Default: 1.0.
        all_ops (bool): include brightness, colour, contrast and sharpness. Default: True.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number or sequence, optional).
    """

    _PARAMETER_MAX = 10

    def __init__(self, severity: int = 3, mixture_width: int = 3, chain_depth: int = -1,
                 alpha: float = 1.0, all_ops: bool = True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__()
        if not 1 <= severity <= self._PARAMETER_MAX:
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got "
                             f"{severity} instead.")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size):
        h, w = image_size
        lin = np.linspace
        space = {
            "ShearX": (lin(0.0, 0.3, num_bins), True),
            "ShearY": (lin(0.0, 0.3, num_bins), True),
            "TranslateX": (lin(0.0, w / 3.0, num_bins), True),
            "TranslateY": (lin(0.0, h / 3.0, num_bins), True),
            "Rotate": (lin(0.0, 30.0, num_bins), True),
            "Posterize": (_posterize_bins(num_bins, 4) - 4, False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        }
        if self.all_ops:
            space.update({
                "Brightness": (lin(0.0, 0.9, num_bins), True),
                "Color": (lin(0.0, 0.9, num_bins), True),
                "Contrast": (lin(0.0, 0.9, num_bins), True),
                "Sharpness": (lin(0.0, 0.9, num_bins), True),
            })
        return space

    def forward(self, orig_img):
        is_tensor = isinstance(orig_img, ember.Tensor)
        fill = _fill_for(orig_img, self.fill)
        _, h, w = F.get_dimensions(orig_img)
        img = orig_img if is_tensor else F.pil_to_tensor(orig_img)
        space = self._augmentation_space(self._PARAMETER_MAX, (h, w))
        names = list(space)
        orig_dims = list(img.shape)
        batch = img.reshape([1] * max(4 - img.dim(), 0) + orig_dims)
        rows = batch.shape[0]
        batch_dims = [rows] + [1] * (batch.dim() - 1)
        m = _sample_dirichlet([self.alpha, self.alpha], rows)
        weights = _sample_dirichlet([self.alpha] * self.mixture_width, rows) * m[:, 1:2]
        mix = m[:, 0].reshape(batch_dims) * batch.to(ember.float32)
        for i in range(self.mixture_width):
            aug = batch
            depth = self.chain_depth if self.chain_depth > 0 else 1 + _randint(3)
            for _ in range(depth):
                op_name = names[_randint(len(names))]
                magnitudes, signed = space[op_name]
                magnitude = (float(magnitudes[_randint(self.severity)])
                             if magnitudes is not None else 0.0)
                if signed and _randint(2):
                    magnitude = -magnitude
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix = mix + weights[:, i].reshape(batch_dims) * aug.to(ember.float32)
        mix = mix.reshape(orig_dims).to(img.dtype)
        return mix if is_tensor else F.to_pil_image(mix)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(severity={self.severity}, "
                f"mixture_width={self.mixture_width}, chain_depth={self.chain_depth}, "
                f"alpha={self.alpha}, all_ops={self.all_ops}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
