#!/usr/bin/env python
"""ember's benchmarks, side by side with PyTorch: one table of ratios ember/torch.

    python tools/bench/run.py                      # all workloads, every size
    python tools/bench/run.py --quick              # fewer samples, medium sizes (< 2 min)
    python tools/bench/run.py --workloads op_add,chain10_grad --repeats 50
    python tools/bench/run.py --workloads gpt,transformer --sizes small,large
    python tools/bench/run.py --list               # the workloads and their availability
    python tools/bench/run.py --device cuda        # ember on CUDA against torch on CUDA

The model families of workloads_families.py (mlp, lenet, resnet, lstm_lm, gru_lm,
transformer, gpt) run at three sizes each, ``FAMILY_small``, ``_medium`` and ``_large``:
``--workloads`` takes a family name for all its sizes, ``--sizes`` keeps some sizes only.
The default mode runs every size; ``--quick`` runs the medium size of each family only
(``--sizes`` overrides that; a workload named in ``--workloads`` always runs) and leaves
out the families' peak-RSS subprocesses (their verdicts then judge the time alone).

Prints the table (and the ratios per family and size), writes the JSON (--json, default
bench-results-DEVICE.json at the repository root) and replaces the device's section of
docs/benchmarks.md (--markdown).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import importlib.metadata as metadata
import json
import os
import pstats
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent
ROOT = TOOLS.parent
# Run as a script, Python puts tools/bench first on sys.path, where registry.py, timing.py and
# report.py would shadow any module of those names: import them as the package `bench`.
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(TOOLS)
elif str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from bench import registry, report, timing  # noqa: E402
from bench import workloads as _registers_the_workloads  # noqa: E402, F401
from bench import workloads_audio as _registers_audio  # noqa: E402, F401
from bench import workloads_compile as _registers_compile  # noqa: E402, F401
from bench import workloads_families as _registers_families  # noqa: E402, F401
from bench import workloads_numeric as _registers_numeric  # noqa: E402, F401
from bench import workloads_threads as _registers_threads  # noqa: E402, F401


@dataclass(frozen=True)
class Mode:
    name: str
    repeat_fraction: float  # of each workload's default sample count
    budget_fraction: float  # of each workload's time budget
    block_fraction: float  # of each workload's block length
    warmup_s: float
    min_warmup_calls: int
    import_repeats: int
    peak_calls: int  # calls of the workload in the peak-RSS subprocess
    probe_repeats: int
    sizes: str | None  # the sizes of the model families that run (None: all)
    family_peak_rss: bool  # measure the model families' peak RSS (two fresh interpreters each)


DEFAULT = Mode("default", 1.0, 1.0, 1.0, 0.3, 2, 10, 3, 7, None, True)
QUICK = Mode("quick", 0.25, 0.2, 0.4, 0.1, 1, 3, 1, 3, "medium", False)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="ember against PyTorch on the same workloads, in one process.")
    parser.add_argument("--quick", action="store_true",
                        help="fewer samples, the medium size of each model family: under 2 "
                             "minutes")
    parser.add_argument("--workloads", metavar="NAME,...",
                        help="workloads, groups or model families to run (default: all; see "
                             "--list)")
    parser.add_argument("--sizes", metavar="SIZE,...",
                        help="sizes of the model families to run: small, medium, large "
                             "(default: all; medium with --quick)")
    parser.add_argument("--repeats", type=int, metavar="N",
                        help="samples per library for every workload (overrides the mode and "
                             "the time budgets)")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="where to write the results (default: bench-results-DEVICE.json "
                             "at the repository root)")
    parser.add_argument("--markdown", type=Path, metavar="PATH",
                        default=ROOT / "docs" / "benchmarks.md",
                        help="the Markdown file whose section for the device is replaced "
                             "(default: docs/benchmarks.md)")
    parser.add_argument("--no-markdown", action="store_true", help="leave the Markdown alone")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--torch-threads", type=int, metavar="N",
                        help="torch.set_num_threads(N) first (default: torch's own choice)")
    parser.add_argument("--settle-ms", type=float, default=0.0, metavar="MS",
                        help="sleep MS milliseconds before each timed block, so that the "
                             "threads the other library left spinning are asleep (default: 0)")
    parser.add_argument("--no-profile", action="store_true",
                        help="do not profile the workload that misses its target the most")
    parser.add_argument("--list", action="store_true",
                        help="list the workloads and whether ember has their features")
    parser.add_argument("--_child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# --- libraries and devices -------------------------------------------------------------------

def import_ember():
    """(ember, None) or (None, the reason it does not import)."""
    try:
        return importlib.import_module("ember"), None
    except Exception as exc:  # noqa: BLE001 - a broken build is reported, not raised
        return None, f"import ember failed: {type(exc).__name__}: {exc}"


def cuda_problem(ember, torch) -> str | None:
    """Why ember-on-CUDA against torch-on-CUDA cannot run here; None when it can."""
    if not torch.cuda.is_available():
        return "torch sees no CUDA GPU (a CPU build of torch, or no GPU)"
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    if not cupy.cuda.is_available():
        return "CuPy sees no GPU"
    if ember is None:
        return "ember does not import"
    try:
        ember.tensor([1.0], device="cuda")
    except Exception as exc:  # noqa: BLE001
        return f"ember cannot make a CUDA tensor: {type(exc).__name__}: {exc}"
    return None


def synchronizer(lib, device):
    """What waits for queued GPU work of ``lib``; None on the CPU."""
    if device != "cuda":
        return None
    if lib.__name__ == "torch":
        return lib.cuda.synchronize
    if lib.__name__ == "ember" and hasattr(lib, "cuda") and hasattr(lib.cuda, "synchronize"):
        return lib.cuda.synchronize
    import cupy

    return cupy.cuda.get_current_stream().synchronize


def baseline_library(device):
    if device == "cuda":
        import cupy

        return cupy
    import numpy

    return numpy


# --- the machine's limits --------------------------------------------------------------------

def probe_machine(machine: dict, mode: Mode) -> None:
    """The NumPy copy bandwidth and the BLAS rate, so that the distance to the physical limit
    of the throughput workloads is visible."""
    import numpy as np

    n = 32 * 2**20  # float32: 128 MiB each way, far beyond any cache
    src, dst = np.ones(n, np.float32), np.empty(n, np.float32)
    a = np.random.default_rng(0).standard_normal((1024, 1024), np.float32)
    out = np.empty_like(a)
    stats = timing.interleaved(
        {"copy": lambda: np.copyto(dst, src), "matmul": lambda: np.matmul(a, a, out=out)},
        repeats=mode.probe_repeats, block_s=0.0, budget_s=None, warmup_s=0.0,
        min_warmup_calls=2)
    machine["copy_bandwidth_gbs"] = 2 * src.nbytes / stats["copy"].median / 1e9
    machine["blas_gflops"] = 2 * 1024**3 / stats["matmul"].median / 1e9


# --- running one workload --------------------------------------------------------------------

def new_result(w: registry.Workload) -> dict:
    return {
        "name": w.name, "group": w.group, "title": w.title, "source": w.source, "kind": w.kind,
        "status": "ok", "reason": "", "per": w.per, "per_label": w.per_label, "unit": "seconds",
        "targets": [dict(t.to_json(), text=t.describe()) for t in w.targets],
        "verdict": None, "notes": list(w.notes), "family": w.family, "size": w.size,
    }


def _samples(w: registry.Workload, mode: Mode, repeats: int | None) -> tuple[int, float | None]:
    if repeats is not None:
        return repeats, None
    return (max(timing.MIN_SAMPLES, round(w.repeats * mode.repeat_fraction)),
            w.budget_s * mode.budget_fraction)


def judge(result: dict, w: registry.Workload) -> None:
    """Fill in the targets' measured values and the verdict from ``result["metrics"]``."""
    metrics = result.get("metrics", {})
    verdicts = []
    for entry, target in zip(result["targets"], w.targets, strict=True):
        measured = metrics.get(target.metric)
        entry["measured"] = measured
        entry["met"] = None if measured is None else target.met(measured)
        entry["text"] = target.describe(measured)
        verdicts.append(entry["met"])
    # a peak RSS that was not measured (a family's in --quick; a failed subprocess, which the
    # notes report) leaves the verdict to the other targets
    measured = [v for v in verdicts if v is not None]
    unmeasured = [t.metric for v, t in zip(verdicts, w.targets, strict=True) if v is None]
    if measured and all(m == "peak RSS ember/torch" for m in unmeasured):
        result["verdict"] = "meets" if all(measured) else "misses"


