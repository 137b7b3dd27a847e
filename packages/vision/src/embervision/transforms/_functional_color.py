"""Colour transforms of PIL images and ``(..., C, H, W)`` tensors."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

import ember
import ember.nn.functional as F
from embervision.transforms._functional_conversion import convert_image_dtype
from embervision.transforms._utils import (
    as_batch,
    check_image,
    from_batch,
    get_dimensions,
    is_pil,
    max_value,
)

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "adjust_sharpness",
    "autocontrast",
    "equalize",
    "invert",
    "posterize",
    "rgb_to_grayscale",
    "solarize",
    "to_grayscale",
]


def _check_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(
            f"Input image tensor permitted channel values are {permitted}, but found {c}"
        )


def _blend(img1: ember.Tensor, img2, ratio: float) -> ember.Tensor:
    bound = max_value(img1.dtype)
    out = ratio * img1.to(ember.float32 if not img1.is_floating_point() else img1.dtype)
    out = out + (1.0 - ratio) * (img2 if isinstance(img2, (int, float)) else img2.to(out.dtype))
    return out.clamp(0, bound).to(img1.dtype)


def _check_factor(name, value):
    if value < 0:
        raise ValueError(f"{name} ({value}) is not non-negative.")


def rgb_to_grayscale(img, num_output_channels: int = 1):
    """Converts an RGB image to grayscale, ``L = 0.2989 R + 0.587 G + 0.114 B``.

    Args:
        img (PIL Image or Tensor): the RGB image, ``(..., 3, H, W)`` for a tensor.
        num_output_channels (int): 1 or 3 (the gray value repeated).
    """
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if is_pil(img):
        gray = img.convert("L")
        if num_output_channels == 3:
            arr = np.asarray(gray)
            gray = Image.fromarray(np.dstack([arr, arr, arr]), "RGB")
        return gray
    check_image(img)
    _check_channels(img, [1, 3])
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r.to(ember.float32) + 0.587 * g.to(ember.float32)
                + 0.114 * b.to(ember.float32)).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(*gray.shape[:-3], 3, *gray.shape[-2:]).contiguous()
    return gray


def to_grayscale(img, num_output_channels: int = 1):
    """Converts a PIL image (or a tensor) to grayscale; see :func:`rgb_to_grayscale`."""
    return rgb_to_grayscale(img, num_output_channels)


def adjust_brightness(img, brightness_factor: float):
    """Scales the brightness: 0 gives black, 1 the image itself, 2 twice as bright."""
    _check_factor("brightness_factor", brightness_factor)
    if is_pil(img):
        return ImageEnhance.Brightness(img).enhance(brightness_factor)
    check_image(img)
    return _blend(img, 0.0, brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    """Blends the image with its mean gray level: 0 gives solid gray, 1 the image itself."""
    _check_factor("contrast_factor", contrast_factor)
    if is_pil(img):
        return ImageEnhance.Contrast(img).enhance(contrast_factor)
    check_image(img)
    _check_channels(img, [1, 3])
    gray = rgb_to_grayscale(img) if img.shape[-3] == 3 else img
    dtype = img.dtype if img.is_floating_point() else ember.float32
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    """Blends the image with its grayscale version: 0 gives gray, 1 the image itself."""
    _check_factor("saturation_factor", saturation_factor)
    if is_pil(img):
        return ImageEnhance.Color(img).enhance(saturation_factor)
    check_image(img)
    _check_channels(img, [1, 3])
    if img.shape[-3] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb_to_hsv(img: ember.Tensor) -> ember.Tensor:
    r, g, b = img.unbind(dim=-3)
    maxc = img.amax(dim=-3)
    minc = img.amin(dim=-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = ember.ones_like(maxc)
    s = cr / ember.where(eqc, ones, maxc)
    cr_div = ember.where(eqc, ones, cr)
    rc = (maxc - r) / cr_div
    gc = (maxc - g) / cr_div
    bc = (maxc - b) / cr_div
    hr = (maxc == r).to(img.dtype) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)).to(img.dtype) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)).to(img.dtype) * (4.0 + gc - rc)
    h = ember.remainder((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return ember.stack([h, s, maxc], dim=-3)


def _hsv_to_rgb(img: ember.Tensor) -> ember.Tensor:
    h, s, v = img.unbind(dim=-3)
    i = ember.floor(h * 6.0)
    f = h * 6.0 - i
    i = ember.remainder(i, 6).to(ember.int64)
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    # Sector i of the hue circle takes (r, g, b) from these choices.
    table = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = [ember.zeros_like(v) for _ in range(3)]
    for sector, values in enumerate(table):
        mask = (i == sector).to(v.dtype)
        for k in range(3):
            out[k] = out[k] + mask * values[k]
    return ember.stack(out, dim=-3)


def adjust_hue(img, hue_factor: float):
    """Shifts the hue by ``hue_factor`` turns of the colour wheel, in ``[-0.5, 0.5]``."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if is_pil(img):
        if img.mode in ("L", "1", "I", "F"):
            return img
        mode = img.mode
        h, s, v = img.convert("HSV").split()
        # one pass in uint8: the shift wraps around the colour wheel (mod 256)
        arr = np.array(h, dtype=np.uint8)
        arr += np.uint8(int(hue_factor * 255) % 256)
        return Image.merge("HSV", (Image.fromarray(arr, "L"), s, v)).convert(mode)
    check_image(img)
    _check_channels(img, [1, 3])
    if img.shape[-3] == 1:
        return img
    dtype = img.dtype
    x = img.to(ember.float32) / 255.0 if dtype == ember.uint8 else img
    hsv = _rgb_to_hsv(x)
    h, s, v = hsv.unbind(dim=-3)
    h = ember.remainder(h + hue_factor, 1.0)
    out = _hsv_to_rgb(ember.stack([h, s, v], dim=-3))
    if dtype == ember.uint8:
        return convert_image_dtype(out, ember.uint8)
    return out.to(dtype)


