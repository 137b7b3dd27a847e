"""Graph nodes (as ``torch.fx.node``): :class:`Node`, :func:`map_arg`, :func:`map_aggregate`.

A node is one operation of a :class:`~ember.fx.Graph`: its ``op`` says what kind
(``placeholder``, ``get_attr``, ``call_function``, ``call_method``, ``call_module``,
``output``), ``target`` what is called, ``args``/``kwargs`` with what. Nodes know their users,
so a graph can be rewritten in place (:meth:`Node.replace_all_uses_with`).
"""

from __future__ import annotations

import builtins
import operator
import types
from collections.abc import Callable
from typing import Any

from ember.fx._names import qualified_name
from ember.fx.immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Target", "Argument"]

Target = Callable[..., Any] | str
Argument = Any  # a nested tuple/list/dict/slice of Nodes and Python constants

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr",
            "output", "root")

_side_effectful_functions: set = {builtins.print, operator.setitem}


def has_side_effect(fn: Callable) -> Callable:
    """Mark ``fn`` as having side effects: ``Graph.eliminate_dead_code`` keeps its calls
    even when nothing uses their result. Returns ``fn`` (usable as a decorator).

    Examples::

        >>> @ember.fx.has_side_effect
        ... def log(x):
        ...     print(x)
    """
    _side_effectful_functions.add(fn)
    return fn


def _side_effectful_ops():
    # the checks concrete_args leave in a graph have no result but must stay
    from ember.fx._symbolic_trace import _assert, _assert_is_none

    return {_assert, _assert_is_none}


def _random_ops() -> set:
    import ember
    import ember.nn.functional as F

    names = ("rand", "randn", "randint", "randperm", "bernoulli", "multinomial", "normal",
             "poisson", "rand_like", "randn_like", "randint_like")
    drops = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
             "feature_alpha_dropout")
    out = {getattr(ember, n, None) for n in names} | {getattr(F, n, None) for n in drops}
    out.discard(None)
    return out


