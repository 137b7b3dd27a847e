"""Loading: PyTorch's zip format (read or memory-mapped) and its legacy pre-zip format."""

from __future__ import annotations

import io
import mmap as _mmap
import pickle
import sys

import numpy as np

from ember._serialization._format import (
    LoadedStorage,
    StorageType,
    dtype_by_name,
)
from ember._serialization._options import fallback_byteorder
from ember._serialization._unpickler import WeightsUnpickler, full_unpickler
from ember._serialization._zip import CorruptFileError, ZipReader

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class LoadOptions:
    """What ``ember.load`` was asked for, handed down to the readers."""

    def __init__(self, restore, weights_only: bool, pickle_module, pickle_load_args: dict):
        self.restore = restore
        self.weights_only = weights_only
        self.pickle_module = pickle_module
        self.pickle_load_args = pickle_load_args

    def unpickler(self, stream, persistent_load):
        if self.weights_only:
            return WeightsUnpickler(stream, persistent_load,
                                    encoding=self.pickle_load_args.get("encoding", "utf-8"),
                                    errors=self.pickle_load_args.get("errors", "strict"))
        return full_unpickler(stream, persistent_load, self.pickle_module,
                              **self.pickle_load_args)


def _storage_pid(pid, length: int):
    if not isinstance(pid, tuple) or len(pid) != length:
        raise CorruptFileError(f"corrupt checkpoint: unexpected persistent id {pid!r:.200}")
    typename, storage_type, key, location, numel = pid[:5]
    if isinstance(typename, bytes):
        typename = typename.decode("ascii")
    if isinstance(location, bytes):
        location = location.decode("ascii")
    if typename != "storage":
        raise CorruptFileError(f"corrupt checkpoint: persistent id of type {typename!r}")
    if not isinstance(storage_type, StorageType):
        if callable(storage_type):
            storage_type()  # the unsupported kinds (quantized storages) explain themselves
        raise CorruptFileError(f"corrupt checkpoint: {storage_type!r} is not a storage type")
    if type(numel) is not int or numel < 0 or not isinstance(key, (str, int)) \
            or not isinstance(location, str):
        raise CorruptFileError(f"corrupt checkpoint: bad storage description {pid[:5]!r:.200}")
    if storage_type.name == "UntypedStorage":
        dtype, item = None, 1
    else:
        dtype = dtype_by_name(storage_type.dtype_name)
        item = dtype.itemsize
    return str(key), dtype, item, location, numel


def _byteswapped(raw: np.ndarray, dtype) -> np.ndarray:
    """``raw`` (little/big-endian elements of ``dtype``) in the other byte order."""
    unit = dtype.itemsize // (2 if dtype.is_complex else 1)
    if unit == 1:
        return raw
    return raw.view(f"u{unit}").byteswap().view(np.uint8)


# ---------------------------------------------------------------------------
# the zip format

