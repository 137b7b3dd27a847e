"""How tools/record_torchtext.py describes a public name of torchtext, and
tests/text/test_torchtext_surface.py the embertext name at the same path: its kind (module,
class, function, constant), its signature (parameter names, kinds and defaults, the defaults'
reprs without the libraries' prefixes) and, for a class, the members the library gives it
(not those of torch.nn.Module or object)."""

import dataclasses
import inspect
import re
import types

# dunder members that are part of a class's behaviour (the rest are Python's or torch.jit's)
DUNDERS = {"__call__", "__getitem__", "__len__", "__contains__", "__iter__", "__setitem__"}


PREFIXES = re.compile(r"\b(torchtext|embertext|torch|ember)\.")


def default_repr(value):
    if value is inspect.Parameter.empty:
        return None
    text = PREFIXES.sub("", repr(value))
    return text if " at 0x" not in text else f"<{type(value).__name__}>"


def signature(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return {"text": str(sig),
            "params": [[p.name, p.kind.name, default_repr(p.default)]
                       for p in sig.parameters.values()]}


def members(cls, package):
    out = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith(package):
            continue
        for name, raw in vars(klass).items():
            if name.startswith("_") and name not in DUNDERS:
                continue
            if isinstance(raw, property):
                out[name] = {"kind": "property"}
            elif isinstance(raw, (staticmethod, classmethod)):
                out[name] = {"kind": type(raw).__name__, "signature": signature(raw.__func__)}
            elif callable(raw):
                out[name] = {"kind": "method", "signature": signature(raw)}
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            out.pop(field.name, None)
    return dict(sorted(out.items()))


def describe(obj, package):
    if isinstance(obj, types.ModuleType):
        return {"kind": "module"}
    if inspect.isclass(obj):
        return {"kind": "class", "signature": signature(obj), "members": members(obj, package)}
    if callable(obj):
        return {"kind": "function", "signature": signature(obj)}
    return {"kind": "constant", "type": type(obj).__name__}


