"""Distributed checkpoints (``torch.distributed.checkpoint``): every rank writes a part of
the state, a metadata file ties the parts together, and the checkpoint loads on any number
of ranks.

Example::

    >>> import ember.distributed.checkpoint as dcp
    >>> dcp.save({"model": ddp.module.state_dict()}, checkpoint_id="ckpt")   # every rank
    >>> sd = {"model": model.state_dict()}
    >>> dcp.load(sd, checkpoint_id="ckpt")                                   # any world size
    >>> model.load_state_dict(sd["model"])

See docs/distributed.md ("Checkpoints") for the layout and what is left out (planners,
DTensor/ShardedTensor shards, async_save).
"""

from ember.distributed.checkpoint.api import CheckpointException
from ember.distributed.checkpoint.filesystem import FileSystemReader, FileSystemWriter
from ember.distributed.checkpoint.metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    TensorProperties,
    TensorStorageMetadata,
)
from ember.distributed.checkpoint.state_dict_loader import load, load_state_dict
from ember.distributed.checkpoint.state_dict_saver import save, save_state_dict

__all__ = ["CheckpointException", "FileSystemReader", "FileSystemWriter",
           "BytesStorageMetadata", "ChunkStorageMetadata", "Metadata", "MetadataIndex",
           "TensorProperties", "TensorStorageMetadata", "load", "load_state_dict", "save",
           "save_state_dict"]
