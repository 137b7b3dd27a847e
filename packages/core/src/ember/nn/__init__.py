"""``ember.nn``: modules, layers, losses, the functional API and initialization."""

from ember.nn import attention, functional, grad, init, utils
from ember.nn.modules import *  # noqa: F403
from ember.nn.modules import __all__ as _modules_all
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "attention",
           "functional", "grad", "init", "utils", *_modules_all]


def factory_kwargs(kwargs):
    """The factory keyword arguments (``device``, ``dtype``, ``memory_format``) of ``kwargs``
    as one dict, for modules that pass them on to creation functions.

    ``kwargs`` may also hold them under ``factory_kwargs`` (a dict); a key given both ways, or
    any other key, raises a TypeError. None gives ``{}``.

    Example::

        >>> def __init__(self, n, **kwargs):
        ...     self.weight = nn.Parameter(ember.empty(n, **nn.factory_kwargs(kwargs)))
    """
    if kwargs is None:
        return {}
    simple = ("device", "dtype", "memory_format")
    unexpected = set(kwargs) - set(simple) - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result


__all__ += ["factory_kwargs"]
