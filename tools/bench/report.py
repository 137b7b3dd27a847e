"""The report: the machine, the printed table, the JSON file and docs/benchmarks.md.

docs/benchmarks.md keeps hand-written text; the harness only replaces the part between
``<!-- bench:DEVICE:begin -->`` and ``<!-- bench:DEVICE:end -->`` (DEVICE is cpu or cuda), so a
CUDA run does not erase the CPU table and the analysis around the tables stays.
"""

from __future__ import annotations

import datetime
import importlib.metadata as metadata
import json
import os
import platform
import re
from pathlib import Path

__all__ = ["machine_info", "render_table", "render_markdown", "update_markdown", "write_json"]

SCHEMA = 1


# --- the machine -----------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _l3_cache() -> str | None:
    path = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in sorted(path.glob("index*")):
            if (index / "level").read_text().strip() == "3":
                size = (index / "size").read_text().strip()
                if size.endswith("K") and size[:-1].isdigit():
                    kib = int(size[:-1])
                    return f"{kib // 1024} MiB" if kib % 1024 == 0 else f"{kib} KiB"
                return size
    except OSError:
        pass
    return None


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def is_editable(distribution: str) -> bool:
    try:
        text = metadata.distribution(distribution).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return False
    return bool(text) and bool(json.loads(text).get("dir_info", {}).get("editable"))


def _numpy_blas() -> str | None:
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - only a description
        return None


