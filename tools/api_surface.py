"""PyTorch's public surface against ember's: which names exist, and whether signatures agree.

Run it with the environment that has torch 2.13 and ember (``.venv/bin/python``)::

    .venv/bin/python tools/api_surface.py              # the coverage table
    .venv/bin/python tools/api_surface.py --missing    # ... and every missing name
    .venv/bin/python tools/api_surface.py --signatures # ... and every signature mismatch

tests/interop/test_api_surface_torch.py runs the same code and fails where the surface falls
short; the names ember leaves out on purpose, each with a reason, are in
tests/interop/api_surface_exclusions.toml.

NOTE [ What a public name is ]
A module's public names are:

1. where the module has ``__all__``: its entries that do not start with ``_`` and that the
   module really has, minus modules (submodules get rows of their own where they are listed);
2. otherwise: ``dir(module)`` minus names that start with ``_``, minus modules, minus objects
   re-exported from outside torch (an object whose ``__module__`` is a string that does not
   start with ``torch``: ``typing.Optional``, ``contextlib.contextmanager``), minus the
   TorchScript annotation helpers imported from ``torch._jit_internal`` for the module's own
   use (``BroadcastingList1``, ``boolean_dispatch``), minus plain flags and text (``bool``,
   ``str`` and ``dict`` values: ``TYPE_CHECKING``, the docstring notes ``tf32_notes``,
   ``common_notes``);
3. ``torch.Tensor``: ``dir(torch.Tensor)`` minus names that start with ``_`` (methods and
   attributes alike);
4. ``torch.nn.modules``: rule 1 or 2 for each public submodule (``activation``, ``linear``, ...),
   named ``submodule.Name`` (ember must have ``ember.nn.modules.activation.ReLU``);
5. ``torch.backends``: the public submodules themselves (``cudnn``, ``mps``, ...; not
   ``torch.backends.m``, torch's own module object left behind by its module wrapper), and
   rule 1 or 2 (for torch's property modules such as ``cudnn``, the properties of the
   module's class too) inside those that a CPU or CUDA program configures
   (``BACKENDS_WITH_CONTENTS``), named ``submodule.name``;
6. plus, for ``torch``, the names PyTorch documents and programs use that ``torch.__all__``
   leaves out (``EXTRA_NAMES``: ``torch.channels_last``, ``torch.strided``, ``torch.unique``,
   ``torch.HalfTensor``, ...).

Exclusions: at most 10% of a module's names (20% of top-level ``torch``, where TorchScript's
and the dispatcher's types live), rounded down, but one in a module of fewer than ten names
(``torch.testing`` has four, one of them TorchScript's ``FileCheck``).

A name of ``torch.X`` is present when ``ember.X`` has it (importing ``ember.X`` if need be).

NOTE [ Which signatures are compared ]
For every public name present in both, first its kind: module, class, callable or value (for
``Tensor``: method or attribute, so that ``x.T`` is not ``x.T()``), and for a plain value (a
number, string, bool or None: ``torch.pi``) the value; then for callables, and for
the public methods of public classes present in both: ``inspect.signature`` of torch's object
against ember's (for a class, its constructor), comparing the parameters' names, kinds
(positional-only, keyword-only, ``*args``, ``**kwargs``) and defaults (dtypes, devices and
layouts by name, lists as tuples, other objects by type). Skipped, because there is nothing to
compare against (tests/interop/test_api_surface_torch.py calls a table of them with torch's
keyword names instead):

- torch's C builtins (most of ``torch.*``, ``torch.nn.functional``'s ATen ops and ``Tensor``'s
  C methods): ``inspect.signature`` raises for them (no ``__text_signature__``); their
  docstrings hold overloads, not one signature;
- torch objects whose signature is only ``(*args, **kwargs)`` (a pass-through wrapper);
- methods that torch's class inherits from a non-torch base (``object``, ``Enum``, ...);
- for ``Tensor`` methods and class methods, the first parameter (``self``), always positional.

A second path to the same pair of objects (``torch.nn.modules.linear.Linear`` after
``torch.nn.Linear``) is compared once, under the first path in module order.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import inspect
import math
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
EXCLUSIONS_FILE = ROOT / "tests" / "interop" / "api_surface_exclusions.toml"

MODULES = [
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations", "torch.nn.modules", "torch.nn.parallel",
    "torch.autograd", "torch.autograd.functional", "torch.autograd.graph", "torch.optim",
    "torch.optim.lr_scheduler", "torch.optim.swa_utils", "torch.utils.data",
    "torch.utils.checkpoint", "torch.linalg", "torch.fft", "torch.special",
    "torch.distributions", "torch.cuda", "torch.amp", "torch.backends", "torch.multiprocessing",
    "torch.distributed", "torch.testing", "torch.func", "torch.profiler", "torch.hub",
    "torch.accelerator", "torch.fx", "torch.onnx",
]
# Names PyTorch documents and programs use that torch.__all__ leaves out (rule 6).
EXTRA_NAMES = {
    "torch": ("broadcast_shapes", "channels_last", "channels_last_3d", "contiguous_format",
              "preserve_format", "strided", "from_dlpack", "to_dlpack", "unique", "lu",
              "pca_lowrank", "svd_lowrank", "set_grad_enabled", "set_default_dtype",
              "BFloat16Tensor", "HalfTensor", "BFloat16Storage", "HalfStorage",
              "ComplexFloatStorage", "ComplexDoubleStorage"),
}
# torch.backends submodules whose contents count (the others count by their name only).
BACKENDS_WITH_CONTENTS = ("cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp",
                          "opt_einsum")
# Exclusion reasons start with one of these tags ("tag: why"). "broken in torch": a legacy
# name torch keeps that torch itself can no longer run (nothing to be compatible with).
NAME_TAGS = ("TorchScript", "dispatcher", "quantization", "sparse", "named tensors",
             "other backend", "symbolic shapes", "broken in torch")
# In these modules only these tags may exclude a name.
STRICT_MODULES = ("torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.modules",
                  "torch.optim", "torch.utils.data")
STRICT_TAGS = ("sparse", "quantization", "named tensors")
LIMITS = {"torch": 0.20}  # the share of a module's names the exclusions may take
DEFAULT_LIMIT = 0.10


def exclusion_limit(module: str, total: int) -> int:
    """How many of a module's ``total`` names may be excluded: 10% (20% of top-level torch),
    rounded down, but one in a module of fewer than ten names."""
    return max(1, int(LIMITS.get(module, DEFAULT_LIMIT) * total + 1e-9)) if total else 0


def load_exclusions(path: Path = EXCLUSIONS_FILE) -> dict:
    """The exclusions file: ``report_only``, ``names`` (per module) and ``signatures``."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    data.setdefault("report_only", {})
    data.setdefault("names", {})
    data.setdefault("signatures", {})
    return data


