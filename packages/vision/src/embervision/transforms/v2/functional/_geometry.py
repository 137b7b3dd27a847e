"""Geometric v2 functionals and their image, mask and video kernels.

Image kernels are the classic functional transforms (tensors ``(..., C, H, W)`` and PIL
images); masks use nearest interpolation; boxes and points are in ``_geometry_points``.
"""

from __future__ import annotations

import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms import _functional_geometry as _classic
from embervision.transforms._utils import InterpolationMode, interpolation_mode
from embervision.transforms.v2.functional import _geometry_points as P
from embervision.transforms.v2.functional._utils import _dispatch, _register_kernel_internal
from embervision.tv_tensors._tv_tensor import _plain

__all__ = [
    "affine", "affine_image", "affine_mask", "affine_video",
    "center_crop", "center_crop_image", "center_crop_mask", "center_crop_video",
    "crop", "crop_image", "crop_mask", "crop_video",
    "elastic", "elastic_image", "elastic_mask", "elastic_transform", "elastic_video",
    "five_crop", "five_crop_image", "five_crop_video",
    "hflip", "horizontal_flip", "horizontal_flip_image", "horizontal_flip_mask",
    "horizontal_flip_video",
    "pad", "pad_image", "pad_mask", "pad_video",
    "perspective", "perspective_image", "perspective_mask", "perspective_video",
    "resize", "resize_image", "resize_mask", "resize_video",
    "resized_crop", "resized_crop_image", "resized_crop_mask", "resized_crop_video",
    "rotate", "rotate_image", "rotate_mask", "rotate_video",
    "ten_crop", "ten_crop_image", "ten_crop_video",
    "vertical_flip", "vertical_flip_image", "vertical_flip_mask", "vertical_flip_video",
    "vflip",
]

_NEAREST = InterpolationMode.NEAREST


def _register_image_kernels(functional, image_kernel, video_kernel):
    _register_kernel_internal(functional, ember.Tensor)(image_kernel)
    _register_kernel_internal(functional, tv_tensors.Image)(image_kernel)
    _register_kernel_internal(functional, PIL.Image.Image)(image_kernel)
    _register_kernel_internal(functional, tv_tensors.Video)(video_kernel)


def _mask_op(mask, op):
    # Masks may be (H, W): give them a channel for the image kernel, then take it off.
    squeeze = mask.ndim < 3
    out = op(mask.unsqueeze(0) if squeeze else mask)
    return out.squeeze(0) if squeeze else out


def _register_points(functional, boxes_fn, points_fn):
    _register_kernel_internal(functional, tv_tensors.BoundingBoxes,
                              tv_tensor_wrapper=False)(boxes_fn)
    _register_kernel_internal(functional, tv_tensors.KeyPoints, tv_tensor_wrapper=False)(points_fn)


# -- flips ----------------------------------------------------------------------------------

def horizontal_flip(inpt):
    """Flips an image, video, mask, boxes or points left to right; see
    :class:`~embervision.transforms.v2.RandomHorizontalFlip`."""
    return _dispatch(horizontal_flip, inpt)


def horizontal_flip_image(image):
    """The image kernel of :func:`horizontal_flip`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.hflip(image)


def horizontal_flip_mask(mask):
    """The mask kernel of :func:`horizontal_flip`:
    a ``(..., H, W)`` tensor, nearest interpolation."""
    return _classic.hflip(mask)


def horizontal_flip_video(video):
    """The video kernel of :func:`horizontal_flip`: a ``(..., T, C, H, W)`` tensor."""
    return _classic.hflip(video)


def vertical_flip(inpt):
    """Flips an image, video, mask, boxes or points top to bottom."""
    return _dispatch(vertical_flip, inpt)


def vertical_flip_image(image):
    """The image kernel of :func:`vertical_flip`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.vflip(image)


