"""Collectives of picklable Python objects.

# NOTE [ Objects travel as checkpoints ]
# PyTorch pickles the objects and unpickles whatever arrives, which runs any code a peer
# sends. ember writes each object with ``ember.save`` and reads it with ``ember.load(...,
# weights_only=True)``: tensors, plain containers, numbers and strings (and the classes the
# user allowed with ``ember.serialization.add_safe_globals``) load; anything else — a class
# instance, a function, a pickle calling ``os.system`` — is refused with
# ``pickle.UnpicklingError`` naming the sender, on the receiving rank.
"""

from __future__ import annotations

import io
import pickle

import numpy as np

from ember.distributed._collectives import _group_rank, _start
from ember.distributed._work import Work
from ember.distributed.distributed_c10d import (
    _not_in_group,
    _resolve,
    _warn_not_in_group,
    get_global_rank,
)

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list", "send_object_list", "recv_object_list"]

_OBJECT_TAG = 32003


def _dumps(obj) -> bytes:
    from ember.serialization import save

    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _loads(data, sender: int, op: str):
    from ember.serialization import load

    try:
        return load(io.BytesIO(bytes(data)), weights_only=True)
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(
            f"{op}: the object sent by rank {sender} was refused ({e}); objects are read "
            "like checkpoints (ember.load(weights_only=True)): allow a class of yours with "
            "ember.serialization.add_safe_globals") from None


def _wait(pg, name: str, requests: list) -> None:
    Work(pg, name, requests).wait()


def _offsets(sizes) -> list[int]:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()


