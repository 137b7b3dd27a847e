"""Module attributes that read and write ember's global flags (``ember._flags.FLAGS``)."""

from __future__ import annotations

import contextlib
import sys
import types

from ember._flags import FLAGS

__all__ = ["flag_module", "flags_context"]


def flag_module(module_name: str, attrs: dict) -> None:
    """Make ``module.attr`` (``attr`` in ``attrs``) read and write ``FLAGS[attrs[attr]]``,
    as PyTorch's ``torch.backends.cudnn.benchmark = True`` does."""
    module = sys.modules[module_name]

    def prop(key):
        return property(lambda self: FLAGS[key],
                        lambda self, value: FLAGS.__setitem__(key, value))

    cls = type(f"{module_name.rsplit('.', 1)[1].capitalize()}Module", (types.ModuleType,),
               {name: prop(key) for name, key in attrs.items()})
    module.__class__ = cls


@contextlib.contextmanager
def flags_context(values: dict):
    """Set ``FLAGS`` entries inside the block, restoring them after."""
    saved = {k: FLAGS[k] for k in values}
    FLAGS.update(values)
    try:
        yield
    finally:
        FLAGS.update(saved)
