"""Process groups: init_process_group, new_group and the rank queries (torch.distributed's
``distributed_c10d``). The collectives are in ``_collectives`` and ``_object_collectives``
and are re-exported here under PyTorch's module path.

# NOTE [ Ranks come from the launcher ]
# ember never opens sockets of its own: the ranks of a job are the processes that mpiexec
# (python -m ember.distributed.run, or Slurm's srun) started, and MPI_COMM_WORLD is the default
# group. init_process_group therefore checks what it is told (rank= and world_size=, or RANK
# and WORLD_SIZE for init_method='env://') against MPI's world and refuses a mismatch, instead
# of rendezvousing over TCP at MASTER_ADDR:MASTER_PORT as gloo does. A group made by new_group
# is an MPI communicator split off the world: every rank of the world calls new_group, as in
# PyTorch.
"""

from __future__ import annotations

import os
import time
import warnings
from datetime import timedelta
from typing import NewType

from ember.distributed import _mpi, _types
from ember.distributed._types import Backend, BackendConfig, DistBackendError, default_pg_timeout

__all__ = [
    "ProcessGroup", "GroupMember", "GroupName", "group", "init_process_group",
    "destroy_process_group",
    "is_initialized", "is_available", "is_mpi_available", "is_gloo_available",
    "is_nccl_available", "is_ucc_available", "is_xccl_available", "is_backend_available",
    "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
    "get_backend_config", "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "get_pg_count", "get_node_local_rank", "get_default_backend_for_device", "new_group",
    "new_subgroups", "new_subgroups_by_enumeration", "split_group", "supports_complex",
]


# ---------------------------------------------------------------------------
# process groups

GroupName = NewType("GroupName", str)

