"""Listeners at the one dispatch point (NOTE [ One dispatch point ] in ``ember._C._core``).

The compiled core holds one listener; this module lets several coexist (the profiler and
a tracer, two nested profilers) by installing a fan-out when there is more than one. A
listener has ``enter(name, inputs) -> token``, ``exit(token)`` and optionally
``enter_backward(name) -> token`` for a node's backward (else it gets ``enter(name, ())``).
"""

from __future__ import annotations

import threading

from ember._C import _core

__all__ = ["add_listener", "remove_listener", "listeners"]

_lock = threading.Lock()
_listeners: list = []


class _Fanout:
    __slots__ = ("targets",)

    def __init__(self, targets):
        self.targets = tuple(targets)

    def enter(self, name, inputs):
        return [t.enter(name, inputs) for t in self.targets]

    def enter_backward(self, name):
        return [t.enter_backward(name) if hasattr(t, "enter_backward") else t.enter(name, ())
                for t in self.targets]

    def exit(self, tokens):
        for t, tok in zip(self.targets, tokens):
            t.exit(tok)


def _install() -> None:
    if not _listeners:
        _core.set_dispatch_listener(None)
    elif len(_listeners) == 1:
        _core.set_dispatch_listener(_listeners[0])
    else:
        _core.set_dispatch_listener(_Fanout(_listeners))


def add_listener(listener) -> None:
    """Start sending every op's enter/exit to ``listener``."""
    with _lock:
        _listeners.append(listener)
        _install()


def remove_listener(listener) -> None:
    """Stop sending ops to ``listener`` (no error if it was not listening)."""
    with _lock:
        if listener in _listeners:
            _listeners.remove(listener)
        _install()


def listeners() -> tuple:
    """The listeners now installed, in the order they were added."""
    return tuple(_listeners)
