"""Distributed checkpoints in a directory: one file per rank and a metadata file
(``torch.distributed.checkpoint.filesystem``).

The directory holds ``__<rank>_0.distcp`` (the tensors, or rows of tensors, that rank
wrote, in ember's safe zip format: ``ember.load(..., weights_only=True)`` reads it) and
``.metadata`` (JSON: every key's dtype, size and chunks, and the file of each chunk). Every
file is written to a temporary name first and renamed into place, so a crash never leaves a
half-written file under the final name. The format is ember's own: PyTorch's
``torch.distributed.checkpoint`` does not read it (nor ember PyTorch's).
"""

from __future__ import annotations

import json
import os
from enum import Enum

from ember.distributed.checkpoint.metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    StorageMeta,
    TensorProperties,
    TensorStorageMetadata,
)

__all__ = ["FileSystemWriter", "FileSystemReader", "SerializationFormat"]

METADATA_FILE = ".metadata"
CURRENT_DCP_VERSION = "1.0.0"
DEFAULT_ROW_SHARD_BYTES = 1024 * 1024


class SerializationFormat(Enum):
    """The format of the shard files: ember writes ``TORCH_SAVE`` (its zip format)."""

    TORCH_SAVE = "torch_save"
    SAFETENSORS = "safetensors"


def _write_atomically(path: str, write, sync: bool) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            write(f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _dtype_of(name: str):
    import ember

    return getattr(ember, name)


class FileSystemWriter:
    """Where :func:`ember.distributed.checkpoint.save` writes: a directory.

    Args:
        path (str or os.PathLike): the checkpoint directory (made if missing).
        single_file_per_rank (bool): one file per rank (the only layout ember writes).
            Default: True.
        sync_files (bool): fsync each file before renaming it into place. Default: True.
        thread_count (int): accepted for PyTorch's signature; ember writes in one thread.
        per_thread_copy_ahead (int): accepted for PyTorch's signature.
        cache_staged_state_dict (bool): accepted for PyTorch's signature.
        overwrite (bool): allow writing into a directory that holds a checkpoint.
            Default: True.
        _extensions: PyTorch's experimental stream transforms; must be None.
        serialization_format (SerializationFormat): ``TORCH_SAVE`` (the only one ember
            writes; ``SAFETENSORS`` is refused).
        shard_rows_over_bytes (int, keyword-only, ember's): a tensor of at least this many
            bytes (and at least as many rows as ranks) is written as row shards, one per
            rank; smaller ones are written whole, each by one rank. Default: 1 MiB.
    """

    def __init__(self, path, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True,
                 _extensions=None,
                 serialization_format: SerializationFormat = SerializationFormat.TORCH_SAVE,
                 *, shard_rows_over_bytes: int = DEFAULT_ROW_SHARD_BYTES) -> None:
        if _extensions:
            raise ValueError("FileSystemWriter: stream extensions are not supported by ember")
        if serialization_format != SerializationFormat.TORCH_SAVE:
            raise ValueError(f"FileSystemWriter: ember writes SerializationFormat.TORCH_SAVE "
                             f"shards only, not {serialization_format}")
        if thread_count < 1:
            raise ValueError(f"thread_count must be at least 1, got {thread_count}")
        self.path = os.fspath(path)
        self.single_file_per_rank = single_file_per_rank
        self.sync_files = sync_files
        self.thread_count = thread_count
        self.per_thread_copy_ahead = per_thread_copy_ahead
        self.cache_staged_state_dict = cache_staged_state_dict
        self.overwrite = overwrite
        self.shard_rows_over_bytes = int(shard_rows_over_bytes)

    def reset(self, checkpoint_id=None) -> None:
        """Point the writer at another directory (``checkpoint_id``)."""
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        """True if ``checkpoint_id`` can name a directory."""
        return isinstance(checkpoint_id, (str, os.PathLike))

    def set_up_storage_writer(self, is_coordinator: bool) -> None:
        os.makedirs(self.path, exist_ok=True)
        if is_coordinator and not self.overwrite and os.path.exists(
                os.path.join(self.path, METADATA_FILE)):
            raise RuntimeError(f"Checkpoint already exists at {self.path} and "
                               "overwrite=False")

    def shard_file(self, rank: int) -> str:
        return f"__{rank}_0.distcp"

    def write_shard(self, rank: int, items: dict) -> str:
        """Write this rank's ``{storage key: value}`` and return the file's name."""
        from ember.serialization import save

        name = self.shard_file(rank)
        _write_atomically(os.path.join(self.path, name), lambda f: save(items, f),
                          self.sync_files)
        return name

    def finish(self, metadata: Metadata) -> None:
        """Write the metadata file (the coordinator does, once every rank has written)."""
        text = json.dumps(_metadata_to_json(metadata), indent=1).encode()
        _write_atomically(os.path.join(self.path, METADATA_FILE), lambda f: f.write(text),
                          self.sync_files)

    def storage_meta(self) -> StorageMeta:
        return StorageMeta(checkpoint_id=self.path)


class FileSystemReader:
    """Where :func:`ember.distributed.checkpoint.load` reads: a checkpoint directory.

    Args:
        path (str or os.PathLike): the checkpoint directory.
        _extension_registry: PyTorch's experimental stream transforms; must be None.
    """

    def __init__(self, path, _extension_registry=None) -> None:
        if _extension_registry is not None:
            raise ValueError("FileSystemReader: stream extensions are not supported by ember")
        self.path = os.fspath(path)
        self._files: dict = {}

    def reset(self, checkpoint_id=None) -> None:
        """Point the reader at another directory (``checkpoint_id``)."""
        self._files = {}
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        """True if ``checkpoint_id`` is a directory holding a checkpoint."""
        return isinstance(checkpoint_id, (str, os.PathLike)) and os.path.isfile(
            os.path.join(os.fspath(checkpoint_id), METADATA_FILE))

    def read_metadata(self) -> Metadata:
        """The checkpoint's :class:`Metadata`."""
        path = os.path.join(self.path, METADATA_FILE)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no distributed checkpoint at {self.path!r}: "
                                    f"{METADATA_FILE} is missing")
        with open(path, "rb") as f:
            return _metadata_from_json(json.loads(f.read().decode()))

    def read_item(self, file: str, key: str):
        """The value stored under ``key`` in the shard file ``file``."""
        from ember.serialization import load

        if file not in self._files:
            path = os.path.join(self.path, file)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"distributed checkpoint {self.path!r}: shard file "
                                        f"{file} is missing")
            self._files[file] = load(path, map_location="cpu", weights_only=True)
        items = self._files[file]
        if key not in items:
            raise RuntimeError(f"distributed checkpoint {self.path!r}: {file} lacks {key!r}")
        return items[key]


