"""Timing: interleaved, warmed-up, calibrated blocks; medians and spread; fresh subprocesses.

The machines are shared and noisy, so no figure is a single run: each library's callable is
timed in blocks of calls (about ``block_s`` long), the libraries take turns block by block
(ember, torch, ember, torch ..., the order rotating so that neither always follows the other),
and the report is the median over the blocks with the interquartile range as spread.
The garbage collector stays on: what is timed is what a user's loop pays.

NOTE [ Settling between blocks ]
After a call, OpenBLAS's threads spin for a while waiting for the next one, and so do
OpenMP's; on a 2-core machine they take the cores from whichever library's block comes next.
Interleaved, each library's block then pays for the other's spinning threads: measured
(run.py --workloads mlp_sgd,mlp_large,lenet5_adam,lstm2_lm,transformer_encoder --repeats 9),
torch's MLP 784-512-256-10 SGD step took 6.1 ms after ember's blocks and 4.5 ms with 200 ms
of sleep before each block. Two such runs, ratio without -> with: mlp_sgd 0.63, 0.76 -> 1.03,
0.99; mlp_large 1.16, 1.03 -> 1.62, 1.34; lstm2_lm 1.25, 1.09 -> 1.35, 1.55; lenet5_adam
1.34, 1.14 -> 1.28, 1.00; transformer_encoder 0.93, 1.00 -> 0.92, 0.90. ``settle_s`` (run.py
``--settle-ms``) sleeps before each block, outside the timed part, so that each starts on
idle cores; it is off by default, and a row's figure with and without it tells how much of
it was the other library's threads.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Stats", "interleaved", "import_times", "peak_rss_kb", "run_children"]

MIN_SAMPLES = 3


@dataclass
class Stats:
    """Seconds per call, one sample per block."""

    samples: list[float]
    number: int = 1  # calls per block

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def quartiles(self) -> tuple[float, float]:
        if len(self.samples) < 2:
            return self.samples[0], self.samples[0]
        q = statistics.quantiles(self.samples, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def spread_pct(self) -> float:
        """The interquartile range as a percentage of the median."""
        q1, q3 = self.quartiles()
        return 100.0 * (q3 - q1) / self.median if self.median else 0.0

    def scaled(self, factor: float) -> Stats:
        return Stats([s * factor for s in self.samples], self.number)

    def to_json(self) -> dict:
        q1, q3 = self.quartiles()
        return {
            "median": self.median,
            "q1": q1,
            "q3": q3,
            "min": min(self.samples),
            "max": max(self.samples),
            "spread_pct": self.spread_pct,
            "samples": len(self.samples),
            "calls_per_sample": self.number,
        }


def _block(fn: Callable, number: int, sync: Callable | None) -> float:
    """Seconds per call over ``number`` calls."""
    perf = time.perf_counter
    start = perf()
    for _ in range(number):
        fn()
    if sync is not None:
        sync()
    return (perf() - start) / number


def _warm_up(fn: Callable, sync: Callable | None, warmup_s: float, min_calls: int) -> float:
    """Calls ``fn`` for at least ``min_calls`` calls and ``warmup_s`` seconds; returns the
    fastest time of one call seen (the estimate used to size the blocks)."""
    best = float("inf")
    calls = 0
    start = time.perf_counter()
    while calls < min_calls or time.perf_counter() - start < warmup_s:
        best = min(best, _block(fn, 1, sync))
        calls += 1
    return best


def interleaved(
    contenders: dict[str, Callable],
    *,
    repeats: int,
    block_s: float,
    budget_s: float | None,
    warmup_s: float,
    min_warmup_calls: int,
    syncs: dict[str, Callable | None] | None = None,
    settle_s: float = 0.0,
) -> dict[str, Stats]:
    """Time each zero-argument callable in ``contenders`` ({"ember": f, "torch": g, ...}).

    All are warmed up first; then ``repeats`` rounds, in each of which every contender times
    one block, the order rotating round by round. Sampling stops early once ``budget_s`` has
    passed (None: never), but not before ``MIN_SAMPLES`` rounds.

    ``settle_s``: seconds to sleep before each block, so that the threads the previous block
    left spinning (OpenBLAS's wait for its next call, OpenMP's spin-wait) have gone to sleep
    and each block starts on idle cores (NOTE [ Settling between blocks ]).
    """
    syncs = syncs or {}
    names = list(contenders)
    numbers = {}
    for name in names:
        per_call = _warm_up(contenders[name], syncs.get(name), warmup_s, min_warmup_calls)
        numbers[name] = max(1, int(block_s / max(per_call, 1e-9)))
    samples: dict[str, list[float]] = {name: [] for name in names}
    start = time.perf_counter()
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            if settle_s > 0:
                time.sleep(settle_s)
            samples[name].append(_block(contenders[name], numbers[name], syncs.get(name)))
        over_budget = budget_s is not None and time.perf_counter() - start > budget_s
        if over_budget and round_ + 1 >= MIN_SAMPLES:
            break
    return {name: Stats(samples[name], numbers[name]) for name in names}


# --- fresh subprocesses ------------------------------------------------------------------

def peak_rss_kb() -> int:
    """This process's peak resident set size in KiB: VmHWM where /proc exists, else
    getrusage (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


_IMPORT_CODE = """\
import json, time
t0 = time.perf_counter()
import {module}
t1 = time.perf_counter()
peak = 0
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1])
print(json.dumps({{"seconds": t1 - t0, "peak_kb": peak}}))
"""


def _import_once(module: str, cwd: str) -> tuple[float, float, int]:
    """(import seconds, whole-subprocess wall seconds, peak RSS KiB) for one fresh interpreter."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_CODE.format(module=module)],
        cwd=cwd, capture_output=True, text=True, check=True,
    )
    wall = time.perf_counter() - start
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return data["seconds"], wall, data["peak_kb"]


def import_times(modules: list[str], repeats: int, cwd: str) -> dict[str, dict]:
    """Import each module in fresh interpreters, interleaved, after one warm-up import each
    (which also writes any byte code). Returns {module: {"import": Stats, "wall": Stats,
    "peak_kb": median}}."""
    for module in modules:
        _import_once(module, cwd)
    runs: dict[str, list[tuple[float, float, int]]] = {m: [] for m in modules}
    for round_ in range(repeats):
        shift = round_ % len(modules)
        for module in modules[shift:] + modules[:shift]:
            runs[module].append(_import_once(module, cwd))
    return {
        module: {
            "import": Stats([r[0] for r in rs]),
            "wall": Stats([r[1] for r in rs]),
            "peak_kb": int(statistics.median(r[2] for r in rs)),
        }
        for module, rs in runs.items()
    }


def run_children(script: str, specs: list[dict], timeout: float = 600.0) -> list[dict]:
    """Run ``script --_child SPEC`` for each spec in fresh interpreters, all at once, and
    return the JSON each prints last (or raise RuntimeError with the end of its stderr).

    They run side by side because they measure memory, not time. Each imports only the
    library that it measures.
    """
    procs = [
        subprocess.Popen([sys.executable, script, "--_child", json.dumps(spec)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=os.path.dirname(os.path.abspath(script)))
        for spec in specs
    ]
    outputs = []
    try:
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=timeout)
            lines = stdout.strip().splitlines()
            if proc.returncode != 0 or not lines:
                tail = (stderr or stdout).strip().splitlines()[-3:]
                raise RuntimeError(f"child failed ({proc.returncode}): {' | '.join(tail)}")
            outputs.append(json.loads(lines[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs
