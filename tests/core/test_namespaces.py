"""Public namespaces hold their public names only: no helpers imported for their own use."""

import importlib

import pytest

# typing / __future__ / collections.abc names a module imports for its annotations
_HELPERS = {"annotations", "Any", "Callable", "Sequence", "Optional", "Union", "TensorBase",
            "backend_of", "xp_of"}


@pytest.mark.parametrize("name", [
    "ember", "ember.autograd", "ember.linalg", "ember.fft", "ember.special",
    "ember.distributions", "ember.library", "ember.serialization", "ember.nn",
    "ember.nn.functional", "ember.optim", "ember.testing", "ember.func", "ember.cuda",
    "ember.amp", "ember.hub", "ember.profiler",
])
def test_no_helpers_in_public_namespaces(name):
    module = importlib.import_module(name)
    leaked = {n for n in dir(module) if n in _HELPERS}
    assert not leaked, f"{name} exposes {sorted(leaked)}"


def test_serialization_keeps_its_machinery_private():
    import ember.serialization as s

    for n in ("ZipReader", "atomic_write", "write_checkpoint", "load_zip", "load_legacy",
              "restorer", "buffered", "LoadOptions", "CorruptFileError"):
        assert not hasattr(s, n), n
