"""Transform, the base class of the v2 transforms."""

from __future__ import annotations

import enum

import PIL.Image

import ember
from ember import nn
from embervision import tv_tensors
from embervision.transforms.v2._utils import (
    _rand,
    check_type,
    has_any,
    tree_flatten,
    tree_unflatten,
)
from embervision.transforms.v2.functional._utils import _get_kernel, is_pure_tensor

__all__ = ["Transform"]


class Transform(nn.Module):
    """Base class of the v2 transforms.

    A transform takes any nested structure of tuples, lists and dicts; it draws its random
    parameters once per call (:meth:`make_params`, from the leaves it transforms) and applies
    them to every leaf it can transform (:meth:`transform`), so that an image, its boxes and
    its mask stay consistent. Other leaves pass through unchanged.

    # NOTE [ pure tensors ]
    As in torchvision: a pure tensor is treated as an image only if the sample has no
    :class:`~embervision.tv_tensors.Image`, :class:`~embervision.tv_tensors.Video` or PIL
    image, and then only the first pure tensor; other pure tensors (labels...) pass through.

    Examples::

        >>> class AddOne(v2.Transform):
        ...     def transform(self, inpt, params):
        ...         return inpt + 1
    """

    _transformed_types = (ember.Tensor, PIL.Image.Image)
    _v1_transform_cls = None

    def __init__(self) -> None:
        super().__init__()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # The v1 transform's static get_params is available on the v2 one.
        if cls._v1_transform_cls is not None and hasattr(cls._v1_transform_cls, "get_params"):
            cls.get_params = staticmethod(cls._v1_transform_cls.get_params)

    def check_inputs(self, flat_inputs: list) -> None:
        """Raises on inputs the transform cannot handle (override)."""

    def make_params(self, flat_inputs: list) -> dict:
        """The random parameters of one call, from the inputs that will be transformed."""
        return {}

    def _call_kernel(self, functional, inpt, *args, **kwargs):
        kernel = _get_kernel(functional, type(inpt), allow_passthrough=True)
        return kernel(inpt, *args, **kwargs)

    def transform(self, inpt, params: dict):
        """Transforms one leaf with the parameters of this call (override)."""
        raise NotImplementedError(f"{type(self).__name__} must override transform()")

    def forward(self, *inputs):
        flat_inputs, spec = tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat_inputs)
        return self._apply(flat_inputs, spec)

    def _apply(self, flat_inputs, spec):
        needs = self._needs_transform_list(flat_inputs)
        params = self.make_params([inpt for inpt, need in zip(flat_inputs, needs) if need])
        flat_outputs = [self.transform(inpt, params) if need else inpt
                        for inpt, need in zip(flat_inputs, needs)]
        return tree_unflatten(flat_outputs, spec)

    def _needs_transform_list(self, flat_inputs: list) -> list:
        transform_pure_tensor = not has_any(flat_inputs, tv_tensors.Image, tv_tensors.Video,
                                            PIL.Image.Image)
        needs = []
        for inpt in flat_inputs:
            need = True
            if not check_type(inpt, self._transformed_types):
                need = False
            elif is_pure_tensor(inpt):
                if transform_pure_tensor:
                    transform_pure_tensor = False
                else:
                    need = False
            needs.append(need)
        return needs

    def extra_repr(self) -> str:
        extra = []
        for name, value in self.__dict__.items():
            if name.startswith("_") or name == "training":
                continue
            if not isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)):
                continue
            extra.append(f"{name}={value}")
        return ", ".join(extra)


class _RandomApplyTransform(Transform):
    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, spec = tree_flatten(inputs)
        self.check_inputs(flat_inputs)
        if _rand() >= self.p:
            return inputs
        return self._apply(flat_inputs, spec)
