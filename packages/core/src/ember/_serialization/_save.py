"""Saving: a pickler that writes PyTorch's names, the storage table, atomic writes to paths."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import secrets
import stat
import sys
import time
from collections import OrderedDict

import numpy as np

from ember import _dtype
from ember._backend import backend_of
from ember._C import _core
from ember._device import device as _device_cls
from ember._serialization._format import STORAGE_NAMES, _parameter_class
from ember._serialization._zip import ZipWriter
from ember._tensor import Size, Tensor

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, stale temporary files stay
    fcntl = None

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy < 2.0
    from numpy import byte_bounds


class TorchName:
    """A PyTorch global (``torch._utils._rebuild_tensor_v2``) written by name into a pickle."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args, **kwargs):  # pickle wants a callable in a reduce tuple
        raise TypeError(f"{self.module}.{self.name} is only a name written into checkpoints")

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


REBUILD_TENSOR_V2 = TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_WITH_STATE = TorchName("torch._utils", "_rebuild_parameter_with_state")
REBUILD_FROM_TYPE_V2 = TorchName("torch._tensor", "_rebuild_from_type_v2")
TORCH_TENSOR = TorchName("torch", "Tensor")
TORCH_SIZE = TorchName("torch", "Size")
TORCH_DEVICE = TorchName("torch", "device")
REBUILD_TENSOR_V3 = TorchName("torch._utils", "_rebuild_tensor_v3")
_STORAGE_TYPES = {dt: TorchName("torch", name) for dt, name in STORAGE_NAMES.items()}
# dtypes without a legacy storage class (uint16, float8...) are saved as PyTorch saves them:
# an untyped storage (its size in bytes) and _rebuild_tensor_v3 with the dtype
UNTYPED_STORAGE = TorchName("torch.storage", "UntypedStorage")


class _StorageRef:
    """Stands for a storage in the pickle; its persistent id is what gets written."""

    __slots__ = ("pid",)

    def __init__(self, pid: tuple) -> None:
        self.pid = pid


class _ByteSpan:
    """Bytes ``[ptr, ptr + n)`` of memory owned by ``owner``, as a NumPy array interface."""

    def __init__(self, ptr: int, n: int, owner) -> None:
        self.__array_interface__ = {"data": (ptr, True), "shape": (n,), "typestr": "|u1",
                                    "version": 3}
        self._owner = owner


