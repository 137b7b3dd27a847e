"""tools/bench/bert_hf.py: on a tiny BERT, the script builds the same model in both libraries
(outputs agree), times every shape at every thread setting and reports ratios and the load.

No figure is checked (DESIGN.md section 5): only that the benchmark runs and reports."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")
pytest.importorskip("embertext")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "bench" / "bert_hf.py"
TINY = ["--layers", "2", "--hidden", "32", "--heads", "2", "--intermediate", "64",
        "--vocab", "100"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bert") / "bert.json"
    command = [sys.executable, str(SCRIPT), *TINY, "--shapes", "2x8,1x5", "--threads",
               "default,1", "--repeats", "3", "--block-s", "0", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


def test_every_shape_and_thread_setting_has_a_row(tiny_run):
    result, _ = tiny_run
    assert [(r["threads"], r["batch"], r["seq"]) for r in result["rows"]] == [
        ("default", 2, 8), ("default", 1, 5), (1, 2, 8), (1, 1, 5)]
    assert result["config"] == {"layers": 2, "hidden": 32, "heads": 2, "intermediate": 64,
                                "vocab": 100}


def test_rows_hold_medians_ratios_and_the_load(tiny_run):
    result, stdout = tiny_run
    for row in result["rows"]:
        assert row["ember_s"] > 0 and row["torch_s"] > 0 and row["samples"] == 3
        assert row["ratio"] == pytest.approx(row["ember_s"] / row["torch_s"])
        assert row["round_ratio_min"] <= row["round_ratio_max"]
        assert row["cpu_ratio"] > 0
        assert len(row["load_before"].split()) == 3 and len(row["load_after"].split()) == 3
    assert "ratio" in stdout and "load before -> after" in stdout


def test_both_libraries_compute_the_same_outputs(tiny_run):
    result, _ = tiny_run
    for row in result["rows"]:
        assert set(row["max_diff"]) == {"last_hidden_state", "pooler_output"}
        assert max(row["max_diff"].values()) < 1e-4


def test_inputs_pad_the_later_rows():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from bench import bert_hf
    finally:
        sys.path.remove(str(ROOT / "tools"))
    ids, mask = bert_hf.make_inputs(4, 16, vocab=50)
    assert mask.sum(1).tolist() == [16, 14, 12, 10]
    assert (ids[mask == 0] == 0).all() and (ids[mask == 1] > 0).all()
    assert bert_hf.parse_shapes("8x128, 1x32") == [(8, 128), (1, 32)]
    assert bert_hf.parse_threads("default,1") == [None, 1]
    with pytest.raises(ValueError, match="BATCHxSEQ"):
        bert_hf.parse_shapes("8by128")
    with pytest.raises(ValueError, match="positive"):
        bert_hf.parse_threads("0")
