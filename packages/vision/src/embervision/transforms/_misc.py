"""Normalization, linear transformation, blurring and random erasing."""

from __future__ import annotations

import math
import numbers

import ember
from ember import nn
from embervision.transforms import _functional_misc as F
from embervision.transforms._utils import get_dimensions

__all__ = ["GaussianBlur", "LinearTransformation", "Normalize", "RandomErasing"]


class Normalize(nn.Module):
    """Normalizes a float tensor image channel by channel: ``(x - mean) / std``.

    Args:
        mean (sequence): per-channel means.
        std (sequence): per-channel standard deviations.
        inplace (bool): Default: ``False``.
    """

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def extra_repr(self) -> str:
        return f"mean={self.mean}, std={self.std}"


class LinearTransformation(nn.Module):
    """Flattens the image, subtracts ``mean_vector`` and multiplies by
    ``transformation_matrix`` (e.g. ZCA whitening), then restores the shape.

    Args:
        transformation_matrix (Tensor): ``(D, D)`` with ``D = C * H * W``.
        mean_vector (Tensor): ``(D,)``.
    """

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        if transformation_matrix.dim() != 2 or (
                transformation_matrix.shape[0] != transformation_matrix.shape[1]):
            raise ValueError(
                "transformation_matrix should be square. Got "
                f"{tuple(transformation_matrix.shape)} rectangular matrix."
            )
        if mean_vector.shape[0] != transformation_matrix.shape[0]:
            raise ValueError(
                f"mean_vector should have the same length {mean_vector.shape[0]} as any one of "
                f"the dimensions of the transformation_matrix {tuple(transformation_matrix.shape)}"
            )
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def forward(self, tensor):
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != "
                f"{self.transformation_matrix.shape[0]}"
            )
        flat = tensor.reshape(-1, n) - self.mean_vector.to(tensor.dtype)
        out = flat @ self.transformation_matrix.to(tensor.dtype)
        return out.reshape(tuple(shape))


class GaussianBlur(nn.Module):
    """Blurs the image with a Gaussian of a random sigma in ``sigma``.

    Args:
        kernel_size (int or sequence): odd, positive.
        sigma (float or (min, max)): the range of sigma. Default: ``(0.1, 2.0)``.
    """

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        ks = [kernel_size, kernel_size] if isinstance(kernel_size, int) else list(kernel_size)
        for k in ks:
            if k <= 0 or k % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        self.kernel_size = ks
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (float(sigma), float(sigma))
        elif not (len(sigma) == 2 and 0.0 < sigma[0] <= sigma[1]):
            raise ValueError("sigma values should be positive and of the form (min, max).")
        self.sigma = tuple(sigma)

    @staticmethod
    def get_params(sigma_min, sigma_max):
        """A random sigma in ``[sigma_min, sigma_max]``."""
        return float(ember.empty(1).uniform_(sigma_min, sigma_max).item())

    def forward(self, img):
        s = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [s, s])


class RandomErasing(nn.Module):
    """Erases a random rectangle of a tensor image with probability ``p``.

    Args:
        p (float): the probability. Default: 0.5.
        scale (tuple): range of the erased area relative to the image. Default: ``(0.02, 0.33)``.
        ratio (tuple): range of its aspect ratio. Default: ``(0.3, 3.3)``.
        value (number, sequence or ``"random"``): the fill; ``"random"`` draws normal noise.
        inplace (bool): Default: ``False``.
    """

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """Random ``(i, j, h, w, v)``; the whole image and itself after ten failed tries."""
        c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * float(ember.empty(1).uniform_(scale[0], scale[1]).item())
            aspect = math.exp(float(ember.empty(1).uniform_(log_ratio[0], log_ratio[1]).item()))
            h = int(round(math.sqrt(erase_area * aspect)))
            w = int(round(math.sqrt(erase_area / aspect)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = ember.empty(c, h, w, dtype=ember.float32).normal_()
            else:
                v = ember.tensor(value, dtype=ember.float32)[:, None, None]
            i = int(ember.randint(0, img_h - h + 1, (1,)).item())
            j = int(ember.randint(0, img_w - w + 1, (1,)).item())
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if ember.rand(1).item() >= self.p:
            return img
        if not isinstance(img, ember.Tensor):
            raise TypeError(f"img should be a Tensor, got {type(img).__name__}")
        channels = get_dimensions(img)[0]
        if isinstance(self.value, numbers.Number):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        if value is not None and len(value) not in (1, channels):
            raise ValueError(
                "If value is a sequence, it should have either a single value or "
                f"{channels} (number of input channels)"
            )
        i, j, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        return F.erase(img, i, j, h, w, v.to(img.dtype) if v is not img else v, self.inplace)
