"""The families of ``ember.nn.functional``; each module lists its names in ``__all__`` and
registers its ops (NOTE [ The op registry ]) under the ``ember.nn.functional`` namespace."""

import importlib

from ember._ops._registry import register_family

_FAMILIES = ("activation", "linear", "dropout", "sparse", "padding", "conv", "pooling", "fold",
             "interpolate", "vision", "normalization", "loss", "distance", "misc",
             "attention", "fractional_pool")

__all__: list = []
for _name in _FAMILIES:
    try:
        _mod = importlib.import_module(f"ember.nn._functional.{_name}")
    except ModuleNotFoundError as e:  # a family not written yet
        if e.name != f"ember.nn._functional.{_name}":
            raise
        continue
    for _n in _mod.__all__:
        globals()[_n] = getattr(_mod, _n)
    __all__ += list(_mod.__all__)
    register_family(_mod, "ember.nn.functional")
