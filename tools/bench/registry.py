"""The workload registry.

A workload is a function ``fn(lib, device)`` written once against the common PyTorch API: it
takes the library module (``ember`` or ``torch``; ``numpy`` or ``cupy`` for a baseline), does
its setup, and returns a zero-argument callable, the thing that is timed. The ``@workload``
decorator records it with its targets (ratios stated in ember's issues) and the attributes it
needs (``requires``): while one of them is missing from ember, the workload is reported as
"not available" and turns on by itself once the feature lands.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["REGISTRY", "Target", "Workload", "missing", "select", "workload"]

# The metrics a target can refer to. Each is computed from the medians of one run.
METRICS = {
    # time (or size, or peak RSS) of ember over the same for torch: lower is better
    "time ember/torch": "ember/torch",
    "size ember/torch": "ember/torch",
    "peak RSS ember/torch": "peak RSS ember/torch",
    # throughput of ember over throughput of the baseline = baseline time / ember time
    "throughput ember/numpy": "throughput ember/numpy",
    "throughput ember/torch": "throughput ember/torch",
}

_OPS = {"<=": operator.le, ">=": operator.ge}
_SIGNS = {"<=": "\u2264", ">=": "\u2265"}


@dataclass(frozen=True)
class Target:
    """A speed (or memory) target from an issue, e.g. ``Target("time ember/torch", "<=", 0.5)``."""

    metric: str
    op: str
    value: float

    def __post_init__(self):
        if self.metric not in METRICS:
            raise ValueError(f"unknown metric {self.metric!r}; one of {sorted(METRICS)}")
        if self.op not in _OPS:
            raise ValueError(f"op must be '<=' or '>=', got {self.op!r}")

    def met(self, measured: float) -> bool:
        return bool(_OPS[self.op](measured, self.value))

    def describe(self, measured: float | None = None) -> str:
        """``≤ 0.50`` for the plain time ratio, otherwise the metric is named, with its value."""
        bound = f"{_SIGNS[self.op]} {self.value:g}"
        if self.metric == "time ember/torch":
            return bound
        label = METRICS[self.metric]
        if measured is None:
            return f"{label} {bound}"
        return f"{label} {measured:.2f} ({bound})"

    def to_json(self) -> dict:
        return {"metric": self.metric, "op": self.op, "value": self.value}


@dataclass
class Workload:
    """One benchmark. ``kind`` is "timed" (fn(lib, device) -> callable), "import" (fresh
    subprocesses import the library) or "size" (installed size of the distributions)."""

    name: str
    group: str
    title: str
    fn: Callable | None = None
    kind: str = "timed"
    source: str = ""  # the issue that states the target
    targets: tuple[Target, ...] = ()
    requires: tuple[str, ...] = ()  # dotted attribute paths, checked on ember and on torch
    per: int = 1  # the callable does `per` operations; times are reported per operation
    per_label: str = "call"
    baseline: bool = False  # also run the same code under NumPy (CuPy on CUDA)
    baseline_fn: Callable | None = None  # the baseline's own code, where the common one can't be
    baseline_label: str = ""  # what the baseline's own code does, for the notes
    peak_rss: bool = False  # measure the peak RSS of each library in a fresh subprocess
    repeats: int = 25  # samples per library in the default mode
    budget_s: float = 20.0  # stop sampling after this long (default mode), if >= 3 samples
    block_s: float = 0.05  # each sample times calls for about this long
    cpu_only: bool = False  # not repeated with --device cuda
    extra: Callable | None = None  # extra(times: dict[str, float]) -> (dict, list[str] notes)
    notes: tuple[str, ...] = field(default=())
    family: str = ""  # a model family measured at several sizes (workloads_families.py)
    size: str = ""  # its size there: "small", "medium" or "large"


REGISTRY: dict[str, Workload] = {}


def workload(name: str, **options) -> Callable:
    """Register ``fn(lib, device)`` as the workload ``name``; options are ``Workload``'s fields."""

    def register(fn: Callable) -> Callable:
        if name in REGISTRY:
            raise ValueError(f"workload {name!r} is registered twice")
        REGISTRY[name] = Workload(name=name, fn=fn, **options)
        return fn

    return register


def add(item: Workload) -> Workload:
    """Register a workload that is not a plain function (import time, installed size)."""
    if item.name in REGISTRY:
        raise ValueError(f"workload {item.name!r} is registered twice")
    REGISTRY[item.name] = item
    return item


def _missing_prefix(lib, path: str) -> str | None:
    """None if ``lib.<path>`` exists (importing submodules such as ``utils.data`` on the way),
    else the shortest prefix of ``path`` that is missing."""
    obj = lib
    parts = path.split(".")
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join([lib.__name__, *parts[: i + 1]]))
        except ImportError:
            return ".".join(parts[: i + 1])
    return None


def missing(lib, requires) -> list[str]:
    """What of ``requires`` ``lib`` lacks, as ``lib.path`` strings: a missing module once
    (``ember.nn``), not each of its classes."""
    gaps = []
    for path in requires:
        prefix = _missing_prefix(lib, path)
        if prefix is not None and f"{lib.__name__}.{prefix}" not in gaps:
            gaps.append(f"{lib.__name__}.{prefix}")
    return gaps


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def select(names: str | None, sizes: str | None = None) -> list[Workload]:
    """The workloads named in a comma-separated list (a group or family name selects its
    group or family), in registration order; all of them for None. ``sizes`` (e.g.
    ``"small,medium"``) keeps, of the workloads measured at several sizes, those sizes only
    (one named in ``names`` itself is always kept); None keeps all."""
    workloads = list(REGISTRY.values())
    wanted = _names(names)
    if wanted:
        sets = {w.group for w in workloads} | {w.family for w in workloads if w.family}
        unknown = [n for n in wanted if n not in REGISTRY and n not in sets]
        if unknown:
            raise KeyError(f"unknown workloads {unknown}; known: {', '.join(REGISTRY)}")
        workloads = [w for w in workloads
                     if w.name in wanted or w.group in wanted or w.family in wanted]
    if sizes is not None:
        keep = _names(sizes)
        known = {w.size for w in REGISTRY.values() if w.size}
        unknown = [s for s in keep if s not in known]
        if unknown:
            raise KeyError(f"unknown sizes {unknown}; known: {', '.join(sorted(known))}")
        workloads = [w for w in workloads if not w.size or w.size in keep or w.name in wanted]
    return workloads
