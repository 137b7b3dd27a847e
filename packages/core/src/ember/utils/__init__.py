"""Utilities: ``ember.utils.data`` (datasets and the DataLoader),
``ember.utils.safetensors`` (the safetensors format) and ``ember.utils.checkpoint``
(activation checkpointing), each loaded on first use."""

import importlib

_SUBMODULES = ("checkpoint", "data", "safetensors")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
