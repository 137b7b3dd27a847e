"""tools/bench: the harness runs in quick mode and writes JSON and Markdown of the agreed shape.

No figure is checked here (DESIGN.md section 5: speed targets are checked by the benchmark,
never by a timed unit test); only that the harness runs and reports what it should.
"""

import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tools" / "bench" / "run.py"
WORKLOADS = ["op_add", "installed_size", "mlp_sgd"]  # the registry's order, which the run keeps

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch is not installed")


@pytest.fixture(scope="module")
def bench():
    """The harness's modules, imported as the package `bench` from tools/."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import bench.registry
        import bench.report
        import bench.timing
        import bench.workloads  # noqa: F401 - registers the workloads

        yield bench
    finally:
        sys.path.remove(str(ROOT / "tools"))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    command = [sys.executable, str(RUN), "--quick", "--repeats", "3",
               "--workloads", ",".join(reversed(WORKLOADS)),
               "--json", str(out / "results.json"), "--markdown", str(out / "benchmarks.md")]
    done = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        "json": json.loads((out / "results.json").read_text()),
        "markdown": (out / "benchmarks.md").read_text(),
        "stdout": done.stdout,
    }


def test_json_describes_the_run_and_the_machine(quick_run):
    run = quick_run["json"]
    assert run["schema"] == 1
    assert run["mode"] == "quick" and run["device"] == "cpu"
    assert run["command"].startswith("python tools/bench/run.py --quick")
    assert run["date"]
    machine = run["machine"]
    for key in ("cpu", "cores", "python", "numpy", "torch", "ember"):
        assert machine[key], key
    assert machine["copy_bandwidth_gbs"] > 0 and machine["blas_gflops"] > 0
    # the OpenBLAS kernels that ran, and the OPENBLAS_* settings that chose them
    core = machine["openblas_core"]
    assert core is None or core.split()[0].isidentifier()
    if core and "OPENBLAS_CORETYPE" in os.environ:
        assert f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}" in core


def test_json_has_one_result_per_workload_in_order(quick_run):
    results = quick_run["json"]["results"]
    assert [r["name"] for r in results] == WORKLOADS
    for r in results:
        assert r["status"] in ("ok", "not available", "error"), r
        assert r["title"] and r["group"]
        if r["status"] != "ok":
            assert r["reason"]


def test_timed_result_has_medians_spread_ratio_and_verdict(quick_run):
    result = quick_run["json"]["results"][0]
    if result["status"] != "ok":
        pytest.skip(f"op_add did not run here: {result['reason']}")
    assert set(result["medians"]) == {"ember", "torch", "numpy"}
    for lib, stats in result["stats"].items():
        assert stats["samples"] == 3, lib
        assert 0 < stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]
        assert stats["spread_pct"] >= 0
    assert result["ratio"] == pytest.approx(result["medians"]["ember"] / result["medians"]["torch"])
    [target] = result["targets"]
    assert target["metric"] == "time ember/torch" and target["op"] == "<="
    assert target["value"] == 0.5 and target["measured"] == pytest.approx(result["ratio"])
    assert result["verdict"] == ("meets" if target["met"] else "misses")


def test_a_missing_feature_is_listed_as_not_available(quick_run):
    mlp = quick_run["json"]["results"][2]
    if mlp["status"] == "not available":
        assert "missing ember." in mlp["reason"]
        assert "mlp_sgd" in quick_run["stdout"]
    else:  # once ember has nn and optim, the same workload runs
        assert mlp["status"] == "ok" and mlp["ratio"] > 0


def test_installed_size_is_in_bytes(quick_run):
    size = quick_run["json"]["results"][1]
    assert size["status"] == "ok" and size["unit"] == "bytes"
    assert size["medians"]["ember"] > 0 and size["medians"]["torch"] > 0


def test_markdown_holds_the_table_machine_and_command(quick_run):
    text = quick_run["markdown"]
    assert "<!-- bench:cpu:begin -->" in text and "<!-- bench:cpu:end -->" in text
    assert "<!-- bench:cuda:begin -->" in text
    assert "| workload | what | ember | torch | ember/torch | target | verdict |" in text
    for name in WORKLOADS:
        assert f"| `{name}` |" in text
    assert "Machine: " in text and quick_run["json"]["machine"]["cpu"] in text
    assert "`python tools/bench/run.py --quick" in text


def test_markdown_update_replaces_only_its_device_section(bench, tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\nhand-written analysis\n\n"
                    "<!-- bench:cuda:begin -->\nold cuda table\n<!-- bench:cuda:end -->\n\n"
                    "<!-- bench:cpu:begin -->\nold cpu table\n<!-- bench:cpu:end -->\n\ntail\n")
    run = {"device": "cpu", "command": "python tools/bench/run.py", "mode": "quick",
           "date": "today", "machine": bench.report.machine_info(), "results": []}
    bench.report.update_markdown(path, run)
    text = path.read_text()
    assert "hand-written analysis" in text and "old cuda table" in text and "tail" in text
    assert "old cpu table" not in text and "## Latest run: CPU" in text


def test_targets_and_availability(bench):
    target = bench.registry.Target("throughput ember/numpy", ">=", 0.95)
    assert target.met(0.95) and not target.met(0.9)
    assert target.describe(1.234) == "throughput ember/numpy 1.23 (\u2265 0.95)"
    with pytest.raises(ValueError):
        bench.registry.Target("speed", "<=", 1.0)

    fake = types.ModuleType("no_such_library")
    fake.add = lambda a, b: a + b
    fake.nn = types.SimpleNamespace(Linear=object)
    assert bench.registry.missing(fake, ("add", "nn.Linear", "nn.Conv2d", "optim.SGD",
                                         "optim.Adam")) == ["no_such_library.nn.Conv2d",
                                                            "no_such_library.optim"]
    with pytest.raises(KeyError):
        bench.registry.select("no_such_workload")
    assert [w.name for w in bench.registry.select("optim")] == ["adam_11.7M",
                                                               "sgd_momentum_11.7M"]


def test_interleaved_timing_takes_turns(bench):
    order = []
    stats = bench.timing.interleaved(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b")},
        repeats=4, block_s=0.0, budget_s=None, warmup_s=0.0, min_warmup_calls=1)
    assert [len(s.samples) for s in stats.values()] == [4, 4]
    assert order[2:] == ["a", "b", "b", "a", "a", "b", "b", "a"]  # after one warm-up call each


def test_interleaved_settles_before_each_block_outside_the_timed_block(bench, monkeypatch):
    events = []
    monkeypatch.setattr(bench.timing.time, "sleep", lambda s: events.append(("sleep", s)))
    bench.timing.interleaved(
        {"a": lambda: events.append("a"), "b": lambda: events.append("b")},
        repeats=3, block_s=0.0, budget_s=None, warmup_s=0.0, min_warmup_calls=1,
        settle_s=0.25)
    timed = events[2:]  # after one warm-up call each, which does not settle
    assert timed == [("sleep", 0.25), "a", ("sleep", 0.25), "b", ("sleep", 0.25), "b",
                     ("sleep", 0.25), "a", ("sleep", 0.25), "a", ("sleep", 0.25), "b"]
    events.clear()
    bench.timing.interleaved({"a": lambda: events.append("a")}, repeats=3, block_s=0.0,
                             budget_s=None, warmup_s=0.0, min_warmup_calls=1)
    assert ("sleep", 0.0) not in events and events == ["a"] * 4  # no settling by default


def test_model_families_have_three_sizes_and_select_by_family_and_size(bench):
    import bench.workloads_families  # noqa: F401 - registers the families

    select = bench.registry.select
    families = {}
    for w in bench.registry.REGISTRY.values():
        if w.family:
            families.setdefault(w.family, {})[w.size] = w.name
    assert set(families) == {"mlp", "lenet", "resnet", "lstm_lm", "gru_lm", "transformer",
                             "gpt"}
    for family, sizes in families.items():
        assert set(sizes) == {"small", "medium", "large"}, family
    # the existing workloads are their families' medium sizes, under their names
    assert families["mlp"]["medium"] == "mlp_sgd"
    assert families["transformer"]["medium"] == "transformer_encoder"
    assert [w.name for w in select("gpt")] == ["gpt_small", "gpt_medium", "gpt_large"]
    assert [w.name for w in select("gpt", "small,large")] == ["gpt_small", "gpt_large"]
    medium = [w.name for w in select(None, "medium")]
    assert "mlp_sgd" in medium and "gpt_medium" in medium and "op_add" in medium
    assert "gpt_small" not in medium and "lstm_lm_large" not in medium
    assert [w.name for w in select("gpt_large", "medium")] == ["gpt_large"]  # named: kept
    with pytest.raises(KeyError, match="unknown sizes"):
        select(None, "huge")
    gpt = bench.registry.REGISTRY["gpt_small"]
    assert [t.value for t in gpt.targets] == [0.8, 1.0] and gpt.peak_rss


def test_family_matrix_has_a_row_per_family(bench):
    def result(name, family, size, ratio, rss, verdict):
        return {"name": name, "family": family, "size": size, "status": "ok", "ratio": ratio,
                "metrics": {"time ember/torch": ratio, "peak RSS ember/torch": rss},
                "verdict": verdict}

    rows = bench.report.family_matrix([
        result("gpt_small", "gpt", "small", 0.5, 0.4, "meets"),
        result("gpt_large", "gpt", "large", 1.5, 0.9, "misses"),
        {"name": "op_add", "status": "ok", "ratio": 0.4},
    ])
    assert rows == [["family", "small", "medium", "large"],
                    ["gpt", "0.50 / 0.40", "-", "1.50 / 0.90 *"]]
    assert bench.report.family_matrix([{"name": "op_add", "status": "ok"}]) == []


def test_quick_mode_leaves_out_the_families_peak_rss_and_judges_the_time(quick_run):
    mlp = quick_run["json"]["results"][2]
    if mlp["status"] != "ok":
        pytest.skip(f"mlp_sgd did not run here: {mlp['reason']}")
    assert mlp["family"] == "mlp" and mlp["size"] == "medium"
    assert "peak_rss_mb" not in mlp
    assert "peak RSS not measured in quick mode" in mlp["notes"]
    time_target = mlp["targets"][0]
    assert mlp["verdict"] == ("meets" if time_target["met"] else "misses")
    assert any(line.split() == ["family", "small", "medium", "large"]
               for line in quick_run["stdout"].splitlines())
