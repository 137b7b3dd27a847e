"""A rank that stops taking part, raises or dies (run under mpiexec -n 2): the other rank
must fail with a clear error, fast. ``python failures.py stall|raise|die``; rank 0 prints
``CAUGHT after <seconds> s: <error>``."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=60))
rank = dist.get_rank()
pair = dist.new_group([0, 1], timeout=timedelta(seconds=3))
dist.barrier()

if mode == "stall":            # rank 1 stops taking part
    if rank == 1:
        time.sleep(60)
        sys.exit(0)
    # a big all_reduce (blocking MPI in the helper thread) on a group with a 3 s timeout
    start = time.monotonic()
    try:
        dist.all_reduce(ember.ones(1 << 20), group=pair)
    except dist.DistBackendError as e:
        print(f"CAUGHT after {time.monotonic() - start:.1f} s: {e}", flush=True)
    else:
        raise AssertionError("all_reduce returned although rank 1 is missing")
    try:
        dist.all_reduce(ember.ones(4), group=pair)
    except dist.DistBackendError as e:
        print(f"BROKEN {e}", flush=True)
    start = time.monotonic()
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=2))
    except dist.DistBackendError as e:
        print(f"MONITORED after {time.monotonic() - start:.1f} s: {e}", flush=True)
    else:
        raise AssertionError("monitored_barrier passed without rank 1")
    sys.exit(3)
elif mode == "raise":          # rank 1 raises before the collective
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("boom on rank 1")
elif mode == "die":            # rank 1 dies without a word
    if rank == 1:
        time.sleep(0.5)
        os._exit(7)

start = time.monotonic()
try:
    # big in "raise" mode: the helper-thread path hears the failure notice too
    dist.all_reduce(ember.ones(1 << 20 if mode == "raise" else 4))
except dist.DistBackendError as e:
    print(f"CAUGHT after {time.monotonic() - start:.1f} s: {e}", flush=True)
    sys.exit(3)
raise AssertionError("all_reduce returned although rank 1 is missing")
