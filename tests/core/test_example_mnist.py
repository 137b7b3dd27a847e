"""The main job (examples/train_mnist.py) on a small run: it trains, reports its progress
and accuracy, and saves its weights where it says."""

import re
import sys
from pathlib import Path

import ember

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _main():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import train_mnist
    finally:
        sys.path.remove(str(EXAMPLES))
    return train_mnist


def test_main_job_trains_reports_and_saves(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    acc = _main().main(["--train-size", "2000", "--test-size", "300", "--epochs", "1",
                        "--no-progress"])
    out = capsys.readouterr().out
    assert acc > 0.5  # ten classes: far above chance after one short epoch
    saved = tmp_path / "mnist_convnet.pt"  # saved by default, and the path is printed
    assert saved.exists() and str(saved.resolve()) in out
    assert re.search(r"epoch 1: loss [\d.]+ +test accuracy", out)
    state = ember.load(saved)
    assert set(state) >= {"features.0.weight", "classifier.3.bias"}


def test_main_job_progress_without_tqdm_and_no_save(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails: quarter lines
    _main().main(["--train-size", "640", "--test-size", "100", "--epochs", "1", "--no-save"])
    out = capsys.readouterr().out
    assert "epoch 1/1: 5/10 batches" in out
    assert not (tmp_path / "mnist_convnet.pt").exists()
