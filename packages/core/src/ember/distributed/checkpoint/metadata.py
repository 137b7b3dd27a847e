"""What a distributed checkpoint's metadata file says (``torch.distributed.checkpoint.metadata``):
for every key of the flattened state dict, a tensor's dtype, size and the chunks it was saved
in (offsets and sizes), or a plain value's place."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ChunkStorageMetadata", "TensorStorageMetadata", "BytesStorageMetadata", "Metadata",
           "MetadataIndex", "TensorProperties", "StorageMeta"]


@dataclass
class ChunkStorageMetadata:
    """One saved piece of a tensor: where it starts in the whole tensor and its size."""

    offsets: tuple
    sizes: tuple


@dataclass
class TensorProperties:
    """A saved tensor's dtype (and, as in PyTorch, its layout flags)."""

    dtype: object = None
    requires_grad: bool = False
    pin_memory: bool = False


@dataclass
class TensorStorageMetadata:
    """A saved tensor: its properties, its whole size and its chunks."""

    properties: TensorProperties
    size: tuple
    chunks: list


@dataclass
class BytesStorageMetadata:
    """A saved non-tensor value (a number, string, list...)."""


@dataclass
class StorageMeta:
    """Where and when a checkpoint was written."""

    checkpoint_id: str | None = None
    save_id: str | None = None
    load_id: str | None = None
    modules: list = field(default_factory=list)


@dataclass
class Metadata:
    """The metadata of a checkpoint: ``state_dict_metadata`` maps each flattened key to a
    :class:`TensorStorageMetadata` or :class:`BytesStorageMetadata`; ``storage_data`` maps
    each :class:`MetadataIndex` to the file that holds it."""

    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None
    storage_meta: StorageMeta | None = None
    version: str | None = None


@dataclass(frozen=True)
class MetadataIndex:
    """The index of one saved item: its key and, for a tensor chunk, its offsets."""

    fqn: str
    offset: tuple | None = None
    index: int | None = field(hash=False, compare=False, default=None)
