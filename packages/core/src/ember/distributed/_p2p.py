"""Point-to-point operations: send, recv, isend, irecv, P2POp and batch_isend_irecv.

Messages travel as bytes on the group's communicator with the given tag; the receiving
tensor must have the sender's size and dtype.
"""

from __future__ import annotations

from ember.distributed._collectives import (
    _buffer,
    _bytes,
    _check_single_tensor,
    _group_rank,
    _input_bytes,
    _start,
    _store,
)
from ember.distributed._work import Work
from ember.distributed.distributed_c10d import (
    _not_in_group,
    _resolve,
    _warn_not_in_group,
    get_global_rank,
)

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv"]


def isend(tensor, dst: int | None = None, group=None, tag: int = 0,
          group_dst: int | None = None):
    """Start sending ``tensor`` to rank ``dst``.

    Args:
        tensor (Tensor): the data.
        dst (int): the destination's global rank.
        group (ProcessGroup, optional): the group.
        tag (int, optional): matches the receive's tag.
        group_dst (int, optional): the destination's rank in ``group``.

    Returns:
        A :class:`Work`; None if this rank is not in the group.
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("isend")
        return None
    pg = _resolve(group)
    peer = _group_rank(pg, dst, group_dst, "destination")
    MPI = _start(pg, "isend")
    data = _input_bytes(tensor).copy()
    req = pg._comm.Isend([data, MPI.BYTE], peer, tag)
    return Work(pg, f"send to rank {peer}", [req], outputs=[tensor])


def irecv(tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None).

    Args:
        tensor (Tensor): the output (the shape and dtype of what is sent).
        src (int, optional): the source's global rank; None: any.
        group (ProcessGroup, optional): the group.
        tag (int, optional): matches the send's tag.
        group_src (int, optional): the source's rank in ``group``.

    Returns:
        A :class:`Work` (its ``source_rank()`` names the sender); None if this rank is not in
        the group.
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("irecv")
        return None
    pg = _resolve(group)
    MPI = _start(pg, "irecv")
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _group_rank(pg, src, group_src, "source")
    buf, _ = _buffer(tensor)
    status = MPI.Status()
    req = pg._comm.Irecv([_bytes(buf), MPI.BYTE], peer, tag)

    def finish(_w):
        _store(tensor, buf)
    name = "recv from any rank" if peer == MPI.ANY_SOURCE else f"recv from rank {peer}"
    return Work(pg, name, [req], finish, [tensor], statuses=[status])


def _check_not_self(pg, rank: int, what: str) -> None:
    if pg.rank() == rank:
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank "
                         "of the current process.")


def send(tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has gone.

    Args: as :func:`isend`.
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("send")
        return None
    pg = _resolve(group)
    peer = _group_rank(pg, dst, group_dst, "destination")
    _check_not_self(pg, peer, "destination")
    isend(tensor, group=group, tag=tag, group_dst=peer).wait()
    return None


def recv(tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None) and wait for it.

    Args: as :func:`irecv`.

    Returns:
        The sender's global rank; -1 if this rank is not in the group.
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("recv")
        return -1
    pg = _resolve(group)
    if src is not None or group_src is not None:
        peer = _group_rank(pg, src, group_src, "source")
        _check_not_self(pg, peer, "source")
        work = irecv(tensor, group=group, tag=tag, group_src=peer)
    else:
        work = irecv(tensor, group=group, tag=tag)
    work.wait()
    return get_global_rank(pg, work.source_rank())


class P2POp:
    """One send or receive of :func:`batch_isend_irecv`.

    Args:
        op (Callable): :func:`isend` or :func:`irecv`.
        tensor (Tensor): the data to send or the output to receive into.
        peer (int, optional): the other side's global rank.
        group (ProcessGroup, optional): the group.
        tag (int, optional): the message tag.
        group_peer (int, optional): the other side's rank in ``group``.
    """

    def __init__(self, op, tensor, peer: int | None = None, group=None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op = op
        self.tensor = tensor
        self.group = group
        self.peer = peer
        self.tag = tag
        self.group_peer = group_peer if peer is None else None
        if peer is None and group_peer is None:
            raise ValueError("Must specify global_rank or group_rank")
        if peer is not None and group_peer is not None:
            raise ValueError("Can't specify both group_rank and global_rank")

    def __repr__(self) -> str:
        return (f"P2POp(op={self.op.__name__}, peer={self.peer}, group_peer="
                f"{self.group_peer}, tag={self.tag}, shape={tuple(self.tensor.shape)})")


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Start every send and receive of ``p2p_op_list`` (P2POp) at once.

    Returns:
        One :class:`Work` per operation, in order.
    """
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    groups = {id(p.group) for p in p2p_op_list}
    if len(groups) > 1:
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        if p.peer is not None:
            works.append(p.op(p.tensor, p.peer, p.group, p.tag))
        else:
            kw = "group_dst" if p.op is isend else "group_src"
            works.append(p.op(p.tensor, None, p.group, p.tag, **{kw: p.group_peer}))
    return works