def _fill_times(result: dict, stats: dict[str, timing.Stats], per: int) -> None:
    scaled = {lib: s.scaled(1.0 / per) for lib, s in stats.items()}
    result["stats"] = {lib: s.to_json() for lib, s in scaled.items()}
    result["medians"] = {lib: s.median for lib, s in scaled.items()}
    medians = result["medians"]
    metrics = {}
    if "ember" in medians and "torch" in medians:
        result["ratio"] = medians["ember"] / medians["torch"]
        metrics["time ember/torch"] = result["ratio"]
        metrics["throughput ember/torch"] = medians["torch"] / medians["ember"]
    if "ember" in medians and "numpy" in medians:
        metrics["throughput ember/numpy"] = medians["numpy"] / medians["ember"]
    result["metrics"] = metrics


def run_timed(w, libs, device, mode, args, machine) -> dict:
    result = new_result(w)
    ember, torch = libs["ember"], libs["torch"]
    gaps = registry.missing(ember, w.requires) + registry.missing(torch, w.requires)
    if gaps:
        result.update(status="not available", reason="missing " + ", ".join(gaps))
        return result
    contenders, syncs = {}, {}
    candidates = [("ember", ember), ("torch", torch)]
    if w.baseline:
        candidates.append(("numpy", libs["baseline"]))
    for name, lib in candidates:
        make = w.baseline_fn if name == "numpy" and w.baseline_fn is not None else w.fn
        try:
            fn = make(lib, device)
            fn()  # a failing call is reported here, before any timing
        except Exception as exc:  # noqa: BLE001
            if name == "numpy":
                result["notes"].append(f"baseline {lib.__name__} failed: {exc}")
                continue
            result.update(status="error", reason=f"{name}: {type(exc).__name__}: {exc}")
            return result
        contenders[name], syncs[name] = fn, synchronizer(lib, device)
    repeats, budget = _samples(w, mode, args.repeats)
    stats = timing.interleaved(
        contenders, repeats=repeats, block_s=w.block_s * mode.block_fraction, budget_s=budget,
        warmup_s=mode.warmup_s, min_warmup_calls=mode.min_warmup_calls, syncs=syncs,
        settle_s=args.settle_ms / 1000)
    contenders.clear()  # free the workload's memory before the next one
    _fill_times(result, stats, w.per)
    if "numpy" in stats:
        base = libs["baseline"].__name__
        own = f" ({w.baseline_label})" if w.baseline_label else ""
        numpy_time = report.format_seconds(result["medians"]["numpy"])
        per = f"/{w.per_label}" if w.per > 1 else ""
        result["notes"].append(f"{base}{own} {numpy_time}{per}; ember/{base} time "
                               f"{result['medians']['ember'] / result['medians']['numpy']:.2f}")
    if w.extra is not None:
        base = libs["baseline"].__name__
        medians = {(base if k == "numpy" else k): s.median for k, s in stats.items()}
        extra, notes = w.extra(medians, machine)
        result["extra"] = extra
        result["notes"] += notes
    if w.peak_rss and (mode.family_peak_rss or not w.family):
        measure_peak_rss(result, w, device, mode, args.torch_threads)
    elif w.peak_rss:
        result["notes"].append(f"peak RSS not measured in {mode.name} mode")
    judge(result, w)
    return result


