"""Splitting inputs across devices and gathering outputs back (``scatter``, ``gather``)."""

from __future__ import annotations

from ember._C._core import TensorBase

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device(d):
    from ember._device import device

    if isinstance(d, int):
        return device("cuda", d)
    return d if isinstance(d, device) else device(d)


def scatter(inputs, target_gpus, dim: int = 0):
    """Split the tensors in ``inputs`` (nested in tuples, lists and dicts) into chunks along
    ``dim``, one per device of ``target_gpus``, and copy each chunk to its device; other
    values are repeated. Returns one entry per device (fewer when a batch has fewer rows)."""
    import ember

    devices = [_device(d) for d in target_gpus]

    def split(obj):
        if isinstance(obj, TensorBase):
            return [c.to(d) for c, d in zip(ember.chunk(obj, len(devices), dim), devices)]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(split, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(x) for x in zip(*map(split, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(x) for x in zip(*map(split, obj.items()))]
        return [obj for _ in devices]

    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim: int = 0):
    """:func:`scatter` of the positional and the keyword arguments, padded to one entry per
    chunk."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim: int = 0):
    """Copy the per-device ``outputs`` (tensors, nested in tuples, lists and dicts) to
    ``target_device`` (an index, ``"cpu"``, a device; -1 is the CPU) and concatenate them
    along ``dim``. Differentiable: gradients flow back to each device."""
    from ember import cat

    target = _device("cpu" if target_device == -1 else target_device)

    def join(outs):
        first = outs[0]
        if isinstance(first, TensorBase):
            if all(o.dim() == 0 for o in outs) and dim == 0:
                return cat([o.to(target).reshape(1) for o in outs], 0)
            return cat([o.to(target) for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, join([d[k] for d in outs])) for k in first)
        return type(first)(map(join, zip(*outs)))

    return join(outputs)
