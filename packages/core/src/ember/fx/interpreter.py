"""Running a graph node by node (as ``torch.fx.interpreter``): :class:`Interpreter`,
:class:`Transformer`.

An :class:`Interpreter` executes a GraphModule's graph one node at a time, calling a method
per opcode (``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
``call_module``, ``output``); subclasses override them to observe or change what runs
(shape propagation, profiling). A :class:`Transformer` runs the same methods on Proxies and
so builds a new graph: overriding ``call_function`` rewrites the program.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

from ember.fx._symbolic_trace import Tracer
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node, map_aggregate, map_arg
from ember.fx.proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs a GraphModule node by node.

    Args:
        module: the GraphModule (or any module with a ``graph``) to run.
        garbage_collect_values: drop each value after its last use.
        graph: run this graph instead of ``module.graph`` (its targets are looked up on
            ``module``).

    Examples::

        >>> class NegSigmoid(ember.fx.Interpreter):
        ...     def call_function(self, target, args, kwargs):
        ...         if target is ember.sigmoid:
        ...             return ember.neg(ember.sigmoid(*args, **kwargs))
        ...         return super().call_function(target, args, kwargs)
        >>> out = NegSigmoid(gm).run(x)  # doctest: +SKIP
    """

    def __init__(self, module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.current_node: Node | None = None
        if garbage_collect_values:
            # the values to drop after each node: those it is the last user of
            seen: set = set()
            self.user_to_last_uses: dict = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Run the graph on ``args`` (one per placeholder) and return its output.

        Args:
            initial_env: values already known for some nodes (they are not run).
            enable_io_processing: pass inputs and outputs through the graph's
                ``process_inputs``/``process_outputs``.
        """
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    if hasattr(e, "add_note"):
                        e.add_note(msg)
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                out = self.env[node]
                return self.graph.process_outputs(out) if enable_io_processing else out
        return None

    def boxed_run(self, args_list: list):
        """Run with the inputs in a list, which is emptied (so the caller holds no
        references to them while the graph runs)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    @contextmanager
    def _set_current_node(self, node: Node):
        prev, self.current_node = self.current_node, node
        try:
            yield
        finally:
            self.current_node = prev

    def run_node(self, n: Node):
        """Run one node: fetch its arguments' values and call the method of its opcode."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per opcode ---------------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict):
        """The next input (or the placeholder's default)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from si

    def get_attr(self, target: str, args: tuple, kwargs: dict):
        """The module attribute at dotted path ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict):
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict):
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict):
        """Call the submodule at dotted path ``target``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict):
        """The graph's result: ``args[0]``."""
        return args[0]

    # -- helpers -----------------------------------------------------------------------
    def fetch_attr(self, target: str):
        """The attribute of ``self.module`` at dotted path ``target``."""
        atoms = target.split(".")
        attr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(atoms[:i + 1])}")
            attr = getattr(attr, atom)
        return attr

    def fetch_args_kwargs_from_env(self, n: Node):
        """The values of ``n.args`` and ``n.kwargs`` (Nodes replaced by their results)."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n: Node):
        """Replace the Nodes in ``args`` by their values in ``self.env``."""
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[a]

        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Builds a new GraphModule by running the graph on Proxies: each overridden method
    decides what the new graph records for a node.

    Examples::

        >>> class ReluToGelu(ember.fx.Transformer):
        ...     def call_function(self, target, args, kwargs):
        ...         if target is ember.relu:
        ...             target = ember.nn.functional.gelu
        ...         return super().call_function(target, args, kwargs)
        >>> new_gm = ReluToGelu(gm).transform()  # doctest: +SKIP
    """

    def __init__(self, module) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (with the old one's default)."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A ``get_attr`` node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict):
        """A ``call_module`` node of the new graph (submodules stay whole)."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict) -> Proxy:
        """A ``call_function`` node of the new graph calling ``target``."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def run_node(self, n: Node):
        """Run one node on Proxies; the new node keeps the old one's module stack and
        stack trace."""
        result = super().run_node(n)
        if isinstance(result, Proxy) and n.op != "placeholder":
            for k in ("nn_module_stack", "stack_trace"):
                if k in n.meta:
                    result.node.meta.setdefault(k, n.meta[k])
        return result

    def transform(self) -> GraphModule:
        """Run the transformation; returns the new GraphModule."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            def strip(a):
                return a.node if isinstance(a, Proxy) else a

            self.new_graph.output(map_aggregate(result, strip))
        return GraphModule(self.module, self.new_graph,
                           getattr(self.module, "_graphmodule_cls_name", "GraphModule"))
