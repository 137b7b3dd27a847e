"""Erasing and JPEG compression of images and videos."""

from __future__ import annotations

import io as _io

import numpy as np
import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms import _functional_misc as _classic
from embervision.transforms.v2.functional._utils import _dispatch, _register_kernel_internal

__all__ = ["erase", "erase_image", "erase_video", "jpeg", "jpeg_image", "jpeg_video"]


def erase(inpt, i, j, h, w, v, inplace=False):
    """Sets ``inpt[..., i:i + h, j:j + w]`` to ``v``; see
    :class:`~embervision.transforms.v2.RandomErasing`."""
    return _dispatch(erase, inpt, i=i, j=j, h=h, w=w, v=v, inplace=inplace)


def erase_image(image, i, j, h, w, v, inplace=False):
    """The image kernel of :func:`erase`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.erase(image, i, j, h, w, v, inplace)


def erase_video(video, i, j, h, w, v, inplace=False):
    """The video kernel of :func:`erase`: a ``(..., T, C, H, W)`` tensor."""
    return erase_image(video, i, j, h, w, v, inplace)


def _erase_image_pil(image, i, j, h, w, v, inplace=False):
    from embervision.transforms._functional_conversion import pil_to_tensor, to_pil_image

    return to_pil_image(erase_image(pil_to_tensor(image), i, j, h, w, v), mode=image.mode)


for _cls in (ember.Tensor, tv_tensors.Image):
    _register_kernel_internal(erase, _cls)(erase_image)
_register_kernel_internal(erase, tv_tensors.Video)(erase_video)
_register_kernel_internal(erase, PIL.Image.Image)(_erase_image_pil)


def jpeg(image, quality):
    """Compresses and decompresses an image or video as JPEG of ``quality`` (1 to 100); see
    :class:`~embervision.transforms.v2.JPEG`."""
    return _dispatch(jpeg, image, quality=quality)


def _jpeg_pil(image, quality):
    buffer = _io.BytesIO()
    image.save(buffer, format="JPEG", quality=int(quality))
    buffer.seek(0)
    out = PIL.Image.open(buffer)
    out.load()
    return out


def jpeg_image(image, quality):
    """The image kernel of :func:`jpeg`: a ``(..., C, H, W)`` tensor (or a PIL image)."""
    if not 1 <= quality <= 100:
        raise ValueError(f"quality must be an integer from 1 to 100, got quality={quality!r}")
    if isinstance(image, PIL.Image.Image):
        return _jpeg_pil(image, quality)
    if image.dtype != ember.uint8:
        raise TypeError(f"Input image should be of dtype uint8, got {image.dtype}")
    c = image.shape[-3]
    if c not in (1, 3):
        raise ValueError(f"Input image should have 1 or 3 channels, got {c}")
    shape = image.shape
    if image.numel() == 0:
        return image.clone()
    arr = image.reshape(-1, *shape[-3:]).cpu().numpy()
    outs = []
    for frame in arr:
        pic = PIL.Image.fromarray(frame[0] if c == 1 else frame.transpose(1, 2, 0),
                                  "L" if c == 1 else "RGB")
        back = np.asarray(_jpeg_pil(pic, quality))
        outs.append(back[None] if c == 1 else back.transpose(2, 0, 1))
    out = ember.from_numpy(np.ascontiguousarray(np.stack(outs))).reshape(shape)
    return out.to(image.device)


def jpeg_video(video, quality):
    """The video kernel of :func:`jpeg`: a ``(..., T, C, H, W)`` tensor."""
    return jpeg_image(video, quality)


for _cls in (ember.Tensor, tv_tensors.Image, PIL.Image.Image):
    _register_kernel_internal(jpeg, _cls)(jpeg_image)
_register_kernel_internal(jpeg, tv_tensors.Video)(jpeg_video)
