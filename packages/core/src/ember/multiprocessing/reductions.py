"""Tensors across processes through shared memory: ``share_memory_``/``is_shared`` and the
reducer that ``multiprocessing`` uses for tensors put in a Queue or Pipe or passed to a
Process.

NOTE [ Sharing tensors between processes ]
Pickling a CPU tensor for another process (``ForkingPickler``, which every Queue, Pipe
and spawned Process of ``multiprocessing`` uses) first moves its array into an anonymous
shared-memory segment, in place, as ``Tensor.share_memory_()`` does; what is sent is the
segment's file descriptor (``multiprocessing.reduction.DupFd``: inherited by a spawned
child, or handed over a Unix socket) with dtype, shape, strides and offset. The receiver
maps the same memory: no copy of the data is made and writes are seen by both sides
(Hogwild training relies on it). The segment has no name, so nothing is left in /dev/shm
whatever happens to the processes.

Moving an array into shared memory rebinds the tensor's ``_data``: a view tensor is
re-pointed into its moved base, but other views of the old array keep the old memory
(ember's views are separate arrays; PyTorch moves the one storage they all share).
Gradients are not moved: each process accumulates its own ``.grad``, as in PyTorch.
CUDA (CuPy) tensors are sent as copies for now.
"""

from __future__ import annotations

import multiprocessing.reduction

import numpy as np

from ember._C._core import make_subclass, make_tensor_from_array
from ember.multiprocessing import _shm

__all__ = ["share_memory_", "is_shared", "reduce_tensor", "rebuild_tensor", "init_reductions"]


def is_shared(self) -> bool:
    """True if the tensor's data is in shared memory (always for CUDA tensors)."""
    if type(self._data) is not np.ndarray:
        return True
    return _shm.segment_of(self._data) is not None


def _move_to_segment(t) -> None:
    """Rebind ``t._data`` to an anonymous shared segment holding the same values."""
    arr = t._data
    base = t._base
    # Shared memory is host memory: only NumPy (CPU) arrays go there, by design.
    if base is not None and type(base._data) is np.ndarray \
            and base._data.flags.c_contiguous and base._data.nbytes:
        b = base._data
        off = arr.__array_interface__["data"][0] - b.__array_interface__["data"][0]
        if arr.size and np.may_share_memory(arr, b) and 0 <= off < b.nbytes:
            if not _has_fd(b):
                _move_to_segment(base)
            seg = _shm.segment_of(base._data)
            new = _shm.array_on(seg, arr.dtype, arr.shape, arr.strides,
                                _shm.offset_in(base._data, seg) + off)
            if not arr.flags.writeable:
                new.flags.writeable = False
            t._data = new
            return
    seg = _shm.create_fd(arr.nbytes)
    new = _shm.array_on(seg, arr.dtype, arr.shape)
    np.copyto(new, arr)
    if not arr.flags.writeable:
        new.flags.writeable = False
    t._data = new


def _has_fd(array) -> bool:
    seg = _shm.segment_of(array)
    return seg is not None and seg.fd is not None


def share_memory_(self):
    """Move the tensor's data to shared memory (a no-op if it is there already, or on
    CUDA); returns self. Tensors sent to other processes then share it."""
    if type(self._data) is np.ndarray and self._data.size and not is_shared(self):  # host only
        _move_to_segment(self)
    return self


def rebuild_tensor(cls, df, nbytes, dtype, shape, strides, offset, requires_grad):
    """Map a tensor sent by :func:`reduce_tensor` (in the receiving process)."""
    seg = _shm.open_fd(df.detach(), nbytes)
    t = make_tensor_from_array(_shm.array_on(seg, dtype, shape, strides, offset))
    if cls is None:
        if requires_grad:
            t.requires_grad_(True)
        return t
    return make_subclass(cls, t, requires_grad)


def _rebuild_plain(cls, array, requires_grad):
    t = make_tensor_from_array(array)
    if cls is None:
        if requires_grad:
            t.requires_grad_(True)
        return t
    return make_subclass(cls, t, requires_grad)


def reduce_tensor(t):
    """The ``ForkingPickler`` reduction of a tensor: its data moves to shared memory and
    the receiver maps it (see NOTE [ Sharing tensors between processes ])."""
    import ember

    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., putting "
            "it on the queue).")
    cls = None if type(t) is ember.Tensor else type(t)
    requires_grad = bool(t.requires_grad)
    arr = t._data
    if type(arr) is not np.ndarray or arr.size == 0:
        from ember._backend import backend_of

        return (_rebuild_plain, (cls, backend_of(arr).to_numpy(arr).copy(), requires_grad))
    if not _has_fd(arr):
        _move_to_segment(t)
        arr = t._data
    seg = _shm.segment_of(arr)
    return (rebuild_tensor, (cls, multiprocessing.reduction.DupFd(seg.fd), seg.nbytes,
                             arr.dtype, arr.shape, arr.strides, _shm.offset_in(arr, seg),
                             requires_grad))


_registered = False


def init_reductions() -> None:
    """Register :func:`reduce_tensor` with ``multiprocessing``'s pickler for ember.Tensor
    and nn.Parameter (done when ember.multiprocessing is imported)."""
    global _registered
    if _registered:
        return
    import ember
    from ember.nn.parameter import Parameter

    for cls in (ember.Tensor, Parameter):
        multiprocessing.reduction.ForkingPickler.register(cls, reduce_tensor)
    _registered = True


