"""``skip_init``: build a module whose parameters are to be initialized by the caller."""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    r"""Instantiate ``module_cls(*args, **kwargs)`` leaving its parameters and buffers to be
    initialized by the caller (their values are unspecified, as after ``ember.empty``).

    As in PyTorch, the module must take a ``device`` argument. PyTorch builds it on the
    meta device and then allocates it; ember has no meta device, so the module is built
    on its device with its own initialization, inside :func:`ember.random.fork_rng`: the
    random generators are left as they were, as PyTorch's ``skip_init`` leaves them, but
    the initialization still takes its time.

    Args:
        module_cls: the class, a subclass of :class:`ember.nn.Module`.
        args, kwargs: the constructor's arguments (``device`` included).

    Returns:
        The module.

    Examples::

        >>> m = nn.utils.skip_init(nn.Linear, 5, 1)
        >>> m.weight.shape
        ember.Size([1, 5])
    """
    from ember.nn.modules.module import Module
    from ember.random import fork_rng

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    with fork_rng(device_type=str(kwargs["device"]).split(":")[0]):
        return module_cls(*args, **kwargs)
