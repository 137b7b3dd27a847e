"""examples/mnist_ddp.py (the README's main job, data-parallel) through the launcher on 2
ranks, for a few steps: it trains, rank 0 reports and saves weights that load back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _launch import clean_env, require_mpi

ROOT = Path(__file__).resolve().parents[2]


def test_mnist_ddp_two_ranks_through_the_launcher(tmp_path):
    require_mpi()
    out = tmp_path / "w.pt"
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
           str(ROOT / "examples" / "mnist_ddp.py"), "--train-size", "256", "--test-size", "64",
           "--epochs", "1", "--max-steps", "3", "--batch-size", "32", "--no-progress",
           "--save", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                          env=clean_env({"OMP_NUM_THREADS": "1"}))
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    assert "2 ranks of 16 per batch" in text
    assert text.count("epoch 1: loss") == 1, text       # rank 0 alone prints
    assert "held-out accuracy" in text

    import ember

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from train_mnist import ConvNet
    finally:
        sys.path.remove(str(ROOT / "examples"))
    model = ConvNet()
    state = ember.load(out)
    assert not any(k.startswith("module.") for k in state)
    model.load_state_dict(state)
