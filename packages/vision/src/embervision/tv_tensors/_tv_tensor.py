"""TVTensor, the base of the tensor subclasses that tell v2 transforms what a tensor holds.

# NOTE [ TVTensors without __torch_function__ ]
torchvision's TVTensors unwrap the result of every op to a plain tensor (a few methods
excepted) through ``__torch_function__``. ember has no ``__torch_function__``: its ops make
plain tensors from a subclass already. What is left to do here is the exceptions: ``clone``,
``to``, ``detach``, ``requires_grad_`` and ``pin_memory`` keep the subclass and its metadata,
in-place methods return a plain tensor (the TVTensor itself is changed and keeps its type),
and under :func:`set_return_type` ``("TVTensor")`` every tensor method and operator keeps the
subclass. The methods are wrapped once, at import, in :func:`_install_wrappers`.
"""

from __future__ import annotations

import contextlib

import ember

__all__ = ["TVTensor", "set_return_type"]

_RETURN_TYPE = "Tensor"

# Methods whose result keeps the TVTensor type whatever the return type (torchvision's list).
_FORCE_SUBCLASS = frozenset({"clone", "to", "detach", "requires_grad_", "pin_memory"})

# Not wrapped: attribute plumbing, conversions out of tensors, and what as_subclass needs.
_NOT_WRAPPED = frozenset({
    "as_subclass", "view_as", "numpy", "tolist", "item", "dim", "size", "numel", "nelement",
    "element_size", "data_ptr", "stride", "storage_offset", "untyped_storage", "storage",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "is_inference",
    "is_pinned", "is_shared", "is_set_to", "get_device", "backward", "register_hook",
    "retain_grad", "type", "__reduce_ex__", "__deepcopy__", "__repr__", "__format__",
    "__setitem__", "__len__", "__iter__", "__bool__", "__hash__", "__index__", "__int__",
    "__float__", "__complex__", "__array__", "__dlpack__", "__dlpack_device__", "dim_order",
    "share_memory_", "apply_", "map_", "register_post_accumulate_grad_hook",
})
_OPERATORS = (
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
    "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
    "__pos__", "__abs__", "__invert__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
    "__rxor__", "__lshift__", "__rshift__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__getitem__",
)


class _ReturnTypeContext(contextlib.AbstractContextManager):
    def __init__(self, previous: str):
        self._previous = previous

    def __exit__(self, *exc):
        global _RETURN_TYPE
        _RETURN_TYPE = self._previous
        return None


def set_return_type(return_type: str):
    """Sets what ops on a TVTensor return: ``"Tensor"`` (plain tensors, the default) or
    ``"TVTensor"`` (the same TVTensor type, with the metadata of the first TVTensor argument).

    Usable as a function (sets it globally) or as a context manager (restores it on exit).

    Args:
        return_type (str): ``"Tensor"`` or ``"TVTensor"`` (case-insensitive).

    Examples::

        >>> img = tv_tensors.Image(ember.rand(3, 4, 4))
        >>> type(img + 1).__name__
        'Tensor'
        >>> with tv_tensors.set_return_type("TVTensor"):
        ...     type(img + 1).__name__
        'Image'
    """
    global _RETURN_TYPE
    value = {"tensor": "Tensor", "tvtensor": "TVTensor"}.get(str(return_type).lower())
    if value is None:
        raise ValueError(f"return_type must be 'TVTensor' or 'Tensor', got {return_type!r}")
    previous = _RETURN_TYPE
    _RETURN_TYPE = value
    return _ReturnTypeContext(previous)


def _must_return_subclass() -> bool:
    return _RETURN_TYPE == "TVTensor"


