"""Debugging helpers: the debug level (TORCH_DISTRIBUTED_DEBUG), record_comm, breakpoint, and
the rendezvous registry.

At ``DebugLevel.DETAIL`` every collective first checks that all ranks of the group call the
same collective on tensors of the same dtype and size (one small all-gather), and raises a
RuntimeError naming the ranks that differ, as PyTorch's DETAIL mode does, instead of
hanging or mixing up data.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
from urllib.parse import parse_qs, urlparse

from ember.distributed._types import DebugLevel

__all__ = ["get_debug_level", "set_debug_level", "set_debug_level_from_env", "record_comm",
           "breakpoint", "register_rendezvous_handler", "rendezvous"]

_level = {"value": None, "comm_name": None}


def get_debug_level() -> DebugLevel:
    """The debug level: OFF, INFO or DETAIL (from TORCH_DISTRIBUTED_DEBUG at first use)."""
    if _level["value"] is None:
        set_debug_level_from_env()
    return _level["value"]


def set_debug_level(level) -> None:
    """Set the debug level (a DebugLevel, or its name)."""
    if isinstance(level, str):
        try:
            level = DebugLevel[level.upper()]
        except KeyError:
            raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or "
                             f"DETAIL, but is '{level}'") from None
    _level["value"] = DebugLevel(level)


def set_debug_level_from_env() -> None:
    """Set the debug level from TORCH_DISTRIBUTED_DEBUG (OFF when unset)."""
    set_debug_level(os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF"))


def comm_name() -> str | None:
    """The name given by the innermost active :func:`record_comm`, or None."""
    return _level["comm_name"]


@contextlib.contextmanager
def record_comm(name: str):
    """Name the collectives started inside the block: their :class:`Work` handles and error
    messages carry ``name``.

    Example::

        >>> with dist.record_comm("grad sync (layer1)"):
        ...     dist.all_reduce(grad)
    """
    previous = _level["comm_name"]
    _level["comm_name"] = str(name)
    try:
        yield
    finally:
        _level["comm_name"] = previous


def breakpoint(rank: int = 0, skip: int = 0, timeout_s=3600):
    """Stop in the debugger on rank ``rank`` (its stdin is the launcher's, under mpiexec for
    rank 0); the other ranks wait in a barrier of up to ``timeout_s`` seconds until it
    continues.

    Args:
        rank (int): the rank that debugs.
        skip (int): skip the first ``skip`` calls.
        timeout_s (float): how long the other ranks wait.
    """
    from datetime import timedelta

    from ember.distributed._collectives import barrier
    from ember.distributed.distributed_c10d import get_rank

    if skip > 0:
        key = id(sys._getframe(1).f_code)
        counts = _level.setdefault("skips", {})
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= skip:
            return
    if get_rank() == rank:
        import pdb

        pdb.Pdb().set_trace(sys._getframe(1))
    barrier(timeout=timedelta(seconds=timeout_s))


# ---------------------------------------------------------------------------
# rendezvous

_handlers: dict = {}


def register_rendezvous_handler(scheme, handler) -> None:
    """Register a rendezvous handler for URLs ``scheme://...``: a generator function
    ``handler(url, **kwargs)`` yielding ``(store, rank, world_size)``."""
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def _file_handler(url: str, **kwargs):
    from ember.distributed._store import FileStore

    result = urlparse(url)
    query = {k: v[0] for k, v in parse_qs(result.query).items()}
    if not result.path:
        raise ValueError("Error initializing torch.distributed using file:// rendezvous: "
                         "path missing")
    rank = int(query.get("rank", kwargs.get("rank", -1)))
    world_size = int(query.get("world_size", kwargs.get("world_size", -1)))
    if "rank" not in query and rank < 0:
        raise ValueError("Error initializing torch.distributed using file:// rendezvous: "
                         "rank parameter missing")
    if "world_size" not in query and world_size < 0:
        raise ValueError("Error initializing torch.distributed using file:// rendezvous: "
                         "world size parameter missing")
    yield FileStore(result.path, world_size), rank, world_size


_handlers["file"] = _file_handler


def rendezvous(url: str, rank: int = -1, world_size: int = -1, **kwargs):
    """An iterator of ``(store, rank, world_size)`` for ``url``: ``file://PATH`` gives a
    FileStore; other schemes need a handler registered with
    :func:`register_rendezvous_handler` (ember's process groups meet through MPI, not over
    ``tcp://`` or ``env://`` stores)."""
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    url = url.decode() if isinstance(url, bytes) else url
    scheme = urlparse(url).scheme
    if scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {scheme}://"
                           + (" (ember's ranks meet through MPI: init_process_group needs no "
                              "store)" if scheme in ("env", "tcp") else ""))
    if rank != -1:
        kwargs["rank"] = rank
    if world_size != -1:
        kwargs["world_size"] = world_size
    return _handlers[scheme](url, **kwargs)
