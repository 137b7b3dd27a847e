"""Shared-memory segments that hold tensors' arrays.

NOTE [ Shared-memory segments ]
A :class:`Segment` is an ``mmap`` of a shared-memory file; NumPy arrays built on it (and
so ember tensors wrapping them) live in memory that another process can map too. Two
kinds exist:

* named segments, files ``ember_*`` in ``/dev/shm`` (the temporary directory where there
  is no ``/dev/shm``). DataLoader workers collate batches into them and send only
  (name, dtype, shape, strides); the main process maps them (:func:`open_named`) and the
  workers reuse them once released (see NOTE [ DataLoader workers ] in
  ember/utils/data/_worker.py). Names carry a prefix per loader iterator, so that the
  iterator can unlink whatever its workers made, dead or alive (:func:`unlink_prefix`).
* anonymous segments (``memfd_create``, or a file unlinked right after it was made) that
  keep their file descriptor: ``Tensor.share_memory_()`` moves a tensor's array into one,
  and ``ember.multiprocessing`` sends the descriptor to other processes (the segment has
  no name, so it can never leak; the memory goes when the last mapping does).

Nothing here knows about tensors beyond their arrays.
"""

from __future__ import annotations

import glob
import itertools
import mmap
import os
import secrets
import tempfile
import weakref

import numpy as np

__all__ = ["Segment", "SHM_DIR", "segment_of", "create_named", "open_named", "create_fd",
           "open_fd", "array_on", "unlink_prefix", "new_prefix"]

SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_counter = itertools.count()


class Segment(mmap.mmap):
    """A mapping of shared memory. ``fd`` is the kept file descriptor (None for named
    segments once mapped), ``nbytes`` the usable size."""

    fd: int | None = None
    name: str | None = None
    nbytes: int = 0
    address: int = 0


def _map(fd: int, nbytes: int) -> Segment:
    seg = Segment(fd, max(nbytes, 1))
    seg.nbytes = nbytes
    seg.address = np.frombuffer(seg, np.uint8, 1).__array_interface__["data"][0]
    return seg


def new_prefix(tag: str = "") -> str:
    """A fresh name prefix, unique to this process and call (``ember_<pid>_<random>_``)."""
    return f"ember_{os.getpid()}_{secrets.token_hex(4)}{tag}_"


def create_named(prefix: str, nbytes: int) -> tuple[Segment, str]:
    """A new named segment of ``nbytes`` bytes; returns it and its name."""
    name = f"{prefix}{next(_counter)}"
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, max(nbytes, 1))
        seg = _map(fd, nbytes)
        seg.name = name
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    return seg, name


def open_named(name: str, nbytes: int, unlink: bool = True) -> Segment:
    """Map the named segment ``name``; unlink its name (the memory stays mapped)."""
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR)
    try:
        if unlink:
            os.unlink(path)
        return _map(fd, nbytes)
    finally:
        os.close(fd)


def unlink_prefix(prefix: str) -> int:
    """Unlink every named segment whose name starts with ``prefix``; returns how many."""
    n = 0
    for path in glob.glob(os.path.join(SHM_DIR, glob.escape(prefix) + "*")):
        try:
            os.unlink(path)
            n += 1
        except FileNotFoundError:
            pass
    return n


def _close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _keep_fd(seg: Segment, fd: int) -> Segment:
    seg.fd = fd
    weakref.finalize(seg, _close_fd, fd)
    return seg


def create_fd(nbytes: int) -> Segment:
    """A new anonymous segment that keeps its file descriptor (closed with the segment)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("ember_shared", os.MFD_CLOEXEC)
    else:  # pragma: no cover - platforms without memfd
        path = os.path.join(SHM_DIR, f"{new_prefix()}{next(_counter)}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
    try:
        os.ftruncate(fd, max(nbytes, 1))
        seg = _map(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return _keep_fd(seg, fd)


def open_fd(fd: int, nbytes: int) -> Segment:
    """Map an anonymous segment from a file descriptor this process now owns."""
    try:
        seg = _map(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return _keep_fd(seg, fd)


def array_on(seg: Segment, dtype, shape, strides=None, offset: int = 0) -> np.ndarray:
    """The array of ``dtype``/``shape``/``strides`` at byte ``offset`` of ``seg``."""
    dtype = np.dtype(dtype)
    if seg.nbytes == 0:
        return np.empty(shape, dtype)[...] if strides is None else \
            np.lib.stride_tricks.as_strided(np.empty(0, dtype), shape, strides)
    return np.ndarray(shape, dtype, buffer=seg, offset=offset, strides=strides)


def segment_of(array) -> Segment | None:
    """The segment an array's memory lives in, or None."""
    b = array
    while isinstance(b, np.ndarray):  # shared memory segments hold host (NumPy) arrays
        b = b.base
    if isinstance(b, memoryview):
        b = b.obj
    return b if isinstance(b, Segment) else None


def offset_in(array: np.ndarray, seg: Segment) -> int:
    """The byte offset of ``array``'s first element in ``seg``."""
    return array.__array_interface__["data"][0] - seg.address