def broadcast_object_list(object_list: list, src: int | None = None, group=None,
                          device=None, group_src: int | None = None) -> None:
    """Replace ``object_list`` on every rank by rank ``src``'s (same length everywhere).

    Args:
        object_list (list): the objects on ``src``; overwritten in place elsewhere.
        src (int, optional): the source's global rank (default 0).
        group (ProcessGroup, optional): the group.
        device: unused (CPU).
        group_src (int, optional): the source's rank in ``group``.

    Example::

        >>> objs = [{"lr": 0.1}, "x", 3] if dist.get_rank() == 0 else [None, None, None]
        >>> dist.broadcast_object_list(objs, src=0)
    """
    if _not_in_group(group):
        _warn_not_in_group("broadcast_object_list")
        return
    if src is None and group_src is None:
        src = 0
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "source")
    MPI = _start(pg, "broadcast_object_list")
    me = pg.rank()
    if me == root:
        blobs = [_dumps(o) for o in object_list]
        sizes = np.array([len(b) for b in blobs], dtype=np.int64)
    else:
        sizes = np.empty(len(object_list), dtype=np.int64)
    _wait(pg, "broadcast_object_list (sizes)", [pg._comm.Ibcast([sizes, MPI.INT64_T], root)])
    data = np.frombuffer(b"".join(blobs), np.uint8).copy() if me == root else \
        np.empty(int(sizes.sum()), np.uint8)
    _wait(pg, "broadcast_object_list", [pg._comm.Ibcast([data, MPI.BYTE], root)])
    if me != root:
        sender = get_global_rank(pg, root)
        for i, off in enumerate(_offsets(sizes)):
            object_list[i] = _loads(data[off:off + sizes[i]], sender, "broadcast_object_list")


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Gather ``obj`` of every rank into ``object_list`` (one entry per rank) on every rank.

    Args:
        object_list (list): the output, of the group's size.
        obj: this rank's object.
        group (ProcessGroup, optional): the group.
    """
    if _not_in_group(group):
        _warn_not_in_group("all_gather_object")
        return
    pg = _resolve(group)
    n = pg.size()
    if len(object_list) != n:
        raise ValueError(f"all_gather_object: object_list must have one entry per rank ({n}), "
                         f"got {len(object_list)}")
    MPI = _start(pg, "all_gather_object")
    blob = np.frombuffer(_dumps(obj), np.uint8).copy()
    sizes = np.empty(n, np.int64)
    _wait(pg, "all_gather_object (sizes)",
          [pg._comm.Iallgather([np.array([blob.size], np.int64), MPI.INT64_T],
                               [sizes, MPI.INT64_T])])
    data = np.empty(int(sizes.sum()), np.uint8)
    offs = _offsets(sizes)
    _wait(pg, "all_gather_object", [pg._comm.Iallgatherv(
        [blob, MPI.BYTE], [data, sizes.tolist(), offs, MPI.BYTE])])
    for i in range(n):
        object_list[i] = _loads(data[offs[i]:offs[i] + sizes[i]], get_global_rank(pg, i),
                                "all_gather_object")


def gather_object(obj, object_gather_list=None, dst: int | None = None, group=None,
                  group_dst: int | None = None) -> None:
    """Gather ``obj`` of every rank into ``object_gather_list`` on rank ``dst``.

    Args:
        obj: this rank's object.
        object_gather_list (list, optional): on ``dst`` only: the output, of the group's size.
        dst (int, optional): the destination's global rank (default 0).
        group (ProcessGroup, optional): the group.
        group_dst (int, optional): the destination's rank in ``group``.
    """
    if _not_in_group(group):
        _warn_not_in_group("gather_object")
        return
    if dst is None and group_dst is None:
        dst = 0
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "destination")
    me, n = pg.rank(), pg.size()
    if me == root:
        if object_gather_list is None:
            raise AssertionError("Must provide object_gather_list on dst rank")
        if len(object_gather_list) != n:
            raise ValueError(f"gather_object: object_gather_list must have one entry per rank "
                             f"({n}), got {len(object_gather_list)}")
    MPI = _start(pg, "gather_object")
    blob = np.frombuffer(_dumps(obj), np.uint8).copy()
    sizes = np.empty(n, np.int64) if me == root else None
    _wait(pg, "gather_object (sizes)", [pg._comm.Igather(
        [np.array([blob.size], np.int64), MPI.INT64_T],
        [sizes, MPI.INT64_T] if me == root else None, root)])
    if me == root:
        data = np.empty(int(sizes.sum()), np.uint8)
        offs = _offsets(sizes)
        recv = [data, sizes.tolist(), offs, MPI.BYTE]
    else:
        recv = None
    _wait(pg, "gather_object", [pg._comm.Igatherv([blob, MPI.BYTE], recv, root)])
    if me == root:
        for i in range(n):
            object_gather_list[i] = _loads(data[offs[i]:offs[i] + sizes[i]],
                                           get_global_rank(pg, i), "gather_object")


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int | None = None, group=None, group_src: int | None = None):
    """Send the i-th object of ``scatter_object_input_list`` on rank ``src`` to rank i, into
    ``scatter_object_output_list[0]``.

    Args:
        scatter_object_output_list (list): the output (at least one entry).
        scatter_object_input_list (list, optional): on ``src`` only: one object per rank.
        src (int, optional): the source's global rank (default 0).
        group (ProcessGroup, optional): the group.
        group_src (int, optional): the source's rank in ``group``.
    """
    if _not_in_group(group):
        _warn_not_in_group("scatter_object_list")
        return
    if not isinstance(scatter_object_output_list, list) or \
            len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    if src is None and group_src is None:
        src = 0
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "source")
    me, n = pg.rank(), pg.size()
    MPI = _start(pg, "scatter_object_list")
    if me == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        if len(scatter_object_input_list) != n:
            raise ValueError(f"scatter_object_list: scatter_object_input_list must have one "
                             f"entry per rank ({n}), got {len(scatter_object_input_list)}")
        blobs = [_dumps(o) for o in scatter_object_input_list]
        sizes = np.array([len(b) for b in blobs], np.int64)
    size = np.empty(1, np.int64)
    _wait(pg, "scatter_object_list (sizes)", [pg._comm.Iscatter(
        [sizes, MPI.INT64_T] if me == root else None, [size, MPI.INT64_T], root)])
    data = np.empty(int(size[0]), np.uint8)
    send = [np.frombuffer(b"".join(blobs), np.uint8).copy(), sizes.tolist(), _offsets(sizes),
            MPI.BYTE] if me == root else None
    _wait(pg, "scatter_object_list", [pg._comm.Iscatterv(send, [data, MPI.BYTE], root)])
    scatter_object_output_list[0] = _loads(data, get_global_rank(pg, root),
                                           "scatter_object_list")


def send_object_list(object_list: list, dst: int | None = None, group=None, device=None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send the objects of ``object_list`` to rank ``dst`` (which calls
    :func:`recv_object_list` with a list of the same length).

    Args:
        object_list (list): the objects.
        dst (int): the destination's global rank.
        group (ProcessGroup, optional): the group.
        device: unused (CPU).
        group_dst (int, optional): the destination's rank in ``group``.
        use_batch (bool): unused (MPI sends the two messages in order either way).
    """
    if _not_in_group(group):
        _warn_not_in_group("send_object_list")
        return
    pg = _resolve(group)
    peer = _group_rank(pg, dst, group_dst, "destination")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")
    MPI = _start(pg, "send_object_list")
    blobs = [_dumps(o) for o in object_list]
    sizes = np.array([len(b) for b in blobs], np.int64)
    data = np.frombuffer(b"".join(blobs), np.uint8).copy()
    _wait(pg, f"send_object_list to rank {peer}", [
        pg._comm.Isend([sizes, MPI.INT64_T], peer, _OBJECT_TAG),
        pg._comm.Isend([data, MPI.BYTE], peer, _OBJECT_TAG)])


def recv_object_list(object_list: list, src: int | None = None, group=None, device=None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Receive objects sent with :func:`send_object_list` into ``object_list`` (of the
    sender's length), from rank ``src`` (any rank if None).

    Returns:
        The sender's global rank; -1 if this rank is not in the group.
    """
    if _not_in_group(group):
        _warn_not_in_group("recv_object_list")
        return -1
    pg = _resolve(group)
    MPI = _start(pg, "recv_object_list")
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _group_rank(pg, src, group_src, "source")
    sizes = np.empty(len(object_list), np.int64)
    status = MPI.Status()
    work = Work(pg, "recv_object_list (sizes)",
                [pg._comm.Irecv([sizes, MPI.INT64_T], peer, _OBJECT_TAG)], statuses=[status])
    work.wait()
    peer = work.source_rank()
    data = np.empty(int(sizes.sum()), np.uint8)
    _wait(pg, f"recv_object_list from rank {peer}",
          [pg._comm.Irecv([data, MPI.BYTE], peer, _OBJECT_TAG)])
    sender = get_global_rank(pg, peer)
    for i, off in enumerate(_offsets(sizes)):
        object_list[i] = _loads(data[off:off + sizes[i]], sender, "recv_object_list")
    return sender
