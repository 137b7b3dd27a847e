"""python -m ember.distributed.run: torchrun's environment per rank, the commands of
--dry-run, a failing rank's exit code ending the job, flag spellings; and
ember.distributed.launch."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from _launch import WORKERS, clean_env, require_mpi

from ember.distributed import run as launcher


def _launch(*args: str, module: str = "ember.distributed.run", timeout: float = 90):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                          text=True, timeout=timeout, env=clean_env())
    return proc, time.monotonic() - start


def _envs(out: str) -> list[dict]:
    envs = [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ENV ")]
    return sorted(envs, key=lambda e: int(e["RANK"]))


def test_ranks_get_torchruns_environment():
    require_mpi()
    proc, _ = _launch("--nproc_per_node", "2", "--master-port", "29555", "--rdzv-id", "job7",
                      str(WORKERS / "launched.py"), "--code", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    envs = _envs(proc.stdout)
    assert [e["RANK"] for e in envs] == ["0", "1"]
    for e in envs:
        assert e["WORLD_SIZE"] == "2" and e["LOCAL_WORLD_SIZE"] == "2"
        assert e["LOCAL_RANK"] == e["RANK"] == e["ROLE_RANK"] and e["GROUP_RANK"] == "0"
        assert e["MASTER_ADDR"] == "127.0.0.1" and e["MASTER_PORT"] == "29555"
        assert e["TORCHELASTIC_RUN_ID"] == "job7" and e["OMP_NUM_THREADS"] == "1"
        assert e["argv"] == ["--code", "0"]


def test_failing_rank_ends_the_job_with_its_code():
    require_mpi()
    proc, seconds = _launch("--nproc-per-node", "2", str(WORKERS / "launched.py"),
                            "--fail-rank", "1", "--code", "5")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert seconds < 60


def test_launch_module_passes_local_rank():
    require_mpi()
    proc, _ = _launch("--nproc_per_node", "2", str(WORKERS / "launched.py"),
                      module="ember.distributed.launch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    envs = _envs(proc.stdout)
    assert [e["local_rank_arg"] for e in envs] == [0, 1]


def test_dry_run_prints_mpiexec_and_srun():
    proc, _ = _launch("--nnodes", "2", "--nproc-per-node", "4", "--master_addr", "10.0.0.1",
                      "--dry-run", "train.py", "--lr", "0.1")
    assert proc.returncode == 0, proc.stderr
    mpi_line, srun_line = [line for line in proc.stdout.splitlines()
                           if not line.startswith("#")]
    assert "-n 8" in mpi_line and "ppr:4:node" in mpi_line and "--hostfile" in mpi_line
    assert "MASTER_ADDR=10.0.0.1" in mpi_line
    assert mpi_line.endswith("ember.distributed._bootstrap train.py --lr 0.1")
    assert srun_line.startswith("srun --nodes=2 --ntasks-per-node=4 --ntasks=8")
    assert "train.py --lr 0.1" in srun_line


def test_flags_and_errors():
    args = launcher.parse_args(["--nproc_per_node=3", "--node_rank", "0", "--standalone",
                                "-m", "pkg.train", "--x", "1"])
    plan = launcher.build_commands(args)
    assert plan["world_size"] == 3 and plan["env"]["MASTER_ADDR"] == "127.0.0.1"
    assert plan["mpiexec"][-4:] == ["--ember-module", "pkg.train", "--x", "1"]
    args = launcher.parse_args(["--rdzv-endpoint", "node3:1234", "t.py"])
    env = launcher.build_commands(args)["env"]
    assert env["MASTER_ADDR"] == "node3" and env["MASTER_PORT"] == "1234"
    for bad in (["--max-restarts", "2", "t.py"], ["--nnodes", "1:4", "t.py"],
                ["--nproc-per-node", "0", "t.py"]):
        with pytest.raises(ValueError):
            launcher.build_commands(launcher.parse_args(bad))
    proc, _ = _launch("--nnodes", "2", "t.py")
    assert proc.returncode == 2 and "--hostfile" in proc.stderr


def test_bootstrap_environment_from_launchers():
    from ember.distributed._bootstrap import rank_environment

    env = rank_environment({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
                            "OMPI_COMM_WORLD_LOCAL_RANK": "1",
                            "OMPI_COMM_WORLD_LOCAL_SIZE": "4"})
    assert env["RANK"] == "5" and env["LOCAL_RANK"] == "1" and env["GROUP_RANK"] == "1"
    assert env["LOCAL_WORLD_SIZE"] == "4" and env["GROUP_WORLD_SIZE"] == "2"
    env = rank_environment({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1",
                            "SLURM_NTASKS_PER_NODE": "2(x2)"})
    assert env["RANK"] == "3" and env["LOCAL_WORLD_SIZE"] == "2" and env["GROUP_RANK"] == "1"
    assert rank_environment({})["WORLD_SIZE"] == "1"