def measure_peak_rss(result: dict, w, device, mode, threads) -> None:
    specs = [{"workload": w.name, "lib": lib, "device": device, "calls": mode.peak_calls,
              "torch_threads": threads} for lib in ("ember", "torch")]
    try:
        peaks = dict(zip(("ember", "torch"), timing.run_children(__file__, specs), strict=True))
    except Exception as exc:  # noqa: BLE001
        result["notes"].append(f"peak RSS not measured: {exc}")
        return
    result["peak_rss_mb"] = {lib: p["peak_kb"] / 1024 for lib, p in peaks.items()}
    if device == "cuda":
        result["notes"].append("peak memory on CUDA: the GPU memory each library's caching "
                               "allocator holds after the calls (torch: max_memory_reserved; "
                               "ember: CuPy's default pool)")
        result["metrics"]["peak RSS ember/torch"] = (peaks["ember"]["peak_kb"]
                                                     / max(1, peaks["torch"]["peak_kb"]))
        return
    result["import_rss_mb"] = {lib: p["import_kb"] / 1024 for lib, p in peaks.items()}
    ratio = peaks["ember"]["peak_kb"] / peaks["torch"]["peak_kb"]
    result["metrics"]["peak RSS ember/torch"] = ratio
    result["notes"].append(
        "peak RSS over the RSS after import: " + ", ".join(
            f"{lib} +{(p['peak_kb'] - p['import_kb']) / 1024:.0f} MB" for lib, p in peaks.items()))


