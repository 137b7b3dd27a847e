"""Normalization, erasing and blurring of images."""

from __future__ import annotations

import numbers

import ember
import ember.nn.functional as F
from embervision.transforms._utils import as_batch, cast_back, check_image, from_batch, is_pil

__all__ = ["erase", "gaussian_blur", "normalize"]


def normalize(tensor: ember.Tensor, mean, std, inplace: bool = False) -> ember.Tensor:
    """Normalizes a float image tensor channel by channel: ``(x - mean) / std``.

    Args:
        tensor (Tensor): a ``(..., C, H, W)`` float image.
        mean (sequence): the mean of each channel.
        std (sequence): the standard deviation of each channel.
        inplace (bool): normalize in place. Default: ``False``.
    """
    if not isinstance(tensor, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError(
            "Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
            f"{tuple(tensor.shape)}"
        )
    mean_t = ember.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std_t = ember.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std_t == 0).any()):
        raise ValueError(
            f"std evaluated to zero after conversion to {tensor.dtype}, "
            "leading to division by zero."
        )
    if mean_t.dim() == 1:
        mean_t = mean_t.reshape(-1, 1, 1)
    if std_t.dim() == 1:
        std_t = std_t.reshape(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean_t).div_(std_t)
    return (tensor - mean_t) / std_t


def erase(img: ember.Tensor, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """Sets ``img[..., i:i + h, j:j + w]`` to ``v`` (a value or a broadcastable tensor)."""
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def _gaussian_kernel1d(size: int, sigma: float) -> ember.Tensor:
    half = (size - 1) * 0.5
    x = ember.linspace(-half, half, steps=size)
    pdf = ember.exp(-0.5 * (x / sigma) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Blurs the image with a Gaussian kernel; borders are reflected.

    Args:
        img (PIL Image or Tensor): the image.
        kernel_size (int or sequence): ``(kx, ky)``, odd and positive.
        sigma (float or sequence, optional): ``(sx, sy)``; when ``None``,
            ``0.3 * ((k - 1) * 0.5 - 1) + 0.8`` for each kernel size.
    """
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    kernel_size = list(kernel_size)
    if len(kernel_size) == 1:
        kernel_size = kernel_size * 2
    if len(kernel_size) != 2:
        raise ValueError(
            f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}"
        )
    for k in kernel_size:
        if not isinstance(k, int) or k % 2 == 0 or k < 0:
            raise ValueError(
                f"kernel_size should have odd and positive integers. Got {kernel_size}"
            )
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if isinstance(sigma, numbers.Number):
        sigma = [float(sigma), float(sigma)]
    sigma = [float(s) for s in sigma]
    if len(sigma) == 1:
        sigma = sigma * 2
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    if any(s <= 0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    if is_pil(img):
        from embervision.transforms._functional_conversion import pil_to_tensor, to_pil_image

        return to_pil_image(gaussian_blur(pil_to_tensor(img), kernel_size, sigma), mode=img.mode)
    check_image(img)
    batch, lead = as_batch(img)
    dtype = img.dtype
    x = batch if img.is_floating_point() else batch.to(ember.float32)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0]).to(x.dtype)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1]).to(x.dtype)
    c = x.shape[1]
    kernel = (ky[:, None] * kx[None, :]).expand(c, 1, kernel_size[1], kernel_size[0])
    px, py = kernel_size[0] // 2, kernel_size[1] // 2
    x = F.pad(x, (px, px, py, py), mode="reflect")
    out = F.conv2d(x, kernel.contiguous().to(x.device), groups=c)
    return from_batch(cast_back(out, dtype), lead)
