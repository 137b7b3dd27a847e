"""Public names and signatures of a torchvision module against the embervision module at the
same path (the interop tests of the model families use it)."""

from __future__ import annotations

import inspect


def parameters(obj):
    """``(name, kind, default)`` of each parameter of a function or of a class's __init__,
    the defaults' reprs without the library prefixes."""

    def default(value):
        if value is inspect.Parameter.empty:
            return "-"
        return repr(value).replace("torchvision.", "").replace("embervision.", "").replace(
            "torch.", "").replace("ember.", "")

    fn = obj.__init__ if inspect.isclass(obj) else obj
    return [(p.name, p.kind, default(p.default))
            for p in inspect.signature(fn).parameters.values()]


def assert_public_names_match(theirs, ours, skip=()) -> None:
    """Every public class and function defined in module ``theirs`` (but those in ``skip``)
    exists in ``ours`` with the same parameters and defaults."""
    for name, obj in vars(theirs).items():
        if (name.startswith("_") or name in skip
                or getattr(obj, "__module__", "") != theirs.__name__
                or not (inspect.isclass(obj) or inspect.isfunction(obj))):
            continue
        assert hasattr(ours, name), f"{ours.__name__}.{name}"
        assert parameters(getattr(ours, name)) == parameters(obj), f"{ours.__name__}.{name}"
