"""examples/keyword_spotting.py runs end to end on a tiny synthesized dataset."""

import importlib.util
from pathlib import Path

import ember

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keyword_spotting.py"


def _load():
    spec = importlib.util.spec_from_file_location("keyword_spotting", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_keyword_spotting_example_trains_and_saves(tmp_path, capsys):
    example = _load()
    accuracy = example.main(["--out", str(tmp_path), "--per-class", "10", "--epochs", "1",
                             "--batch-size", "8"])
    assert 0.0 <= accuracy <= 1.0
    out = capsys.readouterr().out
    assert "{'training': 48, 'validation': 6, 'testing': 6}" in out
    assert "test accuracy" in out
    state = ember.load(tmp_path / "kws_cnn.pt")
    model = example.KeywordCNN(n_output=len(example.LABELS))
    model.load_state_dict(state)
    features = example.LogMel()(ember.randn(2, 1, example.RATE))
    assert tuple(features.shape) == (2, 1, 40, 101)
    assert model(features).shape == (2, len(example.LABELS))