class ProcessGroup:
    """A group of ranks that run collectives together: an MPI communicator.

    Made by :func:`init_process_group` (the default group, ``group.WORLD``) and
    :func:`new_group`; not constructed directly.
    """

    def __init__(self, comm, ranks: list[int], backend: str, timeout: timedelta,
                 name: str, desc: str = "") -> None:
        self._comm = comm
        self._ranks = list(ranks)                 # global ranks, in group-rank order
        self._group_rank = {r: i for i, r in enumerate(self._ranks)}
        self._backend = backend
        self._timeout = timeout
        self._name = name
        self._desc = desc or "undefined"
        self._aborted: str | None = None

    # -- what PyTorch's ProcessGroup answers -----------------------------------------
    def rank(self) -> int:
        """This process's rank in the group."""
        return self._comm.Get_rank()

    def size(self) -> int:
        """The number of ranks in the group."""
        return len(self._ranks)

    def name(self) -> str:
        """The backend's name (``'gloo'`` or ``'mpi'``)."""
        return str(self._backend)

    @property
    def group_name(self) -> str:
        return self._name

    @property
    def group_desc(self) -> str:
        return self._desc

    def set_timeout(self, timeout: timedelta) -> None:
        """The timeout of this group's operations from now on."""
        if not isinstance(timeout, timedelta):
            raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                            f"{type(timeout).__name__}")
        self._timeout = timeout

    def abort(self) -> None:
        """Mark the group broken: its later operations raise DistBackendError."""
        self._aborted = "the process group was aborted"

    def shutdown(self) -> None:
        """Free the group's communicator."""
        self._free()

    def __repr__(self) -> str:
        return f"<ember.distributed.ProcessGroup {self._name} ranks={self._ranks}>"

    # -- PyTorch's methods of a group: one or a list of tensors, ranks of the group,
    # -- an options struct or the operator itself; each returns a Work ---------------
    def allreduce(self, tensors, opts=None):
        """All-reduce ``tensors`` (a tensor or a list) in this group; ``opts`` is an
        AllreduceOptions or a ReduceOp. Returns a Work."""
        from ember.distributed._collectives import all_reduce_coalesced_work

        op = getattr(opts, "reduceOp", opts if opts is not None else _types.ReduceOp.SUM)
        return all_reduce_coalesced_work(_as_list(tensors), op, self)

    def broadcast(self, tensors, opts=None):
        """Broadcast ``tensors`` from the group rank ``opts`` (an int or BroadcastOptions'
        rootRank). Returns a Work."""
        from ember.distributed._collectives import broadcast

        root = getattr(opts, "rootRank", opts if opts is not None else 0)
        works = [broadcast(t, group=self, group_src=root, async_op=True)
                 for t in _as_list(tensors)]
        return _joined(self, "broadcast", works)

    def barrier(self, opts=None):
        """A barrier of this group. Returns a Work."""
        from ember.distributed._collectives import barrier

        return barrier(group=self, async_op=True)

    def allgather(self, output_tensors, input_tensors, opts=None):
        """All-gather: ``output_tensors[i]`` (a list per input) receives every rank's
        ``input_tensors[i]``. Returns a Work."""
        from ember.distributed._collectives import all_gather

        if not isinstance(input_tensors, list):
            output_tensors, input_tensors = [output_tensors], [input_tensors]
        works = [all_gather(out, t, group=self, async_op=True)
                 for out, t in zip(output_tensors, input_tensors)]
        return _joined(self, "allgather", works)

    def send(self, tensors, dstRank: int, tag: int = 0):
        """Send ``tensors`` to the group rank ``dstRank``. Returns a Work."""
        from ember.distributed._collectives import isend

        return _joined(self, "send", [isend(t, group=self, tag=tag, group_dst=dstRank)
                                      for t in _as_list(tensors)])

    def recv(self, tensors, srcRank: int, tag: int = 0):
        """Receive into ``tensors`` from the group rank ``srcRank``. Returns a Work."""
        from ember.distributed._collectives import irecv

        return _joined(self, "recv", [irecv(t, group=self, tag=tag, group_src=srcRank)
                                      for t in _as_list(tensors)])


    # -- for the collectives -----------------------------------------------------------
    def _deadline(self, timeout=None) -> float | None:
        t = self._timeout if timeout is None else timeout
        if isinstance(t, (int, float)):
            t = timedelta(seconds=t)
        if t is None or t.total_seconds() < 0:
            t = self._timeout
        return time.monotonic() + t.total_seconds()

    def _timeout_for(self, timeout=None) -> timedelta:
        if timeout is None or (isinstance(timeout, timedelta) and timeout.total_seconds() < 0):
            return self._timeout
        return timeout if isinstance(timeout, timedelta) else timedelta(seconds=timeout)

    def _check_usable(self) -> None:
        if self._aborted is not None:
            raise DistBackendError(f"ember.distributed: {self._aborted}; this group can run "
                                   "no more operations (destroy_process_group and start again)")
        if self._comm is None:
            raise ValueError("Invalid process group specified (it was destroyed)")

    def _free(self) -> None:
        comm, self._comm = self._comm, None
        if comm is not None:
            try:
                comm.Free()
            except Exception:  # noqa: BLE001 - a broken communicator is dropped anyway
                pass


def _as_list(tensors) -> list:
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _joined(pg, name: str, works: list):
    """One Work for several: it completes when all of them have."""
    from ember.distributed._work import Work

    if len(works) == 1:
        return works[0]
    requests = [r for w in works for r in w._requests]

    def finish(_w):
        for w in works:
            w._complete()
    return Work(pg, name, requests, finish, [t for w in works for t in w._outputs])


class _WorldMeta(type):
    """``GroupMember.WORLD`` and ``group.WORLD`` are the default group (None before
    init_process_group)."""

    @property
    def WORLD(cls) -> ProcessGroup | None:
        return _world.default_pg

    @WORLD.setter
    def WORLD(cls, pg) -> None:
        _world.default_pg = pg


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD``: the default group; ``GroupMember.NON_GROUP_MEMBER``: what
    :func:`new_group` returns on ranks outside the new group."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default group (as ``GroupMember.WORLD``)."""


class _World:
    def __init__(self) -> None:
        self.default_pg: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []   # every group made, the default one first
        self.group_count = 0
        self.init_method: str | None = None


_world = _World()


def _default_group() -> ProcessGroup:
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _world.default_pg


def _resolve(group) -> ProcessGroup:
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    if isinstance(group, ProcessGroup):
        return group
    raise TypeError(f"group must be a ProcessGroup (from new_group) or None, got "
                    f"{type(group).__name__}")


def _not_in_group(group) -> bool:
    return group is not None and not isinstance(group, ProcessGroup) and \
        group == GroupMember.NON_GROUP_MEMBER


