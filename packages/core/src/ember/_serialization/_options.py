"""Loading options shared by ``ember.load`` and its readers: the fallback byte order and the
environment variables that force ``weights_only``.

NOTE [ Forcing weights_only from the environment ]
As PyTorch documents: ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` (or ``EMBER_FORCE_WEIGHTS_ONLY_LOAD``)
set to 1/y/yes/true makes every load weights-only, even one that passed
``weights_only=False``; ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (or
``EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD``) makes loads that did not pass ``weights_only`` use
``weights_only=False``, with a warning. Both set is an error.
"""

from __future__ import annotations

import os
import warnings
from enum import Enum

__all__ = ["LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
           "resolve_weights_only", "fallback_byteorder"]

_TRUE = ("1", "y", "yes", "true")


class LoadEndianness(Enum):
    """The byte order assumed for a checkpoint without a ``byteorder`` record."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_endianness: list = [None]


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for checkpoints that do not record theirs (None: little-endian,
    what PyTorch writes on every platform it runs on)."""
    return _endianness[0]


def set_default_load_endianness(endianness) -> None:
    """Set the byte order assumed for checkpoints that do not record theirs."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _endianness[0] = endianness


def fallback_byteorder() -> str:
    """``"little"`` or ``"big"``: the byte order of a checkpoint without a record of it."""
    import sys

    e = _endianness[0]
    if e is None or e is LoadEndianness.LITTLE:
        return "little"
    if e is LoadEndianness.BIG:
        return "big"
    return sys.byteorder


def _env(name: str) -> bool:
    return any(os.getenv(prefix + name, "0").lower() in _TRUE for prefix in ("TORCH_", "EMBER_"))


def resolve_weights_only(weights_only, pickle_module) -> bool:
    """``weights_only`` as ``ember.load`` uses it (see NOTE [ Forcing weights_only from the
    environment ]); None means True unless a ``pickle_module`` was given."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force, force_no = _env("FORCE_WEIGHTS_ONLY_LOAD"), _env("FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were "
                           "set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the `weights_only` argument was not explicitly passed to `ember.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return bool(weights_only)
