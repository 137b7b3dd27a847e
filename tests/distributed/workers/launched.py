"""Started by python -m ember.distributed.run: prints torchrun's variables as JSON, checks
them against the process group, and fails on request (``--fail-rank R --code C``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

import ember.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--fail-rank", type=int, default=-1)
parser.add_argument("--code", type=int, default=0)
parser.add_argument("--local-rank", type=int, default=None)
args = parser.parse_args()
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
         "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
         "OMP_NUM_THREADS"]
env = {k: os.environ.get(k) for k in names}
dist.init_process_group("gloo")       # env://: RANK and WORLD_SIZE must agree with MPI
assert dist.get_rank() == int(env["RANK"]) and dist.get_world_size() == int(env["WORLD_SIZE"])
assert dist.is_torchelastic_launched()
assert dist.get_node_local_rank() == int(env["LOCAL_RANK"])
env["argv"] = sys.argv[1:]
env["local_rank_arg"] = args.local_rank
print("ENV " + json.dumps(env), flush=True)
dist.barrier()
if dist.get_rank() == args.fail_rank:
    sys.exit(args.code)
dist.barrier()       # the other ranks wait here until the launcher ends them
dist.destroy_process_group()