def adjust_gamma(img, gamma: float, gain: float = 1):
    """Gamma correction ``out = gain * in ** gamma`` on values scaled to ``[0, 1]``."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if is_pil(img):
        mode = img.mode
        rgb = img.convert("RGB") if mode not in ("L", "RGB") else img
        lut = [int((255 + 1 - 1e-3) * gain * pow(v / 255.0, gamma)) for v in range(256)]
        return rgb.point(lut * len(rgb.getbands())).convert(mode)
    check_image(img)
    dtype = img.dtype
    x = img if img.is_floating_point() else img.to(ember.float32) / max_value(dtype)
    out = (gain * x.pow(gamma)).clamp(0, 1)
    if dtype.is_floating_point:
        return out.to(dtype)
    return (out * (max_value(dtype) + 1.0 - 1e-3)).to(dtype)


def invert(img):
    """Inverts the colours: ``MAX - img``."""
    if is_pil(img):
        return ImageOps.invert(img)
    check_image(img)
    _check_channels(img, [1, 3])
    return max_value(img.dtype) - img


def posterize(img, bits: int):
    """Keeps the ``bits`` most significant bits of each channel (uint8 images)."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    if is_pil(img):
        return ImageOps.posterize(img, bits)
    check_image(img)
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    mask = ember.tensor(-int(2 ** (8 - bits)) & 0xFF, dtype=ember.uint8)
    return img & mask


def solarize(img, threshold: float):
    """Inverts every pixel value at or above ``threshold``."""
    if is_pil(img):
        return ImageOps.solarize(img, threshold)
    check_image(img)
    _check_channels(img, [1, 3])
    if threshold > max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return ember.where(img >= threshold, invert(img), img)


def _blurred_degenerate(img: ember.Tensor) -> ember.Tensor:
    batch, lead = as_batch(img)
    dtype = img.dtype
    x = batch.to(ember.float32) if not img.is_floating_point() else batch
    c = x.shape[1]
    kernel = ember.ones(3, 3, dtype=x.dtype)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(c, 1, 3, 3).contiguous()
    smooth = F.conv2d(x, kernel, groups=c)
    if not dtype.is_floating_point:
        smooth = smooth.round().clamp(0, max_value(dtype))
    out = x.clone()
    out[..., 1:-1, 1:-1] = smooth
    return from_batch(out.to(dtype), lead)


def adjust_sharpness(img, sharpness_factor: float):
    """Blends the image with a smoothed copy: 0 blurs, 1 keeps it, 2 sharpens."""
    _check_factor("sharpness_factor", sharpness_factor)
    if is_pil(img):
        return ImageEnhance.Sharpness(img).enhance(sharpness_factor)
    check_image(img)
    _check_channels(img, [1, 3])
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _blurred_degenerate(img), sharpness_factor)


def autocontrast(img):
    """Stretches each channel so that its darkest pixel is black and its lightest white."""
    if is_pil(img):
        return ImageOps.autocontrast(img)
    check_image(img)
    if img.dim() < 3:
        raise TypeError(
            f"Input image tensor should have at least 3 dimensions, but found {img.dim()}"
        )
    _check_channels(img, [1, 3])
    bound = max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    lo = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    hi = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    flat = hi == lo
    scale = ember.where(flat, ember.ones_like(hi), bound / ember.where(flat, ember.ones_like(hi),
                                                                        hi - lo))
    lo = ember.where(flat, ember.zeros_like(lo), lo)
    return ((img.to(dtype) - lo) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(chan: np.ndarray) -> np.ndarray:
    hist = np.bincount(chan.ravel(), minlength=256)
    nonzero = hist[hist != 0]
    step = (nonzero.sum() - nonzero[-1]) // 255 if nonzero.size else 0
    if step == 0:
        return chan
    lut = (np.cumsum(hist) + step // 2) // step
    lut = np.concatenate([[0], lut[:-1]]).clip(0, 255).astype(np.uint8)
    return lut[chan]


def equalize(img):
    """Equalizes the histogram of each channel (uint8 images)."""
    if is_pil(img):
        return ImageOps.equalize(img)
    check_image(img)
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _check_channels(img, [1, 3])
    arr = img.cpu().numpy()
    flat = arr.reshape(-1, *arr.shape[-2:])
    out = np.stack([_equalize_channel(ch) for ch in flat]) if flat.shape[0] else flat
    return ember.from_numpy(np.ascontiguousarray(out.reshape(arr.shape))).to(img.device)
