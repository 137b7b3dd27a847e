"""``ember._dynamo``: graph capture for ``ember.compile`` (PyTorch's ``torch._dynamo``).

ember captures a forward with ember.fx's symbolic tracer (not by rewriting bytecode, as
PyTorch's dynamo does), so a program either becomes one graph or runs eagerly: there are
no partial graphs. NOTE [ Capture, guards and recompiles ] in ``eval_frame`` says what is
guarded on and when a call recompiles.

- :data:`config`: ``recompile_limit``, ``debug`` (``EMBER_COMPILE_DEBUG=1``);
- :func:`explain`: what compiling a function does for given inputs (graphs, graph breaks
  with their reasons, the guards, the fused kernels);
- :func:`reset`: forget everything compiled (kernels on disk stay cached);
- :func:`list_backends`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ember._dynamo import config, exc
from ember._dynamo.backends import list_backends, lookup_backend
from ember._dynamo.eval_frame import CompiledFunction, reset_all

__all__ = ["config", "exc", "explain", "reset", "list_backends", "lookup_backend",
           "ExplainOutput", "OptimizedModule"]


def __getattr__(name):
    if name == "OptimizedModule":
        from ember._dynamo import eval_frame

        return eval_frame.OptimizedModule
    raise AttributeError(f"module 'ember._dynamo' has no attribute {name!r}")


def reset() -> None:
    """Forget every compiled graph of every compiled function, and the kernels loaded in
    this process (their libraries on disk stay, and are found again without compiling)."""
    from ember._inductor import codecache

    reset_all()
    codecache.clear_loaded()


@dataclass
class ExplainOutput:
    """What :func:`explain` found (PyTorch's fields, and ember's ``kernels``)."""

    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    compile_times: str = ""
    kernels: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  Break Reason {i + 1}: {r}" for i, r in enumerate(self.break_reasons)]
        if self.ops_per_graph:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph):
                lines.append(f"  Ops {i + 1}:")
                lines += [f"    {op}" for op in ops]
        if self.out_guards:
            lines.append("Out Guards:")
            lines += [f"  {g}" for g in self.out_guards]
        if self.kernels:
            lines.append("Fused Kernels:")
            lines += [f"  {k.name}: {' '.join(k.ops)} ({k.path})" for k in self.kernels]
        if self.compile_times:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(f)(*args, **kwargs)``: compile ``f`` (a function or a module) afresh,
    call it once on the arguments, and say what happened (:class:`ExplainOutput`).

    Example::

        >>> out = ember._dynamo.explain(model)(x)   # doctest: +SKIP
        >>> print(out.break_reasons, out.kernels)   # doctest: +SKIP
    """
    def inner(*args, **kwargs):
        from ember.nn import Module

        if isinstance(f, Module):
            cf = CompiledFunction(f.forward, module=f)
        else:
            cf = CompiledFunction(f)
        cf(*extra_args, *args, **extra_kwargs, **kwargs)
        out = ExplainOutput()
        for e in cf.entries:
            if e.graph_module is not None:
                out.graphs.append(e.graph_module)
                ops = [n.format_node() for n in e.graph_module.graph.nodes
                       if n.op.startswith("call_")]
                out.ops_per_graph.append(ops)
                out.op_count += len(ops)
            out.out_guards.append(e.guards)
            out.kernels += e.kernels
        out.graph_count = len(out.graphs)
        out.break_reasons = list(cf.reasons)
        out.graph_break_count = len(cf.reasons)
        out.compile_times = ", ".join(f"{e.compile_time * 1e3:.1f} ms" for e in cf.entries
                                      if e.graph_module is not None)
        return out

    return inner
