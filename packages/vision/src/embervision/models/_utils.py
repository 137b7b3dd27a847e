"""Helpers shared by the model files."""

from __future__ import annotations


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """``v`` rounded to a multiple of ``divisor`` (at least ``min_value``), never more than
    10% below ``v``: the channel rounding of the MobileNets."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v
