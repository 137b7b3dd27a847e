"""``ember.fx``: symbolic tracing and graph transformation, as ``torch.fx``.

``symbolic_trace(module)`` runs ``forward`` on Proxies and records every op into a
:class:`Graph`; a :class:`GraphModule` runs the graph's generated code; an
:class:`Interpreter` runs it node by node, a :class:`Transformer` rewrites it. See
docs/fx.md for what is captured and how tracing works without ``__torch_function__``.
"""

from __future__ import annotations

# submodules reachable as attributes, as torch.fx's are once imported
from ember.fx import immutable_collections, operator_schemas, passes  # noqa: F401
from ember.fx._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from ember.fx.graph import CodeGen, Graph, PythonCode
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter, Transformer
from ember.fx.node import Node, has_side_effect, map_aggregate, map_arg
from ember.fx.proxy import Proxy, TraceError
from ember.fx.subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg",
           "map_aggregate", "PH", "CodeGen", "PythonCode", "TraceError"]