_NO_MODULE: set = set()  # module paths that failed to import (each try can be slow)


_MISSING = object()


def resolve(path: str, import_last: bool = True, default=None):
    """The object at a dotted path (``ember.nn.modules.activation``), importing modules on the
    way (the last part only with ``import_last``: a name that should be a function is looked
    up, not imported); ``default`` (None) where there is none."""
    parts = path.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return default
    for i, part in enumerate(parts[1:], start=1):
        try:
            obj = getattr(obj, part)
            continue
        except AttributeError:
            pass
        except Exception:  # noqa: BLE001 - a module attribute that raises is not there
            return default
        sub = ".".join(parts[: i + 1])
        if not isinstance(obj, types.ModuleType) or sub in _NO_MODULE or \
                (i == len(parts) - 1 and not import_last):
            return default
        try:
            obj = importlib.import_module(sub)
        except Exception:  # noqa: BLE001 - a submodule that fails to import is not there
            _NO_MODULE.add(sub)
            return default
    return obj


def _from_torch(obj) -> bool:
    mod = getattr(obj, "__module__", None)
    return not isinstance(mod, str) or mod.startswith("torch")


def _private_import(obj) -> bool:
    """A TorchScript annotation helper (``torch._jit_internal``) imported for a module's own
    use."""
    return getattr(obj, "__module__", None) == "torch._jit_internal"


