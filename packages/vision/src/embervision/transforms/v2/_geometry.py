"""Geometric v2 transforms: they move images, videos, masks, boxes and points together."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import PIL.Image

import ember
from embervision import transforms as _v1
from embervision import tv_tensors
from embervision.transforms import _functional_geometry as _classic_geometry
from embervision.transforms._utils import InterpolationMode, interpolation_mode
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform, _RandomApplyTransform
from embervision.transforms.v2._utils import (
    _get_fill,
    _rand,
    _randint,
    _setup_angle,
    _setup_fill_arg,
    _setup_number_or_seq,
    _setup_size,
    _uniform,
    get_bounding_boxes,
    has_all,
    has_any,
    query_size,
)
from embervision.transforms.v2.functional._utils import is_pure_tensor
from embervision.tv_tensors._tv_tensor import _plain

__all__ = [
    "CenterCrop", "ElasticTransform", "FiveCrop", "Pad", "RandomAffine", "RandomCrop",
    "RandomHorizontalFlip", "RandomIoUCrop", "RandomPerspective", "RandomResize",
    "RandomResizedCrop", "RandomRotation", "RandomShortestSize", "RandomVerticalFlip",
    "RandomZoomOut", "Resize", "ScaleJitter", "TenCrop",
]

_SIZE_MSG = "Please provide only two dimensions (h, w) for size."


class RandomHorizontalFlip(_RandomApplyTransform):
    """Flips the inputs left to right with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomHorizontalFlip

    def transform(self, inpt, params):
        return self._call_kernel(F.horizontal_flip, inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    """Flips the inputs top to bottom with probability ``p`` (default 0.5)."""

    _v1_transform_cls = _v1.RandomVerticalFlip

    def transform(self, inpt, params):
        return self._call_kernel(F.vertical_flip, inpt)


class Resize(Transform):
    """Resizes the inputs to ``size``.

    Args:
        size (sequence, int or None): ``(h, w)``, or the length of the smaller edge, or
            ``None`` with ``max_size``.
        interpolation (InterpolationMode): for images and videos; masks use nearest.
            Default: ``BILINEAR``.
        max_size (int, optional): the largest the longer edge may be.
        antialias (bool): Default: ``True``.
    """

    _v1_transform_cls = _v1.Resize

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in (1, 2):
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got "
                                 f"{max_size} instead.")
        else:
            raise ValueError(f"size can be an integer, a sequence of one or two integers, or "
                             f"None, but got {size} instead.")
        self.size = size
        self.interpolation = interpolation_mode(interpolation)
        self.max_size = max_size
        self.antialias = antialias

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, self.size, interpolation=self.interpolation,
                                 max_size=self.max_size, antialias=self.antialias)


class CenterCrop(Transform):
    """Crops the centre of the inputs to ``size`` (an int gives a square)."""

    _v1_transform_cls = _v1.CenterCrop

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)

    def transform(self, inpt, params):
        return self._call_kernel(F.center_crop, inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    """Crops a random area and aspect ratio and resizes it to ``size``.

    Args:
        size (int or sequence): ``(h, w)`` of the output.
        scale (tuple of float): range of the crop's area relative to the input.
            Default: ``(0.08, 1.0)``.
        ratio (tuple of float): range of its aspect ratio (log-uniform).
            Default: ``(3/4, 4/3)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: ``True``.
    """

    _v1_transform_cls = _v1.RandomResizedCrop

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)
        if not isinstance(scale, Sequence) or len(scale) != 2:
            raise TypeError("Scale should be a sequence of two floats.")
        if not isinstance(ratio, Sequence) or len(ratio) != 2:
            raise TypeError("Ratio should be a sequence of two floats.")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias
        self._log_ratio = (math.log(ratio[0]), math.log(ratio[1]))

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        area = height * width
        for _ in range(10):
            target_area = area * _uniform(self.scale[0], self.scale[1])
            aspect = math.exp(_uniform(*self._log_ratio))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return dict(top=_randint(0, height - h + 1), left=_randint(0, width - w + 1),
                            height=h, width=w)
        in_ratio = width / height
        if in_ratio < min(self.ratio):
            w = width
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h = height
            w = int(round(h * max(self.ratio)))
        else:
            w, h = width, height
        return dict(top=(height - h) // 2, left=(width - w) // 2, height=h, width=w)

    def transform(self, inpt, params):
        return self._call_kernel(F.resized_crop, inpt, **params, size=self.size,
                                 interpolation=self.interpolation, antialias=self.antialias)


class FiveCrop(Transform):
    """The four corner crops and the central crop of an image or video, as a tuple."""

    _v1_transform_cls = _v1.FiveCrop

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, tv_tensors.BoundingBoxes, tv_tensors.Mask, tv_tensors.KeyPoints):
            raise TypeError(f"BoundingBoxes'es, KeyPoints'es and Mask's are not supported by "
                            f"{type(self).__name__}()")

    def transform(self, inpt, params):
        return self._call_kernel(F.five_crop, inpt, self.size)


