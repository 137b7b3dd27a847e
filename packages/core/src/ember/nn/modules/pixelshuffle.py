"""``PixelShuffle`` and ``PixelUnshuffle``."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``.

    Args:
        upscale_factor: ``r``, the factor to increase spatial resolution by.

    Examples::

        >>> nn.PixelShuffle(3)(ember.randn(1, 9, 4, 4)).shape
        ember.Size([1, 1, 12, 12])
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``.

    Args:
        downscale_factor: ``r``, the factor to decrease spatial resolution by.
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
