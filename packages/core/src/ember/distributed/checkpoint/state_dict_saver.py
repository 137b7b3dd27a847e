"""Saving a distributed checkpoint (``torch.distributed.checkpoint.state_dict_saver``)."""

from __future__ import annotations

import traceback
import warnings

from ember.distributed.checkpoint import _plan
from ember.distributed.checkpoint.api import CheckpointException
from ember.distributed.checkpoint.filesystem import CURRENT_DCP_VERSION, FileSystemWriter
from ember.distributed.checkpoint.metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    TensorProperties,
    TensorStorageMetadata,
)

__all__ = ["save_state_dict", "save"]


class _Dist:
    """The collectives a checkpoint needs, or their one-process stand-ins."""

    def __init__(self, process_group, no_dist: bool, verb: str = "save") -> None:
        from ember import distributed as dist

        self.enabled = not no_dist and dist.is_available() and dist.is_initialized()
        if not no_dist and not self.enabled:
            warnings.warn("ember.distributed is disabled, unavailable or uninitialized, "
                          f"assuming the intent is to {verb} in a single process.", stacklevel=3)
        self.group = process_group
        self.rank = dist.get_rank(process_group) if self.enabled else 0
        self.world_size = dist.get_world_size(process_group) if self.enabled else 1

    def reduce_int(self, value: int, op: str) -> int:
        if not self.enabled:
            return value
        from ember import distributed as dist
        from ember._dtype import int64
        from ember._ops.creation import tensor

        t = tensor([value], dtype=int64)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op), group=self.group)
        return int(t.item())

    def check(self, failed: BaseException | None, what: str) -> None:
        """Raise CheckpointException on every rank if ``what`` failed on any."""
        any_failed = self.reduce_int(1 if failed is not None else 0, "MAX")
        if any_failed:
            failures = {} if failed is None else {
                self.rank: (failed, traceback.extract_tb(failed.__traceback__))}
            raise CheckpointException(f"{what} failed on at least one rank", failures)


def _storage_writer(storage_writer, checkpoint_id):
    if storage_writer is None:
        if not checkpoint_id:
            raise RuntimeError("`checkpoint_id` must be specified if storage_writer/"
                               "storage_reader is None.")
        return FileSystemWriter(checkpoint_id)
    if checkpoint_id is not None:
        storage_writer.reset(checkpoint_id)
    return storage_writer


def save(state_dict: dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False, use_collectives: bool = True) -> Metadata:
    r"""Save ``state_dict`` as a distributed checkpoint, every rank writing a part of it.

    Call it on every rank with the same state dict (a DDP model's replicated
    ``state_dict()``, an optimizer's, nested dicts of them): each tensor is written once,
    a small one whole by one rank, a large one as row shards by all of them, so the
    ranks share the writing; rank 0 then writes the metadata that ties the files together.
    The checkpoint loads on any number of ranks (:func:`~ember.distributed.checkpoint.load`).

    Args:
        state_dict (dict): the state to save (nested dicts are flattened with dots).
        checkpoint_id (str or os.PathLike): the checkpoint directory.
        storage_writer (FileSystemWriter, optional): where to write (default: a
            ``FileSystemWriter(checkpoint_id)``).
        planner: custom save planners are not supported by ember (must be None).
        process_group (ProcessGroup, optional): the ranks that save (the world).
        no_dist (bool): save from this process alone. Default: False (alone anyway when
            no process group is initialized).
        use_collectives (bool): must be True in ember.

    Returns:
        Metadata: what was saved.

    Example::

        >>> dcp.save({"model": ddp.module.state_dict()}, checkpoint_id="ckpt/step100")
    """
    if planner is not None:
        raise ValueError("ember.distributed.checkpoint.save: custom planners are not "
                         "supported; pass planner=None")
    if not use_collectives:
        raise ValueError("ember.distributed.checkpoint.save needs use_collectives=True")
    writer = _storage_writer(storage_writer, checkpoint_id)
    d = _Dist(process_group, no_dist)
    leaves = _plan.flatten_state_dict(state_dict)
    mine = _plan.describe(leaves)
    if d.reduce_int(mine, "MAX") != mine or d.reduce_int(mine, "MIN") != mine:
        raise ValueError("ember.distributed.checkpoint.save: the ranks' state dicts differ "
                         "in their keys, shapes or dtypes; every rank must save the same "
                         "(replicated) state dict")
    row_bytes = getattr(writer, "shard_rows_over_bytes", 1 << 20)
    plan = _plan.plan_writes(leaves, d.world_size, row_bytes)
    values = {fqn: v for fqn, _, _, v in leaves}
    failed = None
    try:
        writer.set_up_storage_writer(d.rank == 0)
    except Exception as e:  # noqa: BLE001 - reported on every rank below
        failed = e
    d.check(failed, "setting up the checkpoint directory")
    items = {}
    for fqn, rank, offsets, sizes in plan:
        if rank != d.rank:
            continue
        v = values[fqn]
        if offsets is not None:
            v = v.detach()
            if sizes != tuple(v.shape):
                v = v[offsets[0]:offsets[0] + sizes[0]]
            v = v.contiguous().cpu()
        items[_plan.storage_key(fqn, offsets)] = v
    files = {r: writer.shard_file(r) for r in range(d.world_size)}
    try:
        writer.write_shard(d.rank, items)
    except Exception as e:  # noqa: BLE001 - reported on every rank below
        failed = e
    d.check(failed, "writing the checkpoint's shards")
    entries, storage = {}, {}
    for fqn, _, _, v in leaves:
        if _plan.is_tensor(v):
            entries[fqn] = TensorStorageMetadata(
                TensorProperties(dtype=v.dtype, requires_grad=v.requires_grad),
                tuple(v.shape), [])
        else:
            entries[fqn] = BytesStorageMetadata()
    for fqn, rank, offsets, sizes in plan:
        if offsets is not None:
            entries[fqn].chunks.append(ChunkStorageMetadata(offsets, sizes))
        storage[MetadataIndex(fqn, offsets)] = (files[rank], _plan.storage_key(fqn, offsets))
    metadata = Metadata(entries, storage_data=storage, version=CURRENT_DCP_VERSION,
                        storage_meta=writer.storage_meta())
    if d.rank == 0:
        try:
            writer.finish(metadata)
        except Exception as e:  # noqa: BLE001 - reported on every rank below
            failed = e
    d.check(failed, "writing the checkpoint's metadata")
    return metadata


def save_state_dict(state_dict: dict, storage_writer, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False,
                    planner=None) -> Metadata:
    """Deprecated: :func:`save` (``save(state_dict, storage_writer=...)``)."""
    warnings.warn("`save_state_dict` is deprecated and will be removed in future versions."
                  "Please use `save` instead.", FutureWarning, stacklevel=2)
    if coordinator_rank != 0:
        raise ValueError("ember.distributed.checkpoint: the coordinator is rank 0")
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                no_dist=no_dist, planner=planner)