class TenCrop(Transform):
    """:class:`FiveCrop` of the input and of its flipped copy (horizontal by default)."""

    _v1_transform_cls = _v1.TenCrop

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)
        self.vertical_flip = vertical_flip

    def check_inputs(self, flat_inputs):
        FiveCrop.check_inputs(self, flat_inputs)

    def transform(self, inpt, params):
        return self._call_kernel(F.ten_crop, inpt, self.size, vertical_flip=self.vertical_flip)


def _check_padding(padding):
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")


def _check_padding_mode(padding_mode):
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


class Pad(Transform):
    """Pads the inputs.

    Args:
        padding (int or sequence): all sides, ``(left/right, top/bottom)`` or
            ``(left, top, right, bottom)``.
        fill (number, tuple or dict): the fill value, or a dict from input type to fill value.
            Default: 0.
        padding_mode (str): ``constant``, ``edge``, ``reflect`` or ``symmetric`` (boxes and
            points take only ``constant``).
    """

    _v1_transform_cls = _v1.Pad

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _check_padding(padding)
        _check_padding_mode(padding_mode)
        self.padding = list(padding) if isinstance(padding, tuple) else padding
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        self.padding_mode = padding_mode

    def transform(self, inpt, params):
        return self._call_kernel(F.pad, inpt, padding=self.padding,
                                 fill=_get_fill(self._fill, type(inpt)),
                                 padding_mode=self.padding_mode)


class RandomZoomOut(_RandomApplyTransform):
    """Places the input at a random spot of a canvas ``side_range`` times larger, with
    probability ``p``.

    Args:
        fill (number, tuple or dict): the canvas value. Default: 0.
        side_range (tuple of float): range of the canvas/input size ratio. Default: ``(1, 4)``.
        p (float): Default: 0.5.
    """

    def __init__(self, fill=0, side_range=(1.0, 4.0), p=0.5):
        super().__init__(p=p)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        _check_sequence(side_range, "side_range")
        self.side_range = side_range
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError(f"Invalid side range provided {side_range}.")

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        r = self.side_range[0] + _rand() * (self.side_range[1] - self.side_range[0])
        canvas_width, canvas_height = int(orig_w * r), int(orig_h * r)
        r = ember.rand(2)
        left = int((canvas_width - orig_w) * float(r[0]))
        top = int((canvas_height - orig_h) * float(r[1]))
        right = canvas_width - (left + orig_w)
        bottom = canvas_height - (top + orig_h)
        return dict(padding=[left, top, right, bottom])

    def transform(self, inpt, params):
        return self._call_kernel(F.pad, inpt, **params, fill=_get_fill(self._fill, type(inpt)))


def _check_sequence(value, name):
    if not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"{name} should be a sequence of length 2.")


class RandomRotation(Transform):
    """Rotates the inputs by a random angle in ``degrees``.

    Args:
        degrees (number or sequence): ``(min, max)``, or ``(-degrees, +degrees)``.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        expand (bool): grow the output to hold the rotated input. Default: ``False``.
        center (sequence, optional): the centre ``(x, y)``; the input centre by default.
        fill (number, tuple or dict): Default: 0.
    """

    _v1_transform_cls = _v1.RandomRotation

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        self.interpolation = interpolation_mode(interpolation)
        self.expand = expand
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        if center is not None:
            _check_sequence(center, "center")
        self.center = center

    def make_params(self, flat_inputs):
        return dict(angle=_uniform(self.degrees[0], self.degrees[1]))

    def transform(self, inpt, params):
        return self._call_kernel(F.rotate, inpt, **params, interpolation=self.interpolation,
                                 expand=self.expand, center=self.center,
                                 fill=_get_fill(self._fill, type(inpt)))


