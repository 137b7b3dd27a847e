"""Nested Python structures of tensors ("pytrees"), as ``torch.func`` takes them.

A pytree is a tuple, list, dict (``OrderedDict`` and ``defaultdict`` included) or
namedtuple whose items are pytrees, ``None`` (a node with no leaves), or a leaf (anything
else: a tensor, a number, a string). :func:`tree_flatten` gives the leaves in order and a
:class:`TreeSpec` that :func:`tree_unflatten` rebuilds the structure from.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
           "broadcast_prefix"]


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(x):
    """The container kind of ``x`` ("tuple", "list", ...), or None for a leaf."""
    if x is None:
        return "none"
    if _is_namedtuple(x):
        return "namedtuple"
    t = type(x)
    if t is tuple or t is list:
        return t.__name__
    if isinstance(x, defaultdict):
        return "defaultdict"
    if isinstance(x, OrderedDict):
        return "OrderedDict"
    if isinstance(x, dict):
        return "dict"
    return None


def _children(x, kind):
    if kind in ("tuple", "list", "namedtuple"):
        return list(x), None
    if kind == "none":
        return [], None
    keys = list(x.keys())
    context = (keys, x.default_factory) if kind == "defaultdict" else keys
    return [x[k] for k in keys], context


class TreeSpec:
    """The structure of a pytree without its leaves."""

    __slots__ = ("kind", "type", "context", "children", "num_leaves")

    def __init__(self, kind, typ, context, children):
        self.kind = kind
        self.type = typ
        self.context = context
        self.children = children
        self.num_leaves = sum(c.num_leaves for c in children)

    def is_leaf(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and not isinstance(other, LeafSpec)
                and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, len(self.children)))

    def __repr__(self) -> str:
        inner = ", ".join(repr(c) for c in self.children)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The structure of a single leaf."""

    __slots__ = ()

    def __init__(self):
        self.kind = None
        self.type = None
        self.context = None
        self.children = []
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return 1

    def __repr__(self) -> str:
        return "*"


_LEAF = LeafSpec()


def _flatten_into(x, leaves):
    kind = _node_type(x)
    if kind is None:
        leaves.append(x)
        return _LEAF
    items, context = _children(x, kind)
    return TreeSpec(kind, type(x), context, [_flatten_into(c, leaves) for c in items])


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure."""
    leaves = []
    spec = _flatten_into(tree, leaves)
    return leaves, spec


def tree_leaves(tree) -> list:
    """The leaves of ``tree``, in order."""
    return tree_flatten(tree)[0]


def _build(spec, it):
    if spec.is_leaf():
        return next(it)
    kids = [_build(c, it) for c in spec.children]
    kind = spec.kind
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(kids)
    if kind == "list":
        return kids
    if kind == "namedtuple":
        return spec.type(*kids)
    if kind == "defaultdict":
        keys, factory = spec.context
        out = defaultdict(factory)
        out.update(zip(keys, kids, strict=True))
        return out
    return spec.type(zip(spec.context, kids, strict=True))


def tree_unflatten(leaves, spec: TreeSpec):
    """The pytree of structure ``spec`` holding ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: expected {spec.num_leaves} leaves, got {len(leaves)}")
    return _build(spec, iter(leaves))


def tree_map(fn, tree):
    """``tree`` with every leaf ``x`` replaced by ``fn(x)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def _broadcast(prefix, spec: TreeSpec, out: list) -> bool:
    if _node_type(prefix) in (None, "none"):
        out.extend([prefix] * spec.num_leaves)
        return True
    if spec.is_leaf():
        return False
    kind = _node_type(prefix)
    items, context = _children(prefix, kind)
    if type(prefix) is not spec.type and not (kind == "tuple" and spec.kind == "namedtuple"):
        return False
    if len(items) != len(spec.children):
        return False
    if kind in ("dict", "OrderedDict", "defaultdict"):
        keys = context[0] if kind == "defaultdict" else context
        spec_keys = spec.context[0] if spec.kind == "defaultdict" else spec.context
        if set(keys) != set(spec_keys):
            return False
        lookup = dict(zip(keys, items, strict=True))
        items = [lookup[k] for k in spec_keys]
    return all(_broadcast(p, c, out) for p, c in zip(items, spec.children, strict=True))


def broadcast_prefix(prefix, spec: TreeSpec):
    """The flat list of ``prefix``'s values, one per leaf of ``spec``, where ``prefix`` is
    a pytree whose leaves (ints or None) stand for whole subtrees of ``spec``; None when
    ``prefix`` is not a prefix of that structure."""
    out = []
    return out if _broadcast(prefix, spec, out) else None
