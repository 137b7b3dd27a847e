"""Helpers shared by the region ops: box lists to ``(K, 5)`` rois."""

from __future__ import annotations

import ember


def convert_boxes_to_roi_format(boxes) -> ember.Tensor:
    """A list of per-image ``(L, 4)`` boxes as one ``(K, 5)`` tensor ``(batch_index, x1..y2)``."""
    parts = []
    for i, b in enumerate(boxes):
        idx = ember.full((b.shape[0], 1), float(i), dtype=b.dtype, device=b.device)
        parts.append(ember.cat([idx, b], dim=1))
    if not parts:
        return ember.zeros(0, 5)
    return ember.cat(parts, dim=0)


def check_roi_boxes_shape(boxes) -> ember.Tensor:
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if b.dim() != 2 or b.shape[1] != 4:
                raise ValueError(
                    f"The shape of each tensor in the boxes list must be [L, 4], got "
                    f"{tuple(b.shape)}"
                )
        return convert_boxes_to_roi_format(boxes)
    if not isinstance(boxes, ember.Tensor):
        raise TypeError("boxes must be a Tensor[K, 5] or a list of Tensor[L, 4]")
    if boxes.dim() != 2 or boxes.shape[1] != 5:
        raise ValueError(f"The boxes tensor shape is not correct as Tensor[K, 5], got "
                         f"{tuple(boxes.shape)}")
    return boxes


def pair(v):
    if isinstance(v, int):
        return v, v
    v = tuple(v)
    if len(v) != 2:
        raise ValueError(f"output_size must be an int or a pair, got {v}")
    return int(v[0]), int(v[1])