class RandomAffine(Transform):
    """Random affine transform (rotation, translation, scale, shear) of the inputs.

    Args:
        degrees (number or sequence): rotation range.
        translate (tuple, optional): maximum fractions ``(a, b)`` of width and height.
        scale (tuple, optional): scale range.
        shear (number or sequence, optional): x shear range, or ``(x_min, x_max, y_min,
            y_max)``.
        interpolation (InterpolationMode): Default: ``NEAREST``.
        fill (number, tuple or dict): Default: 0.
        center (sequence, optional): the centre ``(x, y)``.
    """

    _v1_transform_cls = _v1.RandomAffine

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence(translate, "translate")
            for t in translate:
                if not 0.0 <= t <= 1.0:
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence(scale, "scale")
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = (_setup_angle(shear, name="shear", req_sizes=(2, 4))
                      if shear is not None else None)
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        if center is not None:
            _check_sequence(center, "center")
        self.center = center

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        angle = _uniform(self.degrees[0], self.degrees[1])
        if self.translate is not None:
            max_dx, max_dy = float(self.translate[0] * width), float(self.translate[1] * height)
            translate = (int(round(_uniform(-max_dx, max_dx))),
                         int(round(_uniform(-max_dy, max_dy))))
        else:
            translate = (0, 0)
        scale = _uniform(self.scale[0], self.scale[1]) if self.scale is not None else 1.0
        shear_x = shear_y = 0.0
        if self.shear is not None:
            shear_x = _uniform(self.shear[0], self.shear[1])
            if len(self.shear) == 4:
                shear_y = _uniform(self.shear[2], self.shear[3])
        return dict(angle=angle, translate=translate, scale=scale, shear=(shear_x, shear_y))

    def transform(self, inpt, params):
        return self._call_kernel(F.affine, inpt, **params, interpolation=self.interpolation,
                                 fill=_get_fill(self._fill, type(inpt)), center=self.center)


