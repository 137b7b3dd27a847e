"""Automatic augmentation policies in v2: AutoAugment, RandAugment, TrivialAugmentWide, AugMix.

The policies and their operations are the classic ones (``embervision.transforms.autoaugment``);
v2 adds the input handling: the one image or video of a sample is augmented and the other
leaves pass through; boxes and masks are refused, as torchvision does.
"""

from __future__ import annotations

import PIL.Image

from embervision import transforms as _v1
from embervision import tv_tensors
from embervision.transforms._utils import InterpolationMode, interpolation_mode
from embervision.transforms.autoaugment import AutoAugmentPolicy
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2._utils import (
    _get_fill,
    _setup_fill_arg,
    tree_flatten,
    tree_unflatten,
)
from embervision.transforms.v2.functional._utils import is_pure_tensor
from embervision.tv_tensors._tv_tensor import _plain

__all__ = ["AugMix", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


class _AutoAugmentBase(Transform):
    def __init__(self, interpolation, fill):
        super().__init__()
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def _policy(self, fill):
        raise NotImplementedError(f"{type(self).__name__} must define _policy()")

    def forward(self, *inputs):
        flat_inputs, spec = tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        needs = self._needs_transform_list(flat_inputs)
        found = []
        for k, (inpt, need) in enumerate(zip(flat_inputs, needs)):
            if not need:
                continue
            if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.Mask,
                                 tv_tensors.KeyPoints)):
                raise TypeError(f"Inputs of type {type(inpt).__name__} are not supported by "
                                f"{type(self).__name__}()")
            if isinstance(inpt, (tv_tensors.Image, tv_tensors.Video, PIL.Image.Image)) or \
                    is_pure_tensor(inpt):
                found.append(k)
        if not found:
            raise TypeError("Found no image in the sample.")
        if len(found) > 1:
            raise TypeError(f"Auto augment transformations are only properly defined for a single "
                            f"image or video, but found {len(found)}.")
        k = found[0]
        inpt = flat_inputs[k]
        policy = self._policy(_get_fill(self._fill, type(inpt)))
        if isinstance(inpt, tv_tensors.TVTensor):
            out = tv_tensors.wrap(policy(_plain(inpt)), like=inpt)
        else:
            out = policy(inpt)
        flat_inputs = list(flat_inputs)
        flat_inputs[k] = out
        return tree_unflatten(flat_inputs, spec)


class AutoAugment(_AutoAugmentBase):
    """AutoAugment (Cubuk et al., 2019) with the learned ``policy``.

    Args:
        policy (AutoAugmentPolicy): Default: ``IMAGENET``.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number, sequence or dict, optional): the value outside the image.
    """

    _v1_transform_cls = _v1.AutoAugment

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__(interpolation, fill)
        self.policy = policy

    def _policy(self, fill):
        return _v1.AutoAugment(self.policy, self.interpolation, fill)


class RandAugment(_AutoAugmentBase):
    """RandAugment (Cubuk et al., 2020): ``num_ops`` random operations of ``magnitude``.

    Args:
        num_ops (int): Default: 2.
        magnitude (int): Default: 9.
        num_magnitude_bins (int): Default: 31.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number, sequence or dict, optional).
    """

    _v1_transform_cls = _v1.RandAugment

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation, fill)
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins

    def _policy(self, fill):
        return _v1.RandAugment(self.num_ops, self.magnitude, self.num_magnitude_bins,
                               self.interpolation, fill)


class TrivialAugmentWide(_AutoAugmentBase):
    """TrivialAugment Wide (Müller and Hutter, 2021): one random operation of a random
    magnitude.

    Args:
        num_magnitude_bins (int): Default: 31.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number, sequence or dict, optional).
    """

    _v1_transform_cls = _v1.TrivialAugmentWide

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation, fill)
        self.num_magnitude_bins = num_magnitude_bins

    def _policy(self, fill):
        return _v1.TrivialAugmentWide(self.num_magnitude_bins, self.interpolation, fill)


class AugMix(_AutoAugmentBase):
    """AugMix (Hendrycks et al., 2020): a Dirichlet mix of ``mixture_width`` augmentation
    chains, blended with the original by a Beta weight.

    Args:
        severity (int): Default: 3.
        mixture_width (int): Default: 3.
        chain_depth (int): ``-1`` draws it from ``[1, 3]``. Default: -1.
        alpha (float): Default: 1.
        all_ops (bool): Default: ``True``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number, sequence or dict, optional).
    """

    _v1_transform_cls = _v1.AugMix

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__(interpolation, fill)
        if not 1 <= severity <= 10:
            raise ValueError(f"The severity must be between [1, 10]. Got {severity} instead.")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops

    def _policy(self, fill):
        return _v1.AugMix(self.severity, self.mixture_width, self.chain_depth, self.alpha,
                          self.all_ops, self.interpolation, fill)
