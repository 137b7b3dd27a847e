"""Proxies: the stand-ins for tensors while a program is traced (as ``torch.fx.proxy``).

A :class:`Proxy` wraps a :class:`~ember.fx.Node`. Every operation on it — an operator, a
Tensor method, an attribute, an ember op given it as an argument — records a new node and
returns a new Proxy, so running ``forward`` on Proxies writes down its graph.

NOTE [ Tracing without __torch_function__ ]
torch.fx learns that ``torch.relu(proxy)`` happened through ``__torch_function__``. ember has
no such protocol (it would cost every eager op a check). Instead the tracer, for the length
of one ``trace`` call, replaces the public op callables of ember's namespaces (the op
registry's functions) with wrappers that record a ``call_function`` node when an argument
is a Proxy and call straight through otherwise, and puts the original back afterwards —
the mechanism of ``torch.fx.wrap``. Operators and methods called *on* a Proxy are the
Proxy's own (below); operators of a real tensor with a Proxy operand are patched on
``ember.Tensor`` for the trace as well.
"""

from __future__ import annotations

import collections
import dis
import inspect
import operator
import traceback
from collections.abc import Callable
from pathlib import Path

from ember.fx.graph import Graph, magic_methods, reflectable_magic_methods
from ember.fx.node import Node

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute",
           "ParameterProxy", "Scope", "ScopeContextManager"]


class TraceError(ValueError):
    """Raised when a traced program uses a Proxy in a way a graph cannot record
    (control flow on it, iterating it)."""


_FX_DIR = str(Path(__file__).parent)


class Scope:
    """The module a node is traced in: its dotted path and its type."""

    def __init__(self, module_path: str, module_type) -> None:
        self.module_path = module_path
        self.module_type = module_type

    def __repr__(self) -> str:
        return f"Scope(module_path={self.module_path!r}, module_type={self.module_type})"


class ScopeContextManager:
    """Sets ``scope`` to ``current_scope``'s module for the length of a ``with`` block (the
    tracer's scope while a submodule's forward is traced)."""

    def __init__(self, scope: Scope, current_scope: Scope) -> None:
        self._prev = Scope(scope.module_path, scope.module_type)
        self._scope = scope
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type

    def __enter__(self):
        return self._scope

    def __exit__(self, *exc) -> None:
        self._scope.module_path = self._prev.module_path
        self._scope.module_type = self._prev.module_type


class TracerBase:
    """What a Proxy needs of a tracer: making nodes and turning arguments into node
    arguments. :class:`~ember.fx.Tracer` adds module handling.

    Attributes:
        graph: the graph being built.
        record_stack_traces: store where the traced program made each node
            (``Node.stack_trace``).
        check_mutable_operations: kept for torch.fx's API (ember's tracer does not check).
        trace_asserts: kept for torch.fx's API.
        proxy_buffer_attributes: return ``get_attr`` Proxies for buffers read from
            modules (parameters always are).
        traced_func_name: the method of the root module that is traced.
    """

    graph: Graph
    record_stack_traces: bool = False
    check_mutable_operations: bool = False
    trace_asserts: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"

    def create_node(self, kind: str, target, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr=None) -> Node:
        """Insert a node in ``self.graph``; nodes made inside a module's forward record the
        module path in ``meta['nn_module_stack']``. Override to add metadata."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        stack = getattr(self, "module_stack", None)
        if stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(stack)
        scope = getattr(self, "scope", None)
        if scope is not None and hasattr(self, "node_name_to_scope"):
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy that stands for ``node`` (override for a Proxy subclass)."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr=None,
                     proxy_factory_fn: Callable | None = None) -> Proxy:
        """Record a node of kind ``kind`` calling ``target`` with ``args``/``kwargs``
        (Proxies in them become their nodes) and return a Proxy for it."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise TypeError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        proxy = self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)
        if self.record_stack_traces and not node.stack_trace:
            frames = [f for f in traceback.extract_stack()
                      if not f.filename.startswith(_FX_DIR)]
            node.stack_trace = "".join(traceback.format_list(frames))
        return proxy

    def create_arg(self, a):
        """Turn a traced value into a node argument: Proxies become their nodes, containers
        are converted element by element, constants stay. Raises ``NotImplementedError``
        for values a graph cannot hold."""
        import ember

        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            args = tuple(self.create_arg(e) for e in a)
            return type(a)(*args) if hasattr(a, "_fields") else args
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (str, int, float, bool, complex, type,
                                                    ember.dtype, ember.device)):
            return a
        if type(a).__name__ in ("layout", "memory_format") or isinstance(a, Node):
            return a
        import enum

        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called for ``bool(proxy)`` (``if``, ``while``, ``and``): a graph cannot branch on
        a traced value, so this raises :class:`TraceError` (override to decide)."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy):
        """Called for ``iter(proxy)`` where the length is not known: raises
        :class:`TraceError` (``a, b = proxy`` works: it becomes two ``getitem`` nodes)."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See docs/fx.md for a more detailed explanation of what types of "
                         "control flow can be traced, and check out the Proxy docstring for help "
                         "troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy):
        """Called for ``**proxy``: records ``proxy.keys()``."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made directly on a graph (``Proxy(node)``): appends to it."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


