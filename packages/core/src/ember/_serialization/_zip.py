"""The zip container of PyTorch's checkpoint format: a writer laid out like PyTorch's, a reader.

# NOTE [ Record layout ]
# PyTorch writes every record uncompressed ("stored"), names them ``<archive>/<record>``, and
# pads the local header's extra field (an extra block with id ``FB``) so that each record's
# data starts at a multiple of 64 bytes: storages can then be memory-mapped straight from the
# file. CRC and sizes follow each record's data in a data descriptor (general-purpose flag
# bit 3), so the writer streams and never seeks back. We write the same layout, which keeps
# PyTorch's own offset arithmetic (``calculate_storage_offsets``) valid for our files too. ZIP64
# fields appear only where a size or an offset passes 32 bits.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import numpy as np

ALIGNMENT = 64
# Above these, sizes and offsets go to ZIP64 fields (module constants so that tests can lower
# them and exercise the ZIP64 path on small files).
ZIP64_LIMIT = 0xFFFFFFFF
ZIP64_COUNT_LIMIT = 0xFFFF

_LOCAL = struct.Struct("<IHHHHHIIIHH")          # local file header, 30 bytes
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # central directory header, 46 bytes
_END = struct.Struct("<IHHHHIIH")               # end of central directory, 22 bytes
_END64 = struct.Struct("<IQHHIIQQQQ")           # ZIP64 end of central directory, 56 bytes
_LOCATOR64 = struct.Struct("<IIQI")             # ZIP64 end of central directory locator
_FLAGS = 0x0808            # bit 3: sizes in a data descriptor; bit 11: UTF-8 names
_VERSION = 45              # "version needed to extract": 4.5 has ZIP64
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01: records carry no meaningful time
_CHUNK = 64 << 20


class ZipWriter:
    """Write stored records to a binary stream, PyTorch's layout (see NOTE [ Record layout ])."""

    def __init__(self, stream, archive_name: str = "archive") -> None:
        self._stream = stream
        self._prefix = archive_name + "/"
        self._pos = 0
        self._entries: list[tuple[bytes, int, int, int]] = []  # name, crc, size, header offset

    def _write(self, data) -> None:
        self._stream.write(data)
        self._pos += len(data) if not isinstance(data, memoryview) else data.nbytes

    def write_record(self, name: str, data) -> None:
        """Append a record; ``data`` is bytes, a str, or a contiguous NumPy array."""
        if isinstance(data, str):
            data = data.encode()
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        size = view.nbytes
        fname = (self._prefix + name).encode()
        offset = self._pos
        zip64_extra = b""
        if size >= ZIP64_LIMIT or offset >= ZIP64_LIMIT:
            fields = ([size, size] if size >= ZIP64_LIMIT else []) + (
                [offset] if offset >= ZIP64_LIMIT else [])
            zip64_extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields)
        # pad with an "FB" extra block so that the data starts on an ALIGNMENT boundary
        start = offset + _LOCAL.size + len(fname) + len(zip64_extra) + 4
        pad = -start % ALIGNMENT
        extra = zip64_extra + struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        self._write(_LOCAL.pack(0x04034B50, _VERSION, _FLAGS, 0, 0, _DOS_DATE, 0, 0, 0,
                                len(fname), len(extra)))
        self._write(fname)
        self._write(extra)
        crc = 0
        for begin in range(0, size, _CHUNK):
            chunk = view[begin:begin + _CHUNK]
            crc = zlib.crc32(chunk, crc)
            self._write(chunk)
        if size >= ZIP64_LIMIT or offset >= ZIP64_LIMIT:
            self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
        else:
            self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self._entries.append((fname, crc, size, offset))

    def finish(self) -> None:
        """Write the central directory and the end records."""
        cd_start = self._pos
        for fname, crc, size, offset in self._entries:
            fields = ([size, size] if size >= ZIP64_LIMIT else []) + (
                [offset] if offset >= ZIP64_LIMIT else [])
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) \
                if fields else b""
            small = 0xFFFFFFFF if size >= ZIP64_LIMIT else size
            self._write(_CENTRAL.pack(
                0x02014B50, _VERSION, _VERSION, _FLAGS, 0, 0, _DOS_DATE, crc, small, small,
                len(fname), len(extra), 0, 0, 0, 0,
                0xFFFFFFFF if offset >= ZIP64_LIMIT else offset))
            self._write(fname)
            self._write(extra)
        cd_size = self._pos - cd_start
        count = len(self._entries)
        if count >= ZIP64_COUNT_LIMIT or cd_start >= ZIP64_LIMIT or cd_size >= ZIP64_LIMIT:
            end64 = self._pos
            self._write(_END64.pack(0x06064B50, _END64.size - 12, _VERSION, _VERSION, 0, 0,
                                    count, count, cd_size, cd_start))
            self._write(_LOCATOR64.pack(0x07064B50, 0, end64, 1))
            self._write(_END.pack(0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
        else:
            self._write(_END.pack(0x06054B50, 0, 0, count, count, cd_size, cd_start, 0))


class CorruptFileError(RuntimeError):
    """A checkpoint that is truncated or damaged."""


class ZipReader:
    """The records of a PyTorch zip checkpoint in a seekable binary stream."""

    def __init__(self, stream, name: str) -> None:
        self._stream = stream
        self._name = name
        try:
            self._zip = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
                struct.error) as e:
            raise CorruptFileError(
                f"{name} is truncated or is not a valid checkpoint: its zip directory cannot "
                f"be read ({e})") from None
        infos = self._zip.infolist()
        if not infos:
            raise CorruptFileError(f"{name} is an empty zip archive, not a checkpoint")
        prefix = infos[0].filename.split("/", 1)[0] + "/"
        for info in infos:
            # as PyTorch: every record inside the archive's one folder (nothing like
            # "../x" or "/x", which an extracting tool would write elsewhere)
            parts = info.filename.split("/")
            if (not info.filename.startswith(prefix) or prefix in ("/", "./", "../")
                    or ".." in parts or "\\" in info.filename):
                raise CorruptFileError(
                    f"{name} is not a valid checkpoint: its record '{info.filename}' is not "
                    f"inside the archive's folder '{prefix}'")
        self._records = {info.filename[len(prefix):]: info for info in infos}
        if "data.pkl" not in self._records:
            if "constants.pkl" in self._records:
                raise RuntimeError(
                    f"{name} is a TorchScript archive (torch.jit.save); ember loads checkpoints "
                    "written by torch.save or ember.save")
            raise CorruptFileError(f"{name} is a zip archive without a data.pkl record: not a "
                                   "PyTorch or ember checkpoint")

    def has_record(self, name: str) -> bool:
        return name in self._records

    def read_record(self, name: str) -> bytes:
        """A small record's bytes (CRC checked)."""
        try:
            return self._zip.read(self._info(name))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, zlib.error) as e:
            raise CorruptFileError(f"{name} in {self._name} cannot be read: {e}") from None

    def _info(self, name: str) -> zipfile.ZipInfo:
        try:
            return self._records[name]
        except KeyError:
            raise CorruptFileError(f"{self._name} has no record '{name}' (damaged or "
                                   "incomplete checkpoint)") from None

    def data_offset(self, name: str) -> int:
        """Where a stored record's bytes begin in the stream."""
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            raise CorruptFileError(f"record '{name}' of {self._name} is compressed; it cannot be "
                                   "memory-mapped")
        self._stream.seek(info.header_offset)
        header = self._stream.read(_LOCAL.size)
        if len(header) != _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise CorruptFileError(f"record '{name}' of {self._name} has a damaged header")
        fields = _LOCAL.unpack(header)
        return info.header_offset + _LOCAL.size + fields[9] + fields[10]

    def record_size(self, name: str) -> int:
        return self._info(name).file_size

    def read_into(self, name: str, nbytes: int, *, verify: bool = True) -> np.ndarray:
        """A record's first ``nbytes`` bytes in a new writable uint8 array."""
        info = self._info(name)
        # the size the record declares is checked before anything is read or inflated
        if info.file_size != nbytes:
            raise CorruptFileError(
                f"record '{name}' of {self._name} holds {info.file_size} bytes where "
                f"{nbytes} were expected")
        out = np.empty(nbytes, dtype=np.uint8)
        if info.compress_type != zipfile.ZIP_STORED:
            with self._zip.open(info) as src:
                data = src.read(nbytes)
            out[...] = np.frombuffer(data, dtype=np.uint8, count=nbytes)
            return out
        self._stream.seek(self.data_offset(name))
        view = memoryview(out)
        filled = 0
        while filled < nbytes:
            n = self._stream.readinto(view[filled:])
            if not n:
                raise CorruptFileError(f"{self._name} is truncated: record '{name}' ends "
                                       f"after {filled} of {nbytes} bytes")
            filled += n
        # a CRC of 0 is what writers that skip the checksum leave (torch's compute_crc32=False)
        if verify and nbytes == info.file_size and info.CRC != 0:
            if zlib.crc32(out) != info.CRC:
                raise CorruptFileError(f"record '{name}' of {self._name} is corrupt (CRC "
                                       "mismatch)")
        return out


def buffered(stream):
    """A seekable stream for ``stream`` (read into memory when it cannot seek)."""
    seekable = getattr(stream, "seekable", None)
    if seekable is not None and seekable():
        return stream
    return io.BytesIO(stream.read())
