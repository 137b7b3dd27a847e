"""Conversions between a model's parameters and one flat vector."""

from __future__ import annotations

from collections.abc import Iterable

from ember._C import _core

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable):
    r"""Flatten an iterable of parameters into a single vector.

    Args:
        parameters (Iterable[Tensor]): the parameters of a model.

    Returns:
        The parameters represented by a single vector (differentiable with respect to them).
    """
    from ember._ops.join import cat

    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.reshape(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters: Iterable) -> None:
    r"""Copy slices of a vector into an iterable of parameters: each parameter's data
    becomes a view of the next ``param.numel()`` elements of ``vec``.

    Args:
        vec (Tensor): a single vector representing the parameters of a model.
        parameters (Iterable[Tensor]): the parameters of a model.
    """
    if not isinstance(vec, _core.TensorBase):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _typename(obj) -> str:
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _check_param_device(param, old_param_device):
    """The device index of the first parameter (-1 for the CPU); raises if ``param`` is on
    another device."""
    on_gpu = param.device.type == "cuda"
    index = param.get_device() if on_gpu else -1
    if old_param_device is None:
        return index
    if index != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device
