"""Multi-scale RoIAlign: each box pooled from the pyramid level that fits its size (FPN paper,
eq. 1)."""

from __future__ import annotations

import math

import ember
from ember import nn
from embervision.ops._utils import convert_boxes_to_roi_format
from embervision.ops.roi_align import roi_align

__all__ = ["LevelMapper", "MultiScaleRoIAlign"]


class LevelMapper:
    """Maps boxes to pyramid levels: ``floor(k0 + log2(sqrt(area) / canonical_scale))``,
    clamped to ``[k_min, k_max]``, counted from ``k_min``."""

    def __init__(self, k_min: int, k_max: int, canonical_scale: int = 224,
                 canonical_level: int = 4, eps: float = 1e-6):
        self.k_min, self.k_max = k_min, k_max
        self.s0, self.lvl0, self.eps = canonical_scale, canonical_level, eps

    def __call__(self, boxlists):
        boxes = ember.cat(list(boxlists), 0)
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        s = ember.sqrt(area)
        levels = ember.floor(self.lvl0 + ember.log2(s / self.s0) + self.eps)
        levels = ember.clamp(levels, min=self.k_min, max=self.k_max)
        return (levels - self.k_min).to(ember.int64)


class MultiScaleRoIAlign(nn.Module):
    """RoIAlign over several feature maps, each box from the level its size maps to.

    Args:
        featmap_names (list of str): the feature maps to use.
        output_size (int or (int, int)): the pooled size.
        sampling_ratio (int): see :func:`~embervision.ops.roi_align`.
        canonical_scale (int): Default: 224.
        canonical_level (int): Default: 4.

    ``forward(x, boxes, image_shapes)``: ``x`` a dict of ``(N, C, H, W)`` maps, ``boxes`` a list
    of per-image ``(L, 4)`` boxes in image coordinates, ``image_shapes`` the ``(h, w)`` of each
    image. The scale of each map is ``2 ** round(log2(map_size / image_size))``.
    """

    def __init__(self, featmap_names, output_size, sampling_ratio: int, *,
                 canonical_scale: int = 224, canonical_level: int = 4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = list(featmap_names)
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def _setup_scales(self, features, image_shapes):
        max_h = max(s[0] for s in image_shapes)
        scales = []
        for feat in features:
            # The scale is read from the heights, as torchvision does.
            approx = float(feat.shape[-2]) / max_h
            scales.append(2 ** float(round(math.log2(approx))))
        lvl_min, lvl_max = -math.log2(scales[0]), -math.log2(scales[-1])
        return scales, LevelMapper(int(lvl_min), int(lvl_max), self.canonical_scale,
                                   self.canonical_level)

    def forward(self, x, boxes, image_shapes):
        features = [v for k, v in x.items() if k in self.featmap_names]
        if not features:
            raise ValueError(f"none of the featmap_names {self.featmap_names} is in x")
        scales, mapper = self._setup_scales(features, image_shapes)
        self.scales = scales
        rois = convert_boxes_to_roi_format(boxes)
        if len(features) == 1:
            return roi_align(features[0], rois, self.output_size, scales[0],
                             self.sampling_ratio)
        levels = mapper(boxes)
        k = rois.shape[0]
        c = features[0].shape[1]
        result = ember.zeros(k, c, *self.output_size, dtype=features[0].dtype,
                             device=features[0].device)
        for level, (feat, scale) in enumerate(zip(features, scales)):
            idx = ember.where(levels == level)[0]
            if idx.numel() == 0:
                continue
            pooled = roi_align(feat, rois[idx], self.output_size, scale, self.sampling_ratio)
            result = result.index_put((idx,), pooled)
        return result

    def extra_repr(self) -> str:
        return (f"featmap_names={self.featmap_names}, output_size={self.output_size}, "
                f"sampling_ratio={self.sampling_ratio}")
