"""BoundingBoxes and their coordinate formats."""

from __future__ import annotations

from enum import Enum

import ember
from embervision.tv_tensors._tv_tensor import TVTensor

__all__ = ["BoundingBoxFormat", "BoundingBoxes", "is_rotated_bounding_format"]

_CLAMPING_MODES = ("soft", "hard", None)


class BoundingBoxFormat(Enum):
    """Coordinate format of a bounding box.

    * ``XYXY``: the top-left corner ``x1, y1`` and the bottom-right corner ``x2, y2``.
    * ``XYWH``: the top-left corner, the width and the height.
    * ``CXCYWH``: the centre, the width and the height.
    * ``XYWHR``: rotated: the top-left corner, width, height and the angle ``r`` in degrees.
    * ``CXCYWHR``: rotated: the centre, width, height and the angle in degrees.
    * ``XYXYXYXY``: rotated: the four corners, top-left, top-right, bottom-right,
      bottom-left.
    """

    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"
    XYWHR = "XYWHR"
    CXCYWHR = "CXCYWHR"
    XYXYXYXY = "XYXYXYXY"


def is_rotated_bounding_format(format) -> bool:
    """Whether ``format`` (a :class:`BoundingBoxFormat` or its name) is a rotated format."""
    if isinstance(format, BoundingBoxFormat):
        return format in (BoundingBoxFormat.XYWHR, BoundingBoxFormat.CXCYWHR,
                          BoundingBoxFormat.XYXYXYXY)
    if isinstance(format, str):
        return format in ("XYWHR", "CXCYWHR", "XYXYXYXY")
    raise ValueError(f"format should be str or BoundingBoxFormat, got {type(format)}")


def _parse_format(format) -> BoundingBoxFormat:
    if isinstance(format, BoundingBoxFormat):
        return format
    if isinstance(format, str):
        try:
            return BoundingBoxFormat[format.upper()]
        except KeyError:
            raise ValueError(
                f"Unknown bounding box format {format!r}; expected one of "
                f"{[f.name for f in BoundingBoxFormat]}") from None
    raise TypeError(f"format should be str or BoundingBoxFormat, got {type(format).__name__}")


def _width(format: BoundingBoxFormat) -> int:
    return {BoundingBoxFormat.XYWHR: 5, BoundingBoxFormat.CXCYWHR: 5,
            BoundingBoxFormat.XYXYXYXY: 8}.get(format, 4)


class BoundingBoxes(TVTensor):
    """Bounding boxes, ``(N, K)``: ``K`` is 4 for axis-aligned boxes, 5 or 8 for rotated ones.

    There should be one BoundingBoxes per sample (holding all of its boxes), e.g.
    ``{"image": img, "boxes": BoundingBoxes(...)}``.

    Args:
        data (tensor-like): the boxes; a 1-D tensor is one box.
        format (BoundingBoxFormat or str): the coordinate format.
        canvas_size (tuple of int): ``(height, width)`` of the image the boxes belong to.
        clamping_mode (str or None): how transforms clamp the boxes to the canvas: ``"soft"``
            (the default), ``"hard"`` or ``None`` (no clamping). Axis-aligned boxes are
            clamped the same way by ``"soft"`` and ``"hard"``.
        dtype (ember.dtype, optional): the dtype; inferred from ``data`` when omitted.
        device (ember.device, optional): the device; ``data``'s (or the CPU) when omitted.
        requires_grad (bool, optional): ``data``'s when it is a tensor, else ``False``.

    Examples::

        >>> boxes = tv_tensors.BoundingBoxes([[0, 0, 5, 5]], format="XYXY", canvas_size=(10, 10))
        >>> boxes.format, boxes.canvas_size
        (<BoundingBoxFormat.XYXY: 'XYXY'>, (10, 10))
    """

    format: BoundingBoxFormat
    canvas_size: tuple
    clamping_mode: str | None

    @classmethod
    def _wrap(cls, tensor, *, format, canvas_size, clamping_mode="soft", check_dims=True):
        if check_dims:
            if tensor.ndim == 1:
                tensor = tensor.unsqueeze(0)
            elif tensor.ndim != 2:
                raise ValueError(f"Expected a 1D or 2D tensor, got {tensor.ndim}D")
        if clamping_mode not in _CLAMPING_MODES:
            raise ValueError(
                f"clamping_mode must be 'soft', 'hard' or None, got {clamping_mode!r}")
        format = _parse_format(format)
        canvas_size = tuple(int(s) for s in canvas_size)
        if len(canvas_size) != 2:
            raise ValueError(f"canvas_size must be (height, width), got {canvas_size}")
        out = ember.Tensor.as_subclass(tensor, cls)
        out.format = format
        out.canvas_size = canvas_size
        out.clamping_mode = clamping_mode
        return out

    def __new__(cls, data, *, format, canvas_size, clamping_mode="soft", dtype=None,
                device=None, requires_grad=None):
        format = _parse_format(format)
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if is_rotated_bounding_format(format) and not tensor.is_floating_point():
            raise ValueError(
                f"Rotated bounding boxes should be floating point tensors, got {tensor.dtype}.")
        if tensor.ndim in (1, 2) and tensor.shape[-1] != _width(format) and tensor.numel():
            raise ValueError(
                f"Bounding boxes in format {format.name} have {_width(format)} coordinates, "
                f"got a last dimension of {tensor.shape[-1]}")
        return cls._wrap(tensor, format=format, canvas_size=canvas_size,
                         clamping_mode=clamping_mode)

    def _metadata(self) -> dict:
        return {"format": self.format, "canvas_size": self.canvas_size,
                "clamping_mode": self.clamping_mode}

    def __wrap__(self, tensor, **overrides):
        meta = self._metadata()
        unknown = set(overrides) - set(meta)
        if unknown:
            raise TypeError(f"BoundingBoxes has no metadata {sorted(unknown)}")
        meta.update(overrides)
        return BoundingBoxes._wrap(tensor, check_dims=False, **meta)