def _openblas_core() -> str | None:
    """The kernel set NumPy's bundled OpenBLAS runs (e.g. Haswell, SkylakeX), with any
    OPENBLAS_* settings of the environment that chose it."""
    import ctypes
    import glob

    import numpy as np

    core = None
    base = os.path.dirname(os.path.dirname(np.__file__))
    for path in sorted(glob.glob(os.path.join(base, "numpy.libs", "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("openblas_get_corename", "scipy_openblas_get_corename64_",
                     "scipy_openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                core = fn().decode()
                break
        if core:
            break
    if core is None:
        return None
    settings = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("OPENBLAS_")]
    return core + (f" (set by {', '.join(settings)})" if settings else "")


def machine_info(torch=None, ember=None) -> dict:
    import numpy as np

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    info = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gib": _memory_gib(),
        "l3_cache": _l3_cache(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numpy_blas": _numpy_blas(),
        "openblas_core": _openblas_core(),
        "torch": getattr(torch, "__version__", None) or _version("torch"),
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "ember": getattr(ember, "__version__", None) or _version("ember"),
        "ember_editable": is_editable("ember"),
        "cupy": _version("cupy") or _version("cupy-cuda12x") or _version("cupy-cuda13x"),
    }
    return info


def _machine_line(machine: dict) -> str:
    mem = f", {machine['memory_gib']:.0f} GiB RAM" if machine.get("memory_gib") else ""
    if machine.get("l3_cache"):
        mem += f", L3 {machine['l3_cache']}"
    cores = f"{machine['cores']} cores"
    if machine.get("usable_cores") and machine["usable_cores"] != machine["cores"]:
        cores += f" ({machine['usable_cores']} usable)"
    blas = f" ({machine['numpy_blas']})" if machine.get("numpy_blas") else ""
    if machine.get("openblas_core"):
        blas = blas[:-1] + f", {machine['openblas_core']} kernels)" if blas else blas
    editable = " (editable install)" if machine.get("ember_editable") else ""
    parts = [
        f"{machine['cpu']}, {cores}{mem}",
        f"Python {machine['python']}, NumPy {machine['numpy']}{blas}, "
        f"torch {machine['torch']} ({machine['torch_threads']} threads), "
        f"ember {machine['ember']}{editable}",
    ]
    if machine.get("gpu"):
        parts.append(f"GPU {machine['gpu']}, CuPy {machine.get('cupy')}")
    limits = []
    if machine.get("copy_bandwidth_gbs"):
        bandwidth = machine["copy_bandwidth_gbs"]
        limits.append(f"memory bandwidth (NumPy copy of 128 MiB) {bandwidth:.1f} GB/s")
    if machine.get("blas_gflops"):
        limits.append(f"BLAS (NumPy float32 matmul 1024x1024) {machine['blas_gflops']:.1f} GFLOP/s")
    if limits:
        parts.append("measured: " + "; ".join(limits))
    return "; ".join(parts)


# --- formatting ------------------------------------------------------------------------------

def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_bytes(count: float | None) -> str:
    if count is None:
        return "-"
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count:.0f} B"


def _value(result: dict, lib: str) -> str:
    value = result.get("medians", {}).get(lib)
    if value is None:
        return "-"
    if result.get("unit") == "bytes":
        return format_bytes(value)
    text = format_seconds(value)
    return f"{text}/{result['per_label']}" if result.get("per", 1) > 1 else text


def _target_text(result: dict) -> str:
    targets = result.get("targets") or []
    if not targets:
        return "-"
    return "; ".join(t["text"] for t in targets)


def _verdict(result: dict) -> str:
    if result["status"] != "ok":
        return result["status"]
    return result.get("verdict") or "-"


def _spread(result: dict) -> str:
    stats = result.get("stats") or {}
    parts = [f"{stats[lib]['spread_pct']:.0f}%" for lib in ("ember", "torch") if lib in stats]
    return " / ".join(parts) if parts else "-"


def _peak(result: dict) -> str:
    peak = result.get("peak_rss_mb") or {}
    if not peak:
        return "-"
    return " / ".join(f"{peak[lib]:.0f} MB" if lib in peak else "-" for lib in ("ember", "torch"))


def _ratio(result: dict) -> str:
    ratio = result.get("ratio")
    return "-" if ratio is None else f"{ratio:.2f}"


COLUMNS = ["workload", "ember", "torch", "ember/torch", "target", "verdict",
           "spread e / t (IQR)", "peak RSS e / t"]


def _rows(results: list[dict]) -> list[list[str]]:
    return [[r["name"], _value(r, "ember"), _value(r, "torch"), _ratio(r), _target_text(r),
             _verdict(r), _spread(r), _peak(r)] for r in results]


def render_table(results: list[dict]) -> str:
    """The table printed on the terminal, then the notes and the reasons for what did not run."""
    rows = [COLUMNS, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    for name, status, text in _footnotes(results):
        lines.append(f"  {name}{f' ({status})' if status else ''}: {text}")
    matrix = family_matrix(results)
    if matrix:
        widths = [max(len(row[i]) for row in matrix) for i in range(len(matrix[0]))]
        lines += ["", FAMILY_NOTE]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in matrix]
    return "\n".join(lines)


def family_matrix(results: list[dict]) -> list[list[str]]:
    """The ratios of the model families as rows (family, then one cell per size): the time
    ratio ember/torch, the peak-RSS ratio after a slash, and ``*`` where a target is missed.
    Empty when no workload of a family ran."""
    sizes = ("small", "medium", "large")
    families: dict[str, dict[str, str]] = {}
    for r in results:
        family, size = r.get("family"), r.get("size")
        if not family or size not in sizes:
            continue
        cell = r["status"]
        if r["status"] == "ok":
            cell = _ratio(r)
            rss = (r.get("metrics") or {}).get("peak RSS ember/torch")
            if rss is not None:
                cell += f" / {rss:.2f}"
            if r.get("verdict") == "misses":
                cell += " *"
        families.setdefault(family, {})[size] = cell
    if not families:
        return []
    rows = [["family", *sizes]]
    for family, cells in families.items():
        rows.append([family, *(cells.get(size, "-") for size in sizes)])
    return rows


FAMILY_NOTE = ("ember/torch time / peak RSS ember/torch, per model family and size; * marks a "
               "missed target (time <= 0.8 small, <= 1.0 medium and large; peak RSS <= 1.0).")


def _footnotes(results: list[dict]) -> list[tuple[str, str, str]]:
    """(workload, status or "", text): the notes of what ran, then why the rest did not."""
    lines = []
    for r in results:
        if r["status"] == "ok":
            lines += [(r["name"], "", note) for note in r.get("notes", [])]
    for r in results:
        if r["status"] != "ok":
            lines.append((r["name"], r["status"], r.get("reason", "")))
    return lines


# --- markdown --------------------------------------------------------------------------------

def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def render_markdown(run: dict) -> str:
    """The generated section of docs/benchmarks.md for one run (without the markers)."""
    device = run["device"]
    lines = [
        f"## Latest run: {device.upper()}",
        "",
        f"`{run['command']}` ({run['mode']} mode), {run['date']}.",
        "",
        f"Machine: {_machine_line(run['machine'])}.",
        "",
        "| workload | what | " + " | ".join(COLUMNS[1:]) + " |",
        "|" + " --- |" * (len(COLUMNS) + 1),
    ]
    for result, row in zip(run["results"], _rows(run["results"]), strict=True):
        cells = [f"`{row[0]}`", result["title"], *row[1:]]
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    lines += [
        "",
        "Times are medians over interleaved samples (per operation where marked /op); spread is "
        "the interquartile range as a percentage of the median, ember / torch; ratio is "
        "ember/torch time (lower is better); targets are those of the issue named in the JSON "
        "(`source`). Peak RSS is the high-water mark of a fresh process that imports one "
        "library and runs the workload.",
    ]
    matrix = family_matrix(run["results"])
    if matrix:
        lines += ["", FAMILY_NOTE, "", "| " + " | ".join(matrix[0]) + " |",
                  "|" + " --- |" * len(matrix[0])]
        lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in matrix[1:]]
    notes = _footnotes(run["results"])
    if notes:
        lines.append("")
        for name, status, text in notes:
            lines.append(f"- `{name}`{f' ({status})' if status else ''}: {text}")
    profile = run.get("profile")
    if profile:
        lines += ["", *render_profile(profile)]
    return "\n".join(lines)