def _module_names(mod, with_class=False) -> list[str]:
    names = getattr(mod, "__all__", None)
    if names is not None:
        out = [n for n in names if not n.startswith("_") and hasattr(mod, n)]
        return sorted({n for n in out if not isinstance(getattr(mod, n), types.ModuleType)})
    pool = set(dir(mod))
    if with_class and type(mod) is not types.ModuleType:  # torch's property modules
        pool |= set(dir(type(mod))) - set(dir(types.ModuleType))
    out = set()
    for n in pool:
        if n.startswith("_"):
            continue
        try:
            obj = getattr(mod, n)
        except Exception:  # noqa: BLE001 - a property that raises on this machine still counts
            out.add(n)
            continue
        if isinstance(obj, types.ModuleType) or not _from_torch(obj) or _private_import(obj) \
                or isinstance(obj, (bool, str, dict)):
            continue
        out.add(n)
    return sorted(out)


def public_names(module: str) -> list[str]:
    """torch's public names of ``module`` (NOTE [ What a public name is ])."""
    import pkgutil

    torch_mod = resolve(module)
    if module == "torch.Tensor":
        return sorted(n for n in dir(torch_mod) if not n.startswith("_"))
    if module == "torch.nn.modules":
        out = []
        for info in pkgutil.iter_modules(torch_mod.__path__):
            if not info.name.startswith("_"):
                sub = importlib.import_module(f"{module}.{info.name}")
                out += [f"{info.name}.{n}" for n in _module_names(sub)]
        return sorted(out)
    if module == "torch.backends":
        out = []
        for sub_name in dir(torch_mod):
            sub = getattr(torch_mod, sub_name)
            if sub_name.startswith("_") or not isinstance(sub, types.ModuleType) or \
                    sub.__name__ == module:  # torch.backends.m: the module itself, leaked
                continue
            out.append(sub_name)
            if sub_name in BACKENDS_WITH_CONTENTS:
                out += [f"{sub_name}.{n}" for n in _module_names(sub, with_class=True)]
        return sorted(out)
    return sorted(set(_module_names(torch_mod)) | set(EXTRA_NAMES.get(module, ())))


def _ember_path(module: str, name: str) -> str:
    return "ember" + module[len("torch"):] + "." + name


@dataclass
class ModuleReport:
    module: str
    total: int = 0
    present: list = field(default_factory=list)
    excluded: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    report_only: str | None = None
    stale: list = field(default_factory=list)  # excluded, yet ember has them
    unknown: list = field(default_factory=list)  # excluded, yet not a torch public name


def surface(exclusions: dict | None = None) -> list[ModuleReport]:
    """A report per module of MODULES: present, excluded and missing names."""
    exclusions = load_exclusions() if exclusions is None else exclusions
    reports = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in MODULES:
            names = public_names(module)
            excl = exclusions["names"].get(module, {})
            rep = ModuleReport(module, len(names),
                               report_only=exclusions["report_only"].get(module))
            rep.unknown = sorted(set(excl) - set(names))
            for name in names:
                is_module = isinstance(resolve(f"{module}.{name}"), types.ModuleType)
                # a value of None (cudnn.benchmark_limit without cuDNN) is there too
                there = resolve(_ember_path(module, name), import_last=is_module,
                                default=_MISSING) is not _MISSING
                if name in excl:
                    (rep.stale if there else rep.excluded).append(name)
                elif there:
                    rep.present.append(name)
                else:
                    rep.missing.append(name)
            reports.append(rep)
    return reports