def _warn_not_in_group(op_name: str) -> None:
    global_rank = -1 if _world.default_pg is None else _world.default_pg.rank()
    warnings.warn(f"Running {op_name} on global rank {global_rank} which does not belong to "
                  "the given group.", stacklevel=3)


# ---------------------------------------------------------------------------
# availability

def is_available() -> bool:
    """True if ember.distributed can run: mpi4py (and an MPI library) is installed."""
    return _mpi.mpi4py_available()


def is_mpi_available() -> bool:
    """True if the MPI backend is available (mpi4py is installed)."""
    return _mpi.mpi4py_available()


def is_gloo_available() -> bool:
    """True if the ``'gloo'`` backend name can be used: ember runs it on MPI, so this is
    :func:`is_mpi_available`."""
    return _mpi.mpi4py_available()


def is_nccl_available() -> bool:
    """False: ember has no NCCL backend yet."""
    return False


def is_ucc_available() -> bool:
    """False: ember has no UCC backend."""
    return False


def is_xccl_available() -> bool:
    """False: ember has no XCCL (Intel GPU) backend."""
    return False


def is_backend_available(backend: str) -> bool:
    """True if ``backend`` (a name like ``'gloo'``) can be used."""
    name = Backend(backend)
    return {"mpi": is_mpi_available, "gloo": is_gloo_available}.get(name, lambda: False)()


