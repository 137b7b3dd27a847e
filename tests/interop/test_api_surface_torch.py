"""PyTorch 2.13's public surface in ember: every public name at torch's path, with torch's
signature, or in tests/interop/api_surface_exclusions.toml with a reason.

What counts as a public name (``__all__`` where a module has one, else ``dir()`` minus
private names, modules and re-exports; ``dir(torch.Tensor)`` minus private names; the
submodules of ``torch.nn.modules`` and ``torch.backends``) and which signatures are compared
(all that ``inspect.signature`` can read on torch's side; torch's C builtins cannot be read and
are skipped) is written down in tools/api_surface.py (NOTE [ What a public name is ] and
NOTE [ Which signatures are compared ]), which runs the same code and prints the coverage
table::

    .venv/bin/python tools/api_surface.py --missing --signatures

Modules listed under ``[report_only]`` in the exclusions file (the numeric namespaces, CUDA,
distributed, fx and onnx: issues of their own) show in the table without failing here; their
issue removes the line. ``pytest -s`` shows the table.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.__version__.startswith("2.13."):
    pytest.skip(f"the surface is PyTorch 2.13's, not {torch.__version__}'s",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    spec = importlib.util.spec_from_file_location("api_surface", ROOT / "tools" / "api_surface.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["api_surface"] = mod
    spec.loader.exec_module(mod)
    return mod


surface_tool = _load_tool()
EXCLUSIONS = surface_tool.load_exclusions()
ENFORCED = [m for m in surface_tool.MODULES if m not in EXCLUSIONS["report_only"]]


@pytest.fixture(scope="module")
def reports():
    return {r.module: r for r in surface_tool.surface(EXCLUSIONS)}


@pytest.fixture(scope="module")
def mismatches(reports):
    return surface_tool.signature_mismatches(list(reports.values()), EXCLUSIONS)


def test_coverage_table(reports):
    table = surface_tool.format_table(list(reports.values()))
    print("\n" + table)
    for r in reports.values():
        assert len(r.present) + len(r.stale) + len(r.excluded) + len(r.missing) == r.total
    # the issue's target: at least 90% of the enforced modules' names present
    enforced = [reports[m] for m in ENFORCED]
    present = sum(len(r.present) for r in enforced)
    total = sum(r.total for r in enforced)
    assert present >= 0.9 * total, f"{present} of {total} names present ({present / total:.1%})"


def test_exclusions_file_is_valid(reports):
    problems = surface_tool.exclusion_problems(EXCLUSIONS, list(reports.values()))
    assert not problems, "\n".join(problems)
    assert set(EXCLUSIONS["report_only"]) <= set(surface_tool.MODULES)


@pytest.mark.parametrize("module", ENFORCED)
def test_every_public_name_is_present(reports, module):
    missing = reports[module].missing
    assert not missing, (f"{len(missing)} of {module}'s {reports[module].total} public names "
                         f"are missing in ember: {' '.join(missing)}")


def test_signatures_match(mismatches):
    found, counts = mismatches
    assert counts["compared"] > 500  # the comparison reads signatures at all
    report_only = EXCLUSIONS["report_only"]
    todo = [f"{m.path}: {m.problem}" for m in found
            if m.path not in EXCLUSIONS["signatures"] and m.module not in report_only]
    assert not todo, f"{len(todo)} signatures differ from torch's:\n" + "\n".join(todo)


def test_signature_exclusions_are_needed(mismatches):
    found, _ = mismatches
    differing = {m.path for m in found}
    stale = sorted(set(EXCLUSIONS["signatures"]) - differing)
    assert not stale, f"signature exclusions that no longer differ: {stale}"


# The comparison itself, on small cases whose answer is known.

def _f(a, b=1, *, c=None):
    return a


def test_compare_finds_name_kind_and_default_differences():
    compare = surface_tool.compare

    def same(a, b=1, *, c=None):
        return a

    def renamed(x, b=1, *, c=None):
        return x

    def keyword(a, *, b=1, c=None):
        return a

    def default(a, b=2, *, c=None):
        return a

    def float_default(a, b=1.0, *, c=None):
        return a

    assert compare(_f, same) is None
    assert compare(_f, float_default) is None  # 1 and 1.0 agree
    for other in (renamed, keyword, default):
        assert compare(_f, other) is not None
    assert compare(torch.add, _f) == "skip"  # a C builtin: torch's side cannot be read


def test_resolve_imports_submodules_and_refuses_missing_ones():
    import ember.nn.modules.activation as act

    assert surface_tool.resolve("ember.nn.modules.activation.ReLU") is act.ReLU
    assert surface_tool.resolve("ember.no_such_module_here.x") is None
    assert surface_tool.resolve("ember.nn.no_such_name", import_last=False) is None
