"""The backends ``ember.compile`` hands a captured graph to.

- ``"inductor"`` (the default): elementwise ops fused into generated C kernels
  (``ember._inductor``), every other op eager;
- ``"eager"`` and ``"aot_eager"``: the captured graph run op by op (for checking that
  capture is right: the numbers are eager's);
- a callable ``backend(gm, example_inputs) -> callable``, as in PyTorch.
"""

from __future__ import annotations

from ember._dynamo.exc import InvalidBackend

__all__ = ["list_backends", "lookup_backend", "run_backend"]

_BACKENDS = ("inductor", "eager", "aot_eager")


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The names ``backend=`` takes (PyTorch's ``torch._dynamo.list_backends``; the
    debugging backends ``eager`` and ``aot_eager`` are tagged "debug")."""
    names = ["inductor"]
    if not exclude_tags or "debug" not in exclude_tags:
        names += ["eager", "aot_eager"]
    return sorted(names)


def lookup_backend(backend):
    """``backend`` checked: a known name or a callable (None means ``"inductor"``)."""
    if backend is None:
        return "inductor"
    if callable(backend):
        return backend
    if isinstance(backend, str) and backend in _BACKENDS:
        return backend
    raise InvalidBackend(backend)


def run_backend(backend, gm, inputs, *, dynamic, options, reasons, result=None):
    """Compile ``gm`` for ``inputs`` and run it once on them: returns (the result, the
    callable later calls run, the fused kernels). ``result`` is the call's result where
    tracing already ran it (its nodes carry ShapeProp's metadata): nothing runs again."""
    if callable(backend):
        compiled = backend(gm, list(inputs))
        return (compiled(*inputs) if result is None else result), compiled, []
    if backend in ("eager", "aot_eager"):
        return (gm(*inputs) if result is None else result), gm, []
    from ember._inductor import compile_fx

    return compile_fx(gm, inputs, dynamic=dynamic, options=options, reasons=reasons,
                      result=result)