class TVTensor(ember.Tensor):
    """Base class of the TVTensors (:class:`Image`, :class:`Video`, :class:`Mask`,
    :class:`BoundingBoxes`, :class:`KeyPoints`): an ``ember.Tensor`` whose type says what it
    holds, so that v2 transforms can treat it accordingly.

    Ops on a TVTensor return plain tensors (see :func:`set_return_type`), except ``clone``,
    ``to``, ``detach``, ``requires_grad_`` and ``pin_memory``.
    """

    @staticmethod
    def _to_tensor(data, dtype=None, device=None, requires_grad=None) -> ember.Tensor:
        if requires_grad is None:
            requires_grad = data.requires_grad if isinstance(data, ember.Tensor) else False
        tensor = ember.as_tensor(data, dtype=dtype, device=device)
        if isinstance(tensor, TVTensor):
            tensor = ember.Tensor.as_subclass(tensor, ember.Tensor)
        return tensor.requires_grad_(requires_grad)

    @classmethod
    def _wrap(cls, tensor: ember.Tensor, **metadata):
        out = ember.Tensor.as_subclass(tensor, cls)
        for key, value in metadata.items():
            setattr(out, key, value)
        return out

    def _metadata(self) -> dict:
        return {}

    def __wrap__(self, tensor: ember.Tensor, **overrides):
        meta = self._metadata()
        unknown = set(overrides) - set(meta)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no metadata {sorted(unknown)}")
        meta.update(overrides)
        return type(self)._wrap(tensor, **meta)

    @classmethod
    def _wrap_output(cls, output, args=(), kwargs=None):
        like = next((a for a in list(args) + list((kwargs or {}).values())
                     if isinstance(a, cls)), None)
        if isinstance(output, ember.Tensor):
            if like is None:
                return ember.Tensor.as_subclass(output, cls)
            if output is like:
                return output
            return like.__wrap__(_plain(output))
        if isinstance(output, (tuple, list)):
            return type(output)(cls._wrap_output(part, args, kwargs) for part in output)
        return output

    def _make_repr(self, **kwargs) -> str:
        extra = ", ".join(f"{key}={value}" for key, value in kwargs.items())
        text = ember.Tensor.__repr__(_plain(self))
        return f"{text[:-1]}, {extra})" if extra else text

    def __repr__(self, *, tensor_contents=None) -> str:
        return self._make_repr(**self._metadata())

    def __reduce_ex__(self, protocol):
        # Pickled with its type and metadata (DataLoader workers send samples this way).
        return (_rebuild_tv_tensor, (type(self), _plain(self).detach(), self._metadata()))

    def __deepcopy__(self, memo):
        out = _plain(self).detach().clone().requires_grad_(self.requires_grad)
        return self.__wrap__(out)


def _plain(tensor: ember.Tensor) -> ember.Tensor:
    """The tensor as a plain ``ember.Tensor`` sharing its data."""
    if type(tensor) is ember.Tensor:
        return tensor
    return ember.Tensor.as_subclass(tensor, ember.Tensor)


def _rebuild_tv_tensor(cls, tensor, metadata):
    return cls._wrap(tensor, **metadata)


def _make_wrapper(name, method):
    forced = name in _FORCE_SUBCLASS

    def wrapper(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        if forced or _RETURN_TYPE == "TVTensor":
            return type(self)._wrap_output(out, (self, *args), kwargs)
        if isinstance(out, TVTensor):
            # In-place methods return the TVTensor itself; torchvision hands back a plain one.
            return _plain(out)
        return out

    wrapper.__name__ = name
    wrapper.__qualname__ = f"TVTensor.{name}"
    wrapper.__doc__ = getattr(method, "__doc__", None)
    return wrapper


def _install_wrappers() -> None:
    names = set(_OPERATORS)
    for name in dir(ember.Tensor):
        if name.startswith("_") or name in _NOT_WRAPPED or name in TVTensor.__dict__:
            continue
        attr = getattr(ember.Tensor, name, None)
        if callable(attr) and not isinstance(attr, type):
            names.add(name)
    for name in sorted(names):
        method = getattr(ember.Tensor, name, None)
        if method is None or not callable(method):
            continue
        setattr(TVTensor, name, _make_wrapper(name, method))


_install_wrappers()