def exclusion_problems(exclusions: dict | None = None, reports=None) -> list[str]:
    """What is wrong with the exclusions file: reasons without an allowed tag, names torch
    does not have or ember does, and modules over their limit."""
    exclusions = load_exclusions() if exclusions is None else exclusions
    reports = surface(exclusions) if reports is None else reports
    problems = []
    for module, excl in exclusions["names"].items():
        if module not in MODULES:
            problems.append(f"[names.{module!r}]: not a module of the surface")
        tags = STRICT_TAGS if module in STRICT_MODULES else NAME_TAGS
        for name, reason in excl.items():
            tag = reason.split(":", 1)[0]
            if tag not in tags or not reason.split(":", 1)[-1].strip():
                problems.append(f"{module}.{name}: reason {reason!r} does not start with "
                                f"one of {', '.join(tags)} and a colon")
    for rep in reports:
        problems += [f"{rep.module}.{n}: excluded, but not a public name of torch"
                     for n in rep.unknown]
        problems += [f"{rep.module}.{n}: excluded, but ember has it" for n in rep.stale]
        limit = exclusion_limit(rep.module, rep.total)
        if len(rep.excluded) + len(rep.stale) > limit:
            problems.append(f"{rep.module}: {len(rep.excluded) + len(rep.stale)} of {rep.total} "
                            f"names excluded, over the limit of {limit}")
    for path, reason in exclusions["signatures"].items():
        if not str(reason).strip():
            problems.append(f"signature of {path}: no reason")
    return problems


def format_table(reports) -> str:
    rows = [("module", "present", "total", "excluded", "missing", "present %", "note")]
    tot = [0, 0, 0, 0]
    for r in reports:
        n_present = len(r.present) + len(r.stale)
        rows.append((r.module, n_present, r.total, len(r.excluded), len(r.missing),
                     f"{100 * n_present / max(r.total, 1):.1f}",
                     f"report only ({r.report_only})" if r.report_only else ""))
        for i, v in enumerate((n_present, r.total, len(r.excluded), len(r.missing))):
            tot[i] += v
    rows.append(("all", *tot, f"{100 * tot[0] / max(tot[1], 1):.1f}", ""))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        cells = [str(c).ljust(w) if i in (0, 6) else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if k in (0, len(rows) - 2):
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


# --- signatures -------------------------------------------------------------------------------

_SKIP = object()


def _python_constructor(cls) -> bool:
    """Whether a class's constructor signature says something: one written in Python, or
    ``object``'s (no arguments); not a C type's (``torch.dtype``, an exception)."""
    for klass in cls.__mro__[:-1]:
        for meth in ("__init__", "__new__"):
            fn = vars(klass).get(meth)
            if isinstance(fn, staticmethod):
                fn = fn.__func__
            if inspect.isfunction(fn):
                return True
        if not klass.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a static C type
            return False
    return True


def _signature(obj, torch_side=False):
    try:
        if inspect.isclass(obj) and torch_side and not _python_constructor(obj):
            return None
        if inspect.isclass(obj):
            return inspect.signature(obj)
        if not callable(obj):
            return _SKIP
        return inspect.signature(obj)
    except (ValueError, TypeError):
        return None


def _norm_default(v):
    if v is inspect.Parameter.empty:
        return "<required>"
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):  # 1 and 1.0 agree
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        return int(v) if float(v).is_integer() and abs(v) < 2**53 else float(v)
    if isinstance(v, (tuple, list)):
        return tuple(_norm_default(x) for x in v)
    if isinstance(v, enum.Enum):
        return f"{type(v).__name__}.{v.name}"
    if isinstance(v, types.ModuleType):
        return f"<module {v.__name__}>"
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"<{getattr(v, '__name__', '?')}>"
    text = str(v)
    if text.startswith(("torch.", "ember.")):  # dtypes, layouts, memory formats
        return text.split(".", 1)[1]
    return f"<{type(v).__name__}>"


