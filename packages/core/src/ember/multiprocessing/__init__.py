"""``ember.multiprocessing``: Python's multiprocessing, with tensors shared between
processes instead of copied (as ``torch.multiprocessing``).

Everything of ``multiprocessing`` is here under the same names (``get_context``,
``Process``, ``Queue``, ``Pipe``, ``Pool``, the ``fork``/``spawn``/``forkserver``
contexts...). Importing this module registers a reducer for ember tensors with
``multiprocessing``'s pickler, so a tensor put in a Queue or a Pipe, or passed to a
spawned Process, travels as a shared-memory segment: both processes see the same data
(see NOTE [ Sharing tensors between processes ] in reductions.py). ``spawn`` starts
``nprocs`` processes running ``fn(i, *args)`` and re-raises their errors.
"""

import multiprocessing
from multiprocessing import *  # noqa: F403

from ember.multiprocessing.reductions import init_reductions, is_shared, share_memory_
from ember.multiprocessing.spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = [
    "set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
    "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
    "ProcessExitedException", "share_memory_", "is_shared", "init_reductions",
]
__all__ += multiprocessing.__all__

_sharing_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set:
    """The sharing strategies this system supports (``file_descriptor``: segments are sent
    as file descriptors and never have a name that could leak)."""
    return {"file_descriptor"}


def get_sharing_strategy() -> str:
    """The current sharing strategy."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Set the sharing strategy (one of :func:`get_all_sharing_strategies`)."""
    global _sharing_strategy
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"invalid sharing strategy {new_strategy!r}; expected one of "
                         f"{sorted(get_all_sharing_strategies())}")
    _sharing_strategy = new_strategy


init_reductions()
