"""Image, Video and Mask: TVTensors that carry no metadata."""

from __future__ import annotations

from embervision.tv_tensors._tv_tensor import TVTensor

__all__ = ["Image", "Mask", "Video"]


def _from_pil(data):
    from PIL import Image as PILImage

    if isinstance(data, PILImage.Image):
        from embervision.transforms._functional_conversion import pil_to_tensor

        return pil_to_tensor(data)
    return data


class Image(TVTensor):
    """An image or a batch of images, ``(..., C, H, W)``.

    Args:
        data (tensor-like or PIL Image): the image; a 2-D tensor gets a channel dimension.
        dtype (ember.dtype, optional): the dtype; inferred from ``data`` when omitted.
        device (ember.device, optional): the device; ``data``'s (or the CPU) when omitted.
        requires_grad (bool, optional): ``data``'s when it is a tensor, else ``False``.

    Examples::

        >>> tv_tensors.Image(ember.zeros(4, 5)).shape
        ember.Size([1, 4, 5])
    """

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(_from_pil(data), dtype=dtype, device=device,
                                requires_grad=requires_grad)
        if tensor.ndim < 2:
            raise ValueError(f"An Image needs at least 2 dimensions, got {tensor.ndim}")
        if tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        return cls._wrap(tensor)


class Video(TVTensor):
    """A video or a batch of videos, ``(..., T, C, H, W)``.

    Args:
        data (tensor-like): the frames, at least 4-D.
        dtype (ember.dtype, optional): the dtype; inferred from ``data`` when omitted.
        device (ember.device, optional): the device; ``data``'s (or the CPU) when omitted.
        requires_grad (bool, optional): ``data``'s when it is a tensor, else ``False``.
    """

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 4:
            raise ValueError(f"A Video needs at least 4 dimensions, got {tensor.ndim}")
        return cls._wrap(tensor)


class Mask(TVTensor):
    """A segmentation or detection mask, ``(..., H, W)``; resampled with nearest
    interpolation by the transforms.

    Args:
        data (tensor-like or PIL Image): the mask.
        dtype (ember.dtype, optional): the dtype; inferred from ``data`` when omitted.
        device (ember.device, optional): the device; ``data``'s (or the CPU) when omitted.
        requires_grad (bool, optional): ``data``'s when it is a tensor, else ``False``.
    """

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = cls._to_tensor(_from_pil(data), dtype=dtype, device=device,
                                requires_grad=requires_grad)
        return cls._wrap(tensor)
