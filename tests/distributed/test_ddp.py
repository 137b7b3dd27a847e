"""DistributedDataParallel, SyncBatchNorm and distributed checkpoints under mpiexec.

Two launches: one of 2 ranks (every check, and a sharded checkpoint saved), then one of 4
(training equivalence, SyncBatchNorm, and loading the 2-rank checkpoint); this process loads
the checkpoint on 1 rank. The checks themselves are in ddp_checks.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _launch import run_ranks

WORKERS = Path(__file__).resolve().parent / "workers"

TWO_RANKS = ["ddp_equals_single_process", "ddp_small_buckets", "ddp_gradient_as_bucket_view",
             "ddp_static_graph", "ddp_no_sync_accumulation", "ddp_find_unused_parameters",
             "ddp_unused_without_find_unused_raises", "ddp_buffers_broadcast",
             "ddp_comm_hooks", "ddp_join_uneven_inputs", "sync_batchnorm_matches_batchnorm",
             "sync_batchnorm_in_ddp", "checkpoint_save_two_ranks"]
FOUR_RANKS = ["ddp_equals_single_process", "ddp_small_buckets", "ddp_subgroups",
              "sync_batchnorm_matches_batchnorm", "ddp_join_uneven_inputs",
              "checkpoint_load_other_world_size"]


def launch(n: int, out: Path, ckpt: Path, names: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    code, output, _ = run_ranks("ddp_checks.py", n, str(out), str(ckpt), *names, timeout=300,
                                env={"OMP_NUM_THREADS": "1"})
    results = {}
    for r in range(n):
        path = out / f"{r}.json"
        if not path.exists():
            pytest.fail(f"rank {r} of {n} wrote no results (exit {code}):\n{output[-4000:]}")
        results[r] = json.loads(path.read_text())
    return results


@pytest.fixture(scope="module")
def ckpt_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("dcp") / "ckpt"


@pytest.fixture(scope="module")
def two(tmp_path_factory, ckpt_dir):
    return launch(2, tmp_path_factory.mktemp("two"), ckpt_dir, TWO_RANKS)


@pytest.fixture(scope="module")
def four(tmp_path_factory, ckpt_dir, two):
    return launch(4, tmp_path_factory.mktemp("four"), ckpt_dir, FOUR_RANKS)


def outcome(results: dict, name: str) -> None:
    bad = {r: res.get(name, "not run") for r, res in results.items()
           if res.get(name) != "ok"}
    if bad:
        pytest.fail("\n".join(f"rank {r}:\n{msg}" for r, msg in bad.items()))


@pytest.mark.parametrize("name", TWO_RANKS)
def test_two_ranks(two, name):
    outcome(two, name)


@pytest.mark.parametrize("name", FOUR_RANKS)
def test_four_ranks(four, name):
    outcome(four, name)


def test_checkpoint_loads_in_one_process(two, ckpt_dir):
    import ember
    import ember.distributed.checkpoint as dcp
    from ember import nn

    sys.path.insert(0, str(WORKERS))
    try:
        from ddp_checks import checkpoint_state
    finally:
        sys.path.remove(str(WORKERS))
    model, opt = checkpoint_state()
    fresh = nn.Sequential(nn.Linear(40, 30), nn.ReLU(), nn.Linear(30, 5))
    fresh_opt = ember.optim.Adam(fresh.parameters(), lr=0.01)
    fresh(ember.randn(2, 40)).sum().backward()
    fresh_opt.step()
    target = {"model": fresh.state_dict(), "optim": fresh_opt.state_dict(), "step": 0}
    with pytest.warns(UserWarning, match="single process"):
        dcp.load(target, checkpoint_id=ckpt_dir)
    fresh.load_state_dict(target["model"])
    for k, v in model.state_dict().items():
        assert ember.equal(fresh.state_dict()[k], v), k
    fresh_opt.load_state_dict(target["optim"])
    exp = opt.state_dict()["state"][0]["exp_avg"]
    assert ember.equal(fresh_opt.state_dict()["state"][0]["exp_avg"], exp)
    assert target["step"] == 7