class RandomCrop(Transform):
    """Crops the inputs at a random place.

    Args:
        size (sequence or int): ``(h, w)`` of the crop.
        padding (int or sequence, optional): padding applied first.
        pad_if_needed (bool): pad an input smaller than the crop. Default: ``False``.
        fill (number, tuple or dict): Default: 0.
        padding_mode (str): Default: ``"constant"``.
    """

    _v1_transform_cls = _v1.RandomCrop

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_MSG)
        if padding is not None:
            _check_padding(padding)
        _check_padding_mode(padding_mode)
        self.padding = (_classic_geometry._pad_amounts(padding) if padding is not None
                        else None)
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs):
        padded_h, padded_w = query_size(flat_inputs)
        if self.padding is not None:
            pad_left, pad_top, pad_right, pad_bottom = self.padding
            padded_h += pad_top + pad_bottom
            padded_w += pad_left + pad_right
        else:
            pad_left = pad_right = pad_top = pad_bottom = 0
        crop_h, crop_w = self.size
        if self.pad_if_needed:
            if padded_h < crop_h:
                diff = crop_h - padded_h
                pad_top += diff
                pad_bottom += diff
                padded_h += 2 * diff
            if padded_w < crop_w:
                diff = crop_w - padded_w
                pad_left += diff
                pad_right += diff
                padded_w += 2 * diff
        if padded_h < crop_h or padded_w < crop_w:
            raise ValueError(f"Required crop size {(crop_h, crop_w)} is larger than "
                             f"{'padded ' if self.padding is not None else ''}input image size "
                             f"{(padded_h, padded_w)}.")
        padding = [pad_left, pad_top, pad_right, pad_bottom]
        top = _randint(0, padded_h - crop_h + 1) if padded_h > crop_h else 0
        left = _randint(0, padded_w - crop_w + 1) if padded_w > crop_w else 0
        return dict(needs_crop=padded_h > crop_h or padded_w > crop_w, top=top, left=left,
                    height=crop_h, width=crop_w, needs_pad=any(padding), padding=padding)

    def transform(self, inpt, params):
        if params["needs_pad"]:
            inpt = self._call_kernel(F.pad, inpt, padding=params["padding"],
                                     fill=_get_fill(self._fill, type(inpt)),
                                     padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = self._call_kernel(F.crop, inpt, top=params["top"], left=params["left"],
                                     height=params["height"], width=params["width"])
        return inpt


class RandomPerspective(_RandomApplyTransform):
    """Random perspective transform of the inputs with probability ``p``.

    Args:
        distortion_scale (float): how far corners may move, in ``[0, 1]``. Default: 0.5.
        p (float): Default: 0.5.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number, tuple or dict): Default: 0.
    """

    _v1_transform_cls = _v1.RandomPerspective

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__(p=p)
        if not 0 <= distortion_scale <= 1:
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        bound_h = int(self.distortion_scale * (height // 2)) + 1
        bound_w = int(self.distortion_scale * (width // 2)) + 1
        topleft = [_randint(0, bound_w), _randint(0, bound_h)]
        topright = [_randint(width - bound_w, width), _randint(0, bound_h)]
        botright = [_randint(width - bound_w, width), _randint(height - bound_h, height)]
        botleft = [_randint(0, bound_w), _randint(height - bound_h, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        endpoints = [topleft, topright, botright, botleft]
        return dict(coefficients=_classic_geometry._perspective_coeffs(startpoints, endpoints))

    def transform(self, inpt, params):
        return self._call_kernel(F.perspective, inpt, startpoints=None, endpoints=None,
                                 fill=_get_fill(self._fill, type(inpt)),
                                 interpolation=self.interpolation, **params)


class ElasticTransform(Transform):
    """Moves the pixels by a random smooth displacement field.

    Args:
        alpha (float or sequence): strength of the displacement. Default: 50.
        sigma (float or sequence): smoothness (Gaussian sigma). Default: 5.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        fill (number, tuple or dict): Default: 0.
    """

    _v1_transform_cls = _v1.ElasticTransform

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = _setup_number_or_seq(alpha, "alpha")
        self.sigma = _setup_number_or_seq(sigma, "sigma")
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def _field(self, size, axis):
        d = ember.rand(1, 1, *size) * 2 - 1
        if self.sigma[axis] > 0.0:
            k = int(8 * self.sigma[axis] + 1)
            k += 1 - k % 2
            d = F.gaussian_blur(d, [k, k], list(self.sigma))
        return d * self.alpha[axis] / size[axis]

    def make_params(self, flat_inputs):
        size = list(query_size(flat_inputs))
        dx = self._field(size, 0)
        dy = self._field(size, 1)
        return dict(displacement=ember.cat([dx, dy], dim=1).permute(0, 2, 3, 1))

    def transform(self, inpt, params):
        return self._call_kernel(F.elastic, inpt, **params,
                                 fill=_get_fill(self._fill, type(inpt)),
                                 interpolation=self.interpolation)


class RandomIoUCrop(Transform):
    """The random crop of SSD: a crop whose IoU with some box is at least an overlap drawn
    from ``sampler_options``. Boxes whose centres fall outside the crop are zeroed (remove
    them with :class:`SanitizeBoundingBoxes`).

    Args:
        min_scale (float): Default: 0.3.
        max_scale (float): Default: 1.0.
        min_aspect_ratio (float): Default: 0.5.
        max_aspect_ratio (float): Default: 2.0.
        sampler_options (list of float, optional): the overlaps; ``>= 1`` leaves the input
            as it is. Default: ``[0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]``.
        trials (int): tries per overlap. Default: 40.
    """

    def __init__(self, min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                 sampler_options=None, trials=40):
        super().__init__()
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.min_aspect_ratio = min_aspect_ratio
        self.max_aspect_ratio = max_aspect_ratio
        self.options = ([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] if sampler_options is None
                        else sampler_options)
        self.trials = trials

    def check_inputs(self, flat_inputs):
        if not (has_all(flat_inputs, tv_tensors.BoundingBoxes)
                and has_any(flat_inputs, PIL.Image.Image, tv_tensors.Image, is_pure_tensor)):
            raise TypeError(f"{type(self).__name__}() requires input sample to contain tensor or "
                            "PIL images and bounding boxes. Sample can also contain masks.")

    def make_params(self, flat_inputs):
        from embervision.ops import box_iou

        orig_h, orig_w = query_size(flat_inputs)
        bboxes = get_bounding_boxes(flat_inputs)
        xyxy = F.convert_bounding_box_format(_plain(bboxes), bboxes.format, "XYXY")
        cx = 0.5 * (xyxy[..., 0] + xyxy[..., 2])
        cy = 0.5 * (xyxy[..., 1] + xyxy[..., 3])
        while True:
            min_overlap = self.options[_randint(0, len(self.options))]
            if min_overlap >= 1.0:
                return {}
            for _ in range(self.trials):
                r = self.min_scale + (self.max_scale - self.min_scale) * ember.rand(2)
                new_w, new_h = int(orig_w * float(r[0])), int(orig_h * float(r[1]))
                if new_h == 0 or not (self.min_aspect_ratio <= new_w / new_h
                                      <= self.max_aspect_ratio):
                    continue
                r = ember.rand(2)
                left = int((orig_w - new_w) * float(r[0]))
                top = int((orig_h - new_h) * float(r[1]))
                right, bottom = left + new_w, top + new_h
                if left == right or top == bottom:
                    continue
                within = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not bool(within.any()):
                    continue
                crop = ember.tensor([[left, top, right, bottom]], dtype=ember.float32)
                ious = box_iou(xyxy[within].to(ember.float32), crop)
                if float(ious.max()) < min_overlap:
                    continue
                return dict(top=top, left=left, height=new_h, width=new_w,
                            is_within_crop_area=within)

    def transform(self, inpt, params):
        if not params:
            return inpt
        output = self._call_kernel(F.crop, inpt, top=params["top"], left=params["left"],
                                   height=params["height"], width=params["width"])
        if isinstance(output, tv_tensors.BoundingBoxes):
            _plain(output)[~params["is_within_crop_area"]] = 0
        return output


class ScaleJitter(Transform):
    """Resizes to ``target_size`` (keeping the aspect ratio) times a random scale in
    ``scale_range``, as in Simple Copy-Paste.

    Args:
        target_size (tuple of int): ``(h, w)``.
        scale_range (tuple of float): Default: ``(0.1, 2.0)``.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: ``True``.
    """

    def __init__(self, target_size, scale_range=(0.1, 2.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.target_size = target_size
        self.scale_range = scale_range
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        scale = self.scale_range[0] + _rand() * (self.scale_range[1] - self.scale_range[0])
        r = min(self.target_size[1] / orig_h, self.target_size[0] / orig_w) * scale
        return dict(size=(int(orig_h * r), int(orig_w * r)))

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, size=params["size"],
                                 interpolation=self.interpolation, antialias=self.antialias)


class RandomShortestSize(Transform):
    """Resizes so that the shorter edge is a random choice of ``min_size`` (and the longer at
    most ``max_size``).

    Args:
        min_size (int or sequence of int): the choices of shorter edge.
        max_size (int, optional): the largest the longer edge may be.
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: ``True``.
    """

    def __init__(self, min_size, max_size=None, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        min_size = self.min_size[_randint(0, len(self.min_size))]
        r = min_size / min(orig_h, orig_w)
        if self.max_size is not None:
            r = min(r, self.max_size / max(orig_h, orig_w))
        return dict(size=(int(orig_h * r), int(orig_w * r)))

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, size=params["size"],
                                 interpolation=self.interpolation, antialias=self.antialias)


class RandomResize(Transform):
    """Resizes the shorter edge to a random length in ``[min_size, max_size)``.

    Args:
        min_size (int): the smallest length (inclusive).
        max_size (int): the largest length (exclusive).
        interpolation (InterpolationMode): Default: ``BILINEAR``.
        antialias (bool): Default: ``True``.
    """

    def __init__(self, min_size, max_size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.min_size = min_size
        self.max_size = max_size
        self.interpolation = interpolation_mode(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        return dict(size=[_randint(self.min_size, self.max_size)])

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, params["size"],
                                 interpolation=self.interpolation, antialias=self.antialias)
