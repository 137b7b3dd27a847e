"""Padding layers: constant (and zero), reflection, replication and circular, for 1, 2
and 3 spatial dimensions. Each ``forward`` is one call of ``F.pad``."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _ntuple(x, n):
    if isinstance(x, Iterable):
        return tuple(x)
    return tuple(repeat(x, n))


class _PadNd(Module):
    _sides = 2  # entries of ``padding``: 2 per padded dimension
    padding: tuple

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, self._sides)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``.

    Args:
        padding: an int for both sides, or ``(left, right)``.
        value: the fill value.
    """

    _sides = 2


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dimensions with ``value``.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom)``.
        value: the fill value.
    """

    _sides = 4


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dimensions with ``value``.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom, front, back)``.
        value: the fill value.
    """

    _sides = 6


class ZeroPad1d(ConstantPad1d):
    """Pad the last dimension with zeros.

    Args:
        padding: an int for both sides, or ``(left, right)``.
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dimensions with zeros.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom)``.
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dimensions with zeros.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom, front, back)``.
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    def forward(self, input):
        return F.pad(input, self.padding, "reflect")


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dimension with the reflection of the input (the edge not repeated).

    Args:
        padding: an int for both sides, or ``(left, right)``; each below the size.
    """

    _sides = 2


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dimensions with the reflection of the input.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom)``.
    """

    _sides = 4


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dimensions with the reflection of the input.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom, front, back)``.
    """

    _sides = 6


class _ReplicationPadNd(_PadNd):
    def forward(self, input):
        return F.pad(input, self.padding, "replicate")


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dimension by repeating the edge values.

    Args:
        padding: an int for both sides, or ``(left, right)``.
    """

    _sides = 2


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dimensions by repeating the edge values.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom)``.
    """

    _sides = 4


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dimensions by repeating the edge values.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom, front, back)``.
    """

    _sides = 6


class _CircularPadNd(_PadNd):
    _dims = (2, 3)

    def forward(self, input):
        lo, hi = self._dims
        if input.dim() not in (lo, hi):
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dimension with the values from the other end (wrapping around).

    Args:
        padding: an int for both sides, or ``(left, right)``.
    """

    _sides = 2
    _dims = (2, 3)


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dimensions with the values from the other end.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom)``.
    """

    _sides = 4
    _dims = (3, 4)


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dimensions with the values from the other end.

    Args:
        padding: an int for all sides, or ``(left, right, top, bottom, front, back)``.
    """

    _sides = 6
    _dims = (4, 5)
