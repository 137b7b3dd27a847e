"""Colour v2 functionals and their image and video kernels (the classic colour transforms)."""

from __future__ import annotations

import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms import _functional_color as _classic
from embervision.transforms.v2.functional._utils import _dispatch, _register_kernel_internal

_OPS = ("adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
        "adjust_saturation", "adjust_sharpness", "autocontrast", "equalize", "invert",
        "permute_channels", "posterize", "solarize")

__all__ = sorted(
    [name for op in _OPS for name in (op, f"{op}_image", f"{op}_video")]
    + ["grayscale_to_rgb", "grayscale_to_rgb_image", "rgb_to_grayscale",
       "rgb_to_grayscale_image", "to_grayscale"]
)


def _register(functional, image_kernel, video_kernel=None):
    _register_kernel_internal(functional, ember.Tensor)(image_kernel)
    _register_kernel_internal(functional, tv_tensors.Image)(image_kernel)
    _register_kernel_internal(functional, PIL.Image.Image)(image_kernel)
    if video_kernel is not None:
        _register_kernel_internal(functional, tv_tensors.Video)(video_kernel)


def rgb_to_grayscale(inpt, num_output_channels=1):
    """Converts an RGB image to grayscale; see :class:`~embervision.transforms.v2.Grayscale`."""
    return _dispatch(rgb_to_grayscale, inpt, num_output_channels=num_output_channels)


def rgb_to_grayscale_image(image, num_output_channels=1):
    """The image kernel of :func:`rgb_to_grayscale`:
    a ``(..., C, H, W)`` tensor (or a PIL image)."""
    return _classic.rgb_to_grayscale(image, num_output_channels)


to_grayscale = rgb_to_grayscale
_register(rgb_to_grayscale, rgb_to_grayscale_image)


def grayscale_to_rgb(inpt):
    """Repeats a one-channel image to three channels (an RGB image is returned as it is)."""
    return _dispatch(grayscale_to_rgb, inpt)


def grayscale_to_rgb_image(image):
    """The image kernel of :func:`grayscale_to_rgb`:
    a ``(..., C, H, W)`` tensor (or a PIL image)."""
    if isinstance(image, PIL.Image.Image):
        return image.convert("RGB")
    if image.shape[-3] >= 3:
        return image
    return image.expand(*image.shape[:-3], 3, *image.shape[-2:]).contiguous()


_register(grayscale_to_rgb, grayscale_to_rgb_image)


def _make(name, classic, doc):
    def functional(inpt, *args, **kwargs):
        return _dispatch(functional, inpt, *args, **kwargs)

    def image_kernel(image, *args, **kwargs):
        return classic(image, *args, **kwargs)

    def video_kernel(video, *args, **kwargs):
        return classic(video, *args, **kwargs)

    for fn, suffix in ((functional, ""), (image_kernel, "_image"), (video_kernel, "_video")):
        fn.__name__ = fn.__qualname__ = name + suffix
        fn.__module__ = __name__
        fn.__doc__ = doc
    _register(functional, image_kernel, video_kernel)
    return functional, image_kernel, video_kernel


def _permute_channels(image, permutation):
    if isinstance(image, PIL.Image.Image):
        from embervision.transforms._functional_conversion import pil_to_tensor, to_pil_image

        return to_pil_image(_permute_channels(pil_to_tensor(image), permutation))
    c = image.shape[-3]
    if len(permutation) != c:
        raise ValueError(f"Length of permutation does not match number of channels: "
                         f"{len(permutation)} != {c}")
    index = ember.tensor(list(permutation), dtype=ember.int64, device=image.device)
    return image.index_select(-3, index)


_DOCS = {
    "adjust_brightness": "Scales the brightness by ``brightness_factor``.",
    "adjust_contrast": "Blends with the mean gray level by ``contrast_factor``.",
    "adjust_gamma": "Gamma correction ``gain * x ** gamma``.",
    "adjust_hue": "Shifts the hue by ``hue_factor`` in ``[-0.5, 0.5]``.",
    "adjust_saturation": "Blends with the grayscale image by ``saturation_factor``.",
    "adjust_sharpness": "Blends with a smoothed image by ``sharpness_factor``.",
    "autocontrast": "Stretches each channel to the full range.",
    "equalize": "Equalizes the histogram of each channel.",
    "invert": "Inverts the colours.",
    "permute_channels": "Reorders the channels: ``out[..., i, :, :] = in[..., p[i], :, :]``.",
    "posterize": "Keeps the ``bits`` most significant bits of each channel.",
    "solarize": "Inverts the pixels at or above ``threshold``.",
}

adjust_brightness, adjust_brightness_image, adjust_brightness_video = _make(
    "adjust_brightness", _classic.adjust_brightness, _DOCS["adjust_brightness"])
adjust_contrast, adjust_contrast_image, adjust_contrast_video = _make(
    "adjust_contrast", _classic.adjust_contrast, _DOCS["adjust_contrast"])
adjust_gamma, adjust_gamma_image, adjust_gamma_video = _make(
    "adjust_gamma", _classic.adjust_gamma, _DOCS["adjust_gamma"])
adjust_hue, adjust_hue_image, adjust_hue_video = _make(
    "adjust_hue", _classic.adjust_hue, _DOCS["adjust_hue"])
adjust_saturation, adjust_saturation_image, adjust_saturation_video = _make(
    "adjust_saturation", _classic.adjust_saturation, _DOCS["adjust_saturation"])
adjust_sharpness, adjust_sharpness_image, adjust_sharpness_video = _make(
    "adjust_sharpness", _classic.adjust_sharpness, _DOCS["adjust_sharpness"])
autocontrast, autocontrast_image, autocontrast_video = _make(
    "autocontrast", _classic.autocontrast, _DOCS["autocontrast"])
equalize, equalize_image, equalize_video = _make(
    "equalize", _classic.equalize, _DOCS["equalize"])
invert, invert_image, invert_video = _make("invert", _classic.invert, _DOCS["invert"])
permute_channels, permute_channels_image, permute_channels_video = _make(
    "permute_channels", _permute_channels, _DOCS["permute_channels"])
posterize, posterize_image, posterize_video = _make(
    "posterize", _classic.posterize, _DOCS["posterize"])
solarize, solarize_image, solarize_video = _make(
    "solarize", _classic.solarize, _DOCS["solarize"])
