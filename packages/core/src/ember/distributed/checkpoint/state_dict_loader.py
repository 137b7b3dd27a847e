"""Loading a distributed checkpoint (``torch.distributed.checkpoint.state_dict_loader``)."""

from __future__ import annotations

import warnings

from ember.autograd.grad_mode import no_grad
from ember.distributed.checkpoint import _plan
from ember.distributed.checkpoint.filesystem import FileSystemReader
from ember.distributed.checkpoint.metadata import MetadataIndex, TensorStorageMetadata
from ember.distributed.checkpoint.state_dict_saver import _Dist

__all__ = ["load_state_dict", "load"]


def _storage_reader(storage_reader, checkpoint_id):
    if storage_reader is None:
        if not checkpoint_id:
            raise RuntimeError("`checkpoint_id` must be specified if storage_writer/"
                               "storage_reader is None.")
        return FileSystemReader(checkpoint_id)
    if checkpoint_id is not None:
        storage_reader.reset(checkpoint_id)
    return storage_reader


def load(state_dict: dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False) -> None:
    r"""Load a distributed checkpoint into ``state_dict``, in place.

    The tensors of ``state_dict`` say what to load: each is filled (``copy_``) from the
    pieces saved under its key, whatever number of ranks wrote them; plain values are
    replaced. Every rank loads the whole state (the checkpoint may have been written by
    any number of ranks). Then ``model.load_state_dict(state_dict)`` where the values must
    reach a module.

    Args:
        state_dict (dict): the state to fill (its keys, shapes and dtypes are the ones
            expected; nested dicts are matched by their dotted names).
        checkpoint_id (str or os.PathLike): the checkpoint directory.
        storage_reader (FileSystemReader, optional): where to read (default: a
            ``FileSystemReader(checkpoint_id)``).
        planner: custom load planners are not supported by ember (must be None).
        process_group (ProcessGroup, optional): the ranks that load (the world).
        no_dist (bool): load in this process alone (no collectives). Default: False.

    Example::

        >>> sd = {"model": model.state_dict()}
        >>> dcp.load(sd, checkpoint_id="ckpt/step100")
        >>> model.load_state_dict(sd["model"])
    """
    if planner is not None:
        raise ValueError("ember.distributed.checkpoint.load: custom planners are not "
                         "supported; pass planner=None")
    reader = _storage_reader(storage_reader, checkpoint_id)
    d = _Dist(process_group, no_dist, "load")
    failed = None
    try:
        _load_local(state_dict, reader)
    except Exception as e:  # noqa: BLE001 - re-raised below
        failed = e
    if d.enabled and d.world_size > 1:
        d.check(failed, "loading the checkpoint")
    elif failed is not None:
        raise failed


def _load_local(state_dict: dict, reader) -> None:
    metadata = reader.read_metadata()
    entries = metadata.state_dict_metadata
    storage = metadata.storage_data
    with no_grad():
        for fqn, parent, key, value in _plan.flatten_state_dict(state_dict):
            if fqn not in entries:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
            md = entries[fqn]
            if not _plan.is_tensor(value):
                if isinstance(md, TensorStorageMetadata):
                    raise RuntimeError(f"checkpoint: {fqn} was saved as a tensor, but the "
                                       f"state dict holds a {type(value).__name__}")
                parent[key] = reader.read_item(*storage[MetadataIndex(fqn, None)])
                continue
            if not isinstance(md, TensorStorageMetadata):
                raise RuntimeError(f"checkpoint: {fqn} was saved as a plain value, not a "
                                   "tensor")
            if tuple(md.size) != tuple(value.shape):
                raise ValueError(f"Size mismatch between saved {tuple(md.size)} and current: "
                                 f"{tuple(value.shape)} for {fqn}")
            for chunk in md.chunks:
                piece = reader.read_item(*storage[MetadataIndex(fqn, tuple(chunk.offsets))])
                if tuple(piece.shape) != tuple(chunk.sizes):
                    raise RuntimeError(f"checkpoint: the chunk of {fqn} at "
                                       f"{tuple(chunk.offsets)} has shape "
                                       f"{tuple(piece.shape)}, the metadata says "
                                       f"{tuple(chunk.sizes)}")
                target = value
                if value.dim() > 0 and tuple(chunk.sizes) != tuple(value.shape):
                    start = chunk.offsets[0]
                    target = value[start:start + chunk.sizes[0]]
                target.copy_(piece.to(device=value.device, dtype=value.dtype))


def load_state_dict(state_dict: dict, storage_reader, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False, planner=None) -> None:
    """Deprecated: :func:`load` (``load(state_dict, storage_reader=...)``)."""
    warnings.warn("`load_state_dict` is deprecated and will be removed in future versions. "
                  "Please use `load` instead.", FutureWarning, stacklevel=2)
    if coordinator_rank != 0:
        raise ValueError("ember.distributed.checkpoint: the coordinator is rank 0")
    load(state_dict, storage_reader=storage_reader, process_group=process_group,
         no_dist=no_dist, planner=planner)