def _params(sig, drop_first):
    params = list(sig.parameters.values())
    if drop_first and params and params[0].kind in (params[0].POSITIONAL_ONLY,
                                                    params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]
    return [(p.name, p.kind, _norm_default(p.default)) for p in params]


def _passthrough(params) -> bool:
    kinds = [k for _, k, _ in params]
    return kinds == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD] or \
        kinds == [inspect.Parameter.VAR_KEYWORD] or kinds == [inspect.Parameter.VAR_POSITIONAL]


def _fmt(params) -> str:
    out, star = [], False
    for name, kind, default in params:
        if kind == inspect.Parameter.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*",
                  inspect.Parameter.VAR_KEYWORD: "**"}.get(kind, "")
        star = star or kind == inspect.Parameter.VAR_POSITIONAL
        text = prefix + name + ("" if default == "<required>" else f"={default!r}")
        if kind == inspect.Parameter.POSITIONAL_ONLY:
            text += "/"
        out.append(text)
    return "(" + ", ".join(out) + ")"


def compare(theirs, mine, drop_first=False):
    """None when the signatures agree (or torch's cannot be compared: ``"skip"``), else a
    one-line description of the difference."""
    tsig = _signature(theirs, torch_side=True)
    if tsig is None or tsig is _SKIP:
        return "skip"
    tp = _params(tsig, drop_first)
    if _passthrough(tp):
        return "skip"
    msig = _signature(mine)
    if msig is None:
        return "ember's signature cannot be introspected"
    if msig is _SKIP:
        return "not callable in ember"
    mp = _params(msig, drop_first)
    if tp == mp:
        return None
    return f"torch {_fmt(tp)} vs ember {_fmt(mp)}"


def _class_methods(cls):
    """The public methods torch's class defines itself (or inherits from torch classes)."""
    out = {}
    for klass in reversed(cls.__mro__):
        if not _from_torch(klass) or klass.__module__ == "builtins":
            continue
        for n, v in vars(klass).items():
            if n.startswith("_") and n not in ("__init__", "__call__"):
                continue
            if n in ("__init__", "__call__"):
                continue  # the constructor is the class's own signature
            if isinstance(v, (staticmethod, classmethod)):
                out[n] = (v.__func__, isinstance(v, classmethod))
            elif inspect.isfunction(v):
                out[n] = (v, True)
            else:
                out.pop(n, None)
    return out


