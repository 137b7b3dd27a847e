"""KeyPoints: points of an image."""

from __future__ import annotations

import ember
from embervision.tv_tensors._tv_tensor import TVTensor

__all__ = ["KeyPoints"]


class KeyPoints(TVTensor):
    """Points in an image, ``(..., 2)`` of ``x, y`` coordinates: single points ``(N, 2)``,
    polygons or polylines ``(N, P, 2)``, skeletons ``(N, B, 2, 2)`` and so on.

    Args:
        data (tensor-like): the points; a 1-D tensor is one point.
        canvas_size (tuple of int): ``(height, width)`` of the image the points belong to.
        dtype (ember.dtype, optional): the dtype; inferred from ``data`` when omitted.
        device (ember.device, optional): the device; ``data``'s (or the CPU) when omitted.
        requires_grad (bool, optional): ``data``'s when it is a tensor, else ``False``.

    Examples::

        >>> tv_tensors.KeyPoints([[1, 2], [3, 4]], canvas_size=(8, 8)).canvas_size
        (8, 8)
    """

    canvas_size: tuple

    @classmethod
    def _wrap(cls, tensor, *, canvas_size):
        canvas_size = tuple(int(s) for s in canvas_size)
        if len(canvas_size) != 2:
            raise ValueError(f"canvas_size must be (height, width), got {canvas_size}")
        out = ember.Tensor.as_subclass(tensor, cls)
        out.canvas_size = canvas_size
        return out

    def __new__(cls, data, *, canvas_size, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim == 1:
            tensor = tensor.unsqueeze(0)
        elif tensor.ndim == 0 or tensor.shape[-1] != 2:
            raise ValueError(f"Expected a tensor of shape (..., 2), not {tuple(tensor.shape)}")
        return cls._wrap(tensor, canvas_size=canvas_size)

    def _metadata(self) -> dict:
        return {"canvas_size": self.canvas_size}