def _metadata_to_json(md: Metadata) -> dict:
    entries = {}
    for fqn, m in md.state_dict_metadata.items():
        if isinstance(m, TensorStorageMetadata):
            entries[fqn] = {"type": "tensor", "dtype": _dtype_name(m.properties.dtype),
                            "requires_grad": m.properties.requires_grad,
                            "size": list(m.size),
                            "chunks": [{"offsets": list(c.offsets), "sizes": list(c.sizes)}
                                       for c in m.chunks]}
        else:
            entries[fqn] = {"type": "bytes"}
    storage = [{"fqn": idx.fqn, "offset": None if idx.offset is None else list(idx.offset),
                "file": where[0], "key": where[1]}
               for idx, where in (md.storage_data or {}).items()]
    meta = md.storage_meta
    return {"version": md.version, "state_dict_metadata": entries, "storage_data": storage,
            "storage_meta": None if meta is None else {"checkpoint_id": meta.checkpoint_id,
                                                       "save_id": meta.save_id}}


def _metadata_from_json(d: dict) -> Metadata:
    entries = {}
    for fqn, e in d["state_dict_metadata"].items():
        if e["type"] == "tensor":
            entries[fqn] = TensorStorageMetadata(
                TensorProperties(dtype=_dtype_of(e["dtype"]),
                                 requires_grad=bool(e.get("requires_grad", False))),
                tuple(e["size"]),
                [ChunkStorageMetadata(tuple(c["offsets"]), tuple(c["sizes"]))
                 for c in e["chunks"]])
        else:
            entries[fqn] = BytesStorageMetadata()
    storage = {MetadataIndex(s["fqn"], None if s["offset"] is None else tuple(s["offset"])):
               (s["file"], s["key"]) for s in d["storage_data"]}
    sm = d.get("storage_meta")
    return Metadata(entries, storage_data=storage, version=d.get("version"),
                    storage_meta=None if sm is None else StorageMeta(**sm))