def is_torchelastic_launched() -> bool:
    """True if this process was started by a torchrun-style launcher (TORCHELASTIC_RUN_ID is
    set; ``python -m ember.distributed.run`` sets it)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """True if the default process group has been initialized."""
    return _world.default_pg is not None


def get_default_backend_for_device(device) -> str:
    """The backend PyTorch uses for a device type: ``'gloo'`` for ``'cpu'``, ``'nccl'`` for
    ``'cuda'``."""
    dev = str(getattr(device, "type", device)).split(":")[0]
    if dev not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {device}")
    return Backend.default_device_backend_map[dev]


# ---------------------------------------------------------------------------
# init / destroy

def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} must be an integer, got "
                         f"{value!r}") from None


def _check_backend(backend) -> str:
    if backend is None:
        return Backend.GLOO
    if not isinstance(backend, str):
        raise ValueError("Backend constructor parameter must be string-ish")
    config = BackendConfig(backend)            # unknown names raise as in PyTorch
    devices = config.get_device_backend_map()
    cpu = devices.get("cpu")
    if cpu in (Backend.MPI, Backend.GLOO):
        return Backend(backend) if "," not in backend and ":" not in backend else str(config)
    if set(devices.values()) == {Backend.NCCL}:
        from ember import cuda

        if not cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
        raise RuntimeError("Distributed package doesn't have NCCL built in: ember has no NCCL "
                           "backend yet; use backend='mpi' (or 'gloo') with CPU tensors")
    raise RuntimeError(f"Distributed package doesn't have {cpu or backend} built in: ember "
                       "runs 'mpi' and 'gloo' (both on MPI) for CPU tensors")


def _parse_init_method(init_method: str, rank: int, world_size: int) -> tuple[int, int]:
    if init_method.startswith("env://"):
        env_rank, env_size = _env_int("RANK"), _env_int("WORLD_SIZE")
        if rank < 0 and env_rank is not None:
            rank = env_rank
        if world_size < 0 and env_size is not None:
            world_size = env_size
        port = os.environ.get("MASTER_PORT")
        if port is not None and port != "":
            _env_int("MASTER_PORT")
    elif init_method.startswith(("tcp://", "file://")):
        from urllib.parse import parse_qs, urlparse

        query = parse_qs(urlparse(init_method).query)
        if rank < 0 and "rank" in query:
            rank = int(query["rank"][0])
        if world_size < 0 and "world_size" in query:
            world_size = int(query["world_size"][0])
        if rank < 0:
            raise ValueError("rank parameter missing")
        if world_size < 0:
            raise ValueError("world size parameter missing")
    else:
        raise RuntimeError(f"No rendezvous handler for {init_method.split('://')[0]}://")
    return rank, world_size


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None,
                       _ranks: list[int] | None = None) -> None:
    """Initialize the default process group: the ranks that mpiexec started.

    Args:
        backend (str, optional): ``'mpi'`` or ``'gloo'`` (the CPU backend name PyTorch
            programs use; ember runs it on MPI too); None means ``'gloo'``. ``'nccl'`` needs
            CUDA GPUs and is not available in ember yet.
        init_method (str, optional): ``'env://'`` (the default: RANK and WORLD_SIZE from the
            environment, else from the MPI launcher), or ``'tcp://...'`` / ``'file://...'``
            with ``rank`` and ``world_size`` given. The ranks always meet through MPI; what
            is given is checked against MPI's world.
        timeout (timedelta, optional): how long every operation of the group may wait
            before it raises DistBackendError (default 30 minutes).
        world_size (int, optional): the number of ranks, checked against MPI's.
        rank (int, optional): this process's rank, checked against MPI's.
        store (Store, optional): a key-value store (kept for PyTorch programs; MPI does the
            rendezvous); needs ``rank`` and ``world_size`` and excludes ``init_method``.
        group_name (str, optional): ignored, as in PyTorch.
        pg_options: backend options; none are used by MPI.
        device_id: the device this process uses; CPU only here.

    Example::

        >>> # python -m ember.distributed.run --nproc-per-node 2 train.py
        >>> dist.init_process_group("gloo")
        >>> dist.get_rank(), dist.get_world_size()
        (0, 2)
    """
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None:
        if not world_size > 0:
            raise AssertionError("world_size must be positive if using store")
        if not rank >= 0:
            raise AssertionError("rank must be non-negative if using store")
    elif init_method is None:
        init_method = "env://"
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    name = _check_backend(backend)
    if store is None:
        rank, world_size = _parse_init_method(init_method, rank, world_size)
    MPI = _mpi.load_mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    launch = " (start the ranks with python -m ember.distributed.run --nproc-per-node N, " \
        "or mpiexec -n N: ember's ranks are MPI's)"
    if world_size >= 0 and world_size != mpi_size:
        raise ValueError(f"world_size is {world_size} but MPI started {mpi_size} "
                         f"process{'es' if mpi_size != 1 else ''}{launch}")
    if rank >= 0 and rank != mpi_rank:
        raise ValueError(f"rank is {rank} but this process is rank {mpi_rank} of MPI's "
                         f"world{launch}")
    if _ranks is not None and list(_ranks) != list(range(mpi_size)):
        raise ValueError(f"_ranks={list(_ranks)}: the default group of ember's MPI backend is "
                         "every rank MPI started; make smaller groups with new_group")
    comm = world.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _mpi.start_notices(world, mpi_rank)
    pg = ProcessGroup(comm, list(range(mpi_size)), name, timeout, "0", "default_pg")
    _world.default_pg = pg
    _world.groups = [pg]
    _world.group_count = 1
    _world.init_method = init_method


def destroy_process_group(group=None) -> None:
    """Destroy a process group; None (the default) destroys every group and the default one,
    after which :func:`init_process_group` may be called again.

    Args:
        group (ProcessGroup, optional): the group to destroy.
    """
    if group is None or group is GroupMember.WORLD:
        if _world.default_pg is None:
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        for pg in _world.groups:
            pg._free()
        _world.groups = []
        _world.default_pg = None
        _world.group_count = 0
        _mpi.stop_notices()
        return
    if _not_in_group(group):
        return
    pg = _resolve(group)
    if pg not in _world.groups:
        raise ValueError("Invalid process group specified")
    pg._free()
    _world.groups.remove(pg)


# ---------------------------------------------------------------------------
# queries

def get_rank(group=None) -> int:
    """The rank of this process in ``group`` (default: the default group); -1 if it is not a
    member.

    Args:
        group (ProcessGroup, optional): the group to work on.
    """
    if _not_in_group(group):
        return -1
    return _resolve(group).rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (default: the default group); -1 if this process is
    not a member.

    Args:
        group (ProcessGroup, optional): the group to work on.
    """
    if _not_in_group(group):
        return -1
    return _resolve(group).size()


def get_backend(group=None) -> Backend:
    """The backend name of ``group`` (``'gloo'`` or ``'mpi'``, as given to
    init_process_group).

    Args:
        group (ProcessGroup, optional): the group to work on.
    """
    if _not_in_group(group):
        raise ValueError("Invalid process group specified")
    return Backend(_resolve(group)._backend) if ":" not in _resolve(group)._backend \
        else _resolve(group)._backend