def kind_of(obj, owner=None, name=None) -> str:
    """module, class, callable or value; for a class's member (``owner``, ``name``): method or
    attribute (a property or C getset: ``x.shape``, not ``x.shape()``)."""
    if owner is not None:
        d = inspect.getattr_static(owner, name, None)
        if isinstance(d, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            return "attribute"
        return "method" if callable(d) else "value"
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "callable" if callable(obj) else "value"


@dataclass
class Mismatch:
    path: str
    problem: str
    module: str


def signature_mismatches(reports=None, exclusions: dict | None = None):
    """(mismatches, counts): every signature difference of the present names, and how many
    pairs were compared and skipped."""
    exclusions = load_exclusions() if exclusions is None else exclusions
    reports = surface(exclusions) if reports is None else reports
    seen, out = set(), []
    counts = {"compared": 0, "skipped": 0}

    def check(path, module, theirs, mine, drop_first):
        key = (id(theirs), id(mine))
        if key in seen:
            return
        seen.add(key)
        problem = compare(theirs, mine, drop_first)
        if problem == "skip":
            counts["skipped"] += 1
            return
        counts["compared"] += 1
        if problem is not None:
            out.append(Mismatch(path, problem, module))

    theirs_cls, mine_cls = resolve("torch.Tensor"), resolve("ember.Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in reports:
            for name in rep.present + rep.stale:
                path = f"{rep.module}.{name}"
                theirs = resolve(path)
                mine = resolve(_ember_path(rep.module, name), import_last=False)
                if rep.module == "torch.Tensor":
                    kinds = (kind_of(None, theirs_cls, name), kind_of(None, mine_cls, name))
                else:
                    kinds = (kind_of(theirs), kind_of(mine))
                if kinds[0] != kinds[1]:
                    out.append(Mismatch(path, f"torch's is a {kinds[0]}, ember's a {kinds[1]}",
                                        rep.module))
                    continue
                if kinds[0] == "value" and isinstance(theirs, (bool, int, float, str, type(None))) \
                        and _norm_default(theirs) != _norm_default(mine):
                    out.append(Mismatch(path, f"torch's value {theirs!r}, ember's {mine!r}",
                                        rep.module))
                if isinstance(theirs, types.ModuleType) or not callable(theirs):
                    continue
                check(path, rep.module, theirs, mine, drop_first=rep.module == "torch.Tensor")
                if inspect.isclass(theirs) and inspect.isclass(mine) and \
                        rep.module != "torch.Tensor" and not issubclass(theirs, enum.Enum):
                    for meth, (fn, bound) in _class_methods(theirs).items():
                        mine_fn = inspect.getattr_static(mine, meth, None)
                        if mine_fn is None:
                            continue
                        if isinstance(mine_fn, (staticmethod, classmethod)):
                            mine_fn = mine_fn.__func__
                        where = f"{fn.__module__}.{fn.__qualname__}"  # the defining class
                        check(where, rep.module, fn, mine_fn, drop_first=bound)
    return out, counts


def missing_methods(reports) -> dict:
    """The public methods and attributes of torch's classes (present in both) that ember's
    classes lack, keyed by the torch class that defines them (``torch.nn.Module``), so that a
    base class's names are listed once. Reported, not enforced: the surface's names are the
    modules' names and Tensor's. Attributes set per instance (``finfo(...).eps``) are not
    seen on the class and show here too."""
    out: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in reports:
            if rep.module == "torch.Tensor":
                continue
            for name in rep.present:
                theirs = resolve(f"{rep.module}.{name}")
                mine = resolve(_ember_path(rep.module, name), import_last=False)
                if not (inspect.isclass(theirs) and inspect.isclass(mine)) or \
                        issubclass(theirs, enum.Enum):
                    continue
                for n in dir(theirs):
                    if n.startswith("_") or hasattr(mine, n):
                        continue
                    owner = next((k for k in theirs.__mro__ if n in vars(k)), theirs)
                    key = f"{owner.__module__}.{owner.__qualname__}"
                    out.setdefault(key, set()).add(n)
    return {k: sorted(v) for k, v in sorted(out.items())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--signatures", action="store_true",
                        help="list the signature mismatches")
    parser.add_argument("--methods", action="store_true",
                        help="list the methods and attributes of torch's classes that ember's "
                             "classes lack (not enforced)")
    args = parser.parse_args(argv)
    exclusions = load_exclusions()
    reports = surface(exclusions)
    print(format_table(reports))
    if args.missing:
        for rep in reports:
            if rep.missing:
                print(f"\n{rep.module} ({len(rep.missing)} missing):")
                print("  " + " ".join(rep.missing))
    problems = exclusion_problems(exclusions, reports)
    if problems:
        print("\nexclusions file problems:")
        print("\n".join("  " + p for p in problems))
    if args.signatures:
        mismatches, counts = signature_mismatches(reports, exclusions)
        todo = [m for m in mismatches if m.path not in exclusions["signatures"]]
        print(f"\nsignatures: {counts['compared']} compared, {counts['skipped']} skipped "
              f"(torch's not introspectable), {len(mismatches)} differ, "
              f"{len(mismatches) - len(todo)} of them excluded")
        for m in todo:
            print(f"  {m.path}: {m.problem}")
    if args.methods:
        lacking = missing_methods(reports)
        print(f"\nclasses lacking some of torch's methods or attributes: {len(lacking)}")
        for path, names in lacking.items():
            print(f"  {path}: {' '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