def load_zip(stream, name: str, options: LoadOptions, mmap_path=None):
    reader = ZipReader(stream, name)
    byteorder = fallback_byteorder()
    if reader.has_record("byteorder"):
        byteorder = reader.read_record("byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise CorruptFileError(f"{name}: unknown byte order {byteorder!r}")
    swap = byteorder != sys.byteorder
    mapped = None
    if mmap_path is not None:
        with open(mmap_path, "rb") as fh:
            # copy-on-write (MAP_PRIVATE): tensors are writable, the file never changes
            mapped = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
    loaded: dict[str, LoadedStorage] = {}

    def persistent_load(pid):
        key, dtype, item, location, numel = _storage_pid(pid, 5)
        storage = loaded.get(key)
        if storage is not None:
            return storage
        record = f"data/{key}"
        nbytes = numel * item
        if mapped is not None and not swap:
            if reader.record_size(record) != nbytes:
                raise CorruptFileError(f"{name}: record {record} holds "
                                       f"{reader.record_size(record)} bytes where {nbytes} "
                                       "were expected")
            offset = reader.data_offset(record)
            if offset + nbytes > len(mapped):
                raise CorruptFileError(f"{name} is truncated: {record} runs past its end")
            raw = np.frombuffer(mapped, dtype=np.uint8, count=nbytes, offset=offset)
        else:
            raw = reader.read_into(record, nbytes)
            if swap and dtype is not None:
                raw = _byteswapped(raw, dtype)
        storage = loaded[key] = options.restore(LoadedStorage(raw, dtype), location)
        return storage

    data = reader.read_record("data.pkl")
    return options.unpickler(io.BytesIO(data), persistent_load).load()


# ---------------------------------------------------------------------------
# the legacy format (PyTorch < 1.6, or torch.save(..., _use_new_zipfile_serialization=False))

def _no_persistent(pid):
    raise CorruptFileError("corrupt checkpoint: a persistent id in a legacy file header")


def load_legacy(stream, name: str, options: LoadOptions):
    """A sequence of pickles: magic number, protocol version, system info, the object (storages
    as persistent ids), the list of storage keys; then each storage's bytes, little-endian,
    after its element count (int64)."""
    header = WeightsUnpickler(stream, _no_persistent)
    try:
        magic = header.load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(f"{name} is not a checkpoint (neither a zip archive nor "
                                     f"PyTorch's legacy format): {e}") from None
    if magic != MAGIC_NUMBER:
        raise CorruptFileError(f"{name} is not a checkpoint: invalid magic number; corrupt file?")
    version = WeightsUnpickler(stream, _no_persistent).load()
    if version != PROTOCOL_VERSION:
        raise CorruptFileError(f"{name}: unsupported legacy protocol version {version!r}")
    WeightsUnpickler(stream, _no_persistent).load()  # system info: sizes of C types
    main_start = stream.tell()
    file_size = stream.seek(0, io.SEEK_END)
    stream.seek(main_start)

    storages: dict[str, LoadedStorage] = {}   # root key -> storage (filled below)
    views: dict[str, LoadedStorage] = {}
    placed: dict[str, LoadedStorage] = {}     # key -> storage after map_location

    def persistent_load(pid):
        if isinstance(pid, tuple) and pid and pid[0] in ("module", b"module"):
            if options.weights_only:
                raise pickle.UnpicklingError(
                    "Weights only load failed: the file holds a pickled nn.Module; load it "
                    "with weights_only=False only if you trust its source")
            return pid[1]
        key, dtype, item, location, numel = _storage_pid(pid, 6)
        root = storages.get(key)
        if root is None:
            if numel * item > file_size:
                raise CorruptFileError(f"{name}: storage {key!r} is larger than the file")
            root = storages[key] = LoadedStorage(np.empty(numel * item, np.uint8), dtype)
            root._location = location
        view = pid[5]
        if view is None:
            return placed.get(key, root)
        if not (isinstance(view, tuple) and len(view) == 3):
            raise CorruptFileError("corrupt checkpoint: bad storage view")
        view_key, offset, size = str(view[0]), view[1], view[2]
        if view_key in placed:
            return placed[view_key]
        if view_key not in views:
            if type(offset) is not int or type(size) is not int or offset < 0 or size < 0 \
                    or (offset + size) * item > root.nbytes():
                raise CorruptFileError("corrupt checkpoint: a storage view out of bounds")
            views[view_key] = LoadedStorage(
                root._bytes[offset * item:(offset + size) * item], dtype)
            views[view_key]._location = location
        return views[view_key]

    result = options.unpickler(stream, persistent_load).load()
    keys = WeightsUnpickler(stream, _no_persistent).load()
    if not isinstance(keys, list):
        raise CorruptFileError(f"{name}: corrupt storage key list")
    for key in keys:
        storage = storages.get(str(key))
        if storage is None:
            raise CorruptFileError(f"{name}: storage {key!r} is listed but never used")
        count = stream.read(8)
        if len(count) != 8:
            raise CorruptFileError(f"{name} is truncated in the data of storage {key!r}")
        item = storage.dtype.itemsize if storage.dtype is not None else 1
        if int.from_bytes(count, "little", signed=True) * item != storage.nbytes():
            raise CorruptFileError(f"{name}: storage {key!r} has an unexpected size")
        view = memoryview(storage._bytes)
        filled = 0
        while filled < storage.nbytes():
            n = stream.readinto(view[filled:])
            if not n:
                raise CorruptFileError(f"{name} is truncated in the data of storage {key!r}")
            filled += n
        if sys.byteorder == "big" and storage.dtype is not None:
            storage._bytes[...] = _byteswapped(storage._bytes, storage.dtype)

    # map_location runs on filled storages; the tensors built above view the CPU copies, so
    # if any storage moved, the object is unpickled once more against the moved storages
    moved = False
    for key, storage in [*storages.items(), *views.items()]:
        placed[key] = options.restore(storage, storage._location)
        moved = moved or placed[key] is not storage
    if not moved:
        return result
    stream.seek(main_start)
    return options.unpickler(stream, persistent_load).load()
