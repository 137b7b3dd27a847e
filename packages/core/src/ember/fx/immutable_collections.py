"""Immutable containers for the arguments of graph nodes (as ``torch.fx.immutable_collections``).

A node's ``args`` and ``kwargs`` are shared with its users' bookkeeping: changing them in place
would leave ``Node.users`` stale, so they are frozen; use ``Node.args = ...`` or
``Node.update_arg`` instead.
"""

from __future__ import annotations

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. If you are "
                    "attempting to modify the kwargs or args of a torch.fx.Node object, "
                    "instead create a new copy of it and assign the copy to the node:\n"
                    "    new_args = ... # copy and mutate args\n"
                    "    node.args = new_args\n")


class immutable_list(list):  # noqa: N801 - torch's name
    """A ``list`` that refuses mutation."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = extend = insert = pop = remove = clear = sort = reverse = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (list(self),))


class immutable_dict(dict):  # noqa: N801 - torch's name
    """A ``dict`` that refuses mutation."""

    __setitem__ = __delitem__ = __ior__ = _no_mutation
    update = pop = popitem = clear = setdefault = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (dict(self),))
