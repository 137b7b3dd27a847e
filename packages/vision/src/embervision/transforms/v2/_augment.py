"""Augmentations of v2: random erasing, JPEG, CutMix and MixUp."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import PIL.Image

import ember
import ember.nn.functional as nnF
from embervision import transforms as _v1
from embervision import tv_tensors
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform, _RandomApplyTransform
from embervision.transforms.v2._utils import (
    _parse_labels_getter,
    _randint,
    _uniform,
    has_any,
    query_chw,
    query_size,
    tree_flatten,
    tree_unflatten,
)
from embervision.transforms.v2.functional._utils import is_pure_tensor
from embervision.tv_tensors._tv_tensor import _plain

__all__ = ["CutMix", "JPEG", "MixUp", "RandomErasing"]


class RandomErasing(_RandomApplyTransform):
    """Erases a random rectangle of images and videos with probability ``p``.

    Args:
        p (float): Default: 0.5.
        scale (tuple of float): range of the erased area relative to the image.
            Default: ``(0.02, 0.33)``.
        ratio (tuple of float): range of its aspect ratio. Default: ``(0.3, 3.3)``.
        value (number, sequence or "random"): the fill; ``"random"`` is standard normal noise.
            Default: 0.
        inplace (bool): Default: ``False``.
    """

    _v1_transform_cls = _v1.RandomErasing

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0.0, inplace=False):
        super().__init__(p=p)
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence) or not isinstance(ratio, Sequence):
            raise TypeError("Scale and ratio should be sequences")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        self.scale = scale
        self.ratio = ratio
        if isinstance(value, numbers.Number):
            self.value = [float(value)]
        elif isinstance(value, str):
            self.value = None
        else:
            self.value = [float(v) for v in value]
        self.inplace = inplace
        self._log_ratio = (math.log(ratio[0]), math.log(ratio[1]))

    def make_params(self, flat_inputs):
        img_c, img_h, img_w = query_chw(flat_inputs)
        if self.value is not None and len(self.value) not in (1, img_c):
            raise ValueError(f"If value is a sequence, it should have either a single value or "
                             f"{img_c} (number of inpt channels)")
        area = img_h * img_w
        for _ in range(10):
            erase_area = area * _uniform(self.scale[0], self.scale[1])
            aspect = math.exp(_uniform(*self._log_ratio))
            h = int(round(math.sqrt(erase_area * aspect)))
            w = int(round(math.sqrt(erase_area / aspect)))
            if not (h < img_h and w < img_w):
                continue
            if self.value is None:
                v = ember.empty(img_c, h, w, dtype=ember.float32).normal_()
            else:
                v = ember.tensor(self.value)[:, None, None]
            return dict(i=_randint(0, img_h - h + 1), j=_randint(0, img_w - w + 1), h=h, w=w, v=v)
        return dict(i=0, j=0, h=img_h, w=img_w, v=None)

    def transform(self, inpt, params):
        if params["v"] is not None:
            inpt = self._call_kernel(F.erase, inpt, **params, inplace=self.inplace)
        return inpt


class JPEG(Transform):
    """Compresses images and videos as JPEG of a random quality.

    Args:
        quality (int or sequence of int): a quality from 1 to 100, or a ``(min, max)`` range.
    """

    def __init__(self, quality):
        super().__init__()
        if isinstance(quality, int):
            quality = [quality, quality]
        elif not (isinstance(quality, Sequence) and len(quality) == 2
                  and all(isinstance(q, int) for q in quality)):
            raise TypeError(f"quality can either be an integer or a sequence of two integers. "
                            f"Got {type(quality)} instead.")
        if not 1 <= quality[0] <= quality[1] <= 100:
            raise ValueError(f"quality must be an integer from 1 to 100, got quality={quality}")
        self.quality = list(quality)

    def make_params(self, flat_inputs):
        return dict(quality=_randint(self.quality[0], self.quality[1] + 1))

    def transform(self, inpt, params):
        return self._call_kernel(F.jpeg, inpt, quality=params["quality"])


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__()
        self.alpha = float(alpha)
        self._dist = ember.distributions.Beta(ember.tensor([self.alpha]),
                                              ember.tensor([self.alpha]))
        self.num_classes = num_classes
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, spec = tree_flatten(inputs)
        needs = self._needs_transform_list(flat_inputs)
        if has_any(flat_inputs, PIL.Image.Image, tv_tensors.BoundingBoxes, tv_tensors.Mask,
                   tv_tensors.KeyPoints):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding "
                             "boxes, keypoints and masks.")
        labels = self._labels_getter(inputs)
        if not isinstance(labels, ember.Tensor):
            raise ValueError(f"The labels must be a torch.Tensor, but got {type(labels)} "
                             "instead.")
        if labels.ndim not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or "
                             "probability based with shape (batch_size, num_classes), but got "
                             f"a tensor of shape {tuple(labels.shape)} instead.")
        if labels.ndim == 2 and self.num_classes is not None and labels.shape[-1] != \
                self.num_classes:
            raise ValueError(f"When passing 2D labels, the number of elements in last dimension "
                             f"must match num_classes: {labels.shape[-1]} != {self.num_classes}. "
                             "You can Leave num_classes to None.")
        if labels.ndim == 1 and self.num_classes is not None and labels.numel() and \
                int(labels.max()) >= self.num_classes:
            raise ValueError(f"Class index {int(labels.max())} is out of range for "
                             f"num_classes={self.num_classes}")
        params = {"labels": labels, "batch_size": labels.shape[0],
                  **self.make_params([i for i, n in zip(flat_inputs, needs) if n])}
        needs[next(k for k, inpt in enumerate(flat_inputs) if inpt is labels)] = True
        outputs = [self.transform(inpt, params) if n else inpt
                   for inpt, n in zip(flat_inputs, needs)]
        return tree_unflatten(outputs, spec)

    def _check_image_or_video(self, inpt, *, batch_size):
        expected = 5 if isinstance(inpt, tv_tensors.Video) else 4
        if inpt.ndim != expected:
            raise ValueError(f"Expected a batched input with {expected} dims, but got "
                             f"{inpt.ndim} dimensions instead.")
        if inpt.shape[0] != batch_size:
            raise ValueError(f"The batch size of the image or video does not match the batch "
                             f"size of the labels: {inpt.shape[0]} != {batch_size}.")

    def _mixup_label(self, label, *, lam):
        if label.ndim == 1:
            label = nnF.one_hot(label, num_classes=-1 if self.num_classes is None
                                else self.num_classes)
        if not label.is_floating_point():
            label = label.float()
        return label.roll(1, 0) * (1.0 - lam) + label * lam

    def _is_image_like(self, inpt):
        return is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image, tv_tensors.Video))


class MixUp(_BaseMixUpCutMix):
    """MixUp on a batch: each image becomes ``lam * x + (1 - lam) * x_rolled`` and the labels
    likewise, with ``lam ~ Beta(alpha, alpha)``.

    Args:
        alpha (float): Default: 1.
        num_classes (int, optional): for index labels; inferred when ``None``.
        labels_getter (callable or "default"): where the labels are; by default the second
            element of ``(images, labels)`` or the ``"labels"`` key of a dict.

    Examples::

        >>> images, labels = MixUp(num_classes=10)(ember.rand(4, 3, 8, 8), ember.arange(4))
    """

    def make_params(self, flat_inputs):
        return dict(lam=float(self._dist.sample(())))

    def transform(self, inpt, params):
        lam = params["lam"]
        if inpt is params["labels"]:
            return self._mixup_label(inpt, lam=lam)
        if self._is_image_like(inpt):
            self._check_image_or_video(inpt, batch_size=params["batch_size"])
            x = _plain(inpt)
            out = x.roll(1, 0) * (1.0 - lam) + x * lam
            return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) \
                else out
        return inpt


class CutMix(_BaseMixUpCutMix):
    """CutMix on a batch: a random box of each image is replaced by the same box of the
    previous image, and the labels are mixed by the area.

    Args:
        alpha (float): Default: 1.
        num_classes (int, optional): for index labels; inferred when ``None``.
        labels_getter (callable or "default"): where the labels are.
    """

    def make_params(self, flat_inputs):
        lam = float(self._dist.sample(()))
        h, w = query_size(flat_inputs)
        r_x, r_y = _randint(0, w), _randint(0, h)
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * w), int(r * h)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, w), min(r_y + r_h_half, h)
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))
        return dict(box=(x1, y1, x2, y2), lam_adjusted=lam_adjusted)

    def transform(self, inpt, params):
        if inpt is params["labels"]:
            return self._mixup_label(inpt, lam=params["lam_adjusted"])
        if self._is_image_like(inpt):
            self._check_image_or_video(inpt, batch_size=params["batch_size"])
            x1, y1, x2, y2 = params["box"]
            x = _plain(inpt)
            out = x.clone()
            out[..., y1:y2, x1:x2] = x.roll(1, 0)[..., y1:y2, x1:x2]
            return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) \
                else out
        return inpt
