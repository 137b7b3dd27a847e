"""Utilities: ``ember.utils.data`` (datasets and the DataLoader) and
``ember.utils.safetensors`` (the safetensors format), each loaded on first use."""

import importlib

_SUBMODULES = ("data", "safetensors")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
