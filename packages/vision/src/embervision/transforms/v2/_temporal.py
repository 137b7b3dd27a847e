"""Temporal v2 transforms of videos."""

from __future__ import annotations

from embervision import tv_tensors
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2.functional._utils import is_pure_tensor

__all__ = ["UniformTemporalSubsample"]


class UniformTemporalSubsample(Transform):
    """Keeps ``num_samples`` frames evenly spaced over a video ``(..., T, C, H, W)``."""

    _transformed_types = (is_pure_tensor, tv_tensors.Video)

    def __init__(self, num_samples: int):
        super().__init__()
        self.num_samples = num_samples

    def transform(self, inpt, params):
        return self._call_kernel(F.uniform_temporal_subsample, inpt, self.num_samples)
