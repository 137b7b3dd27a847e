"""``ChannelShuffle``."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Divide the channels of ``(N, C, *)`` into ``groups`` groups and interleave them.

    Args:
        groups: the number of groups (must divide C).

    Examples::

        >>> nn.ChannelShuffle(2)(ember.arange(4.0).reshape(1, 4, 1, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
