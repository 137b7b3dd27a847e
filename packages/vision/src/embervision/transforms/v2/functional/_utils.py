"""The kernel registry of the v2 functionals: which kernel handles which input type.

# NOTE [ v2 dispatch ]
A v2 functional (``resize``, ``hflip`` ...) looks up the kernel registered for the type of its
input, walking the type's MRO: a pure ``ember.Tensor`` is an image, ``tv_tensors.Mask`` is
resampled with nearest interpolation, ``tv_tensors.BoundingBoxes`` and ``KeyPoints`` move their
coordinates, a PIL image goes through Pillow. Kernels registered with the TVTensor wrapper get
a plain tensor and their result is wrapped back into the input's type and metadata.
"""

from __future__ import annotations

import functools

import ember
from embervision import tv_tensors
from embervision.tv_tensors._tv_tensor import _plain

__all__ = ["is_pure_tensor", "register_kernel"]

_KERNEL_REGISTRY: dict = {}


def is_pure_tensor(inpt) -> bool:
    """Whether ``inpt`` is an ``ember.Tensor`` that is not a TVTensor."""
    return isinstance(inpt, ember.Tensor) and not isinstance(inpt, tv_tensors.TVTensor)


def _kernel_tv_tensor_wrapper(kernel):
    @functools.wraps(kernel)
    def wrapper(inpt, *args, **kwargs):
        output = kernel(_plain(inpt), *args, **kwargs)
        return tv_tensors.wrap(output, like=inpt)

    return wrapper


def _register_kernel_internal(functional, input_type, *, tv_tensor_wrapper=True):
    registry = _KERNEL_REGISTRY.setdefault(functional, {})
    if input_type in registry:
        raise ValueError(f"Functional {functional} already has a kernel registered for type "
                         f"{input_type}.")

    def decorator(kernel):
        wrapped = (_kernel_tv_tensor_wrapper(kernel)
                   if tv_tensor_wrapper and isinstance(input_type, type)
                   and issubclass(input_type, tv_tensors.TVTensor) else kernel)
        registry[input_type] = wrapped
        return kernel

    return decorator


def _name_to_functional(name):
    from embervision.transforms.v2 import functional

    try:
        return getattr(functional, name)
    except AttributeError:
        raise ValueError(f"Could not find functional with name '{name}' in "
                         "embervision.transforms.v2.functional.") from None


def register_kernel(functional, tv_tensor_cls):
    """Decorator registering a kernel of ``functional`` for a custom TVTensor type.

    Args:
        functional (callable or str): the v2 functional, e.g. ``F.hflip`` or ``"hflip"``.
        tv_tensor_cls (type): a subclass of :class:`~embervision.tv_tensors.TVTensor`; the
            kernel receives the TVTensor itself and returns the result (no unwrapping).

    Examples::

        >>> @F.register_kernel(F.hflip, MyTVTensor)
        ... def hflip_my(inpt):
        ...     return inpt.flip(-1)
    """
    if isinstance(functional, str):
        functional = _name_to_functional(functional)
    elif not callable(functional) or getattr(functional, "__module__", "").split(".")[:4] != [
            "embervision", "transforms", "v2", "functional"]:
        raise ValueError(f"Kernels can only be registered on functionals from the "
                         f"embervision.transforms.v2.functional namespace, but got {functional}.")
    if not (isinstance(tv_tensor_cls, type) and issubclass(tv_tensor_cls, tv_tensors.TVTensor)):
        raise ValueError(f"Kernels can only be registered for subclasses of "
                         f"embervision.tv_tensors.TVTensor, but got {tv_tensor_cls}.")
    if tv_tensor_cls in (tv_tensors.Image, tv_tensors.Video, tv_tensors.Mask,
                         tv_tensors.BoundingBoxes, tv_tensors.KeyPoints):
        raise ValueError(f"Kernels cannot be registered for the builtin tv_tensor "
                         f"{tv_tensor_cls.__name__}.")
    return _register_kernel_internal(functional, tv_tensor_cls, tv_tensor_wrapper=False)


def _get_kernel(functional, input_type, *, allow_passthrough=False):
    registry = _KERNEL_REGISTRY.get(functional)
    if not registry:
        raise ValueError(f"No kernel registered for functional {functional.__name__}.")
    for cls in input_type.__mro__:
        if cls in registry:
            return registry[cls]
        if cls is tv_tensors.TVTensor:
            # A TVTensor subclass without its own kernel is not an image.
            break
    if allow_passthrough:
        return lambda inpt, *args, **kwargs: inpt
    raise TypeError(
        f"Functional F.{functional.__name__} supports inputs of type "
        f"{[t.__name__ for t in registry]}, but got {input_type} instead.")


def _dispatch(functional, inpt, *args, **kwargs):
    return _get_kernel(functional, type(inpt))(inpt, *args, **kwargs)