def get_backend_config(group=None) -> str:
    """The backend of each device type of ``group``, as text (``'cpu:gloo'``)."""
    if _not_in_group(group):
        raise ValueError("Invalid process group specified")
    return str(BackendConfig(_resolve(group)._backend))


def _registered(group) -> ProcessGroup:
    pg = _resolve(group)
    if pg not in _world.groups:
        raise ValueError(f"Group {pg} is not registered, please create group with "
                         "torch.distributed.new_group API")
    return pg


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of the process with rank ``global_rank`` in the default group.

    Args:
        group (ProcessGroup): the group.
        global_rank (int): a rank of the default group.
    """
    if group is GroupMember.WORLD:
        return global_rank
    pg = _registered(group)
    if global_rank not in pg._group_rank:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._group_rank[global_rank]


def get_global_rank(group, group_rank: int) -> int:
    """The rank in the default group of the process with rank ``group_rank`` in ``group``.

    Args:
        group (ProcessGroup): the group.
        group_rank (int): a rank of ``group``.
    """
    if group is GroupMember.WORLD:
        return group_rank
    pg = _registered(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(_registered(group)._ranks)


def get_pg_count() -> int:
    """The number of process groups made so far (the default one included)."""
    return _world.group_count


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine: LOCAL_RANK (set by the launcher), else
    ``fallback_rank``.

    Args:
        fallback_rank (int, optional): returned when LOCAL_RANK is not set.
    """
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def supports_complex(reduceOp) -> bool:
    """True if complex tensors can be reduced with ``reduceOp`` (SUM, AVG, PREMUL_SUM)."""
    from ember.distributed._types import ReduceOp, as_red_op

    return as_red_op(reduceOp) not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT,
                                       ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


# ---------------------------------------------------------------------------
# new groups

def _guarded_world_barrier(what: str, timeout: timedelta) -> None:
    """Wait (with a deadline) until every rank of the world arrives, so that the blocking
    communicator split after it cannot hang."""
    pg = _default_group()
    pg._check_usable()
    req = pg._comm.Ibarrier()
    _mpi.wait([req], time.monotonic() + timeout.total_seconds(),
              lambda: f"{what} (every rank of the default group must call it) on rank "
                      f"{pg.rank()}, after {timeout}")


def _split(ranks_of_groups: list[list[int]], timeout, backend, desc) -> list:
    """Split the world into the given groups (disjoint lists of global ranks); returns, per
    list, this rank's ProcessGroup or NON_GROUP_MEMBER."""
    pg = _default_group()
    timeout = pg._timeout if timeout is None else timeout
    _guarded_world_barrier("new_group", timeout)
    me = pg.rank()
    color, key = _mpi.load_mpi().UNDEFINED, 0
    for i, ranks in enumerate(ranks_of_groups):
        if me in ranks:
            color, key = i, ranks.index(me)
    comm = pg._comm.Split(color, key)
    out = []
    for i, ranks in enumerate(ranks_of_groups):
        _world.group_count += 1
        if i == color:
            new = ProcessGroup(comm, ranks, str(backend or pg._backend), timeout,
                               str(_world.group_count - 1), desc or "undefined")
            _world.groups.append(new)
            out.append(new)
        else:
            out.append(GroupMember.NON_GROUP_MEMBER)
    return out


def _create_local(ranks: list[int], timeout, backend, desc):
    """A group made by its members only (MPI_Comm_create_group): the other ranks do not
    call new_group."""
    pg = _default_group()
    pg._check_usable()
    _world.group_count += 1
    me = pg.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    mpi_group = pg._comm.Get_group().Incl(ranks)
    comm = pg._comm.Create_group(mpi_group, tag=_world.group_count % 32000)
    mpi_group.Free()
    new = ProcessGroup(comm, ranks, str(backend or pg._backend),
                       pg._timeout if timeout is None else timeout,
                       str(_world.group_count - 1), desc or "undefined")
    _world.groups.append(new)
    return new


