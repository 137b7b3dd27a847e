"""Conversions: dtype and device moves, clone, contiguous, detach-like views."""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._backend import backend_for_device, backend_of
from ember._C._core import Node, apply_inplace
from ember._device import device as _device_cls
from ember._misc import contiguous_format, preserve_format
from ember._ops._memory_format import check_format, copy_as, is_contiguous_as, suggested_format
from ember._ops._operands import zeros as _zeros_like
from ember._ops._util import TensorBase, apply, xp_of

__all__ = ["clone", "to"]


class Copy(Node):
    """``self.copy_(src)``: self's values replaced by ``src`` broadcast and cast."""

    def forward(self, dst, src):
        self.src_dtype = src.dtype
        if src.dtype != dst.dtype:
            src = src.astype(dst.dtype)
        if src.shape != dst.shape:
            src = xp_of(src).broadcast_to(src, dst.shape)
        return src

    def backward(self, g):
        # the old value of self is overwritten: its gradient is zeros, as PyTorch's
        return _zeros_like(g), (g if g._data.dtype == self.src_dtype else g.to(self.src_dtype))


class Fill(Node):
    """``self.fill_(value)``: every element set to ``value`` (a number or 0-d tensor)."""

    def forward(self, dst, value):
        return xp_of(dst).full(dst.shape, value, dtype=dst.dtype)

    def backward(self, g):
        return _zeros_like(g), g.sum()  # the old values are overwritten: zeros, as PyTorch


def copy_(self, src, non_blocking=False):
    """Copy the values of ``src`` (broadcast to self's shape, cast to its dtype) into self."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if type(src._data) is not type(self._data):
        src = src.to(self.device)
    try:
        np.broadcast_shapes(src._data.shape, self._data.shape)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({self._data.shape[-1] if self._data.ndim else 1}) must "
            f"match the size of tensor b ({src._data.shape[-1] if src._data.ndim else 1}) at "
            f"non-singleton dimension {self._data.ndim - 1}") from None
    return apply_inplace(Copy, self, src)


def fill_(self, value):
    """Fill self with ``value`` (a number, or a 0-dim tensor through which grad flows)."""
    if isinstance(value, TensorBase):
        if value._data.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.")
        if value.requires_grad:
            return apply_inplace(Fill, self, value)
        value = value.item()
    return apply_inplace(Fill, self, value)


def zero_(self):
    """Fill self with zeros."""
    return apply_inplace(Fill, self, 0)


class ToCopy(Node):
    """A copy with another dtype and/or on another device; backward casts back."""

    def forward(self, x, np_dtype, target_backend, copy):
        self.src_dtype = x.dtype
        self.src_backend = backend_of(x)
        if target_backend is not self.src_backend:
            x = target_backend.to_device(x)
            copy = False
        if np_dtype is not None and x.dtype != np_dtype:
            if np_dtype.name == "float8_e4m3fn" and x.dtype.kind in "fV":
                # PyTorch saturates to the largest finite value (the type has no inf)
                x = xp_of(x).clip(x.astype(np.float32), -448.0, 448.0)
            return x.astype(np_dtype)
        return x.copy() if copy else x

    def name(self):
        return "ToCopyBackward0"

    def backward(self, grad):
        if grad._data.dtype.kind == "c" and self.src_dtype.kind != "c":
            grad = grad.real  # a real input's gradient is the real part (PyTorch's rule)
        return apply(ToCopy, grad, self.src_dtype, self.src_backend, False)


class Clone(Node):
    def forward(self, x, memory_format=None):
        if memory_format is None:
            return x.copy()
        return copy_as(xp_of(x), x, memory_format)

    def backward(self, grad):
        return grad


def clone(input, *, memory_format=None):
    """A copy of ``input`` with its own memory; gradients flow back to ``input``.
    ``memory_format`` (default ``preserve_format``): the copy's layout (NOTE [ Memory
    formats ])."""
    fmt = check_format(memory_format or preserve_format, "clone")
    if fmt is preserve_format:
        fmt = suggested_format(input._data)
    return apply(Clone, input) if fmt is contiguous_format else apply(Clone, input, fmt)


def contiguous(input, memory_format=None):
    """``input`` itself if it is contiguous in ``memory_format`` (row-major by default),
    else a copy laid out so."""
    if memory_format is None:
        if input._data.flags.c_contiguous:
            return input
        return apply(Clone, input)
    fmt = check_format(memory_format, "contiguous")
    if is_contiguous_as(input._data, fmt):
        return input
    return apply(Clone, input, fmt)


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None:
        fmt = check_format(fmt, "to")
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, TensorBase):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_dtype.dtype, type)) or hasattr(a, "kind"):
            dtype = a
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            copy = a if not args or a is not args[0] else copy
        elif a is not None:
            raise TypeError(f"to() received an invalid argument {a!r}")
    return dtype, device, copy, fmt


def to(input, *args, **kwargs):
    """``input`` with the given dtype and/or device (``input`` itself if unchanged).

    The device keeps its index: ``to("cuda:1")`` from ``cuda:0`` copies device to device.
    """
    dtype, device, copy, fmt = _parse_to(list(args), dict(kwargs))
    np_dtype = _dtype.to_numpy(dtype) if dtype is not None else None
    source = backend_of(input._data)
    target = backend_for_device(device) if device is not None else source
    same = target is source and (np_dtype is None or np_dtype == input._data.dtype)
    if fmt is not None and fmt is not preserve_format:
        # as PyTorch: itself where its strides already read as that format, else a copy
        if same and not copy and suggested_format(input._data) is fmt:
            return input
        out = input if same else apply(ToCopy, input, np_dtype, target, copy)
        return apply(Clone, out, fmt)
    if same and not copy:
        return input
    return apply(ToCopy, input, np_dtype, target, copy)


METHODS = {"clone": clone, "contiguous": contiguous, "copy_": copy_, "fill_": fill_,
           "zero_": zero_}
