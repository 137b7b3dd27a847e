"""The small pieces of PyTorch's top-level namespace: constants (``e``, ``pi``, ``inf``,
``nan``, ``newaxis``), layouts and memory formats, ``typename``, ``get_device``, the default
device and tensor type, and the creation ops that read memory (``frombuffer``, ``from_file``) or lay
it out (``empty_permuted``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype

__all__ = [
    "e", "pi", "inf", "nan", "newaxis", "layout", "strided", "memory_format", "contiguous_format",
    "channels_last", "channels_last_3d", "preserve_format", "typename", "get_device",
    "get_default_device", "set_default_device", "set_default_tensor_type", "frombuffer",
    "from_file", "empty_permuted",
]

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None  # x[:, ember.newaxis] adds a dim, as None does


class layout:
    """A tensor's memory layout; ember has only ``ember.strided`` (dense tensors)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other) -> bool:  # Tensor.layout was the string "strided" before
        return other is self or (isinstance(other, str) and other == self.name)

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


strided = layout("strided")


def _layout_by_name(name):
    return {"strided": strided}[name]


class memory_format:
    """How a tensor's dims are ordered in memory (``ember.contiguous_format``,
    ``channels_last``...): NOTE [ Memory formats ] in ``ember._ops._memory_format``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_format_by_name, (self.name,))


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def _format_by_name(name):
    return {f.name: f for f in (contiguous_format, channels_last, channels_last_3d,
                                preserve_format)}[name]


def typename(obj, /) -> str:
    """The type name of ``obj``: a tensor's legacy type (``'torch.FloatTensor'``), else the
    qualified name of its class."""
    from ember._tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    qual = type(obj).__qualname__
    if module in ("", "builtins", "__builtin__"):
        return qual
    return f"{module}.{qual}"


def get_device(input) -> int:
    """get_device(input) -> int

    The CUDA index of ``input``'s device, -1 for the CPU."""
    return input.get_device()


# ---------------------------------------------------------------------------
# the default device and tensor type

def get_default_device():
    """The device creation ops use when given none (``cpu`` unless
    :func:`set_default_device` changed it)."""
    from ember._device import device
    from ember._ops.creation import DEFAULT_DEVICE

    d = DEFAULT_DEVICE[0]
    if d is None:
        return device("cpu")
    d = device(d)
    if d.type == "cuda" and d.index is None:
        from ember._backend import backend_for_device

        return backend_for_device(d).device
    return d


def set_default_device(device) -> None:
    """Make ``device`` the device of tensors created without one (None: the CPU again).

    The device is used as given: creating a tensor on ``'cuda'`` where there is none raises
    the same error as ``device='cuda'`` would."""
    from ember._device import device as device_cls
    from ember._ops.creation import DEFAULT_DEVICE

    if device is None:
        DEFAULT_DEVICE[0] = None
        return
    d = device_cls(device)
    DEFAULT_DEVICE[0] = None if d.type == "cpu" else d


def set_default_tensor_type(t, /) -> None:
    """Set the default floating-point dtype (and device) from a legacy tensor type or its
    name (``ember.DoubleTensor``, ``'torch.cuda.FloatTensor'``). Deprecated in PyTorch in
    favour of :func:`ember.set_default_dtype` and :func:`set_default_device`."""
    from ember._legacy import LEGACY_TYPES

    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    cuda = False
    if isinstance(t, str):
        parts = t.split(".")
        cuda = parts[1:-1] == ["cuda"]
        if parts[0] not in ("torch", "ember") or parts[-1] not in LEGACY_TYPES or \
                parts[1:-1] not in ([], ["cuda"]):
            raise TypeError(f"invalid type: '{t}'")
        t = LEGACY_TYPES[parts[-1]]
    dt = getattr(t, "_legacy_dtype", None)
    if dt is None:
        raise TypeError(f"invalid type: '{t}'")
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if cuda:
        from ember._backend import backend_for_device

        backend_for_device("cuda")  # the error of a machine without CUDA, before changing
        set_default_device("cuda")
    _dtype.set_default_dtype(dt)


# ---------------------------------------------------------------------------
# creation from memory and with a layout

def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor

    A 1-D tensor sharing the memory of an object with the buffer protocol (``bytearray``,
    ``array.array``, ``memoryview``...): ``count`` elements of ``dtype`` (-1: all) from
    byte ``offset``. Writes to either are seen by the other.

    Examples::

        >>> ember.frombuffer(bytearray(b"\\x01\\x00\\x02\\x00"), dtype=ember.int16)
        tensor([1, 2], dtype=torch.int16)
    """
    from ember._C._core import make_tensor_from_array

    dt = _dtype.as_dtype(dtype)
    nbytes = memoryview(buffer).nbytes
    item = dt.itemsize
    if offset < 0 or offset > nbytes - (1 if nbytes else 0):
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be "
                         "greater than 0 and buffer length must be greater than offset")
    if count == -1:
        if (nbytes - offset) % item:
            raise ValueError(f"buffer length ({nbytes - offset} after offset) must be a "
                             f"multiple of element size ({item})")
        count = (nbytes - offset) // item
    elif count <= 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    elif offset + count * item > nbytes:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset}) must not be greater than actual buffer length ({nbytes})")
    arr = np.frombuffer(buffer, dtype=dt.numpy, count=count, offset=offset)
    t = make_tensor_from_array(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=None):
    """from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
    pin_memory=None) -> Tensor

    A 1-D tensor of ``size`` elements of ``dtype`` (the default dtype if None) read from
    the file ``filename``; with ``shared=True`` the file is memory-mapped and writes to the
    tensor reach the file."""
    from ember._C._core import make_tensor_from_array

    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    size = int(size)
    import os

    have = os.path.getsize(filename)
    if size * dt.itemsize > have:
        raise RuntimeError(f"unable to mmap {size * dt.itemsize} bytes from file <{filename}>:"
                           " Cannot allocate memory (12)" if shared else
                           f"from_file: the file {filename} holds {have} bytes, fewer than "
                           f"size * itemsize = {size * dt.itemsize}")
    if shared:
        arr = np.memmap(filename, dtype=dt.numpy, mode="r+", shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=dt.numpy, count=size)
    t = make_tensor_from_array(np.asarray(arr) if not shared else arr)
    return t if device is None else t.to(device)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=None):
    """empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=None) -> Tensor

    An uninitialized tensor of logical shape ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is
    a channels-last tensor."""
    from ember._ops.creation import empty

    size = tuple(int(s) for s in size)
    perm = tuple(int(p) for p in physical_layout)
    if len(perm) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout")
    if sorted(perm) != list(range(len(size))):
        raise RuntimeError(f"physical_layout must be a permutation of the dims, got {list(perm)}")
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    from ember._C._core import make_tensor_from_array

    phys = empty(tuple(size[p] for p in perm), dtype=dtype, device=device)
    out = make_tensor_from_array(phys._data.transpose(inv))  # a tensor of its own, no view
    return out.requires_grad_(True) if requires_grad else out