class Proxy:
    """A traced value: operations on it add nodes to its tracer's graph.

    Args:
        node: the node it stands for.
        tracer: the tracer recording (by default one appending to ``node.graph``).

    ``bool(proxy)`` (control flow) raises :class:`TraceError`, as does iterating a Proxy
    of unknown length; ``len(proxy)`` raises ``RuntimeError`` unless ``len`` is wrapped
    (``ember.fx.wrap("len")``).

    Examples::

        >>> g = ember.fx.Graph()
        >>> x = ember.fx.Proxy(g.placeholder("x"))
        >>> y = (x + 1).relu()
        >>> _ = g.output(y.node)
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo):
        # a copy of a traced value is the same value in the graph
        return self

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        code = frame.f_code
        for inst in dis.get_instructions(code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self):
        """``proxy.keys()`` (for ``**proxy``): recorded through the tracer's ``keys``."""
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call ember.fx.wrap('len') "
                           "at module scope")

    def __index__(self):
        raise TraceError("a traced value cannot be used as a Python int (an index, a range "
                         "bound or a shape entry known only when the graph runs); pass it to "
                         "tensor ops instead, or make it a concrete_arg")

    def __setitem__(self, key, value) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})


def _magic(name: str):
    target = getattr(operator, name)

    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", target, args, kwargs)

    impl.__name__ = impl.__qualname__ = f"__{name.strip('_')}__"
    return impl


def _reflected(name: str):
    target = getattr(operator, name)

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = impl.__qualname__ = f"__r{name.strip('_')}__"
    return impl


# (``div`` is in the printed-code table only: Python 3's ``/`` is ``truediv``)
for _name in magic_methods:
    if hasattr(operator, _name):
        setattr(Proxy, f"__{_name.strip('_')}__", _magic(_name))
for _name in reflectable_magic_methods:
    if _name != "getitem" and hasattr(operator, _name):
        setattr(Proxy, f"__r{_name.strip('_')}__", _reflected(_name))


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node made on first use as a value, or a
    ``call_method`` node when called (``proxy.size(0)``)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter's Proxy whose shape is known (``Tracer(param_shapes_constant=True)``):
    ``shape``, ``size()``, ``dim()``, ``ndim`` and ``numel()`` give concrete values."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        """The parameter's concrete size (of dimension ``dim`` if given)."""
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        """The parameter's number of dimensions."""
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        """The parameter's number of elements."""
        return self.param.numel()

    def nelement(self) -> int:
        """The parameter's number of elements (alias of ``numel``)."""
        return self.param.numel()


def _find_proxy(*objs):
    """The first Proxy nested in ``objs`` (tuples, lists, dict values, slices), or None."""
    stack = list(objs)
    while stack:
        x = stack.pop()
        if isinstance(x, Proxy):
            return x
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, slice):
            stack.extend((x.start, x.stop, x.step))
    return None