def child_main(spec: dict) -> None:
    """In a fresh interpreter: import one library, run the workload, print the peak RSS."""
    lib = importlib.import_module(spec["lib"])
    if spec["lib"] == "torch" and spec.get("torch_threads"):
        lib.set_num_threads(spec["torch_threads"])
    import_kb = timing.peak_rss_kb()
    w = registry.REGISTRY[spec["workload"]]
    fn = w.fn(lib, spec["device"])
    for _ in range(spec["calls"]):
        fn()
    sync = synchronizer(lib, spec["device"])
    if sync is not None:
        sync()
    peak = {"peak_kb": timing.peak_rss_kb(), "import_kb": import_kb}
    if spec["device"] == "cuda":  # the caching allocators' high-water marks instead
        if spec["lib"] == "torch":
            held = lib.cuda.max_memory_reserved()
        else:
            import cupy

            held = cupy.get_default_memory_pool().total_bytes()
        peak = {"peak_kb": held // 1024, "import_kb": 0}
    print(json.dumps(peak))


def run_import(w, libs, mode, args) -> dict:
    result = new_result(w)
    if libs["ember"] is None:
        result.update(status="not available", reason=libs["ember_problem"])
        return result
    repeats = args.repeats or mode.import_repeats
    with tempfile.TemporaryDirectory() as cwd:
        runs = timing.import_times(["ember", "torch"], repeats, cwd)
    _fill_times(result, {lib: r["import"] for lib, r in runs.items()}, 1)
    result["peak_rss_mb"] = {lib: r["peak_kb"] / 1024 for lib, r in runs.items()}
    walls = {lib: report.format_seconds(r["wall"].median) for lib, r in runs.items()}
    result["extra"] = {"interpreter_wall": {lib: r["wall"].to_json() for lib, r in runs.items()}}
    result["notes"].append(f"whole fresh interpreter (start + import): ember {walls['ember']}, "
                           f"torch {walls['torch']}; peak RSS is after the import")
    if report.is_editable("ember"):
        result["notes"].append("ember is an editable install here: its import includes "
                               "meson-python's rebuild check (nox -s bench installs a wheel)")
    judge(result, w)
    return result


# --- installed size --------------------------------------------------------------------------

def _requirement_names(dist) -> list[str]:
    names = []
    for requirement in dist.requires or []:
        if "extra ==" in requirement.replace('extra=="', 'extra == "'):
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if match:
            names.append(match.group(1))
    return names


def _closure(name: str) -> list[str]:
    """The distribution and the installed distributions it requires, recursively (requirements
    behind extras are left out; one not installed here does not apply here)."""
    seen, todo = [], [name]
    while todo:
        current = todo.pop()
        try:
            dist = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        canonical = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if canonical in seen:
            continue
        seen.append(canonical)
        todo += _requirement_names(dist)
    return seen


def installed_bytes(name: str) -> tuple[int, bool]:
    """(bytes, exact) for one distribution: the files its RECORD lists. An editable install
    lists only its loader, so there the package's source folder (less build inputs) and the
    compiled extension modules it has loaded are counted instead: an approximation."""
    dist = metadata.distribution(name)
    if report.is_editable(name):
        module = importlib.import_module(name)
        package = Path(module.__file__).parent
        build_inputs = {".pyx", ".pxd", ".build", ".c", ".cpp", ".h"}
        total = sum(p.stat().st_size for p in package.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts
                    and p.suffix not in build_inputs)
        extensions = {Path(m.__file__) for key, m in list(sys.modules.items())
                      if key.startswith(name + ".") and getattr(m, "__file__", None)
                      and m.__file__.endswith((".so", ".pyd"))}
        return total + sum(p.stat().st_size for p in extensions if p.exists()), False
    total = 0
    for file in dist.files or []:
        path = Path(file.locate())
        if path.is_file():
            total += path.stat().st_size
    return total, True


def run_size(w, libs, mode, args) -> dict:
    result = new_result(w)
    result["unit"] = "bytes"
    if libs["ember"] is None:
        result.update(status="not available", reason=libs["ember_problem"])
        return result
    sizes, exact = {}, {}
    for name in {*_closure("ember"), *_closure("torch"), "numpy"}:
        sizes[name], exact[name] = installed_bytes(name)
    ember_numpy = sizes["ember"] + sizes["numpy"]
    result["medians"] = {"ember": ember_numpy, "torch": sizes["torch"]}
    result["ratio"] = ember_numpy / sizes["torch"]
    result["metrics"] = {"size ember/torch": result["ratio"]}
    result["extra"] = {"bytes": sizes, "exact": exact,
                       "ember_closure": _closure("ember"), "torch_closure": _closure("torch")}
    fmt = report.format_bytes
    deps = [d for d in _closure("torch") if d != "torch"]
    torch_all = sum(sizes[d] for d in _closure("torch"))
    result["notes"].append(
        f"ember {fmt(sizes['ember'])}{'' if exact['ember'] else ' (editable: approximate)'} "
        f"+ numpy {fmt(sizes['numpy'])}; torch alone {fmt(sizes['torch'])}, with its "
        f"dependencies ({', '.join(sorted(deps))}) {fmt(torch_all)}")
    judge(result, w)
    return result


# --- profile of the worst miss ---------------------------------------------------------------

def _shortfall(result: dict) -> float:
    worst = 0.0
    for t in result.get("targets", []):
        if t.get("met") is False and t["measured"]:
            worst = max(worst, t["measured"] / t["value"] if t["op"] == "<="
                        else t["value"] / t["measured"])
    return worst


def _category(filename: str, function: str) -> str:
    if filename == "~":
        if "numpy" in function:
            return "NumPy (C functions cProfile sees)"
        if "ember" in function:
            return "ember (compiled functions cProfile sees)"
        return "Python built-ins"
    if f"{os.sep}numpy{os.sep}" in filename:
        return "NumPy (Python)"
    if f"{os.sep}ember{os.sep}" in filename:
        return "ember's Python functions (with the ufunc calls they make)"
    if Path(filename).resolve().parent == HERE:
        return "the workload's own lines (with the Cython and ufunc calls they make)"
    return "other Python"


def profile_worst(results, libs, device, mode) -> dict | None:
    misses = [r for r in results if r["verdict"] == "misses" and r["kind"] == "timed"]
    if not misses or libs["ember"] is None:
        return None
    worst = max(misses, key=_shortfall)
    fn = registry.REGISTRY[worst["name"]].fn(libs["ember"], device)
    fn()
    seconds = 2.0 if mode is DEFAULT else 0.5
    per_call = worst["medians"]["ember"] * worst["per"]
    calls = max(3, min(100_000, int(seconds / per_call)))
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    raw = pstats.Stats(profiler).stats  # {(file, line, function): (cc, nc, tt, ct, callers)}
    raw = {key: value for key, value in raw.items() if "_lsprof" not in key[2]}
    total = sum(v[2] for v in raw.values()) or 1.0
    categories: dict[str, float] = {}
    for (filename, _line, function), (_cc, _nc, tt, _ct, _callers) in raw.items():
        key = _category(filename, function)
        categories[key] = categories.get(key, 0.0) + tt / total
    top = sorted(raw.items(), key=lambda item: item[1][2], reverse=True)[:12]
    return {
        "workload": worst["name"],
        "calls": calls,
        "categories": dict(sorted(categories.items(), key=lambda kv: -kv[1])),
        "top": [{"function": _label(key), "share": v[2] / total, "calls_per_call": v[1] / calls}
                for key, v in top],
    }


def _label(key) -> str:
    filename, line, function = key
    if filename == "~":
        return function
    parts = Path(filename).parts
    for anchor in ("ember", "numpy", "bench"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return f"{'/'.join(parts[i:])}:{line}({function})"
    return f"{Path(filename).name}:{line}({function})"


# --- main ------------------------------------------------------------------------------------

def list_workloads(selected, libs) -> None:
    if libs["ember"] is None:
        print(libs["ember_problem"])
    for w in selected:
        if libs["ember"] is None:
            state = "not available"
        else:
            gaps = registry.missing(libs["ember"], w.requires)
            state = "available" if not gaps else "not available (missing " + ", ".join(gaps) + ")"
        targets = "; ".join(f"{t.metric} {t.op} {t.value:g}" for t in w.targets) or "-"
        print(f"{w.name:22} {w.group:16} {state}\n{'':22} {w.title}; target {targets}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args._child:
        child_main(json.loads(args._child))
        return 0
    mode = QUICK if args.quick else DEFAULT
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        print("torch is not installed: the benchmarks compare ember with torch 2.13.0 "
              "(`nox -s bench` installs it)", file=sys.stderr)
        return 2
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    ember, ember_problem = import_ember()
    libs = {"ember": ember, "torch": torch, "ember_problem": ember_problem}
    try:
        selected = registry.select(args.workloads,
                                   args.sizes if args.sizes is not None else mode.sizes)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    if args.list:
        list_workloads(selected, libs)
        return 0
    if args.device == "cuda":
        problem = cuda_problem(ember, torch)
        if problem:
            print(f"--device cuda skipped: {problem}")
            return 0
    libs["baseline"] = baseline_library(args.device)

    machine = report.machine_info(torch, ember)
    if args.device == "cuda":
        machine["gpu"] = torch.cuda.get_device_name()
    else:
        probe_machine(machine, mode)
    command = "python tools/bench/run.py" + (" " + shlex.join(sys.argv[1:]) if argv is None
                                              else " " + shlex.join(argv))
    started = time.perf_counter()
    results = []
    for w in selected:
        t0 = time.perf_counter()
        print(f"[bench] {w.name} ...", end="", file=sys.stderr, flush=True)
        if w.cpu_only and args.device != "cpu":
            result = new_result(w)
            result.update(status="skipped", reason="measured on the CPU only")
        elif ember is None and w.kind == "timed":
            result = new_result(w)
            result.update(status="not available", reason=ember_problem)
        elif w.kind == "import":
            result = run_import(w, libs, mode, args)
        elif w.kind == "size":
            result = run_size(w, libs, mode, args)
        else:
            try:
                result = run_timed(w, libs, args.device, mode, args, machine)
            except Exception as exc:  # noqa: BLE001 - one broken workload must not stop the run
                result = new_result(w)
                result.update(status="error", reason=f"{type(exc).__name__}: {exc}")
        print(f" {result['status']} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        results.append(result)

    run = {"command": command, "mode": mode.name, "device": args.device, "date": report.now(),
           "machine": machine, "results": results}
    if not args.no_profile:
        run["profile"] = profile_worst(results, libs, args.device, mode)
    run["elapsed_s"] = time.perf_counter() - started

    print()
    print(report.render_table(results))
    if run.get("profile"):
        profile = run["profile"]
        shares = ", ".join(f"{k} {100 * v:.0f}%" for k, v in profile["categories"].items())
        print(f"\nprofile of {profile['workload']} (ember): {shares}")
    json_path = args.json or ROOT / f"bench-results-{args.device}.json"
    report.write_json(json_path, run)
    print(f"\nJSON: {json_path}")
    if not args.no_markdown:
        report.update_markdown(args.markdown, run)
        print(f"Markdown: {args.markdown}")
    print(f"elapsed: {run['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
