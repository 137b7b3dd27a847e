"""How the generated code names the functions a graph calls.

NOTE [ Printed names ]
torch.fx prints a call of ``torch.relu`` as ``torch.relu(x)``, of ``F.relu`` as
``torch.nn.functional.relu(x)``: the public path, not the private module a function is
defined in. ember's ops live in private modules (``ember._ops.elementwise``, the compiled
core), so the public path is looked up: first in the op registry (``OpDef.qualname``), then
in the public namespaces the tracer patches. A function reachable from none of them gets a
global of its own in the generated code (``__main___myfn``), as in torch.fx.
"""

from __future__ import annotations

import builtins
import sys

__all__ = ["qualified_name", "is_from_ember", "public_op_namespaces"]

# The public modules whose callables are ops users call (traced when given a Proxy).
_OP_NAMESPACES = ("ember", "ember.nn.functional", "ember.special", "ember.linalg", "ember.fft")

_cache: dict = {"key": None, "names": {}}


def public_op_namespaces() -> list:
    """The imported public op namespaces, as ``(name, module)`` pairs."""
    out = []
    for name in _OP_NAMESPACES:
        mod = sys.modules.get(name)
        if mod is None:
            try:
                __import__(name)
            except ImportError:
                continue
            mod = sys.modules[name]
        out.append((name, mod))
    return out


def _public_names() -> dict:
    """``id(function) -> "ember.<path>"`` for the registered ops and the public callables of
    the op namespaces (registry names win: they are the canonical spelling)."""
    from ember._ops._registry import registered_ops

    ops = registered_ops()
    key = len(ops)
    if _cache["key"] == key:
        return _cache["names"]
    names: dict = {}
    for op in ops:
        if op.namespace != "ember.Tensor":
            names.setdefault(id(op.function), (op.qualname, op.function))
    for ns, mod in public_op_namespaces():
        for attr in getattr(mod, "__all__", ()):
            fn = getattr(mod, attr, None)
            if callable(fn) and not isinstance(fn, type):
                names.setdefault(id(fn), (f"{ns}.{attr}", fn))
    _cache["key"], _cache["names"] = key, names
    return names


def qualified_name(func) -> str:
    """The dotted name the printed graph uses for ``func`` (``ember.relu``,
    ``operator.add``, ``getattr``, ``ember.Tensor.add``, ``mymodule.myfn``)."""
    name = getattr(func, "__name__", None)
    if name is not None and getattr(builtins, name, None) is func:
        return name
    if isinstance(func, type) and name is not None:
        import ember

        for ns, mod in (("ember", ember), ("ember.nn", sys.modules.get("ember.nn"))):
            if mod is not None and getattr(mod, name, None) is func:
                return f"{ns}.{name}"
    hit = _public_names().get(id(func))
    if hit is not None and hit[1] is func:
        return hit[0]
    import ember

    if name is not None and getattr(ember.Tensor, name, None) is func:
        return f"ember.Tensor.{name}"
    if name is None:
        raise RuntimeError(f"cannot name {func!r} in generated code: it has no __name__")
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    module = getattr(func, "__module__", None) or "__main__"
    if module == "_operator":
        module = "operator"
    return f"{module}.{getattr(func, '__qualname__', name)}"


def is_from_ember(obj) -> bool:
    """Whether generated code can reach ``obj`` as ``ember.<path>`` with the global ``ember``."""
    name = getattr(obj, "__name__", None)
    try:
        qn = qualified_name(obj) if callable(obj) else None
    except RuntimeError:
        return False
    if qn is None or not qn.startswith("ember.") or name is None:
        return False
    import ember

    target = ember
    for part in qn.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return False
    # while tracing, the namespace holds the tracing wrapper of ``obj``
    return target is obj or getattr(target, "_fx_original", None) is obj
