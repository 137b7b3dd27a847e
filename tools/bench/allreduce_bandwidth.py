"""All-reduce bus bandwidth: ember.distributed.all_reduce against raw mpi4py Allreduce.

Run it (2 ranks on one machine, loopback / shared memory)::

    .venv/bin/python tools/bench/allreduce_bandwidth.py            # launches itself
    .venv/bin/python tools/bench/allreduce_bandwidth.py --sizes 4K,1M,64M --repeats 7

Bus bandwidth is NCCL-tests' figure: ``bytes * 2 * (n - 1) / n / time``, which for a ring
all-reduce is the bandwidth each link needs, comparable across rank counts. For every size
it reports the median (and the spread: min-max) over ``--repeats`` timed runs of
``--iters`` back-to-back all-reduces of float32 buffers, for raw mpi4py ``Allreduce`` (in
place, blocking) and for ``ember.distributed.all_reduce``, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in _UNITS:
        return int(float(text[:-1]) * _UNITS[text[-1]])
    return int(text)


def fmt_size(n: int) -> str:
    for unit in ("G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:g} {unit}B"
    return f"{n} B"


def _iters_for(nbytes: int, budget: float) -> int:
    # fewer iterations for big buffers: keeps the whole run near a minute on 2 cores
    return max(2, min(200, int(budget * 2e9 / max(nbytes, 1))))


def bench(sizes: list[int], repeats: int, budget: float) -> None:
    import numpy as np
    from mpi4py import MPI

    import ember
    import ember.distributed as dist

    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    factor = 2 * (n - 1) / n
    rows = []
    for nbytes in sizes:
        count = max(1, nbytes // 4)
        iters = _iters_for(nbytes, budget)
        raw = np.ones(count, np.float32)
        t = ember.ones(count)
        results = {}
        for name in ("mpi4py", "ember"):
            times = []
            for _ in range(repeats + 1):           # the first run warms up
                comm.Barrier()
                start = time.perf_counter()
                for _ in range(iters):
                    if name == "mpi4py":
                        comm.Allreduce(MPI.IN_PLACE, [raw, MPI.FLOAT], MPI.SUM)
                    else:
                        dist.all_reduce(t)
                elapsed = (time.perf_counter() - start) / iters
                times.append(comm.allreduce(elapsed, op=MPI.MAX))   # the slowest rank
            times = times[1:]
            busbw = [count * 4 * factor / s / 1e9 for s in times]
            results[name] = (statistics.median(busbw), min(busbw), max(busbw),
                             statistics.median(times))
        rows.append((nbytes, iters, results))
        if rank == 0:
            r, e = results["mpi4py"], results["ember"]
            print(f"{fmt_size(count * 4):>9} {iters:>5}  "
                  f"{r[0]:7.2f} ({r[1]:.2f}-{r[2]:.2f})  {r[3] * 1e6:10.1f}  "
                  f"{e[0]:7.2f} ({e[1]:.2f}-{e[2]:.2f})  {e[3] * 1e6:10.1f}  "
                  f"{e[0] / r[0]:6.2f}", flush=True)
    dist.destroy_process_group()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="4K,64K,1M,16M,64M,256M",
                   help="buffer sizes, comma-separated (K, M, G suffixes)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per size")
    p.add_argument("--budget", type=float, default=0.5,
                   help="roughly the seconds of communication per run of the biggest sizes")
    p.add_argument("-n", "--nproc", type=int, default=2, help="ranks (when launching)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    if args.worker:
        bench(sizes, args.repeats, args.budget)
        return 0
    from ember.distributed.run import find_mpiexec

    mpiexec = find_mpiexec()
    if mpiexec is None:
        print("mpiexec not found: pip install 'ember[distributed]'", file=sys.stderr)
        return 127
    print(f"all_reduce of float32, {args.nproc} ranks on one machine; bus bandwidth in GB/s: "
          f"median (min-max) of {args.repeats} runs; time per all_reduce in us")
    print(f"{'size':>9} {'iters':>5}  {'mpi4py busbw':>21}  {'time':>10}  "
          f"{'ember busbw':>21}  {'time':>10}  {'ratio':>6}")
    cmd = [mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(args.nproc),
           sys.executable, __file__, "--worker", "--sizes", args.sizes, "--repeats",
           str(args.repeats), "--budget", str(args.budget)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