def _check_ranks(ranks, world_size: int, sort: bool) -> list[int]:
    ranks = list(ranks)
    for r in ranks:
        if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < world_size:
            raise ValueError(f"Invalid rank {r!r}: the ranks of a new group must be ranks of "
                             f"the default group (0 to {world_size - 1})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks {ranks} contain duplicates")
    return sorted(ranks) if sort else ranks


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None,
              sort_ranks: bool = True):
    """Create a group of some ranks of the default group. Every rank of the default group
    must call it, with the same ``ranks``.

    Args:
        ranks (list[int], optional): the members' global ranks; None: all ranks.
        timeout (timedelta, optional): the new group's timeout (default: the default
            group's).
        backend (str, optional): the new group's backend name (default: the default
            group's); ``'mpi'`` or ``'gloo'``.
        pg_options: backend options; unused.
        use_local_synchronization (bool): only the members call new_group (the others
            need not); otherwise every rank of the default group calls it.
        group_desc (str, optional): a description of the group.
        device_id: unused (CPU).
        sort_ranks (bool): order the group's ranks by global rank (default True).

    Returns:
        The new ProcessGroup on its members; ``GroupMember.NON_GROUP_MEMBER`` elsewhere.

    Example::

        >>> evens = dist.new_group([0, 2])
        >>> if dist.get_rank() in (0, 2):
        ...     dist.all_reduce(t, group=evens)
    """
    pg = _default_group()
    if backend is not None:
        _check_backend(backend)
    ranks = list(range(pg.size())) if ranks is None or len(ranks) == 0 else \
        _check_ranks(ranks, pg.size(), sort_ranks)
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    if use_local_synchronization:
        return _create_local(ranks, timeout, backend, group_desc)
    return _split([ranks], timeout, backend, group_desc)[0]


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split the default group (or ``group``) into consecutive subgroups of ``group_size``
    ranks each.

    Args:
        group_size (int): ranks per subgroup; must divide the world size (required on CPU).
        group (ProcessGroup, optional): the group to split (default: the default group).
        timeout, backend, pg_options, group_desc: as in :func:`new_group`.

    Returns:
        ``(this rank's subgroup, [every subgroup])``; the list holds NON_GROUP_MEMBER for
        subgroups this rank is not in.
    """
    if group_size is None:
        from ember import cuda

        if not cuda.is_available():
            raise ValueError("Default group size only takes effect when CUDA is available."
                             "If your subgroup using a backend that does not depend on CUDA,"
                             "please specify the required `group_size`.")
        group_size = cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    ranks = get_process_group_ranks(group) if group is not None else \
        list(range(_default_group().size()))
    if group_size > len(ranks):
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({len(ranks)})")
    if len(ranks) % group_size != 0:
        raise ValueError(f"The world size ({len(ranks)}) must be divisible by 'group_size="
                         f"{group_size}'")
    lists = [ranks[i:i + group_size] for i in range(0, len(ranks), group_size)]
    return _subgroups(lists, timeout, backend, group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """Create subgroups from a list of rank lists (disjoint; every rank of the default group
    calls it).

    Args:
        ranks_per_subgroup_list (list[list[int]]): the members of each subgroup.
        timeout, backend, pg_options, group_desc: as in :func:`new_group`.

    Returns:
        ``(this rank's subgroup or None, [every subgroup])``.
    """
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    size = _default_group().size()
    lists = [_check_ranks(r, size, True) for r in ranks_per_subgroup_list]
    seen: dict[int, int] = {}
    for i, ranks in enumerate(lists):
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup "
                                 f"{lists[seen[r]]} and {ranks}")
            seen[r] = i
    return _subgroups(lists, timeout, backend, group_desc)


def _subgroups(lists, timeout, backend, group_desc):
    groups = _split(lists, timeout, backend, group_desc)
    mine = next((g for g in groups if isinstance(g, ProcessGroup)), None)
    return mine, groups


def split_group(parent_pg=None, split_ranks: list | None = None, timeout=None,
                pg_options=None, group_desc: str | None = None, backend=None):
    """Split ``parent_pg`` (default: the default group) into the disjoint groups
    ``split_ranks`` (lists of global ranks); every rank of the parent calls it.

    Returns:
        This rank's new group, or None if it is in none of ``split_ranks``.
    """
    if split_ranks is None or len(split_ranks) == 0:
        raise ValueError("split_ranks cannot be None or empty")
    parent = _resolve(parent_pg)
    if parent is not _world.default_pg:
        raise ValueError("ember's split_group splits the default group")
    mine, _ = new_subgroups_by_enumeration(split_ranks, timeout, backend, pg_options,
                                           group_desc)
    return mine