def vertical_flip_mask(mask):
    """The mask kernel of :func:`vertical_flip`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _classic.vflip(mask)


def vertical_flip_video(video):
    """The video kernel of :func:`vertical_flip`: a ``(..., T, C, H, W)`` tensor."""
    return _classic.vflip(video)


hflip = horizontal_flip
vflip = vertical_flip

_register_image_kernels(horizontal_flip, horizontal_flip_image, horizontal_flip_video)
_register_kernel_internal(horizontal_flip, tv_tensors.Mask)(horizontal_flip_mask)
_register_image_kernels(vertical_flip, vertical_flip_image, vertical_flip_video)
_register_kernel_internal(vertical_flip, tv_tensors.Mask)(vertical_flip_mask)
_register_points(
    horizontal_flip,
    lambda b: tv_tensors.wrap(P.horizontal_flip_bounding_boxes(
        _plain(b), b.format, b.canvas_size), like=b),
    lambda k: tv_tensors.wrap(P.horizontal_flip_keypoints(_plain(k), k.canvas_size), like=k))
_register_points(
    vertical_flip,
    lambda b: tv_tensors.wrap(P.vertical_flip_bounding_boxes(
        _plain(b), b.format, b.canvas_size), like=b),
    lambda k: tv_tensors.wrap(P.vertical_flip_keypoints(_plain(k), k.canvas_size), like=k))


# -- resize ---------------------------------------------------------------------------------

def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resizes an image, video, mask, boxes or points; see
    :class:`~embervision.transforms.v2.Resize`."""
    return _dispatch(resize, inpt, size, interpolation=interpolation, max_size=max_size,
                     antialias=antialias)


