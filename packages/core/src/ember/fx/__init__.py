"""``ember.fx``: symbolic tracing and graph transformation, as ``torch.fx``.

Not available yet: it is the graph-capture issue (23). Until then every entry point raises
``RuntimeError`` saying so (tracing a model must never silently do nothing).
"""

from __future__ import annotations

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg"]

_NOT_YET = ("ember.fx is not available yet: symbolic tracing and graph modules come with "
            "ember's graph capture (issue 23)")


def _not_yet(*args, **kwargs):
    raise RuntimeError(_NOT_YET)


class _NotYet:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NOT_YET)


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` into a GraphModule (not available yet: raises ``RuntimeError``)."""
    raise RuntimeError(_NOT_YET)


def wrap(fn_or_name):
    """Mark a function as a leaf for tracing (not available yet: raises)."""
    raise RuntimeError(_NOT_YET)


def replace_pattern(gm, pattern, replacement):
    """Rewrite a GraphModule (not available yet: raises)."""
    raise RuntimeError(_NOT_YET)


def has_side_effect(fn):
    """Mark a function as side-effecting for tracing (not available yet: raises)."""
    raise RuntimeError(_NOT_YET)


def map_arg(a, fn):
    """Apply ``fn`` to the Nodes in a nested argument (not available yet: raises)."""
    raise RuntimeError(_NOT_YET)


class Tracer(_NotYet):
    """Symbolic tracer (not available yet: raises ``RuntimeError``)."""


class Graph(_NotYet):
    """A traced graph (not available yet: raises ``RuntimeError``)."""


class GraphModule(_NotYet):
    """A module built from a graph (not available yet: raises ``RuntimeError``)."""


class Interpreter(_NotYet):
    """Runs a GraphModule node by node (not available yet: raises ``RuntimeError``)."""


class Transformer(_NotYet):
    """Rewrites a GraphModule (not available yet: raises ``RuntimeError``)."""


class Node(_NotYet):
    """A node of a graph (not available yet: raises ``RuntimeError``)."""


class Proxy(_NotYet):
    """A traced value (not available yet: raises ``RuntimeError``)."""
