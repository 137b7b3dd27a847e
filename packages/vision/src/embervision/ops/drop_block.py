"""DropBlock (Ghiasi et al., 2018): drop contiguous square regions of feature maps."""

from __future__ import annotations

import ember
import ember.nn.functional as F
from ember import nn

__all__ = ["DropBlock2d", "DropBlock3d", "drop_block2d", "drop_block3d"]


def _drop_block(input, p, block_size, inplace, eps, training, dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.dim() != 2 + dims:
        raise ValueError(f"input should be {2 + dims} dimensional. Got {input.dim()} dimensions.")
    if not training or p == 0.0:
        return input
    spatial = list(input.shape[2:])
    block_size = min([block_size] + spatial)
    valid = 1
    for s in spatial:
        valid *= s - block_size + 1
    volume = 1
    for s in spatial:
        volume *= s
    gamma = (p * volume) / ((block_size ** dims) * valid)
    seeds_shape = [input.shape[0], input.shape[1]] + [s - block_size + 1 for s in spatial]
    seeds = (ember.rand(*seeds_shape, dtype=input.dtype, device=input.device) < gamma)
    seeds = seeds.to(input.dtype)
    # Each seed grows into a block: pad, then a max-pool of the block's size.
    pad = [block_size // 2] * (2 * dims)
    seeds = F.pad(seeds, pad, value=0.0)
    pool = F.max_pool2d if dims == 2 else F.max_pool3d
    mask = 1 - pool(seeds, kernel_size=block_size, stride=1, padding=block_size // 2)
    scale = mask.numel() / (eps + float(mask.sum()))
    if inplace:
        return input.mul_(mask * scale)
    return input * mask * scale


def drop_block2d(input, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06,
                 training: bool = True):
    """Zeroes random ``block_size x block_size`` squares of ``(N, C, H, W)`` maps so that about
    a fraction ``p`` is dropped, and rescales the rest.

    Args:
        input (Tensor[N, C, H, W]): the feature maps.
        p (float): the fraction to drop.
        block_size (int): the side of the squares.
        inplace (bool): Default: False.
        eps (float): keeps the rescaling finite. Default: 1e-6.
        training (bool): only applied when True. Default: True.
    """
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(input, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06,
                 training: bool = True):
    """:func:`drop_block2d` for ``(N, C, D, H, W)`` volumes and cubes."""
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


class DropBlock2d(nn.Module):
    """Module form of :func:`drop_block2d`; active in training mode only."""

    def __init__(self, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06):
        super().__init__()
        self.p, self.block_size, self.inplace, self.eps = p, block_size, inplace, eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, "
                f"inplace={self.inplace})")


class DropBlock3d(DropBlock2d):
    """Module form of :func:`drop_block3d`; active in training mode only."""

    def forward(self, input):
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)