def resize_image(image, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
    """Resizes a ``(..., C, H, W)`` image tensor (or a PIL image) to ``size``."""
    return _classic.resize(image, size, interpolation_mode(interpolation), max_size,
                           bool(antialias))


def resize_mask(mask, size, max_size=None):
    """Resizes a mask ``(..., H, W)`` with nearest interpolation."""
    return _mask_op(mask, lambda m: _classic.resize(m, size, _NEAREST, max_size))


def resize_video(video, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
    """The video kernel of :func:`resize`: a ``(..., T, C, H, W)`` tensor."""
    return resize_image(video, size, interpolation, max_size, antialias)


def _resize_mask_dispatch(mask, size, max_size=None, **kwargs):
    return resize_mask(mask, size, max_size)


def _resize_boxes_dispatch(b, size, max_size=None, **kwargs):
    out, canvas = P.resize_bounding_boxes(_plain(b), b.canvas_size, size, max_size, b.format,
                                          b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _resize_keypoints_dispatch(k, size, max_size=None, **kwargs):
    out, canvas = P.resize_keypoints(_plain(k), size, k.canvas_size, max_size)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(resize, resize_image, resize_video)
_register_kernel_internal(resize, tv_tensors.Mask)(_resize_mask_dispatch)
_register_points(resize, _resize_boxes_dispatch, _resize_keypoints_dispatch)


# -- affine and rotate ----------------------------------------------------------------------

def affine(inpt, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Affine transform of an image, video, mask, boxes or points; see
    :class:`~embervision.transforms.v2.RandomAffine`."""
    return _dispatch(affine, inpt, angle=angle, translate=translate, scale=scale, shear=shear,
                     interpolation=interpolation, fill=fill, center=center)


def _check_affine(angle, translate):
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")


def affine_image(image, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
                 fill=None, center=None):
    """The image kernel of :func:`affine`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    _check_affine(angle, translate)
    return _classic.affine(image, float(angle), list(translate), scale, shear,
                           interpolation_mode(interpolation), fill, center)


def affine_mask(mask, angle, translate, scale, shear, fill=None, center=None):
    """The mask kernel of :func:`affine`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: affine_image(m, angle, translate, scale, shear, _NEAREST,
                                                 fill, center))


def affine_video(video, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
                 fill=None, center=None):
    """The video kernel of :func:`affine`: a ``(..., T, C, H, W)`` tensor."""
    return affine_image(video, angle, translate, scale, shear, interpolation, fill, center)


def _affine_mask_dispatch(mask, angle, translate, scale, shear, fill=None, center=None, **kw):
    return affine_mask(mask, angle, translate, scale, shear, fill, center)


def _affine_boxes_dispatch(b, angle, translate, scale, shear, center=None, **kwargs):
    _check_affine(angle, translate)
    out = P.affine_bounding_boxes(_plain(b), b.format, b.canvas_size, angle, translate, scale,
                                  shear, center, b.clamping_mode)
    return tv_tensors.wrap(out, like=b)


def _affine_keypoints_dispatch(k, angle, translate, scale, shear, center=None, **kwargs):
    _check_affine(angle, translate)
    out, canvas = P.affine_keypoints(_plain(k), k.canvas_size, angle, translate, scale, shear,
                                     center)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(affine, affine_image, affine_video)
_register_kernel_internal(affine, tv_tensors.Mask)(_affine_mask_dispatch)
_register_points(affine, _affine_boxes_dispatch, _affine_keypoints_dispatch)


def rotate(inpt, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotates an image, video, mask, boxes or points by ``angle`` degrees counter-clockwise;
    see :class:`~embervision.transforms.v2.RandomRotation`."""
    return _dispatch(rotate, inpt, angle=angle, interpolation=interpolation, expand=expand,
                     center=center, fill=fill)


def rotate_image(image, angle, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=None):
    """The image kernel of :func:`rotate`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.rotate(image, angle, interpolation_mode(interpolation), expand, center, fill)


def rotate_mask(mask, angle, expand=False, center=None, fill=None):
    """The mask kernel of :func:`rotate`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: rotate_image(m, angle, _NEAREST, expand, center, fill))


def rotate_video(video, angle, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=None):
    """The video kernel of :func:`rotate`: a ``(..., T, C, H, W)`` tensor."""
    return rotate_image(video, angle, interpolation, expand, center, fill)


def _rotate_mask_dispatch(mask, angle, expand=False, center=None, fill=None, **kwargs):
    return rotate_mask(mask, angle, expand, center, fill)


def _rotate_boxes_dispatch(b, angle, expand=False, center=None, **kwargs):
    out, canvas = P.rotate_bounding_boxes(_plain(b), b.format, b.canvas_size, angle, expand,
                                          center, b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _rotate_keypoints_dispatch(k, angle, expand=False, center=None, **kwargs):
    out, canvas = P.rotate_keypoints(_plain(k), k.canvas_size, angle, expand, center)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(rotate, rotate_image, rotate_video)
_register_kernel_internal(rotate, tv_tensors.Mask)(_rotate_mask_dispatch)
_register_points(rotate, _rotate_boxes_dispatch, _rotate_keypoints_dispatch)


# -- pad and crops --------------------------------------------------------------------------

def pad(inpt, padding, fill=None, padding_mode="constant"):
    """Pads an image, video, mask, boxes or points; see :class:`~embervision.transforms.v2.Pad`."""
    return _dispatch(pad, inpt, padding=padding, fill=fill, padding_mode=padding_mode)


def pad_image(image, padding, fill=None, padding_mode="constant"):
    """The image kernel of :func:`pad`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.pad(image, padding, 0 if fill is None else fill, padding_mode)


def pad_mask(mask, padding, fill=None, padding_mode="constant"):
    """The mask kernel of :func:`pad`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: pad_image(m, padding, fill, padding_mode))


def pad_video(video, padding, fill=None, padding_mode="constant"):
    """The video kernel of :func:`pad`: a ``(..., T, C, H, W)`` tensor."""
    return pad_image(video, padding, fill, padding_mode)


def _pad_boxes_dispatch(b, padding, padding_mode="constant", **kwargs):
    out, canvas = P.pad_bounding_boxes(_plain(b), b.format, b.canvas_size, padding, padding_mode,
                                       b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _pad_keypoints_dispatch(k, padding, padding_mode="constant", **kwargs):
    out, canvas = P.pad_keypoints(_plain(k), k.canvas_size, padding, padding_mode)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(pad, pad_image, pad_video)
_register_kernel_internal(pad, tv_tensors.Mask)(pad_mask)
_register_points(pad, _pad_boxes_dispatch, _pad_keypoints_dispatch)


def crop(inpt, top, left, height, width):
    """Crops an image, video, mask, boxes or points to ``(top, left, height, width)``."""
    return _dispatch(crop, inpt, top=top, left=left, height=height, width=width)


def crop_image(image, top, left, height, width):
    """The image kernel of :func:`crop`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.crop(image, top, left, height, width)


def crop_mask(mask, top, left, height, width):
    """The mask kernel of :func:`crop`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: crop_image(m, top, left, height, width))


def crop_video(video, top, left, height, width):
    """The video kernel of :func:`crop`: a ``(..., T, C, H, W)`` tensor."""
    return crop_image(video, top, left, height, width)


def _crop_boxes_dispatch(b, top, left, height, width):
    out, canvas = P.crop_bounding_boxes(_plain(b), b.format, top, left, height, width,
                                        b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _crop_keypoints_dispatch(k, top, left, height, width):
    out, canvas = P.crop_keypoints(_plain(k), top, left, height, width)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(crop, crop_image, crop_video)
_register_kernel_internal(crop, tv_tensors.Mask)(crop_mask)
_register_points(crop, _crop_boxes_dispatch, _crop_keypoints_dispatch)


def center_crop(inpt, output_size):
    """Crops the centre of an image, video, mask, boxes or points."""
    return _dispatch(center_crop, inpt, output_size=output_size)


def center_crop_image(image, output_size):
    """The image kernel of :func:`center_crop`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.center_crop(image, output_size)


def center_crop_mask(mask, output_size):
    """The mask kernel of :func:`center_crop`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: center_crop_image(m, output_size))


def center_crop_video(video, output_size):
    """The video kernel of :func:`center_crop`: a ``(..., T, C, H, W)`` tensor."""
    return center_crop_image(video, output_size)


def _center_crop_boxes_dispatch(b, output_size):
    out, canvas = P.center_crop_bounding_boxes(_plain(b), b.format, b.canvas_size, output_size,
                                               b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _center_crop_keypoints_dispatch(k, output_size):
    out, canvas = P.center_crop_keypoints(_plain(k), k.canvas_size, output_size)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(center_crop, center_crop_image, center_crop_video)
_register_kernel_internal(center_crop, tv_tensors.Mask)(center_crop_mask)
_register_points(center_crop, _center_crop_boxes_dispatch, _center_crop_keypoints_dispatch)


def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    """Crops then resizes an image, video, mask, boxes or points."""
    return _dispatch(resized_crop, inpt, top=top, left=left, height=height, width=width,
                     size=size, interpolation=interpolation, antialias=antialias)


def resized_crop_image(image, top, left, height, width, size,
                       interpolation=InterpolationMode.BILINEAR, antialias=True):
    """The image kernel of :func:`resized_crop`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return resize_image(crop_image(image, top, left, height, width), size, interpolation,
                        antialias=antialias)


def resized_crop_mask(mask, top, left, height, width, size):
    """The mask kernel of :func:`resized_crop`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return resize_mask(crop_mask(mask, top, left, height, width), size)


def resized_crop_video(video, top, left, height, width, size,
                       interpolation=InterpolationMode.BILINEAR, antialias=True):
    """The video kernel of :func:`resized_crop`: a ``(..., T, C, H, W)`` tensor."""
    return resized_crop_image(video, top, left, height, width, size, interpolation, antialias)


def _resized_crop_mask_dispatch(mask, top, left, height, width, size, **kwargs):
    return resized_crop_mask(mask, top, left, height, width, size)


def _resized_crop_boxes_dispatch(b, top, left, height, width, size, **kwargs):
    out, canvas = P.resized_crop_bounding_boxes(_plain(b), b.format, top, left, height, width,
                                                size, b.clamping_mode)
    return tv_tensors.wrap(out, like=b, canvas_size=canvas)


def _resized_crop_keypoints_dispatch(k, top, left, height, width, size, **kwargs):
    out, canvas = P.resized_crop_keypoints(_plain(k), top, left, height, width, size)
    return tv_tensors.wrap(out, like=k, canvas_size=canvas)


_register_image_kernels(resized_crop, resized_crop_image, resized_crop_video)
_register_kernel_internal(resized_crop, tv_tensors.Mask)(_resized_crop_mask_dispatch)
_register_points(resized_crop, _resized_crop_boxes_dispatch, _resized_crop_keypoints_dispatch)


def five_crop(inpt, size):
    """The four corner crops and the central crop of an image or video."""
    return _dispatch(five_crop, inpt, size=size)


def five_crop_image(image, size):
    """The image kernel of :func:`five_crop`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.five_crop(image, size)


def five_crop_video(video, size):
    """The video kernel of :func:`five_crop`: a ``(..., T, C, H, W)`` tensor."""
    return five_crop_image(video, size)


def ten_crop(inpt, size, vertical_flip=False):
    """:func:`five_crop` of an image or video and of its flipped copy."""
    return _dispatch(ten_crop, inpt, size=size, vertical_flip=vertical_flip)


def ten_crop_image(image, size, vertical_flip=False):
    """The image kernel of :func:`ten_crop`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.ten_crop(image, size, vertical_flip)


def ten_crop_video(video, size, vertical_flip=False):
    """The video kernel of :func:`ten_crop`: a ``(..., T, C, H, W)`` tensor."""
    return ten_crop_image(video, size, vertical_flip)


def _wrap_crops(kernel):
    def wrapper(inpt, *args, **kwargs):
        return tuple(tv_tensors.wrap(c, like=inpt) for c in kernel(_plain(inpt), *args, **kwargs))
    return wrapper


for _fn, _image, _video in ((five_crop, five_crop_image, five_crop_video),
                            (ten_crop, ten_crop_image, ten_crop_video)):
    _register_kernel_internal(_fn, ember.Tensor)(_image)
    _register_kernel_internal(_fn, PIL.Image.Image)(_image)
    _register_kernel_internal(_fn, tv_tensors.Image, tv_tensor_wrapper=False)(_wrap_crops(_image))
    _register_kernel_internal(_fn, tv_tensors.Video, tv_tensor_wrapper=False)(_wrap_crops(_video))


# -- perspective and elastic ----------------------------------------------------------------

def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None, coefficients=None):
    """Perspective transform of an image, video, mask, boxes or points taking
    ``startpoints`` to ``endpoints`` (or given by the 8 ``coefficients``)."""
    return _dispatch(perspective, inpt, startpoints=startpoints, endpoints=endpoints,
                     interpolation=interpolation, fill=fill, coefficients=coefficients)


def perspective_image(image, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                      fill=None, coefficients=None):
    """The image kernel of :func:`perspective`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    coeffs = P._perspective_coefficients(startpoints, endpoints, coefficients)
    interpolation = interpolation_mode(interpolation)
    if isinstance(image, PIL.Image.Image):
        return image.transform(image.size, PIL.Image.Transform.PERSPECTIVE, coeffs,
                               _classic.PIL_INTERPOLATION[interpolation],
                               fillcolor=_classic._pil_fill(fill, image))
    return _classic._perspective_tensor(image, coeffs, interpolation, fill)


def perspective_mask(mask, startpoints, endpoints, fill=None, coefficients=None):
    """The mask kernel of :func:`perspective`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: perspective_image(m, startpoints, endpoints, _NEAREST, fill,
                                                      coefficients))


def perspective_video(video, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                      fill=None, coefficients=None):
    """The video kernel of :func:`perspective`: a ``(..., T, C, H, W)`` tensor."""
    return perspective_image(video, startpoints, endpoints, interpolation, fill, coefficients)


def _perspective_mask_dispatch(mask, startpoints, endpoints, fill=None, coefficients=None, **kw):
    return perspective_mask(mask, startpoints, endpoints, fill, coefficients)


def _perspective_boxes_dispatch(b, startpoints, endpoints, coefficients=None, **kwargs):
    out = P.perspective_bounding_boxes(_plain(b), b.format, b.canvas_size, startpoints,
                                       endpoints, coefficients, b.clamping_mode)
    return tv_tensors.wrap(out, like=b)


def _perspective_keypoints_dispatch(k, startpoints, endpoints, coefficients=None, **kwargs):
    out = P.perspective_keypoints(_plain(k), k.canvas_size, startpoints, endpoints, coefficients)
    return tv_tensors.wrap(out, like=k)


_register_image_kernels(perspective, perspective_image, perspective_video)
_register_kernel_internal(perspective, tv_tensors.Mask)(_perspective_mask_dispatch)
_register_points(perspective, _perspective_boxes_dispatch, _perspective_keypoints_dispatch)


def elastic(inpt, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Elastic transform of an image, video, mask, boxes or points by ``displacement``,
    ``(1, H, W, 2)``; see :class:`~embervision.transforms.v2.ElasticTransform`."""
    return _dispatch(elastic, inpt, displacement=displacement, interpolation=interpolation,
                     fill=fill)


elastic_transform = elastic


def elastic_image(image, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """The image kernel of :func:`elastic`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.elastic_transform(image, displacement, interpolation_mode(interpolation), fill)


def elastic_mask(mask, displacement, fill=None):
    """The mask kernel of :func:`elastic`: a ``(..., H, W)`` tensor, nearest interpolation."""
    return _mask_op(mask, lambda m: elastic_image(m, displacement, _NEAREST, fill))


def elastic_video(video, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """The video kernel of :func:`elastic`: a ``(..., T, C, H, W)`` tensor."""
    return elastic_image(video, displacement, interpolation, fill)


def _elastic_mask_dispatch(mask, displacement, fill=None, **kwargs):
    return elastic_mask(mask, displacement, fill)


def _elastic_boxes_dispatch(b, displacement, **kwargs):
    out = P.elastic_bounding_boxes(_plain(b), b.format, b.canvas_size, displacement,
                                   b.clamping_mode)
    return tv_tensors.wrap(out, like=b)


def _elastic_keypoints_dispatch(k, displacement, **kwargs):
    return tv_tensors.wrap(P.elastic_keypoints(_plain(k), k.canvas_size, displacement), like=k)


_register_image_kernels(elastic, elastic_image, elastic_video)
_register_kernel_internal(elastic, tv_tensors.Mask)(_elastic_mask_dispatch)
_register_points(elastic, _elastic_boxes_dispatch, _elastic_keypoints_dispatch)
