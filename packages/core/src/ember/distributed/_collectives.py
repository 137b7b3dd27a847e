"""The tensor collectives and point-to-point operations of ember.distributed, on MPI.

Each one checks its arguments as PyTorch does, starts nonblocking MPI requests on contiguous
NumPy buffers (the tensor's own memory where it is contiguous, a copy where it is not), and
returns a :class:`Work` (``async_op=True``) or waits for it. Results are written into the
given tensors in place when the operation completes. Reductions run inside MPI for the dtypes
MPI has (float32/64, integers, bool, complex); float16, bfloat16 and float8 are gathered as
bytes and reduced with NumPy in rank order, so every rank computes the same bits.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ember.distributed import _mpi
from ember.distributed._debug import get_debug_level
from ember.distributed._types import DebugLevel, ReduceOp, as_red_op
from ember.distributed._work import Work
from ember.distributed.distributed_c10d import (
    _not_in_group,
    _resolve,
    _warn_not_in_group,
    get_group_rank,
    supports_complex,
)

__all__ = [
    "all_reduce", "all_reduce_coalesced", "reduce", "broadcast", "all_gather",
    "all_gather_coalesced", "all_gather_into_tensor", "all_gather_single", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_single", "gather", "scatter", "all_to_all",
    "all_to_all_single", "barrier", "monitored_barrier",
]

_MONITOR_TAG = 32002


# ---------------------------------------------------------------------------
# arguments

def _is_tensor(x) -> bool:
    from ember import Tensor

    return isinstance(x, Tensor)


def _check_single_tensor(param, name: str) -> None:
    if not _is_tensor(param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(param)} instead.")
    if not param.is_cpu:
        raise RuntimeError(f"ember's MPI backend runs on CPU tensors, but `{name}` is on "
                           f"{param.device} (CUDA tensors need the NCCL backend, which ember "
                           "does not have yet)")


def _check_tensor_list(param, name: str) -> None:
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(param)} instead.")
    if not all(_is_tensor(p) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(param)} with elements of type "
                        f"{[type(p) for p in param]}.")
    for p in param:
        _check_single_tensor(p, name)


def _same_dtype(*tensors) -> None:
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise ValueError("Invalid usage of tensors with different dtypes"
                         f"Found {sorted(str(d) for d in dtypes)}")


def _group_rank(pg, global_rank, group_rank, what: str) -> int:
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not isinstance(group_rank, int) or not 0 <= group_rank < pg.size():
            raise ValueError(f"Invalid {what} rank {group_rank} for a group of {pg.size()}")
        return group_rank
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return get_group_rank(pg, global_rank)


def _start(pg, op_name: str, *tensors, sizes: bool = True):
    """Check the group is usable and, at DebugLevel.DETAIL, that every rank calls the same
    collective on the same dtypes (and sizes, where they must agree); returns mpi4py.MPI."""
    pg._check_usable()
    _mpi.check_failures()
    MPI = _mpi.load_mpi()
    if tensors and get_debug_level() == DebugLevel.DETAIL:
        _check_consistency(pg, op_name, tensors, sizes, MPI)
    return MPI


def _check_consistency(pg, op_name: str, tensors, sizes: bool, MPI) -> None:
    what = f"{op_name} " + ", ".join(
        f"{t.dtype}" + (f"[{t.numel()}]" if sizes else "") for t in tensors)
    mine = np.frombuffer(hashlib.sha1(what.encode()).digest()[:8], np.int64).copy()
    every = np.empty(pg.size(), np.int64)
    Work(pg, f"{op_name} (DETAIL consistency check)",
         [pg._comm.Iallgather([mine, MPI.INT64_T], [every, MPI.INT64_T])]).wait()
    differ = [r for r in range(pg.size()) if every[r] != mine[0]]
    if differ:
        raise RuntimeError(f"Detected mismatch between collectives on ranks: rank "
                           f"{pg.rank()} runs {what}, ranks {differ} of the group run "
                           "something else (TORCH_DISTRIBUTED_DEBUG=DETAIL)")


def _run(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


# ---------------------------------------------------------------------------
# buffers

def _buffer(t) -> tuple[np.ndarray, bool]:
    """A C-contiguous writable array of ``t``'s data: its own memory where possible
    (in_place True) or a copy."""
    arr = t._data
    if arr.flags.c_contiguous and arr.flags.writeable:
        return arr, True
    return np.ascontiguousarray(arr), False


def _bytes(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1).view(np.uint8)


def _store(t, values: np.ndarray) -> None:
    """Write ``values`` into ``t`` (in place, through views) and bump its version."""
    arr = t._data
    if values is not arr:
        arr[...] = values.reshape(arr.shape)
    t._bump_version()


def _input_bytes(t) -> np.ndarray:
    return _bytes(np.ascontiguousarray(t._data))


def _typed(arr: np.ndarray, mtype):
    flat = arr.reshape(-1)
    return [flat.view(np.uint8) if arr.dtype == np.bool_ else flat, mtype]


def _reduction(op, t, name: str):
    op = as_red_op(op)
    if t.is_complex() and not supports_complex(op):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    return op


# ---------------------------------------------------------------------------
# reductions

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks of the group; every rank gets the result, in place.

    Args:
        tensor (Tensor): the input and output of the collective.
        op (ReduceOp, optional): the reduction (default SUM).
        group (ProcessGroup, optional): the group (default: the default group).
        async_op (bool, optional): return a :class:`Work` instead of waiting.

    Returns:
        A Work if ``async_op``; None otherwise or if this rank is not in the group.

    Example::

        >>> t = ember.arange(2, dtype=ember.int64) + 1 + 2 * rank
        >>> dist.all_reduce(t, op=ReduceOp.SUM)
        >>> t                                        # on both of two ranks
        tensor([4, 6])
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("all_reduce")
        return None
    pg = _resolve(group)
    op = _reduction(op, tensor, "all_reduce")
    MPI = _start(pg, "all_reduce", tensor)
    if not async_op and tensor._data.nbytes >= _mpi.BLOCKING_MIN_BYTES and \
            _mpi.native(op, tensor._data.dtype) is not None and _mpi.blocking_allowed():
        _blocking_allreduce(pg, tensor, op, MPI)
        return None
    work = _allreduce_arrays(pg, [tensor], op, "all_reduce", MPI)
    return _run(work, async_op)


def _blocking_allreduce(pg, tensor, op, MPI) -> None:
    """A big synchronous all_reduce: blocking MPI in the helper thread (NOTE [ Big
    synchronous reductions run blocking MPI in a helper thread ] in _mpi)."""
    _mpi.check_op(op, tensor._data.dtype, pg.name())
    mtype, mop = _mpi.native(op, tensor._data.dtype)
    buf, _ = _buffer(tensor)
    timeout = pg._timeout
    work = Work(pg, "all_reduce", [])     # names the operation in the messages
    try:
        _mpi.run_blocking(lambda: pg._comm.Allreduce(MPI.IN_PLACE, _typed(buf, mtype), mop),
                          pg._deadline(timeout), lambda: work._describe(timeout))
    except Exception as e:
        pg._aborted = f"all_reduce failed ({e})"
        raise
    if op == ReduceOp.AVG:
        _mpi.average(buf, pg.size())
    _store(tensor, buf)


def _allreduce_arrays(pg, tensors, op, name, MPI) -> Work:
    n = pg.size()
    requests, finishers = [], []
    for t in tensors:
        dtype = t._data.dtype
        _mpi.check_op(op, dtype, pg.name())
        buf, _ = _buffer(t)
        nat = _mpi.native(op, dtype)
        if nat is not None:
            mtype, mop = nat
            requests.append(pg._comm.Iallreduce(MPI.IN_PLACE, _typed(buf, mtype), mop))

            def finish(_w, t=t, buf=buf):
                if op == ReduceOp.AVG:
                    _mpi.average(buf, n)
                _store(t, buf)
        else:
            gathered = np.empty((n, buf.size), dtype=dtype)
            requests.append(pg._comm.Iallgather([_bytes(buf), MPI.BYTE],
                                                [_bytes(gathered), MPI.BYTE]))

            def finish(_w, t=t, buf=buf, gathered=gathered):
                out = _mpi.numpy_reduce(op, list(gathered))
                if op == ReduceOp.AVG:
                    _mpi.average(out, n)
                buf[...] = out.reshape(buf.shape)
                _store(t, buf)
        finishers.append(finish)

    def finish_all(w):
        for f in finishers:
            f(w)

    return Work(pg, name, requests, finish_all, tensors)


def all_reduce_coalesced_work(tensors, op, pg) -> Work:
    """Start an all-reduce of several tensors in the group ``pg``; returns its Work."""
    _check_tensor_list(tensors, "tensors")
    op = as_red_op(op)
    if any(t.is_complex() for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    MPI = _start(pg, "allreduce", *tensors)
    return _allreduce_arrays(pg, tensors, op, "allreduce", MPI)


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """:func:`all_reduce` of each tensor of a list, as one operation.

    Args:
        tensors (list[Tensor]): the inputs and outputs.
        op, group, async_op: as in :func:`all_reduce`.
    """
    import warnings

    warnings.warn("torch.distributed.all_reduce_coalesced will be deprecated. If you must use "
                  "it, please revisit our documentation later at https://pytorch.org/docs/main"
                  "/distributed.html#collective-functions", FutureWarning, stacklevel=2)
    if _is_tensor(tensors):
        tensors = [tensors]
    _check_tensor_list(tensors, "tensor")
    _same_dtype(*tensors)
    if _not_in_group(group):
        _warn_not_in_group("all_reduce_coalesced")
        return None
    pg = _resolve(group)
    op = as_red_op(op)
    if any(t.is_complex() for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    MPI = _start(pg, "all_reduce_coalesced", *tensors)
    return _run(_allreduce_arrays(pg, tensors, op, "all_reduce_coalesced", MPI), async_op)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None,
           async_op: bool = False, group_dst: int | None = None):
    """Reduce ``tensor`` over the group into ``tensor`` on rank ``dst`` (the other ranks'
    tensors are left as they are).

    Args:
        tensor (Tensor): the input, and the output on ``dst``.
        dst (int): the destination's global rank.
        op (ReduceOp, optional): the reduction (default SUM).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
        group_dst (int, optional): the destination's rank in ``group`` (instead of ``dst``).
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("reduce")
        return None
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "destination")
    op = _reduction(op, tensor, "reduce")
    MPI = _start(pg, "reduce", tensor)
    dtype = tensor._data.dtype
    _mpi.check_op(op, dtype, pg.name())
    n, me = pg.size(), pg.rank()
    buf, _ = _buffer(tensor)
    nat = _mpi.native(op, dtype)
    if nat is not None:
        mtype, mop = nat
        if me == root:
            req = pg._comm.Ireduce(MPI.IN_PLACE, _typed(buf, mtype), mop, root)
        else:
            req = pg._comm.Ireduce(_typed(buf.copy(), mtype), None, mop, root)

        def finish(_w):
            if me == root:
                if op == ReduceOp.AVG:
                    _mpi.average(buf, n)
                _store(tensor, buf)
    else:
        gathered = np.empty((n, buf.size), dtype=dtype) if me == root else None
        req = pg._comm.Igather([_bytes(buf), MPI.BYTE],
                               [_bytes(gathered), MPI.BYTE] if me == root else None, root)

        def finish(_w):
            if me == root:
                out = _mpi.numpy_reduce(op, list(gathered))
                if op == ReduceOp.AVG:
                    _mpi.average(out, n)
                _store(tensor, out)
    return _run(Work(pg, "reduce", [req], finish, [tensor]), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce the i-th tensor of every rank's ``input_list`` into ``output`` on rank i.

    Args:
        output (Tensor): the output (the shape of this rank's entry of ``input_list``).
        input_list (list[Tensor]): one tensor per rank of the group.
        op (ReduceOp, optional): the reduction (default SUM).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
    """
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _same_dtype(output, *input_list)
    if _not_in_group(group):
        _warn_not_in_group("reduce_scatter")
        return None
    pg = _resolve(group)
    n = pg.size()
    if len(input_list) != n:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, but the "
                         f"group has {n} ranks")
    if input_list[pg.rank()].numel() != output.numel():
        raise ValueError(f"reduce_scatter: output has {output.numel()} elements, but this "
                         f"rank's input has {input_list[pg.rank()].numel()}")
    counts = [t.numel() for t in input_list]
    send = np.concatenate([np.ascontiguousarray(t._data).reshape(-1) for t in input_list]) \
        if input_list else np.empty(0, output._data.dtype)
    return _run(_reduce_scatter(pg, output, send, counts, op, "reduce_scatter"), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (the concatenation of one chunk per rank along dim 0) over the group;
    rank i gets the reduced i-th chunk in ``output``.

    Args:
        output (Tensor): the output, of ``input.numel() / world_size`` elements.
        input (Tensor): the input, ``world_size`` times the size of ``output``.
        op (ReduceOp, optional): the reduction (default SUM).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
    """
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _same_dtype(output, input)
    if _not_in_group(group):
        _warn_not_in_group("reduce_scatter_tensor")
        return None
    pg = _resolve(group)
    n = pg.size()
    if input.numel() != n * output.numel():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements, which "
                         f"is not world_size ({n}) times output's {output.numel()}")
    send = np.ascontiguousarray(input._data).reshape(-1)
    return _run(_reduce_scatter(pg, output, send, [output.numel()] * n, op,
                                "reduce_scatter_tensor"), async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated name of :func:`reduce_scatter_tensor`."""
    import warnings

    warnings.warn("`torch.distributed._reduce_scatter_base` is a private function and will "
                  "be deprecated. Please use `torch.distributed.reduce_scatter_tensor` "
                  "instead.", FutureWarning, stacklevel=2)
    return reduce_scatter_tensor(output, input, op, group, async_op)


def _reduce_scatter(pg, output, send: np.ndarray, counts: list[int], op, name) -> Work:
    op = _reduction(op, output, name)
    MPI = _start(pg, name, output, sizes=name != "reduce_scatter")
    dtype = output._data.dtype
    _mpi.check_op(op, dtype, pg.name())
    n, me = pg.size(), pg.rank()
    recv = np.empty(counts[me], dtype=dtype)
    nat = _mpi.native(op, dtype)
    if nat is not None:
        mtype, mop = nat
        req = pg._comm.Ireduce_scatter(_typed(send, mtype), _typed(recv, mtype), counts, mop)

        def finish(_w):
            if op == ReduceOp.AVG:
                _mpi.average(recv, n)
            _store(output, recv)
    else:
        isz = dtype.itemsize
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
        chunks = np.empty((n, counts[me]), dtype=dtype)
        req = pg._comm.Ialltoallv(
            [_bytes(send), [c * isz for c in counts], [d * isz for d in displs], MPI.BYTE],
            [_bytes(chunks), [counts[me] * isz] * n, [i * counts[me] * isz for i in range(n)],
             MPI.BYTE])

        def finish(_w):
            out = _mpi.numpy_reduce(op, list(chunks))
            if op == ReduceOp.AVG:
                _mpi.average(out, n)
            _store(output, out)
    return Work(pg, name, [req], finish, [output])


# ---------------------------------------------------------------------------
# data movement

def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank of the group.

    Args:
        tensor (Tensor): the data on ``src``, the output elsewhere (same shape and dtype).
        src (int): the source's global rank.
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
        group_src (int, optional): the source's rank in ``group`` (instead of ``src``).
    """
    _check_single_tensor(tensor, "tensor")
    if _not_in_group(group):
        _warn_not_in_group("broadcast")
        return None
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "source")
    MPI = _start(pg, "broadcast", tensor)
    buf, _ = _buffer(tensor)
    req = pg._comm.Ibcast([_bytes(buf), MPI.BYTE], root)
    me = pg.rank()

    def finish(_w):
        if me != root:
            _store(tensor, buf)
    return _run(Work(pg, "broadcast", [req], finish, [tensor]), async_op)


def _allgatherv(pg, send: np.ndarray, recv_parts: list[np.ndarray], name: str, MPI):
    """Start an allgather of byte arrays whose sizes may differ per rank; ``recv_parts[i]``
    (contiguous byte arrays) receive rank i's data. Returns (request, the receive buffer,
    the offsets)."""
    counts = [p.size for p in recv_parts]
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    recv = np.empty(sum(counts), dtype=np.uint8)
    req = pg._comm.Iallgatherv([send, MPI.BYTE], [recv, counts, displs, MPI.BYTE])
    return req, recv, displs


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather ``tensor`` of every rank into ``tensor_list`` on every rank.

    Args:
        tensor_list (list[Tensor]): one output per rank (its entry i has rank i's shape).
        tensor (Tensor): this rank's input.
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.

    Example::

        >>> out = [ember.zeros(2) for _ in range(dist.get_world_size())]
        >>> dist.all_gather(out, ember.ones(2) * dist.get_rank())
    """
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    _same_dtype(tensor, *tensor_list)
    if _not_in_group(group):
        _warn_not_in_group("all_gather")
        return None
    pg = _resolve(group)
    n = pg.size()
    if len(tensor_list) != n:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, but the "
                         f"group has {n} ranks")
    if tensor_list[pg.rank()].numel() != tensor.numel():
        raise ValueError(f"all_gather: tensor_list[{pg.rank()}] has "
                         f"{tensor_list[pg.rank()].numel()} elements but tensor has "
                         f"{tensor.numel()}")
    MPI = _start(pg, "all_gather", tensor, sizes=False)
    isz = tensor._data.dtype.itemsize
    parts = [np.empty(t.numel() * isz, np.uint8) for t in tensor_list]
    req, recv, displs = _allgatherv(pg, _input_bytes(tensor), parts, "all_gather", MPI)

    def finish(_w):
        for t, part, d in zip(tensor_list, parts, displs):
            _store(t, recv[d:d + part.size].view(t._data.dtype))
    return _run(Work(pg, "all_gather", [req], finish, tensor_list), async_op)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None,
                         async_op: bool = False):
    """:func:`all_gather` of each tensor of ``input_tensor_list`` into the matching list of
    ``output_tensor_lists``, as one operation."""
    import warnings

    warnings.warn("torch.distributed.all_gather_coalesced will be deprecated. If you must use "
                  "it, please revisit our documentation later at https://pytorch.org/docs/main"
                  "/distributed.html#collective-functions", FutureWarning, stacklevel=2)
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for out in output_tensor_lists:
        _check_tensor_list(out, "output_tensor_lists")
    if _not_in_group(group):
        _warn_not_in_group("all_gather_coalesced")
        return None
    works = [all_gather(out, t, group, async_op=True)
             for out, t in zip(output_tensor_lists, input_tensor_list)]
    pg = _resolve(group)
    requests = [r for w in works for r in w._requests]

    def finish(_w):
        for w in works:
            w._complete()
    return _run(Work(pg, "all_gather_coalesced", requests, finish,
                     [t for out in output_tensor_lists for t in out]), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` of every rank into ``output_tensor``, concatenated along dim
    0 (or stacked: ``output_tensor`` may have shape ``(world_size, *input.shape)``).

    Args:
        output_tensor (Tensor): ``world_size`` times the size of ``input_tensor``.
        input_tensor (Tensor): this rank's input.
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
    """
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    _same_dtype(input_tensor, output_tensor)
    if _not_in_group(group):
        _warn_not_in_group("all_gather_into_tensor")
        return None
    pg = _resolve(group)
    n = pg.size()
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output_tensor has {output_tensor.numel()} "
                         f"elements, which is not world_size ({n}) times input_tensor's "
                         f"{input_tensor.numel()}")
    MPI = _start(pg, "all_gather_into_tensor", input_tensor)
    buf, _ = _buffer(output_tensor)
    req = pg._comm.Iallgather([_input_bytes(input_tensor), MPI.BYTE], [_bytes(buf), MPI.BYTE])

    def finish(_w):
        _store(output_tensor, buf)
    return _run(Work(pg, "all_gather_into_tensor", [req], finish, [output_tensor]), async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """Deprecated name of :func:`all_gather_into_tensor`."""
    import warnings

    warnings.warn("`torch.distributed._all_gather_base` is a private function and will be "
                  "deprecated. Please use `torch.distributed.all_gather_into_tensor` "
                  "instead.", FutureWarning, stacklevel=2)
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def _check_root_list(pg, root, tensors, name, role) -> None:
    """gather's and scatter's rule: the list (one tensor per rank) is given on the
    ``role`` rank (destination/source) and on no other."""
    if pg.rank() == root:
        if not tensors:
            raise ValueError(f"Argument ``{name}_list`` must be specified on {role} rank.")
        if len(tensors) != pg.size():
            raise ValueError(f"{name}: {name}_list has {len(tensors)} tensors, but the group "
                             f"has {pg.size()} ranks")
    elif tensors:
        raise ValueError(f"Argument ``{name}_list`` must NOT be specified on non-{role} "
                         "ranks.")


def gather(tensor, gather_list=None, dst: int | None = None, group=None,
           async_op: bool = False, group_dst: int | None = None):
    """Gather ``tensor`` of every rank into ``gather_list`` on rank ``dst``.

    Args:
        tensor (Tensor): this rank's input.
        gather_list (list[Tensor], optional): on ``dst`` only: one output per rank.
        dst (int, optional): the destination's global rank (default 0).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
        group_dst (int, optional): the destination's rank in ``group``.
    """
    _check_single_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
        _same_dtype(tensor, *gather_list)
    else:
        gather_list = []
    if _not_in_group(group):
        _warn_not_in_group("gather")
        return None
    if dst is None and group_dst is None:
        dst = 0
    pg = _resolve(group)
    root = _group_rank(pg, dst, group_dst, "destination")
    me = pg.rank()
    _check_root_list(pg, root, gather_list, "gather", "destination")
    MPI = _start(pg, "gather", tensor, sizes=False)
    send = _input_bytes(tensor)
    if me == root:
        isz = tensor._data.dtype.itemsize
        counts = [t.numel() * isz for t in gather_list]
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
        recv = np.empty(sum(counts), dtype=np.uint8)
        req = pg._comm.Igatherv([send, MPI.BYTE], [recv, counts, displs, MPI.BYTE], root)
    else:
        req = pg._comm.Igatherv([send, MPI.BYTE], None, root)

    def finish(_w):
        if me == root:
            for t, c, d in zip(gather_list, counts, displs):
                _store(t, recv[d:d + c].view(t._data.dtype))
    return _run(Work(pg, "gather", [req], finish, gather_list), async_op)


def scatter(tensor, scatter_list=None, src: int | None = None, group=None,
            async_op: bool = False, group_src: int | None = None):
    """Send the i-th tensor of ``scatter_list`` on rank ``src`` into ``tensor`` on rank i.

    Args:
        tensor (Tensor): this rank's output.
        scatter_list (list[Tensor], optional): on ``src`` only: one input per rank.
        src (int, optional): the source's global rank (default 0).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
        group_src (int, optional): the source's rank in ``group``.
    """
    _check_single_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
        _same_dtype(tensor, *scatter_list)
    else:
        scatter_list = []
    if _not_in_group(group):
        _warn_not_in_group("scatter")
        return None
    if src is None and group_src is None:
        src = 0
    pg = _resolve(group)
    root = _group_rank(pg, src, group_src, "source")
    me = pg.rank()
    _check_root_list(pg, root, scatter_list, "scatter", "source")
    MPI = _start(pg, "scatter", tensor, sizes=False)
    buf, _ = _buffer(tensor)
    if me == root:
        send = np.concatenate([_input_bytes(t) for t in scatter_list])
        counts = [t.numel() * tensor._data.dtype.itemsize for t in scatter_list]
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
        req = pg._comm.Iscatterv([send, counts, displs, MPI.BYTE], [_bytes(buf), MPI.BYTE],
                                 root)
    else:
        req = pg._comm.Iscatterv(None, [_bytes(buf), MPI.BYTE], root)

    def finish(_w):
        _store(tensor, buf)
    return _run(Work(pg, "scatter", [req], finish, [tensor]), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Send the i-th tensor of ``input_tensor_list`` to rank i, which receives it as the
    j-th tensor of its ``output_tensor_list`` (j: this rank).

    Args:
        output_tensor_list (list[Tensor]): one output per rank.
        input_tensor_list (list[Tensor]): one input per rank.
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
    """
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(*output_tensor_list, *input_tensor_list)
    if _not_in_group(group):
        _warn_not_in_group("all_to_all")
        return None
    pg = _resolve(group)
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: the tensor lists must have one tensor per rank ({n}), "
                         f"got {len(output_tensor_list)} outputs and {len(input_tensor_list)} "
                         "inputs")
    MPI = _start(pg, "all_to_all", *input_tensor_list[:1], sizes=False)
    isz = input_tensor_list[0]._data.dtype.itemsize
    send = np.concatenate([_input_bytes(t) for t in input_tensor_list])
    scounts = [t.numel() * isz for t in input_tensor_list]
    rcounts = [t.numel() * isz for t in output_tensor_list]
    sd = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
    rd = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
    recv = np.empty(sum(rcounts), dtype=np.uint8)
    req = pg._comm.Ialltoallv([send, scounts, sd, MPI.BYTE], [recv, rcounts, rd, MPI.BYTE])

    def finish(_w):
        for t, c, d in zip(output_tensor_list, rcounts, rd):
            _store(t, recv[d:d + c].view(t._data.dtype))
    return _run(Work(pg, "all_to_all", [req], finish, output_tensor_list), async_op)


def _splits(sizes, total_rows: int, n: int, what: str) -> list[int]:
    if sizes is None or len(sizes) == 0:
        if total_rows % n != 0:
            raise ValueError(f"all_to_all_single: the {what} tensor's first dimension "
                             f"({total_rows}) must be divisible by the group size ({n}) when "
                             f"{what}_split_sizes is not given")
        return [total_rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n:
        raise ValueError(f"all_to_all_single: {what}_split_sizes has {len(sizes)} entries, "
                         f"but the group has {n} ranks")
    if sum(sizes) != total_rows or any(s < 0 for s in sizes):
        raise ValueError(f"all_to_all_single: {what}_split_sizes {sizes} must be non-negative "
                         f"and sum to the {what} tensor's first dimension ({total_rows})")
    return sizes


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op: bool = False):
    """Split ``input`` along dim 0, send the i-th piece to rank i, and concatenate what every
    rank sent this one into ``output``.

    Args:
        output (Tensor): the output.
        input (Tensor): the input.
        output_split_sizes (list[int], optional): rows received from each rank (default:
            equal pieces).
        input_split_sizes (list[int], optional): rows sent to each rank (default: equal
            pieces).
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
    """
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _same_dtype(output, input)
    if _not_in_group(group):
        _warn_not_in_group("all_to_all_single")
        return None
    pg = _resolve(group)
    n = pg.size()
    in_rows = input.shape[0] if input.dim() else 1
    out_rows = output.shape[0] if output.dim() else 1
    isplit = _splits(input_split_sizes, in_rows, n, "input")
    osplit = _splits(output_split_sizes, out_rows, n, "output")
    isz = input._data.dtype.itemsize
    in_row = (input.numel() // in_rows if in_rows else 0) * isz
    out_row = (output.numel() // out_rows if out_rows else 0) * isz
    if in_row != out_row and input.numel() and output.numel():
        raise ValueError("all_to_all_single: input and output must have the same size in "
                         "every dimension but the first")
    MPI = _start(pg, "all_to_all_single", input, sizes=False)
    send = _input_bytes(input)
    buf, _ = _buffer(output)
    scounts = [s * in_row for s in isplit]
    rcounts = [s * out_row for s in osplit]
    sd = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
    rd = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
    req = pg._comm.Ialltoallv([send, scounts, sd, MPI.BYTE], [_bytes(buf), rcounts, rd,
                                                                MPI.BYTE])

    def finish(_w):
        _store(output, buf)
    return _run(Work(pg, "all_to_all_single", [req], finish, [output]), async_op)


# ---------------------------------------------------------------------------
# barriers

def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of the group has entered the barrier.

    Args:
        group (ProcessGroup, optional): the group.
        async_op (bool, optional): return a :class:`Work` instead of waiting.
        device_ids (list[int], optional): unused on the CPU.
        timeout (timedelta, optional): how long to wait (default: the group's timeout).
    """
    if _not_in_group(group):
        _warn_not_in_group("barrier")
        return None
    pg = _resolve(group)
    _start(pg, "barrier")
    work = Work(pg, "barrier", [pg._comm.Ibarrier()])
    if async_op:
        return work
    work.wait(pg._timeout_for(timeout))
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    """A barrier that names the ranks that did not arrive: rank 0 waits up to ``timeout``
    for every other rank, then releases them; a missing rank makes rank 0 raise a
    DistBackendError naming it (the others then time out waiting for rank 0).

    Args:
        group (ProcessGroup, optional): the group.
        timeout (timedelta, optional): how long to wait (default: the group's timeout).
        wait_all_ranks (bool): name every missing rank, not only the first.
    """
    from ember.distributed._types import DistBackendError

    if _not_in_group(group):
        _warn_not_in_group("monitored_barrier")
        return None
    pg = _resolve(group)
    MPI = _start(pg, "monitored_barrier")
    timeout = pg._timeout_for(timeout)
    me, n = pg.rank(), pg.size()
    token = np.zeros(1, np.uint8)
    if me != 0:
        Work(pg, "monitored_barrier (sending to rank 0)",
             [pg._comm.Isend([token, MPI.BYTE], 0, _MONITOR_TAG)]).wait(timeout)
        Work(pg, "monitored_barrier (waiting for rank 0)",
             [pg._comm.Irecv([np.zeros(1, np.uint8), MPI.BYTE], 0, _MONITOR_TAG)]).wait(timeout)
        return None
    deadline = pg._deadline(timeout)
    pending = {r: pg._comm.Irecv([np.zeros(1, np.uint8), MPI.BYTE], r, _MONITOR_TAG)
               for r in range(1, n)}
    import time

    while pending:
        for r in [r for r, req in pending.items() if req.Test()]:
            del pending[r]
        _mpi.check_failures()
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(1e-4)
    if pending:
        missing = sorted(pending)
        ms = int(timeout.total_seconds() * 1000)
        if wait_all_ranks:
            msg = f"[Rank 0]: Ranks {', '.join(map(str, missing))} failed to pass " \
                  f"monitoredBarrier in {ms} ms"
        else:
            msg = f"[Rank 0]: Rank {missing[0]} failed to pass monitoredBarrier in {ms} ms"
        for req in pending.values():
            req.Cancel()
        pg._aborted = f"monitored_barrier failed ({msg})"
        _mpi.mark_broken()
        raise DistBackendError(msg)
    Work(pg, "monitored_barrier (releasing the ranks)",
         [pg._comm.Isend([token, MPI.BYTE], r, _MONITOR_TAG) for r in range(1, n)]).wait(timeout)
    return None
