"""The value types of ember.distributed: errors, backend names, reduction operators, options.

These hold no MPI state; ``_mpi`` and ``distributed_c10d`` use them.
"""

from __future__ import annotations

import enum
import warnings
from datetime import timedelta

__all__ = [
    "DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError",
    "Backend", "BackendConfig", "ReduceOp", "reduce_op", "DebugLevel",
    "AllreduceOptions", "AllreduceCoalescedOptions", "AllToAllOptions", "BarrierOptions",
    "BroadcastOptions", "GatherOptions", "ReduceOptions", "ReduceScatterOptions",
    "ScatterOptions", "default_pg_timeout",
]

# PyTorch's default for the CPU backends (gloo, mpi): 30 minutes
default_pg_timeout = timedelta(minutes=30)


# ---------------------------------------------------------------------------
# errors (the same hierarchy as torch.distributed: all are RuntimeErrors)

class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a backend error occurs in distributed: a collective failed or timed out,
    or another rank reported a failure."""


class DistNetworkError(DistError):
    """Raised when a network error occurs in distributed."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class QueueEmptyError(DistStoreError):
    """Raised when a store queue is empty."""


# ---------------------------------------------------------------------------
# backends

class Backend(str):
    """An enum-like class of backend names: ``Backend("GLOO")`` returns ``"gloo"``.

    ember runs the CPU backends on MPI (Open MPI through mpi4py): ``"mpi"`` and ``"gloo"``
    (the name PyTorch programs use for the CPU) both start the MPI backend. ``"nccl"`` needs
    CUDA GPUs.

    Args:
        name (str): a backend name, case-insensitive.

    Example::

        >>> Backend("GLOO") == Backend.GLOO == "gloo"
        True
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"

    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}
    backend_capability = {GLOO: ["cpu"], NCCL: ["cuda"], XCCL: ["xpu"], UCC: ["cpu", "cuda"],
                          MPI: ["cpu"], FAKE: ["cpu", "cuda", "hpu", "xpu"]}
    backend_type_map = {UNDEFINED: 0, GLOO: 1, NCCL: 2, UCC: 3, MPI: 4, XCCL: 5, FAKE: 6}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return value

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None) -> None:
        """Third-party backends plug into PyTorch's C++ core; ember has no such core, so this
        raises."""
        raise RuntimeError(
            f"ember.distributed cannot register the backend {name!r}: its backends are MPI "
            "('mpi', 'gloo') and NCCL ('nccl'); there is no C++ plugin interface")


class BackendConfig:
    """The backend of each device type of a process group (``"cpu:gloo,cuda:nccl"``).

    Args:
        backend (str): one backend name for every device, or ``"<device>:<backend>,..."``.
    """

    def __init__(self, backend) -> None:
        self.device_backend_map: dict[str, str] = {}
        backend = str(backend)
        if backend == Backend.UNDEFINED:
            self.device_backend_map = {"cpu": Backend.GLOO, "cuda": Backend.NCCL}
        elif ":" not in backend and "," not in backend:
            name = Backend(backend)
            if name not in Backend.backend_type_map:
                raise AssertionError(f"Unknown backend type {backend}")
            devices = Backend.backend_capability.get(name, ["cpu", "cuda"])
            self.device_backend_map = {d: name for d in devices}
        else:
            for pair in backend.lower().split(","):
                device, sep, name = pair.partition(":")
                if not sep or not device or not name:
                    raise ValueError(
                        f"Invalid backend string {backend!r}: expected "
                        "'<device_type>:<backend_name>,<device_type>:<backend_name>'")
                if name not in Backend.backend_type_map:
                    raise AssertionError(f"Unknown backend type {name}")
                self.device_backend_map[device.strip()] = Backend(name.strip())

    def get_device_backend_map(self) -> dict[str, str]:
        """The backend of each device type."""
        return dict(self.device_backend_map)

    def __repr__(self) -> str:
        return ",".join(f"{d}:{b}" for d, b in self.device_backend_map.items())


# ---------------------------------------------------------------------------
# reduction operators

class _RedOpType:
    """A reduction operator (``ReduceOp.SUM``, ...): a named constant, like PyTorch's."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: int) -> None:
        self.name = name
        self.value = value

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __eq__(self, other) -> bool:
        if isinstance(other, _RedOpType):
            return other.value == self.value
        if isinstance(other, ReduceOp):
            return other.op.value == self.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __reduce__(self):
        return (_red_op, (self.value,))


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"
_RED_OPS = [_RedOpType(n, v) for v, n in enumerate(
    ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM", "UNUSED"])]
for _op in _RED_OPS:
    setattr(_RedOpType, _op.name, _op)
del _op


def _red_op(value: int) -> _RedOpType:
    return _RED_OPS[value]


class ReduceOp:
    """The reduction operators of :func:`all_reduce`, :func:`reduce` and the reduce-scatters:
    ``SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR`` (and
    ``PREMUL_SUM``, which only NCCL runs).

    ``BAND``, ``BOR`` and ``BXOR`` take integer and bool tensors; ``AVG`` divides the sum by
    the group size (integers: truncated); on bool tensors ``SUM`` and ``MAX`` are a logical
    or, ``PRODUCT`` and ``MIN`` a logical and; complex tensors take ``SUM`` and ``AVG``.

    Example::

        >>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
    """

    RedOpType = _RedOpType
    SUM = _RedOpType.SUM
    AVG = _RedOpType.AVG
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX
    BAND = _RedOpType.BAND
    BOR = _RedOpType.BOR
    BXOR = _RedOpType.BXOR
    PREMUL_SUM = _RedOpType.PREMUL_SUM
    UNUSED = _RedOpType.UNUSED

    def __init__(self, op=_RedOpType.SUM) -> None:
        self.op = as_red_op(op)

    def __eq__(self, other) -> bool:
        try:
            return self.op == as_red_op(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.op)

    def __int__(self) -> int:
        return self.op.value

    def __repr__(self) -> str:
        return f"ReduceOp({self.op!r})"


def as_red_op(op) -> _RedOpType:
    """``op`` (a RedOpType, a ReduceOp, or the deprecated reduce_op member) as a RedOpType."""
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, _RedOpType):
        return op
    if isinstance(op, int) and not isinstance(op, bool) and 0 <= op < len(_RED_OPS):
        return _RED_OPS[op]
    raise TypeError(f"op must be a torch.distributed.ReduceOp, got {op!r}")


class _ReduceOpDeprecated:
    """The deprecated ``reduce_op`` (use :class:`ReduceOp`): its attributes are ReduceOp's."""

    def __getattr__(self, name):
        if name in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
            warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                          "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
            return getattr(ReduceOp, name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return "<reduce_op (deprecated: use ReduceOp)>"


reduce_op = _ReduceOpDeprecated()


class DebugLevel(enum.IntEnum):
    """How much ember.distributed logs (``TORCH_DISTRIBUTED_DEBUG``): OFF, INFO, DETAIL."""

    OFF = 0
    INFO = 1
    DETAIL = 2


# ---------------------------------------------------------------------------
# the options of ProcessGroup's methods (the fields PyTorch's option structs have)

class _Options:
    _fields: dict = {}

    def __init__(self) -> None:
        for k, v in self._fields.items():
            setattr(self, k, v)
        self.timeout = timedelta(milliseconds=-1)   # -1: the group's timeout

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in [*self._fields, "timeout"])
        return f"{type(self).__name__}({items})"


class AllreduceOptions(_Options):
    """Options of ``ProcessGroup.allreduce``: ``reduceOp``, ``timeout``."""

    _fields = {"reduceOp": ReduceOp.SUM}


class AllreduceCoalescedOptions(AllreduceOptions):
    """Options of ``ProcessGroup.allreduce_coalesced``: ``reduceOp``, ``timeout``."""


class ReduceOptions(_Options):
    """Options of ``ProcessGroup.reduce``: ``reduceOp``, ``rootRank``, ``rootTensor``,
    ``timeout``."""

    _fields = {"reduceOp": ReduceOp.SUM, "rootRank": 0, "rootTensor": 0}


class BroadcastOptions(_Options):
    """Options of ``ProcessGroup.broadcast``: ``rootRank``, ``rootTensor``, ``timeout``."""

    _fields = {"rootRank": 0, "rootTensor": 0}


class GatherOptions(_Options):
    """Options of ``ProcessGroup.gather``: ``rootRank``, ``timeout``."""

    _fields = {"rootRank": 0}


class ScatterOptions(_Options):
    """Options of ``ProcessGroup.scatter``: ``rootRank``, ``timeout``."""

    _fields = {"rootRank": 0}


class ReduceScatterOptions(_Options):
    """Options of ``ProcessGroup.reduce_scatter``: ``reduceOp``, ``timeout``."""

    _fields = {"reduceOp": ReduceOp.SUM}


class AllToAllOptions(_Options):
    """Options of ``ProcessGroup.alltoall``: ``timeout``."""


class BarrierOptions(_Options):
    """Options of ``ProcessGroup.barrier``: ``device_ids``, ``timeout``."""

    _fields = {"device_ids": []}
