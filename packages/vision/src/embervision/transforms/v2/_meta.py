"""v2 transforms of bounding-box and key-point metadata."""

from __future__ import annotations

from embervision import tv_tensors
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform
from embervision.tv_tensors._bounding_boxes import _CLAMPING_MODES, _parse_format

__all__ = ["ClampBoundingBoxes", "ClampKeyPoints", "ConvertBoundingBoxFormat", "SetClampingMode"]


class ConvertBoundingBoxFormat(Transform):
    """Converts bounding boxes to ``format`` (a :class:`~embervision.tv_tensors.BoundingBoxFormat`
    or its name)."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, format):
        super().__init__()
        self.format = _parse_format(format)

    def transform(self, inpt, params):
        return F.convert_bounding_box_format(inpt, new_format=self.format)


class ClampBoundingBoxes(Transform):
    """Clamps bounding boxes to their canvas.

    Args:
        clamping_mode (str or None): ``"auto"`` (each BoundingBoxes' own mode, the default),
            ``"soft"``, ``"hard"`` or ``None``.
    """

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, clamping_mode="auto"):
        super().__init__()
        if clamping_mode != "auto" and clamping_mode not in _CLAMPING_MODES:
            raise ValueError(f"clamping_mode must be 'auto', 'soft', 'hard' or None, got "
                             f"{clamping_mode!r}")
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        return F.clamp_bounding_boxes(inpt, clamping_mode=self.clamping_mode)


class ClampKeyPoints(Transform):
    """Clamps key points to their canvas."""

    _transformed_types = (tv_tensors.KeyPoints,)

    def transform(self, inpt, params):
        return F.clamp_keypoints(inpt)


class SetClampingMode(Transform):
    """Sets the ``clamping_mode`` of bounding boxes (``"soft"``, ``"hard"`` or ``None``)."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, clamping_mode):
        super().__init__()
        if clamping_mode not in _CLAMPING_MODES:
            raise ValueError(f"clamping_mode must be 'soft', 'hard' or None, got "
                             f"{clamping_mode!r}")
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        return tv_tensors.wrap(inpt.clone(), like=inpt, clamping_mode=self.clamping_mode)