def _contiguous(arr: np.ndarray) -> np.ndarray:
    """``arr`` in C order (unlike np.ascontiguousarray, keeps 0-d arrays 0-d)."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _root(arr: np.ndarray) -> np.ndarray:
    """The outermost array that ``arr`` views (through slices, reshapes and as_strided)."""
    root = arr
    while True:  # host arrays only: device arrays were copied to the host before this
        base = root.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # as_strided keeps its input on a DummyArray
            if not isinstance(base, np.ndarray):
                return root
        root = base


class StorageTable:
    """The storages of the tensors being saved, keyed "0", "1"... in order of first use.

    # NOTE [ Storages of ember tensors ]
    # An ember tensor is a NumPy array that may view another (slices, transposes, reshapes).
    # The outermost array of that chain plays PyTorch's storage: all tensors viewing it are
    # saved against one record holding the bytes it spans, each with its own offset and
    # strides, so they share memory again after loading. As in PyTorch, saving a slice saves
    # the whole storage (``clone()`` first to save only the slice). A tensor whose strides
    # cannot be expressed in elements of that storage (negative strides, a different dtype
    # over odd offsets) is saved from a contiguous copy instead.
    """

    def __init__(self) -> None:
        self._keys: dict = {}        # (id(root), dtype name) -> (key, lo, numel)
        self._alive: list = []       # keeps the roots alive while their ids are keys
        self.records: list = []      # (key, contiguous uint8 array)

    def _new_record(self, data: np.ndarray) -> str:
        key = str(len(self.records))
        self.records.append((key, data))
        return key

    def add(self, arr) -> tuple[tuple, int, tuple, tuple]:
        """``(persistent id, storage offset, size, stride)`` for a tensor's array."""
        dtype = _dtype.from_numpy(arr.dtype)
        storage_type = _STORAGE_TYPES.get(dtype.name, UNTYPED_STORAGE)
        backend = backend_of(arr)
        if backend.name != "cpu":
            dev = backend.device_of(arr)
            location = f"cuda:{dev.index or 0}"
            arr = _contiguous(backend.to_numpy(arr))
            return self._own(arr, dtype, storage_type, location)
        item = arr.itemsize
        strides = arr.strides
        if arr.size == 0 or any(s < 0 or s % item for s in strides):
            return self._own(_contiguous(arr), dtype, storage_type, "cpu")
        root = _root(arr)
        entry = self._keys.get((id(root), dtype.name))
        if entry is None:
            lo, hi = byte_bounds(root)
            if (hi - lo) % item:
                return self._own(_contiguous(arr), dtype, storage_type, "cpu")
            if root.flags.c_contiguous and root.ndim:
                data = root.reshape(-1).view(np.uint8)
            else:
                data = np.asarray(_ByteSpan(lo, hi - lo, root))
            entry = (self._new_record(data), lo, (hi - lo) // item)
            self._keys[(id(root), dtype.name)] = entry
            self._alive.append(root)
        key, lo, numel = entry
        a_lo, a_hi = byte_bounds(arr)
        ptr = arr.__array_interface__["data"][0]
        if a_lo < lo or a_hi > lo + numel * item or (ptr - lo) % item:
            return self._own(_contiguous(arr), dtype, storage_type, "cpu")
        pid = ("storage", storage_type, key, "cpu",
               numel * item if storage_type is UNTYPED_STORAGE else numel)
        return pid, (ptr - lo) // item, arr.shape, tuple(s // item for s in strides)

    def _own(self, arr: np.ndarray, dtype, storage_type, location):
        """A storage of its own for a contiguous copy."""
        key = self._new_record(arr.reshape(-1).view(np.uint8))
        pid = ("storage", storage_type, key, location,
               arr.nbytes if storage_type is UNTYPED_STORAGE else arr.size)
        strides, acc = [], 1
        for s in reversed(arr.shape):
            strides.append(acc)
            acc *= max(s, 1)
        return pid, 0, arr.shape, tuple(reversed(strides))


class Pickler(pickle._Pickler):
    """The standard (pure-Python) pickler, writing PyTorch's names for ember's objects.

    The pure-Python pickler is the one that lets us write a global by name without importing
    it (``torch._utils._rebuild_tensor_v2`` must appear in the file, and PyTorch need not be
    installed); the pickle holds only metadata, the tensor bytes go to zip records.
    """

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol: int, storages: StorageTable) -> None:
        super().__init__(file, protocol)
        self._storages = storages
        self._parameter_cls = _parameter_class() if "ember.nn" in sys.modules else None

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return obj.pid
        return None

    def _write_torch_name(self, obj, module: str, name: str) -> None:
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def save_torch_name(self, obj: TorchName) -> None:
        self._write_torch_name(obj, obj.module, obj.name)

    def save_dtype(self, obj: _dtype.dtype) -> None:
        self._write_torch_name(obj, "torch", obj.name)

    dispatch[TorchName] = save_torch_name
    dispatch[_dtype.dtype] = save_dtype

    def reducer_override(self, obj):
        if isinstance(obj, _core.TensorBase):
            return self._reduce_tensor(obj)
        t = type(obj)
        if t is _device_cls:
            return TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if t is Size:
            return TORCH_SIZE, (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        requires_grad = bool(t.requires_grad)
        state = t.__dict__
        if self._parameter_cls is not None and isinstance(t, self._parameter_cls):
            data = _core.make_tensor_from_array(t._data)
            if state:
                return REBUILD_PARAMETER_WITH_STATE, (data, requires_grad, OrderedDict(),
                                                      dict(state))
            return REBUILD_PARAMETER, (data, requires_grad, OrderedDict())
        pid, offset, size, stride = self._storages.add(t._data)
        args = (_StorageRef(pid), offset, tuple(size), stride, requires_grad, OrderedDict())
        if pid[1] is UNTYPED_STORAGE:
            args = (*args, t.dtype)
            if type(t) is Tensor and not state:
                return REBUILD_TENSOR_V3, args
            return REBUILD_FROM_TYPE_V2, (REBUILD_TENSOR_V3, type(t) if type(t) is not Tensor
                                          else TORCH_TENSOR, args, dict(state))
        if type(t) is Tensor:
            if not state:
                return REBUILD_TENSOR_V2, args
            return REBUILD_FROM_TYPE_V2, (REBUILD_TENSOR_V2, TORCH_TENSOR, args, dict(state))
        return REBUILD_FROM_TYPE_V2, (REBUILD_TENSOR_V2, type(t), args, dict(state))


def write_checkpoint(obj, stream, protocol: int, byteorder_record: bool = True) -> None:
    """Write ``obj`` to a binary stream in PyTorch's zip format (with the ``byteorder``
    record unless ``byteorder_record`` is False)."""
    storages = StorageTable()
    buf = io.BytesIO()
    Pickler(buf, protocol, storages).dump(obj)
    writer = ZipWriter(stream)
    writer.write_record("data.pkl", buf.getbuffer())
    writer.write_record(".format_version", "1")
    writer.write_record(".storage_alignment", "64")
    if byteorder_record:
        writer.write_record("byteorder", sys.byteorder)
    for key, data in storages.records:
        writer.write_record(f"data/{key}", data)
    writer.write_record("version", "3\n")
    writer.write_record(".data/serialization_id",
                        str(int.from_bytes(secrets.token_bytes(16), "big")).zfill(40)[:40])
    writer.finish()


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically.

    # NOTE [ Atomic checkpoints ]
    # The data go to a temporary file in the same directory (same file system, so that the
    # final rename is atomic), which is fsync'ed, then renamed over ``path`` with os.replace:
    # a reader, or a crash at any point, sees the previous file or the new one, never a
    # partial file. The directory is fsync'ed too, so that the rename itself survives a power
    # loss. A killed process may leave its ``.<name>.<random>.tmp`` file behind: each save
    # holds an advisory lock on its temporary file (released by the system when the process
    # dies), and a later save of the same name removes the ones nobody holds any more.
    """
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if os.path.islink(path):
        path = os.path.realpath(path)  # write through a symlink, as open() would
    directory = os.path.dirname(os.path.abspath(path))
    mode = None
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(os.stat(path).st_mode)
    remove_stale_temporaries(directory, os.path.basename(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
        try:
            lock_fd = os.open(tmp, flags, 0o666)  # the umask applies, as for open()
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"could not create a temporary file next to {path}")
    try:
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield tmp
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        os.close(lock_fd)
    _fsync_directory(directory)


# A temporary file this young is left alone even if unlocked: its save may not have taken
# the lock yet.
STALE_AFTER_SECONDS = 10.0


def remove_stale_temporaries(directory: str, name: str) -> list[str]:
    """Remove the ``.<name>.<12 hex>.tmp`` files in ``directory`` that killed saves left:
    regular files of this user, older than STALE_AFTER_SECONDS, whose lock no save holds.
    Returns the paths removed. Nothing is removed where advisory locks are missing."""
    if fcntl is None:
        return []
    pattern = re.compile(r"\." + re.escape(name) + r"\.[0-9a-f]{12}\.tmp")
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    removed = []
    now = time.time()
    for entry in entries:
        if not pattern.fullmatch(entry):
            continue
        tmp = os.path.join(directory, entry)
        try:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid()
                    or now - st.st_mtime < STALE_AFTER_SECONDS):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a save in progress holds it
            # still the file we locked (not replaced by a new save meanwhile)
            if os.stat(tmp, follow_symlinks=False).st_ino == st.st_ino:
                os.unlink(tmp)
                removed.append(tmp)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def is_special_file(path) -> bool:
    """True if ``path`` exists and is not a regular file (a device, a FIFO, a socket)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def atomic_write(path, write) -> None:
    """Call ``write(stream)`` on a new file that replaces ``path`` only once complete.

    A ``path`` that exists and is not a regular file (``/dev/null``, a FIFO) is written in
    place: replacing it would replace the device or pipe itself.
    """
    if is_special_file(path):
        with open(path, "wb") as stream:
            write(stream)
        return
    with atomic_path(path) as tmp, open(tmp, "wb") as stream:
        write(stream)


def _fsync_directory(directory: str) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
