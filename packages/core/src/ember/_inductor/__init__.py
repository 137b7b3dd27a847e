"""ember's graph compiler (PyTorch's ``torch._inductor``): elementwise ops of a captured
graph fused into C kernels, compiled once and cached on disk.

- ``pointwise``: the ops that fuse, as C expressions with their derivative rules;
- ``fusion``: grouping a graph's nodes and rewriting the graph around the groups;
- ``codegen``: the C source of a group's forward and backward loops;
- ``codecache``: compiling with the system compiler and the on-disk cache;
- ``kernel``: a compiled group at run time, one autograd node per call.
"""

from __future__ import annotations

__all__ = ["compile_fx", "check_options", "OPTIONS"]

# options ember's compiler reads; PyTorch's other common options are accepted and unused
OPTIONS = {"openmp": True, "fuse": True}
IGNORED_TORCH_OPTIONS = frozenset({
    "max_autotune", "max_autotune_pointwise", "max_autotune_gemm", "epilogue_fusion",
    "triton.cudagraphs", "shape_padding", "trace.enabled", "trace.graph_diagram",
    "coordinate_descent_tuning", "freezing", "layout_optimization", "debug", "cpp_wrapper",
    "aggressive_fusion", "benchmark_kernel", "cpp.threads", "cpp.simdlen", "fx_graph_cache",
})


def check_options(options) -> None:
    """Raise PyTorch's RuntimeError for an option neither ember nor PyTorch has."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(f"compile(): options must be a dict, got {type(options).__name__}")
    for key in options:
        if key not in OPTIONS and key not in IGNORED_TORCH_OPTIONS:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{sorted(OPTIONS) + sorted(IGNORED_TORCH_OPTIONS)}")


def compile_fx(gm, inputs, *, dynamic=False, options=None, reasons=None, result=None):
    """Run ``gm`` once on ``inputs`` recording shapes (ShapeProp), fuse its elementwise ops
    and compile them. Returns (the result of that run, the compiled GraphModule, the
    kernels). With ``result`` (the call already ran while tracing, recording the same
    metadata) the graph does not run again."""
    from ember._inductor.fusion import fuse_graph
    from ember.fx import GraphModule
    from ember.fx.passes.shape_prop import ShapeProp

    opts = dict(OPTIONS)
    opts.update({k: v for k, v in (options or {}).items() if k in OPTIONS})
    if result is None:
        try:
            result = ShapeProp(gm).propagate(*inputs)
        except RuntimeError as exc:
            if str(exc).startswith("ShapeProp error") and exc.__cause__ is not None:
                raise exc.__cause__ from None  # the program's own error, as eager raises it
            raise
    if not opts["fuse"]:
        return result, gm, []
    graph, kernels = fuse_graph(gm, dynamic=dynamic, openmp=bool(opts["openmp"]),
                                reasons=reasons)
    if not kernels:
        return result, gm, []
    compiled = GraphModule(gm, graph, type(gm).__name__)
    return result, compiled, kernels
