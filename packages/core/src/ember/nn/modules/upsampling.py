"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Upsample multi-channel 1-d (temporal), 2-d (spatial) or 3-d (volumetric) data.

    The input is ``(N, C, W)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``; give either the
    output ``size`` or a ``scale_factor``, not both.

    Args:
        size: the output spatial size (an int or a tuple).
        scale_factor: the multiplier for the spatial size (a float or a tuple).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
            ``'bicubic'``, ``'trilinear'`` or ``'area'``. Default: ``'nearest'``.
        align_corners: for the linear and cubic modes, align the corner pixels' centers
            of input and output. Default: ``False``.
        recompute_scale_factor: interpolate with the scale the output size implies
            instead of the given ``scale_factor``.

    Examples::

        >>> m = nn.Upsample(scale_factor=2, mode='bilinear')
        >>> m(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info


class UpsamplingNearest2d(Upsample):
    """2-d nearest-neighbour upsampling of ``(N, C, H, W)`` input (prefer
    :class:`Upsample` with ``mode='nearest'``).

    Args:
        size: the output spatial size.
        scale_factor: the multiplier for the spatial size.
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-d bilinear upsampling of ``(N, C, H, W)`` input with ``align_corners=True``
    (prefer :class:`Upsample` with ``mode='bilinear'``).

    Args:
        size: the output spatial size.
        scale_factor: the multiplier for the spatial size.
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
