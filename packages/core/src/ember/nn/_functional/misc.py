"""``pixel_shuffle``, ``pixel_unshuffle`` and ``channel_shuffle``: reshapes and
permutations of recorded view ops (so gradients come from autograd)."""

from __future__ import annotations

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]


def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``, ``r`` the
    upscale factor.

    See :class:`~ember.nn.PixelShuffle`.
    """
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {len(shape)} dimension(s)")
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = shape[:-3]
    k = len(lead)
    oc = c // (r * r)
    x = input.reshape(lead + (oc, r, r, h, w))
    x = x.permute(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(lead + (oc, h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``, ``r`` the
    downscale factor (the inverse of :func:`pixel_shuffle`).

    See :class:`~ember.nn.PixelUnshuffle`.
    """
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {len(shape)} dimension(s)")
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = shape[-3:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    lead = shape[:-3]
    k = len(lead)
    oh, ow = h // r, w // r
    x = input.reshape(lead + (c, oh, r, ow, r))
    x = x.permute(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(lead + (c * r * r, oh, ow))


def channel_shuffle(input, groups):
    """Split the channels (dim 1) of ``(N, C, *)`` into ``groups`` groups and interleave
    them: ``(N, g, C / g, *) -> (N, C / g, g, *)``.

    See :class:`~ember.nn.ChannelShuffle`.
    """
    shape = tuple(input.shape)
    if len(shape) <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape((shape[0], groups, c // groups) + shape[2:])
    return x.transpose(1, 2).reshape(shape)