def _type_repr(obj) -> str:
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg, max_list_len: float = float("inf")) -> str:
    if isinstance(arg, (list, tuple)):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        if isinstance(arg, list):
            return f"[{items}{more}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation of a :class:`~ember.fx.Graph`.

    Attributes:
        op: ``placeholder`` (a function input; ``target`` is its name, ``args`` may hold
            its default), ``get_attr`` (fetch a parameter/buffer/attribute by its dotted
            path ``target``), ``call_function`` (``target`` is a callable),
            ``call_module`` (``target`` is the dotted path of a submodule),
            ``call_method`` (``target`` is a method name called on ``args[0]``),
            ``output`` (``args[0]`` is what the graph returns).
        name: the unique name of the value in the graph (and in the generated code).
        graph: the graph the node belongs to.
        meta: a dict passes write into (``tensor_meta``, ``nn_module_stack``, ...).
        type: an optional type annotation printed in the generated code.

    Nodes are created through :class:`~ember.fx.Graph` methods, not directly.
    """

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple,
                 kwargs: dict, return_type=None) -> None:
        if op not in _OPCODES:
            raise ValueError(f"invalid node op {op!r}: expected one of {_OPCODES[:-1]}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = immutable_dict()
        self.__update_args_kwargs(args, kwargs)

    # -- linked-list position ---------------------------------------------------------
    @property
    def next(self) -> Node:
        """The next node in the graph's order."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the graph's order."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move (or insert) node ``x`` just before this one in the graph."""
        if self.graph is not x.graph:
            raise ValueError("Attempting to move a Node into a different Graph")
        if self is x:
            raise ValueError("Cannot prepend a node to itself")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move (or insert) node ``x`` just after this one in the graph."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # -- arguments ---------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        """The positional arguments (Nodes and constants). Assigning updates ``users``."""
        return self._args

    @args.setter
    def args(self, a) -> None:
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments (Nodes and constants). Assigning updates ``users``."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The distinct Nodes in ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg) -> None:
        """Set ``args[idx] = arg`` (keeping ``users`` right)."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg) -> None:
        """Insert ``arg`` at position ``idx`` of ``args``."""
        args = list(self._args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        """Set ``kwargs[key] = arg`` (keeping ``users`` right)."""
        self.kwargs = {**self._kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}

        def collect(n):
            if n.graph is not self.graph and self.graph is not None and n.graph is not None:
                raise ValueError(f"Argument {n} of node {self.name} belongs to another Graph")
            self._input_nodes.setdefault(n)
            return n

        self._args = map_aggregate(tuple(new_args), lambda x: collect(x)
                                   if isinstance(x, Node) else x)
        self._kwargs = map_aggregate(dict(new_kwargs), lambda x: collect(x)
                                     if isinstance(x, Node) else x)
        for n in self._input_nodes:
            n.users.setdefault(self)

    # -- rewriting ---------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] | None = None,
                              *, propagate_meta: bool = False) -> list:
        """Make every user of this node use ``replace_with`` instead.

        Args:
            replace_with: the node that takes this one's place.
            delete_user_cb: called with each user; the user is rewritten only where it
                returns True.
            propagate_meta: copy this node's ``meta`` into ``replace_with`` (which must
                have none yet).

        Returns:
            the users that were rewritten.
        """
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("'propagate_meta' is only valid when the replacement "
                                     "node has no meta yet")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if user is replace_with or (delete_user_cb is not None
                                        and not delete_user_cb(user)):
                continue
            user._replace_input(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Use ``new_input`` wherever this node's arguments use ``old_input``."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old, new) -> None:
        def swap(n):
            return new if n is old else n

        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- queries -----------------------------------------------------------------------
    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether removing this node could change the program (placeholders, outputs,
        side-effecting functions, in-place methods, modules marked impure, and — with
        ``impure_random`` — random ops, whose removal changes the random stream)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            if impure_random and self.target in _random_ops():
                return True
            return self.target in _side_effectful_functions or \
                self.target in _side_effectful_ops()
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") \
                and not self.target.startswith("_")
        if self.op == "call_module":
            root = self.graph.owning_module if self.graph is not None else None
            if root is not None:
                try:
                    mod = root.get_submodule(self.target)
                except AttributeError:
                    return False
                return bool(getattr(mod, "_is_impure", False))
        return False

    def normalized_arguments(self, root, arg_types: tuple | None = None,
                             kwarg_types: dict | None = None,
                             normalize_to_only_use_kwargs: bool = False):
        """This node's arguments bound to its target's signature, defaults filled in
        (:mod:`ember.fx.operator_schemas`): an ``ArgsKwargsPair``, or None where they
        cannot be (``call_method`` nodes, targets without a usable signature).

        Args:
            root: the module ``call_module`` targets are looked up in.
            normalize_to_only_use_kwargs: return every argument by name.
        """
        from ember.fx.operator_schemas import normalize_function, normalize_module

        if self.op == "call_function":
            return normalize_function(self.target, self.args, self.kwargs, arg_types,
                                      kwarg_types, normalize_to_only_use_kwargs)
        if self.op == "call_module":
            return normalize_module(root, self.target, self.args, self.kwargs,
                                    normalize_to_only_use_kwargs)
        return None

    @property
    def stack_trace(self):
        """Where the traced program made this node (set when the tracer records stack
        traces), or None."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace) -> None:
        self.meta["stack_trace"] = trace

    def _pretty_print_target(self, target) -> str:
        if isinstance(target, str):
            return target
        name = getattr(target, "__name__", None)
        module = getattr(target, "__module__", None)
        if name is not None and module == "builtins":
            return f"builtins.{name}"
        if name is not None and module == "_operator":
            return f"operator.{name}"
        return qualified_name(target)

    def format_node(self, placeholder_names: list | None = None,
                    maybe_return_typename: list | None = None, *,
                    include_tensor_metadata: bool = False) -> str | None:
        """A one-line description of the node, as ``Graph.__str__`` prints it::

            %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})

        With ``include_tensor_metadata``, call nodes that hold a tensor in ``meta['val']``
        show its dtype and shape (``%add : f32[2, 3][num_users=1] = ...``).
        """
        users = f"[num_users={len(self.users)}]"
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : {typename}{users} = placeholder[target={self.target}]" \
                f"{default}"
        if self.op == "get_attr":
            return f"%{self.name} : {typename}{users} = get_attr[target=" \
                f"{self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type is not None and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        if include_tensor_metadata:
            import ember

            val = self.meta.get("val")
            if isinstance(val, ember.Tensor):
                from ember.fx.graph import _dtype_abbrs, _shape_str

                dt = str(val.dtype).split(".")[-1]
                typename = f"{_dtype_abbrs.get(dt, dt)}{_shape_str(val.shape)}"
        return (f"%{self.name} : {typename}{users} = {self.op}[target="
                f"{self._pretty_print_target(self.target)}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name


def map_arg(a, fn: Callable[[Node], Any]):
    """Apply ``fn`` to every :class:`Node` in the nested argument ``a`` (tuples, lists,
    dicts, slices), keeping everything else.

    Examples::

        >>> map_arg((node, [1, node]), lambda n: n.name)
        ('x', [1, 'x'])
    """
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn: Callable[[Any], Any]):
    """Apply ``fn`` to every leaf of the nested ``a`` (tuples — named ones included —,
    lists, dicts and slices are traversed; lists and dicts come back immutable)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        if not hasattr(a, "_fields"):
            return t
        try:
            return type(a)(*t)  # a namedtuple
        except TypeError:
            return type(a)(t)  # a return type built from one sequence (ember.return_types)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)
