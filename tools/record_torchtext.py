"""Records torchtext 0.18 into tests/text/data/torchtext_0_18.json.gz: the public API surface
(for each public module its public names, their kind, signatures and class members) and the
results of the behaviour cases in tests/text/_torchtext_cases.py, which the tests replay
through embertext without torchtext.

Run with torch 2.3.0 + torchtext 0.18.0 (an environment of their own, numpy<2; ``nox -s
text_torchtext`` makes it): ``python tools/record_torchtext.py``.

A module's public names are its ``__all__``, the classes and functions defined in it (some
public ones, BERTTokenizer among them, are missing from ``__all__``), the names its source
assigns at the top level, instances of torchtext's classes (the model bundles) and its
torchtext submodules; imported helpers (``typing``, ``torch``, ``re``) are not.
"""

import ast
import gzip
import importlib
import inspect
import json
import sys
import tempfile
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "text"))

import _torchtext_cases as cases  # noqa: E402
import torch  # noqa: E402
import torchtext  # noqa: E402
from _torchtext_surface import describe  # noqa: E402

MODULES = ["torchtext", "torchtext.vocab", "torchtext.data", "torchtext.data.utils",
           "torchtext.data.functional", "torchtext.data.metrics", "torchtext.functional",
           "torchtext.transforms", "torchtext.datasets", "torchtext.models", "torchtext.nn",
           "torchtext.utils"]
def top_level_assignments(module):
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def is_torchtext(obj):
    return getattr(obj, "__module__", "").startswith("torchtext")


def public_names(module):
    assigned = top_level_assignments(module)
    names = set(getattr(module, "__all__", ()))
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, types.ModuleType):
            if obj.__name__ == f"{module.__name__}.{name}":
                names.add(name)
        elif inspect.isclass(obj) or callable(obj) and hasattr(obj, "__module__"):
            if obj.__module__ == module.__name__ or (
                    not hasattr(module, "__all__") and is_torchtext(obj)):
                names.add(name)
        elif name in assigned or is_torchtext(type(obj)):
            names.add(name)
    return sorted(names)


def resolve(module, name):
    """The attribute, importing a submodule that ``__all__`` names but the package does not
    import (torchtext's ``__all__`` names ``data``, ``prototype``...); None where there is
    none (its ``experimental`` is gone)."""
    if hasattr(module, name):
        return getattr(module, name)
    try:
        return importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return None


def record_surface():
    modules = [importlib.import_module(name) for name in MODULES]
    surface = {}
    for module in modules:
        objects = {n: resolve(module, n) for n in public_names(module)}
        surface[module.__name__] = {n: describe(obj, "torchtext") for n, obj in objects.items()
                                    if obj is not None}
    return surface


def record_cases():
    fixtures = {}
    for name, make in cases.FIXTURES.items():
        with tempfile.TemporaryDirectory() as tmp:
            fixtures[name] = make(torchtext, tmp)
    results = {}
    for name, fn in cases.CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            results[name] = cases.run_case(fn, torchtext, torch, tmp, fixtures)
    return {name: cases.encode(value) for name, value in fixtures.items()}, results


def main():
    warnings.filterwarnings("ignore")
    torchtext.disable_torchtext_deprecation_warning()
    surface = record_surface()  # imports the modules the cases use
    fixtures, results = record_cases()
    record = {"torchtext": torchtext.__version__, "torch": torch.__version__,
              "surface": surface, "fixtures": fixtures, "cases": results}
    cases.RECORDING.parent.mkdir(parents=True, exist_ok=True)
    cases.RECORDING.write_bytes(
        gzip.compress(json.dumps(record, sort_keys=True).encode(), mtime=0))
    raised = sorted(n for n, r in results.items() if "raises" in r)
    print(f"{sum(map(len, record['surface'].values()))} names in {len(MODULES)} modules, "
          f"{len(results)} cases ({len(raised)} raise: {', '.join(raised)})")


if __name__ == "__main__":
    main()
