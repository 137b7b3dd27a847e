"""``ember.backends.opt_einsum``: contraction-order optimization of ``ember.einsum``.

ember's einsum asks NumPy for its contraction order (``optimize=True``); with the
opt_einsum package installed PyTorch uses it instead. ``enabled`` and ``strategy`` are kept
in ``ember._flags.FLAGS``.
"""

from __future__ import annotations

import functools

from ember._flags import FLAGS
from ember.backends._prop_module import flag_module, flags_context

__all__ = ["is_available", "get_opt_einsum", "flags", "set_flags"]


@functools.cache
def get_opt_einsum():
    """The opt_einsum package, or None when it is not installed."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def is_available() -> bool:
    """True if the opt_einsum package is installed."""
    return get_opt_einsum() is not None


FLAGS["opt_einsum_enabled"] = is_available()
FLAGS["opt_einsum_strategy"] = "auto" if is_available() else None


def set_flags(_enabled=None, _strategy=None):
    """Set the switches given; returns the previous (enabled, strategy)."""
    prev = (FLAGS["opt_einsum_enabled"], FLAGS["opt_einsum_strategy"])
    if _enabled is not None:
        if _enabled and not is_available():
            raise ValueError("opt_einsum is not available, so setting `enabled` will not be "
                             "supported. Please install opt_einsum.")
        FLAGS["opt_einsum_enabled"] = _enabled
    if _strategy is not None:
        if _strategy not in ("auto", "greedy", "optimal"):
            raise ValueError(f"`strategy` must be one of: auto, greedy, optimal; got "
                             f"{_strategy!r}")
        FLAGS["opt_einsum_strategy"] = _strategy
    return prev


def flags(enabled=None, strategy=None):
    """Context manager setting the switches inside it."""
    values = {}
    if enabled is not None:
        values["opt_einsum_enabled"] = enabled
    if strategy is not None:
        values["opt_einsum_strategy"] = strategy
    return flags_context(values)


flag_module(__name__, {"enabled": "opt_einsum_enabled", "strategy": "opt_einsum_strategy"})
