"""tools/bench/vision.py runs its four rows on small sizes and writes the JSON it should.

No figure is checked (DESIGN.md section 5: speed targets are checked by the benchmark,
never by a timed unit test). Skips without torchvision (nox -s vision_torch runs it).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchvision")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "bench" / "vision.py"
ROWS = ["resnet50_eval", "resnet18_train", "transforms", "nms"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "vision.json"
    command = [sys.executable, str(SCRIPT), "--quick", "--repeats", "3", "--block-s", "0.05",
               "--warmup-s", "0", "--threads", "1,default", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


def test_every_row_at_both_thread_settings(quick_run):
    data, stdout = quick_run
    assert data["command"].startswith("python tools/bench/vision.py --quick")
    assert data["machine"]["torchvision"] and data["machine"]["embervision"]
    results = data["results"]
    assert [(r["row"], r["threads_setting"]) for r in results] == [
        (row, setting) for row in ROWS for setting in ("1", "default")]
    for r in results:
        assert r["threads"] >= 1 and r["ember_s"] > 0 and r["torch_s"] > 0
        assert r["ember"]["samples"] >= 3 and r["torch"]["samples"] >= 3
        assert r["ratio_min"] <= r["ratio"] <= r["ratio_max"]
        assert r["met"] == (r["ratio"] >= r["target"] if r["row"] == "transforms"
                            else r["ratio"] <= r["target"])
        assert r["load_before"].startswith("load ")
        assert f"{r['ratio']:.2f}" in stdout


def test_the_rows_check_their_results(quick_run):
    notes = {r["row"]: r["note"] for r in quick_run[0]["results"]}
    # the models are given the same weights: the same first loss, close outputs
    ember_loss, torch_loss = notes["resnet18_train"].replace(",", "").split()[3::2]
    assert abs(float(ember_loss) - float(torch_loss)) < 1e-3
    assert float(notes["resnet50_eval"].split()[-1]) < 1e-3
    assert "kept" in notes["nms"] and "(3, 64, 64)" in notes["transforms"]


def test_unknown_row_is_refused():
    done = subprocess.run([sys.executable, str(SCRIPT), "--rows", "vgg"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "unknown rows" in done.stderr
