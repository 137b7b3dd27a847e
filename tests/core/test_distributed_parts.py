"""The parts of DDP and ember.distributed.checkpoint that need no second process: the bucket
assignment, GradBucket, Join's argument checks, and checkpoints saved and loaded in one
process (the multi-rank behaviour is in tests/distributed/test_ddp.py)."""

from __future__ import annotations

import json
import os
import warnings

import pytest

import ember
import ember.distributed.checkpoint as dcp
from ember import nn
from ember.distributed import GradBucket
from ember.distributed.algorithms import Join
from ember.nn.parallel._reducer import compute_bucket_assignment_by_size, initial_bucket_indices


def _tensors(*sizes, dtype=ember.float32):
    return [ember.zeros(n, dtype=dtype) for n in sizes]


def test_bucket_assignment_by_size_closes_buckets_at_the_limits():
    ts = _tensors(10, 10, 10, 10, 10)              # 40 bytes each
    assert compute_bucket_assignment_by_size(ts, [80]) == [[0, 1], [2, 3], [4]]
    # the first limit for the first bucket, the last one repeats
    assert compute_bucket_assignment_by_size(ts, [40, 120]) == [[0], [1, 2, 3], [4]]
    # gradient-ready order is kept, not sorted
    assert compute_bucket_assignment_by_size(ts, [80], [4, 3, 2, 1, 0]) == \
        [[4, 3], [2, 1], [0]]


def test_bucket_assignment_separates_dtypes():
    ts = _tensors(4, 4) + _tensors(4, dtype=ember.float64)
    assert compute_bucket_assignment_by_size(ts, [10 ** 9]) == [[0, 1], [2]]


def test_initial_buckets_like_pytorch():
    ts = _tensors(300_000, 300_000, 10)            # 1.2 MB, 1.2 MB, 40 B
    # without find_unused_parameters: one bucket per dtype in the first iteration
    assert initial_bucket_indices(ts, 25 << 20, 1 << 20, False, False) == [[0, 1, 2]]
    # with it: a 1 MiB first bucket, reversed (the last parameters reduced first)
    assert initial_bucket_indices(ts, 25 << 20, 1 << 20, True, False) == [[1, 2], [0]]


def test_grad_bucket_api():
    buf = ember.arange(6.0)
    p1, p2 = nn.Parameter(ember.zeros(2, 2)), nn.Parameter(ember.zeros(2))
    b = GradBucket(1, buf, [buf[:4].view(2, 2), buf[4:]], [p1, p2], True)
    assert b.index() == 1 and b.is_last() and b.buffer() is buf
    assert [tuple(g.shape) for g in b.gradients()] == [(2, 2), (2,)]
    assert b.parameters()[0] is p1
    b.set_buffer(ember.ones(6))
    assert b.buffer().sum().item() == 6
    with pytest.raises(ValueError, match="expected a tensor of 6 elements"):
        b.set_buffer(ember.ones(5))


def test_join_needs_joinables():
    with pytest.raises(ValueError, match="requires at least one joinable"):
        Join([])


def _state():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(300, 200), nn.ReLU(), nn.Linear(200, 3))
    return {"model": model.state_dict(), "meta": {"epoch": 4, "name": "run"}}


def test_checkpoint_round_trip_in_one_process(tmp_path):
    ckpt = tmp_path / "ckpt"
    state = _state()
    with pytest.warns(UserWarning, match="save in a single process"):
        md = dcp.save(state, checkpoint_id=ckpt)
    assert sorted(os.listdir(ckpt)) == [".metadata", "__0_0.distcp"]
    assert md.state_dict_metadata["model.0.weight"].size == (200, 300)
    assert isinstance(md.state_dict_metadata["meta.epoch"], dcp.BytesStorageMetadata)
    meta = json.loads((ckpt / ".metadata").read_text())
    assert meta["state_dict_metadata"]["model.2.bias"]["dtype"] == "float32"
    target = {"model": nn.Sequential(nn.Linear(300, 200), nn.ReLU(),
                                     nn.Linear(200, 3)).state_dict(),
              "meta": {"epoch": 0, "name": ""}}
    dcp.load(target, checkpoint_id=ckpt, no_dist=True)
    for k, v in state["model"].items():
        assert ember.equal(target["model"][k], v), k
    assert target["meta"] == {"epoch": 4, "name": "run"}
    # the read-back metadata is the written one
    assert dcp.FileSystemReader(ckpt).read_metadata().state_dict_metadata == \
        md.state_dict_metadata


def test_checkpoint_errors(tmp_path):
    ckpt = tmp_path / "ckpt"
    dcp.save(_state(), checkpoint_id=ckpt, no_dist=True)
    with pytest.raises(RuntimeError, match=r"Missing key in checkpoint state_dict: extra\."):
        dcp.load({"extra": ember.zeros(1)}, checkpoint_id=ckpt, no_dist=True)
    with pytest.raises(ValueError, match="Size mismatch between saved"):
        dcp.load({"model": {"0.bias": ember.zeros(5)}}, checkpoint_id=ckpt, no_dist=True)
    with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified"):
        dcp.save(_state(), no_dist=True)
    with pytest.raises(FileNotFoundError, match=r"\.metadata is missing"):
        dcp.load({"x": ember.zeros(1)}, checkpoint_id=tmp_path / "nothing", no_dist=True)
    with pytest.raises(ValueError, match="custom planners"):
        dcp.save(_state(), checkpoint_id=ckpt, planner=object(), no_dist=True)
    # a failure on any rank is a CheckpointException on every rank (here: the only one)
    with pytest.raises(dcp.CheckpointException, match="overwrite=False"):
        dcp.save(_state(), storage_writer=dcp.FileSystemWriter(ckpt, overwrite=False),
                 no_dist=True)


def test_checkpoint_leaves_no_temporary_files_and_deprecated_spellings(tmp_path):
    ckpt = tmp_path / "c"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.warns(FutureWarning, match="`save_state_dict` is deprecated"):
            dcp.save_state_dict(_state(), dcp.FileSystemWriter(ckpt))
        assert not [f for f in os.listdir(ckpt) if ".tmp-" in f]
        target = _state()
        with pytest.warns(FutureWarning, match="`load_state_dict` is deprecated"):
            dcp.load_state_dict(target, dcp.FileSystemReader(ckpt))
    from ember.distributed.checkpoint import state_dict_loader, state_dict_saver

    assert state_dict_saver.save is dcp.save and state_dict_loader.load is dcp.load
