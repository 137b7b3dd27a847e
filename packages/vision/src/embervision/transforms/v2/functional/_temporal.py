"""Temporal subsampling of videos."""

from __future__ import annotations

import ember
from embervision import tv_tensors
from embervision.transforms.v2.functional._utils import _dispatch, _register_kernel_internal

__all__ = ["uniform_temporal_subsample", "uniform_temporal_subsample_video"]


def uniform_temporal_subsample(inpt, num_samples):
    """``num_samples`` frames evenly spaced over a video ``(..., T, C, H, W)``; see
    :class:`~embervision.transforms.v2.UniformTemporalSubsample`."""
    return _dispatch(uniform_temporal_subsample, inpt, num_samples=num_samples)


def uniform_temporal_subsample_video(video, num_samples):
    """The video kernel of :func:`uniform_temporal_subsample`: a ``(..., T, C, H, W)`` tensor."""
    t = video.shape[-4]
    if t < 1:
        raise ValueError("The video has no frames to subsample")
    index = ember.linspace(0, t - 1, num_samples).to(ember.int64).to(video.device)
    return video.index_select(-4, index)


_register_kernel_internal(uniform_temporal_subsample, ember.Tensor)(
    uniform_temporal_subsample_video)
_register_kernel_internal(uniform_temporal_subsample, tv_tensors.Video)(
    uniform_temporal_subsample_video)
