"""Tensor attributes about devices and memory that PyTorch has and ember answers plainly:
``is_xpu``, ``is_mps``, ``is_meta``, ``is_nested``, ``is_mkldnn``, ``is_vulkan``, ``is_ipu``,
``is_maia``, ``is_mtia`` (all False: ember's tensors are strided CPU or CUDA tensors),
``pin_memory``/``is_pinned`` and ``record_stream``. Installed on :class:`ember.Tensor` by
:func:`install` (called once from ``ember/__init__.py``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["install", "pin_memory", "is_pinned", "record_stream"]

_FALSE_ATTRS = ("is_xpu", "is_mps", "is_meta", "is_nested", "is_mkldnn", "is_vulkan", "is_ipu",
                "is_maia", "is_mtia")


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked (pinned) host memory, from which copies to a
    GPU can run asynchronously; the tensor itself if it is pinned already.

    Pinned memory is CUDA's (CuPy's pinned memory pool): without a GPU it raises
    PyTorch's ``RuntimeError`` ("Cannot access accelerator device when none is available").
    ``DataLoader(pin_memory=True)`` then warns and skips pinning, as PyTorch's does.
    """
    from ember._backend import cupy as seam
    from ember._C._core import make_tensor_from_array
    from ember.cuda import is_available

    if not self.is_cpu:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if is_pinned(self):
        return self
    data = self._data
    buf = seam.pinned_empty(max(data.nbytes, 1))
    out = np.frombuffer(buf, dtype=data.dtype, count=data.size).reshape(data.shape)
    out[...] = data
    t = make_tensor_from_array(out)
    if self.requires_grad:
        t.requires_grad_(True)
    return t


def is_pinned(self, device=None) -> bool:
    """True if the tensor's memory is page-locked (made by :meth:`pin_memory`)."""
    from ember._backend import cupy as seam

    base = self._data
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if isinstance(base, memoryview):  # np.frombuffer keeps a view of the exporter
        base = base.obj
    return not isinstance(base, np.ndarray) and seam.is_pinned_buffer(base)


def record_stream(self, stream) -> None:
    """Mark the tensor as used by ``stream``, so that its memory is not reused before the
    work queued there so far is done: ember records an event on ``stream`` and keeps the
    tensor's array alive until the event has passed (CuPy's pool reuses a block as soon as
    its array is collected). Only CUDA tensors take it, as in PyTorch."""
    from ember._streams import Stream as GenericStream
    from ember.cuda.streams import Stream as CudaStream

    if not isinstance(stream, (CudaStream, GenericStream)):
        raise TypeError(f"record_stream(): argument 'stream' must be Stream, not "
                        f"{type(stream).__name__}")
    if not self.is_cuda:
        raise RuntimeError("unknown parameter type")
    _in_use[:] = [(e, a) for e, a in _in_use if not e.query()]
    _in_use.append((stream.record_event(), self._data))


_in_use: list = []   # (event, array): arrays kept alive until their stream passes the event


def install(tensor_cls) -> None:
    """Put the attributes on the Tensor class (where it lacks them)."""
    for name in _FALSE_ATTRS:
        if name not in vars(tensor_cls):
            setattr(tensor_cls, name, property(lambda self: False,
                                               doc=f"False: ember has no {name[3:]} tensors."))
    for fn in (pin_memory, is_pinned, record_stream):
        if fn.__name__ not in vars(tensor_cls):
            setattr(tensor_cls, fn.__name__, fn)
