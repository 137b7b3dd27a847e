"""``embervision.tv_tensors``: tensor subclasses that tell the v2 transforms what a tensor
holds (an image, a video, a mask, bounding boxes, key points), as torchvision's."""

from embervision.tv_tensors._bounding_boxes import (
    BoundingBoxes,
    BoundingBoxFormat,
    is_rotated_bounding_format,
)
from embervision.tv_tensors._image import Image, Mask, Video
from embervision.tv_tensors._keypoints import KeyPoints
from embervision.tv_tensors._tv_tensor import TVTensor, set_return_type

__all__ = [
    "BoundingBoxFormat",
    "BoundingBoxes",
    "Image",
    "KeyPoints",
    "Mask",
    "TVTensor",
    "Video",
    "is_rotated_bounding_format",
    "set_return_type",
    "wrap",
]


def wrap(wrappee, *, like, **kwargs):
    """Makes ``wrappee`` (a tensor) a TVTensor of ``like``'s type with ``like``'s metadata.

    Args:
        wrappee (Tensor): the tensor to wrap.
        like (TVTensor): the reference.
        kwargs: metadata to use instead of ``like``'s, e.g. ``format``, ``canvas_size``,
            ``clamping_mode`` for BoundingBoxes, ``canvas_size`` for KeyPoints.
    """
    if not hasattr(like, "__wrap__"):
        raise TypeError(f"Expected `like` to have a `__wrap__` method, but got {type(like)}")
    return like.__wrap__(wrappee, **kwargs)