def render_profile(profile: dict) -> list[str]:
    lines = [
        f"### Where ember's time goes: `{profile['workload']}`",
        "",
        f"cProfile over {profile['calls']} calls of ember's callable; shares of the profiled "
        "time, which the profiler inflates at the Python level. cProfile cannot see inside "
        "Cython functions or NumPy ufunc calls: their time counts as the own time of the Python "
        "function that calls them. Where the workload has a NumPy baseline, ember's time "
        "minus NumPy's is the wrapper's cost.",
        "",
        "| where | share |",
        "| --- | --- |",
    ]
    for category, share in profile["categories"].items():
        lines.append(f"| {category} | {100 * share:.0f}% |")
    lines += ["", "| function | own time share | calls per call |", "| --- | --- | --- |"]
    for entry in profile["top"]:
        lines.append(f"| `{_escape(entry['function'])}` | {100 * entry['share']:.0f}% | "
                     f"{entry['calls_per_call']:.3g} |")
    return lines


HEADER = """# Benchmarks

ember against PyTorch 2.13.0 (CPU build) on the same machine, in one run: every workload is
written once against the common API (tools/bench/workloads.py) and timed under both libraries,
interleaved, after a warm-up. Every speed target in ember's issues is a ratio to PyTorch, and
this table is where it is checked (DESIGN.md section 5).

```
nox -s bench                                  # the default run (under 10 minutes on 2 cores)
nox -s bench -- --quick                       # under 2 minutes: medium sizes, fewer samples
nox -s bench -- --workloads op_add,chain10_grad --repeats 50
nox -s bench -- --workloads gpt --sizes small,large   # one model family at two sizes
nox -s bench -- --device cuda                 # ember on CUDA against torch on CUDA (CuPy + GPU)
python tools/bench/run.py --list              # the workloads and whether ember has their features
```

Options: `--workloads` takes names, groups (per-op, throughput, footprint, nn, sequence, optim,
data) or model families (mlp, lenet, resnet, lstm_lm, gru_lm, transformer, gpt: each at a small,
a medium and a large size); `--sizes` keeps some sizes of the families (default all; medium in
`--quick`); `--repeats N` fixes the samples per library (no time budget); `--json PATH` (default
bench-results-DEVICE.json at the repository root); `--markdown PATH` (default this file) or
`--no-markdown`; `--torch-threads N`; `--no-profile`.

The run writes the JSON and replaces its device's section below (between the
`<!-- bench:DEVICE:begin/end -->` markers); the text outside those sections is kept.
"""


def _template() -> str:
    return HEADER + """
<!-- bench:cpu:begin -->
## Latest run: CPU

Not run yet.
<!-- bench:cpu:end -->

<!-- bench:cuda:begin -->
## Latest run: CUDA

Not run yet: needs a machine with a GPU and CuPy (`nox -s bench -- --device cuda`).
<!-- bench:cuda:end -->
"""


def update_markdown(path: Path, run: dict) -> None:
    """Replace the run's device section of the file at ``path`` (created if missing)."""
    device = run["device"]
    begin, end = f"<!-- bench:{device}:begin -->", f"<!-- bench:{device}:end -->"
    text = path.read_text() if path.exists() else _template()
    section = f"{begin}\n{render_markdown(run)}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_json(path: Path, run: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": SCHEMA, **run}, indent=2) + "\n")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
