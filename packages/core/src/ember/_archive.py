"""``torch.PyTorchFileWriter`` / ``PyTorchFileReader`` (the zip archive of ``torch.save``:
records stored uncompressed under one top folder, storage records aligned to 64 bytes) and
the storage tables ``SerializationStorageContext`` / ``DeserializationStorageContext``."""

from __future__ import annotations

import os
import zipfile

__all__ = ["PyTorchFileWriter", "PyTorchFileReader", "SerializationStorageContext",
           "DeserializationStorageContext"]


def _payload(data, size):
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)[:size]
    if hasattr(data, "untyped"):  # a TypedStorage
        data = data.untyped()
    if hasattr(data, "_bytes"):  # an UntypedStorage
        return data._bytes.tobytes()[:size]
    raise TypeError(f"write_record: cannot write a {type(data).__name__}")


class PyTorchFileWriter:
    """Write a PyTorch archive: ``write_record(name, data, size)`` adds
    ``<archive_name>/<name>``; ``write_end_of_file()`` adds the version records and closes.

    Args:
        file_name (str or file-like): the archive's path or a binary buffer.
        compute_crc32 (bool): store CRC-32 checksums (zip always does; kept for the API).
        storage_alignment (int): the alignment of record data in the file (64).
    """

    def __init__(self, file_name, compute_crc32: bool = True, storage_alignment: int = 64):
        self._buffer = file_name if hasattr(file_name, "write") else None
        path = None if self._buffer is not None else os.fspath(file_name)
        base = os.path.splitext(os.path.basename(path))[0] if path else "archive"
        self._name = base or "archive"
        self._zip = zipfile.ZipFile(self._buffer if self._buffer is not None else path, "w",
                                    zipfile.ZIP_STORED)
        self._align = storage_alignment
        self._written: list = []
        self._min_version = 3
        self._closed = False

    def archive_name(self) -> str:
        """The top folder of the records."""
        return self._name

    def serialization_id(self) -> str:
        """An id of this archive (the crc of its record names so far)."""
        return str(zipfile.crc32("\n".join(self._written).encode()))

    def set_min_version(self, version: int) -> None:
        """The smallest format version a reader needs (written as ``.data/version``)."""
        self._min_version = max(self._min_version, int(version))

    def write_record(self, name: str, data, size: int) -> None:
        """Store ``size`` bytes of ``data`` (bytes, str or a storage) as record ``name``."""
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        payload = _payload(data, int(size))
        info = zipfile.ZipInfo(f"{self._name}/{name}")
        info.compress_type = zipfile.ZIP_STORED
        # pad the local header's extra field so that the data starts aligned
        offset = self._zip.fp.tell() + 30 + len(info.filename.encode())
        pad = (-(offset + 4)) % self._align
        info.extra = b"FB" + (pad).to_bytes(2, "little") + b"Z" * pad
        self._zip.writestr(info, payload)
        self._written.append(name)

    def write_record_metadata(self, name: str, size: int) -> None:
        """Record that ``name`` will hold ``size`` bytes (written as zeros here)."""
        self.write_record(name, bytes(int(size)), int(size))

    def get_all_written_records(self) -> set:
        """The names written so far."""
        return set(self._written)

    def write_end_of_file(self) -> None:
        """Write the version records and close the archive."""
        if self._closed:
            return
        for rec in (".data/version", "version"):
            if rec not in self._written:
                self.write_record(rec, f"{self._min_version}\n", 2)
        self._zip.close()
        self._closed = True


class PyTorchFileReader:
    """Read the records of a PyTorch archive (a path or a binary buffer)."""

    def __init__(self, file):
        self._zip = zipfile.ZipFile(file if hasattr(file, "read") else os.fspath(file))
        names = self._zip.namelist()
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: not a "
                               "PyTorch archive (no records)")
        self._prefix = names[0].split("/", 1)[0] + "/"

    def _info(self, name):
        try:
            return self._zip.getinfo(self._prefix + name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found") from None

    def has_record(self, name: str) -> bool:
        return (self._prefix + name) in self._zip.NameToInfo

    def get_all_records(self) -> list:
        """The record names (without the top folder)."""
        return [n[len(self._prefix):] for n in self._zip.namelist()]

    def get_record(self, name: str) -> bytes:
        return self._zip.read(self._info(name))

    def get_record_size(self, name: str) -> int:
        return self._info(name).file_size

    def get_record_header_offset(self, name: str) -> int:
        return self._info(name).header_offset

    def get_record_offset(self, name: str) -> int:
        """Where the record's data starts in the file."""
        info = self._info(name)
        fp = self._zip.fp
        pos = fp.tell()
        fp.seek(info.header_offset + 26)
        head = fp.read(4)
        fp.seek(pos)
        n_name, n_extra = int.from_bytes(head[:2], "little"), int.from_bytes(head[2:], "little")
        return info.header_offset + 30 + n_name + n_extra

    get_record_offset_no_read = get_record_offset

    def serialization_id(self) -> str:
        return self.get_record(".data/serialization_id").decode() \
            if self.has_record(".data/serialization_id") else ""

    def get_storage_from_record(self, name: str, numel: int, dtype):
        """Record ``name`` as a 1-D tensor of ``numel`` elements of ``dtype``."""
        import numpy as np

        from ember._dtype import as_dtype
        from ember._ops.creation import from_numpy

        dt = as_dtype(dtype)
        data = np.frombuffer(self.get_record(name), dtype=dt.numpy, count=int(numel))
        return from_numpy(data.copy())


class SerializationStorageContext:
    """Ids of the storages written so far (``torch.package``'s table): a storage gets the
    next id the first time it is seen."""

    def __init__(self):
        self._ids: dict = {}

    def _key(self, storage):
        return storage.data_ptr(), storage.nbytes()

    def has_storage(self, storage) -> bool:
        return self._key(storage) in self._ids

    def get_or_add_storage(self, storage) -> int:
        return self._ids.setdefault(self._key(storage), len(self._ids))


class DeserializationStorageContext:
    """Storages read so far, by name (``torch.package``'s table)."""

    def __init__(self):
        self._by_name: dict = {}

    def add_storage(self, name: str, tensor) -> None:
        if name in self._by_name:
            raise RuntimeError(f"Storage {name} has already been added")
        self._by_name[name] = tensor

    def has_storage(self, name: str) -> bool:
        return name in self._by_name

    def get_storage(self, name: str, dtype):
        from ember._dtype import as_dtype

        t = self._by_name[name]
        return t.view(as_dtype(dtype)) if t.dtype is not as_dtype(dtype) else t


