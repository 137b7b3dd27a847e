"""Miscellaneous v2 transforms: identity, lambdas, normalization, blur, noise, dtypes and
sanitizing of boxes and key points."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import PIL.Image

import ember
from embervision import transforms as _v1
from embervision import tv_tensors
from embervision.transforms._functional_conversion import convert_image_dtype
from embervision.transforms.v2 import functional as F
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2._utils import (
    _parse_labels_getter,
    _setup_size,
    _uniform,
    get_bounding_boxes,
    get_keypoints,
    has_any,
    tree_flatten,
    tree_unflatten,
)
from embervision.transforms.v2.functional._utils import is_pure_tensor
from embervision.tv_tensors._tv_tensor import _plain

__all__ = [
    "ConvertImageDtype", "GaussianBlur", "GaussianNoise", "Identity", "Lambda",
    "LinearTransformation", "Normalize", "SanitizeBoundingBoxes", "SanitizeKeyPoints", "ToDtype",
]


class Identity(Transform):
    """Returns its inputs unchanged."""

    def transform(self, inpt, params):
        return inpt


class Lambda(Transform):
    """Applies ``lambd`` to the inputs of the given ``types`` (all inputs by default).

    Args:
        lambd (callable): the function.
        *types (type): the input types it applies to.
    """

    _transformed_types = (object,)

    def __init__(self, lambd, *types):
        super().__init__()
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd
        self.types = types or self._transformed_types

    def transform(self, inpt, params):
        return self.lambd(inpt) if isinstance(inpt, self.types) else inpt

    def extra_repr(self) -> str:
        extras = []
        name = getattr(self.lambd, "__name__", None)
        if name:
            extras.append(name)
        extras.append(f"types={[t.__name__ for t in self.types]}")
        return ", ".join(extras)


class LinearTransformation(Transform):
    """Flattens images or videos, subtracts ``mean_vector``, multiplies by
    ``transformation_matrix`` (``(D, D)``, ``D = C * H * W``) and restores the shape."""

    _v1_transform_cls = _v1.LinearTransformation

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        if transformation_matrix.shape[0] != transformation_matrix.shape[1]:
            raise ValueError("transformation_matrix should be square. Got "
                             f"{tuple(transformation_matrix.shape)} rectangular matrix.")
        if mean_vector.shape[0] != transformation_matrix.shape[0]:
            raise ValueError(f"mean_vector should have the same length {mean_vector.shape[0]} as "
                             f"any one of the dimensions of the transformation_matrix "
                             f"[{tuple(transformation_matrix.shape)}]")
        if transformation_matrix.device != mean_vector.device:
            raise ValueError("Input tensors should be on the same device. Got "
                             f"{transformation_matrix.device} and {mean_vector.device}")
        if transformation_matrix.dtype != mean_vector.dtype:
            raise ValueError("Input tensors should have the same dtype. Got "
                             f"{transformation_matrix.dtype} and {mean_vector.dtype}")
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, PIL.Image.Image):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt, params):
        if not (is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image, tv_tensors.Video))):
            return inpt
        shape = inpt.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError("Input tensor and transformation matrix have incompatible shape."
                             f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != "
                             f"{self.transformation_matrix.shape[0]}")
        if inpt.device != self.mean_vector.device:
            raise ValueError("Input tensor should be on the same device as transformation matrix "
                             f"and mean vector. Got {inpt.device} vs {self.mean_vector.device}")
        flat = _plain(inpt).reshape(-1, n) - self.mean_vector
        out = (flat.to(self.transformation_matrix.dtype) @ self.transformation_matrix)
        out = out.reshape(shape)
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out


class Normalize(Transform):
    """Normalizes float images and videos: ``(x - mean) / std`` per channel.

    Args:
        mean (sequence): the mean of each channel.
        std (sequence): the standard deviation of each channel.
        inplace (bool): Default: ``False``.
    """

    _v1_transform_cls = _v1.Normalize

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, PIL.Image.Image):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt, params):
        return self._call_kernel(F.normalize, inpt, mean=self.mean, std=self.std,
                                 inplace=self.inplace)


class GaussianBlur(Transform):
    """Blurs images and videos with a Gaussian of a random sigma in ``sigma``.

    Args:
        kernel_size (int or sequence): odd and positive.
        sigma (float or tuple of float): ``(min, max)``, or a fixed sigma. Default:
            ``(0.1, 2.0)``.
    """

    _v1_transform_cls = _v1.GaussianBlur

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size,
                                       "Kernel size should be a tuple/list of two integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (float(sigma), float(sigma))
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise TypeError("sigma should be a number or a sequence of two numbers.")
        self.sigma = (float(sigma[0]), float(sigma[1]))

    def make_params(self, flat_inputs):
        sigma = _uniform(self.sigma[0], self.sigma[1])
        return dict(sigma=[sigma, sigma])

    def transform(self, inpt, params):
        return self._call_kernel(F.gaussian_blur, inpt, self.kernel_size, **params)


class GaussianNoise(Transform):
    """Adds Gaussian noise to float images and videos in ``[0, 1]``.

    Args:
        mean (float): Default: 0.
        sigma (float): Default: 0.1.
        clip (bool): clip the result to ``[0, 1]``. Default: ``True``.
    """

    def __init__(self, mean=0.0, sigma=0.1, clip=True):
        super().__init__()
        self.mean = mean
        self.sigma = sigma
        self.clip = clip

    def transform(self, inpt, params):
        return self._call_kernel(F.gaussian_noise, inpt, mean=self.mean, sigma=self.sigma,
                                 clip=self.clip)


class ToDtype(Transform):
    """Converts images and videos (or, with a dict, any input type) to a dtype.

    Args:
        dtype (ember.dtype or dict): the dtype of images and videos, or a dict from input type
            to dtype (``"others"`` for the rest; ``None`` leaves a type as it is).
        scale (bool): rescale image and video values to the new dtype's range.
            Default: ``False``.

    Examples::

        >>> ToDtype({tv_tensors.Image: ember.float32, tv_tensors.Mask: ember.int64,
        ...          "others": None}, scale=True)
    """

    _transformed_types = (ember.Tensor,)

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, (dict, ember.dtype)):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        if (isinstance(dtype, dict) and ember.Tensor in dtype
                and any(cls in dtype for cls in (tv_tensors.Image, tv_tensors.Video))):
            warnings.warn("Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` or "
                          "`tv_tensors.Video`. Note that a plain `torch.Tensor` will *not* be "
                          "transformed by this (or any other transformation) in case a "
                          "`tv_tensors.Image` or `tv_tensors.Video` is present in the input.",
                          stacklevel=2)
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt, params):
        image_like = is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image, tv_tensors.Video))
        if isinstance(self.dtype, ember.dtype):
            if not image_like:
                return inpt
            dtype = self.dtype
        elif type(inpt) in self.dtype:
            dtype = self.dtype[type(inpt)]
        elif "others" in self.dtype:
            dtype = self.dtype["others"]
        else:
            raise ValueError(
                f"No dtype was specified for type {type(inpt)}. If you only need to convert the "
                "dtype of images or videos, you can just pass e.g. dtype=torch.float32. If "
                "you're passing a dict as dtype, you can use 'others' as a catch-all key e.g. "
                "dtype={tv_tensors.Mask: torch.int64, 'others': None} to pass-through the rest "
                "of the inputs.")
        if dtype is None:
            if self.scale and image_like:
                warnings.warn("scale was set to True but no dtype was specified for images or "
                              "videos: no scaling will be done.", stacklevel=2)
            return inpt
        return self._call_kernel(F.to_dtype, inpt, dtype=dtype, scale=self.scale)


class ConvertImageDtype(Transform):
    """Converts images and videos to ``dtype``, scaling the values (as
    ``ToDtype(dtype, scale=True)``)."""

    _v1_transform_cls = _v1.ConvertImageDtype

    def __init__(self, dtype=ember.float32):
        super().__init__()
        self.dtype = dtype

    def transform(self, inpt, params):
        if not (is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image, tv_tensors.Video))):
            return inpt
        out = convert_image_dtype(_plain(inpt), self.dtype)
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out


def _labels_tuple(labels):
    if labels is None:
        return None
    msg = "The labels in the input to forward() must be a tensor or None, got {} instead."
    if isinstance(labels, ember.Tensor):
        return (labels,)
    if isinstance(labels, (tuple, list)):
        for entry in labels:
            if not isinstance(entry, ember.Tensor):
                raise ValueError(msg.format(type(entry)))
        return tuple(labels)
    raise ValueError(msg.format(type(labels)))


class _SanitizeBase(Transform):
    def __init__(self, labels_getter):
        super().__init__()
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        labels = _labels_tuple(self._labels_getter(inputs))
        flat_inputs, spec = tree_flatten(inputs)
        target, valid = self._valid(flat_inputs)
        if labels is not None:
            for label in labels:
                if label.shape[0] != target.shape[0]:
                    raise ValueError(f"Number of {self._what} (shape={tuple(target.shape)}) must "
                                     "match the number of labels. Found labels with "
                                     f"shape={tuple(label.shape)}.")
        params = dict(valid=valid, labels=labels)
        return tree_unflatten([self.transform(inpt, params) for inpt in flat_inputs], spec)

    def transform(self, inpt, params):
        is_label = params["labels"] is not None and any(inpt is lab for lab in params["labels"])
        if not (is_label or isinstance(inpt, self._sanitized_types)):
            return inpt
        output = _plain(inpt)[params["valid"]]
        return output if is_label else tv_tensors.wrap(output, like=inpt)


class SanitizeBoundingBoxes(_SanitizeBase):
    """Removes degenerate boxes (and their labels and masks): sides below ``min_size``, area
    below ``min_area``, or outside the canvas.

    Args:
        min_size (float): Default: 1.
        min_area (float): Default: 1.
        labels_getter (callable, str or None): where the labels are: ``"default"`` finds a
            ``"labels"`` key in a dict input (or in the dict second element of a tuple); a
            callable returns them (a tensor or a tuple of tensors); ``None``: no labels.
    """

    _what = "boxes"
    _sanitized_types = (tv_tensors.BoundingBoxes, tv_tensors.Mask)

    def __init__(self, min_size=1.0, min_area=1.0, labels_getter="default"):
        super().__init__(labels_getter)
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_size = min_size
        self.min_area = min_area

    def _valid(self, flat_inputs):
        boxes = get_bounding_boxes(flat_inputs)
        _, valid = F.sanitize_bounding_boxes(boxes, min_size=self.min_size,
                                             min_area=self.min_area)
        return boxes, valid


class SanitizeKeyPoints(_SanitizeBase):
    """Removes key points (or groups of points) outside the canvas, and their labels.

    Args:
        labels_getter (callable, str or None): as for :class:`SanitizeBoundingBoxes`.
            Default: ``None``.
    """

    _what = "keypoints"
    _sanitized_types = (tv_tensors.KeyPoints,)

    def __init__(self, labels_getter=None):
        super().__init__(labels_getter)

    def _valid(self, flat_inputs):
        points = get_keypoints(flat_inputs)
        _, valid = F.sanitize_keypoints(points)
        return points, valid
