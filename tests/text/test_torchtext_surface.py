"""embertext's public API against torchtext 0.18's, name by name and signature by signature:
every public name of torchtext's public modules (recorded by tools/record_torchtext.py into
data/torchtext_0_18.json.gz) exists in embertext at the same module path, is the same kind of
thing (module, class, function, constant), takes the same parameters (names, kinds, defaults)
and, for a class, has the same public methods and properties."""

import gzip
import importlib
import json

import pytest

from ._torchtext_cases import RECORDING
from ._torchtext_surface import describe

SURFACE = json.loads(gzip.decompress(RECORDING.read_bytes()))["surface"]

# Names embertext leaves out on purpose, each with its reason.
LEFT_OUT = {
    ("torchtext", "prototype"): "torchtext's unstable API (no promise of compatibility there), "
                                "not part of the stable modules embertext follows",
    ("torchtext", "experimental"): "an empty package in torchtext 0.18",
    ("torchtext", "version"): "torchtext's build-time version file (__version__ and the git "
                              "commit); embertext.__version__ is the version",
    ("torchtext.data", "datasets_utils"): "torchtext's private helpers of its datasets "
                                          "(torchdata wrappers), imported as a submodule",
    ("torchtext.utils", "LOCK_TIMEOUT"): "torchtext's download lock (filelock); embertext "
                                         "downloads into a temporary file renamed into place, "
                                         "so concurrent downloads need no lock",
    ("torchtext.utils", "get_lock_dir"): "the folder of that lock: see LOCK_TIMEOUT",
}
# torchtext's one-file-per-dataset modules (torchtext.datasets.ag_news, ...): embertext groups
# its datasets by format (text_classification, glue, ...) and has each one at
# torchtext.datasets.NAME, which is where torchtext's documentation imports them from.
LEFT_OUT.update({("torchtext.datasets", name): "torchtext's module layout: see above"
                 for name, entry in SURFACE["torchtext.datasets"].items()
                 if entry["kind"] == "module"})
# Gaps not closed yet (strict: an entry fails once the gap is closed, and must go).
GAPS = {}
# (module, name, member or "") whose signature differs on purpose, with the reason.
SIGNATURE_DIFFERENCES = {
    ("torchtext.models", "T5Bundle", "get_model"):
        "with_generation_utils/gen_kwargs return torchtext.prototype.generate.GenerationUtils "
        "(the prototype API, left out above)",
}
# The datasets' root: torchtext's wrappers show the inner function's signature (root='.data'
# or no default) but use torch's cache folder at run time (~/.cache/torch/text); embertext's
# default is its own cache folder (~/.cache/ember/text), with the same datasets/NAME layout.
# Everything else of their signatures (the splits, language pairs, ...) must match.
DATASET_ROOT = ("torchtext.datasets", "root")


def ours(module_name):
    return importlib.import_module(module_name.replace("torchtext", "embertext", 1))


CASES = [pytest.param(module, name, id=f"{module}.{name}", marks=[pytest.mark.xfail(
    reason=GAPS[(module, name)], strict=True)] if (module, name) in GAPS else [])
    for module, names in SURFACE.items() for name in names]


def params(entry, module=None):
    if entry.get("signature") is None:
        return None
    found = entry["signature"]["params"]
    if module == DATASET_ROOT[0]:
        found = [[n, "POSITIONAL_OR_KEYWORD", "<root>"] if n == DATASET_ROOT[1] else [n, k, d]
                 for n, k, d in found]
    return found


@pytest.mark.parametrize(("module", "name"), CASES)
def test_public_name(module, name):
    if (module, name) in LEFT_OUT:
        pytest.skip(LEFT_OUT[(module, name)])
    theirs = SURFACE[module][name]
    mod = ours(module)
    assert hasattr(mod, name), f"{mod.__name__}.{name} is missing"
    mine = describe(getattr(mod, name), "embertext")
    assert mine["kind"] == theirs["kind"], f"{name}: {mine['kind']} where torchtext has " \
        f"{theirs['kind']}"
    if theirs["kind"] in ("class", "function") and (module, name, "") not in \
            SIGNATURE_DIFFERENCES and params(theirs) is not None:
        assert params(mine, module) == params(theirs, module), \
            f"{name}{mine['signature'] and mine['signature']['text']} where torchtext has " \
            f"{name}{theirs['signature']['text']}"
    for member, spec in theirs.get("members", {}).items():
        assert member in mine["members"], f"{name}.{member} is missing"
        got = mine["members"][member]
        assert got["kind"] == spec["kind"], f"{name}.{member}: {got['kind']} where " \
            f"torchtext has {spec['kind']}"
        if spec.get("signature") and (module, name, member) not in SIGNATURE_DIFFERENCES:
            assert got["signature"] and got["signature"]["params"] == spec["signature"][
                "params"], f"{name}.{member}{got['signature'] and got['signature']['text']}" \
                f" where torchtext has {name}.{member}{spec['signature']['text']}"
