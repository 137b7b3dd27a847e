"""``ember.compile``: PyTorch's ``torch.compile``, without a compiler.

NOTE [ compile runs eagerly ]
A PyTorch program calls ``model = torch.compile(model)`` and expects a callable that
computes what ``model`` computes, faster. ember has no graph compiler (graph capture is
issue 23), so ``ember.compile`` returns ``model`` itself, unchanged, and warns once per
process that it runs eagerly: what ``torch.compile(model, backend="eager")`` does (it
captures the graph and runs it op by op). The results are the model's own; only the speed
of a compiled PyTorch model is missing. ``disable=True`` returns the model silently, as in
PyTorch. Unlike PyTorch's wrapper, the returned module has no ``_orig_mod`` and its
``state_dict`` keys have no ``_orig_mod.`` prefix.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["compile"]

_warned = [False]


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable | None = None,
            mode: str | None = None, options: dict | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None):
    """Return ``model`` (a module or a function) unchanged: ember has no compiler and runs it
    eagerly (NOTE [ compile runs eagerly ] in ``ember._compile``). Warns once per process.
    Used as a decorator (``@ember.compile`` or ``@ember.compile(mode=...)``) it returns the
    function.

    Args:
        model (Callable): the module or function.
        fullgraph, dynamic, backend, mode, options, name, recompile_limit,
        isolate_recompiles, shapes_spec: PyTorch's compiler options, accepted and unused.
        disable (bool): return ``model`` without the warning.

    Example::

        >>> model = ember.compile(model)   # runs eagerly, the same numbers
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable)

        return decorator
    if not callable(model):
        raise RuntimeError(f"compile(): expected a callable, got {type(model).__name__}")
    if not disable and not _warned[0]:
        _warned[0] = True
        warnings.warn("ember.compile: ember has no graph compiler; the model runs eagerly, "
                      "unchanged (like torch.compile(backend='eager'))", UserWarning,
                      stacklevel=2)
    return model
