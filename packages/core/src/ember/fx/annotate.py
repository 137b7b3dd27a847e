"""``annotate`` (as ``torch.fx.annotate``): give a traced value a type annotation."""

from __future__ import annotations

from ember.fx.proxy import Proxy

__all__ = ["annotate"]


def annotate(val, type):  # noqa: A002 - torch's parameter name
    """Set the type annotation of traced value ``val`` (its node's ``type``, printed in
    the generated code); outside tracing, return ``val`` unchanged.

    Examples::

        >>> def f(x):
        ...     return ember.fx.annotate(x, ember.Tensor) + 1
    """
    if isinstance(val, Proxy):
        if val.node.type is not None:
            raise RuntimeError(f"Tried to annotate a value that already had a type on it! "
                               f"Existing type is {val.node.type} and new type is {type}. "
                               "This could happen if you tried to annotate a function "
                               "parameter value (in which case you should use the type slot "
                               "on the function signature) or you called annotate on the "
                               "same value twice")
        val.node.type = type
        return val
    return val
