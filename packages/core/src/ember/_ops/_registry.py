"""The op registry: every public op of ember, its graph nodes and its Tensor methods.

NOTE [ The op registry ]
An op is registered under its public name and namespace (``ember.add``,
``ember.nn.functional.conv2d``) with the function users call, the ``Node`` classes that
record it in the autograd graph (forward and backward side by side, see NOTE [ Ops are
Nodes ]), and the names of the ``Tensor`` methods it provides. From the registry come:

- the Tensor methods, installed in one place (``ember._tensor._install_methods``);
- the names the dispatch point reports (NOTE [ One dispatch point ]): a registered Node
  class gets its op's name as ``op_name``, so the profiler shows ``conv2d``, not ``Conv``;
- the registry-coverage test: a registered differentiable op without an op-database
  entry fails tests/core/test_registry.py.

The op families register themselves when they are imported (``register_family`` at the
bottom of ``ember._ops`` and ``ember.nn._functional``); domain packages register theirs
through :mod:`ember.library`, the public face of this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

__all__ = ["OpDef", "register_op", "register_family", "registered_ops", "get_op", "op_of_node"]


class OpDef:
    """One registered op.

    Attributes:
        name: the public name (``"softmax"``).
        namespace: the module users reach it from (``"ember.nn.functional"``).
        function: the callable.
        nodes: the ``Node`` classes that record it in the graph (may be empty for ops
            built from other ops, or ops that are not differentiable).
        methods: the ``Tensor`` method names it provides, mapped to their callables.
        differentiable: whether gradients flow through it.
    """

    __slots__ = ("name", "namespace", "function", "nodes", "methods", "differentiable")

    def __init__(self, name, namespace, function, nodes, methods, differentiable):
        self.name = name
        self.namespace = namespace
        self.function = function
        self.nodes = tuple(nodes)
        self.methods = dict(methods)
        self.differentiable = differentiable

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}"

    def __repr__(self) -> str:
        nodes = ", ".join(n.__name__ for n in self.nodes)
        return f"<op {self.qualname} nodes=[{nodes}] methods={sorted(self.methods)}>"


_OPS: dict[str, OpDef] = {}
_BY_NODE: dict = {}


def register_op(name: str, function: Callable, *, namespace: str = "ember", nodes=(),
                methods=None, differentiable: bool | None = None) -> OpDef:
    """Register op ``namespace.name``; returns its :class:`OpDef`.

    ``nodes`` are the ``Node`` classes that record it; ``methods`` maps Tensor method names
    to callables (a list of names means the function itself). ``differentiable`` defaults
    to whether any of its nodes is. Registering a name again replaces the entry.
    """
    if not callable(function):
        raise TypeError(f"register_op: {name!r} is not callable")
    if isinstance(methods, (list, tuple)):
        methods = {m: function for m in methods}
    nodes = tuple(nodes)
    if differentiable is None:
        differentiable = any(getattr(n, "differentiable", True) for n in nodes)
    op = OpDef(name, namespace, function, nodes, methods or {}, differentiable)
    _OPS[op.qualname] = op
    for n in nodes:
        _BY_NODE.setdefault(n, op)
        if "op_name" not in vars(n):
            n.op_name = name
    return op


def _node_classes(module):
    from ember._C._core import Node

    out = []
    for obj in vars(module).values():
        if (inspect.isclass(obj) and issubclass(obj, Node) and obj is not Node
                and obj.__module__.startswith(module.__name__.rsplit(".", 1)[0])):
            out.append(obj)
    return out


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def _snake(name: str) -> str:
    """``_MaxPool`` -> ``max_pool``: the op name of a shared node of no single op."""
    out = []
    for i, ch in enumerate(name.lstrip("_")):
        if ch.isupper() and i and not name.lstrip("_")[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


# Python's operator methods, by the op they call (reflected and in-place forms included).
_OPERATORS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift", "invert": "bitwise_not", "neg": "neg", "abs": "abs",
    "pos": "positive", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
}


def _operator_op(mname: str):
    """The op name of an operator method (``__radd__`` -> ``add``), else None."""
    if not (mname.startswith("__") and mname.endswith("__")):
        return None
    core = mname[2:-2]
    if core in _OPERATORS:
        return _OPERATORS[core]
    if core[:1] in ("r", "i") and core[1:] in _OPERATORS:
        return _OPERATORS[core[1:]]
    return None


def register_family(module, namespace: str) -> list:
    """Register the public functions of an op family module (its ``__all__``) with their
    Node classes and Tensor methods; returns the new OpDefs.

    A function's nodes are the module's Node classes of the same name (``Add`` for
    ``add``; ``ConvNd``, ``SoftmaxBackward`` ... also match). A method of the family's
    ``METHODS`` belongs to the op whose function it is, or whose name it carries in
    ``__op__`` (a wrapper with the method's signature), or whose name it is without the
    trailing ``_`` of an in-place method; any other method is an op of its own in the
    ``ember.Tensor`` namespace (methods with no function form, such as ``view``).
    """
    nodes: dict = {}
    for cls in _node_classes(module):
        nodes.setdefault(_key(cls.__name__), []).append(cls)
    out, by_fn, by_name = [], {}, {}
    not_ops = set(getattr(module, "NOT_OPS", ()))
    for name in module.__all__:
        fn = getattr(module, name, None)
        if fn is None or inspect.isclass(fn) or not callable(fn) or name in not_ops:
            continue
        k = _key(name)
        own = [fn.op] if inspect.isclass(getattr(fn, "op", None)) else nodes.get(k)
        if not own:
            own = [c for key, cs in nodes.items()
                   if key.startswith(k) and key[len(k):] in ("nd", "backward") for c in cs]
        op = register_op(name, fn, namespace=namespace, nodes=own,
                         differentiable=True if not own else None)
        by_fn.setdefault(id(fn), op)
        by_name[name] = op
        out.append(op)
    for mname, fn in getattr(module, "METHODS", {}).items():
        op = (by_fn.get(id(fn)) or by_name.get(getattr(fn, "__op__", None))
              or by_name.get(mname.rstrip("_")) or by_name.get(_operator_op(mname))
              or _OPS.get(f"{namespace}.{_operator_op(mname)}"))
        if op is None:
            op = register_op(mname, fn, namespace="ember.Tensor",
                             nodes=nodes.get(_key(mname), ()), differentiable=True)
            out.append(op)
        op.methods[mname] = fn
    # Nodes shared by several ops (``Convolution`` for conv1d/2d/3d) report their own name.
    for cls in _node_classes(module):
        if "op_name" not in vars(cls) and cls.__module__ == module.__name__:
            cls.op_name = _snake(cls.__name__)
    return out


def registered_ops(namespace: str | None = None) -> list:
    """The registered ops (of one namespace if given), in registration order."""
    return [op for op in _OPS.values() if namespace is None or op.namespace == namespace]


def get_op(qualname: str) -> OpDef:
    """The op registered as ``qualname`` (``"ember.nn.functional.conv2d"``)."""
    try:
        return _OPS[qualname]
    except KeyError:
        raise KeyError(f"no op registered as {qualname!r}") from None


def op_of_node(node_cls) -> OpDef | None:
    """The op a Node class was registered with, or None."""
    return _BY_NODE.get(node_cls)
