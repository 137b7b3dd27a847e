"""Anomaly detection for the autograd engine.

In anomaly mode every recorded node keeps the traceback of the forward call that
made it, and a backward that produces NaN raises ``RuntimeError`` naming the node
(``Function 'SqrtBackward0' returned nan values in its 0th output.``) followed by that
traceback. The flag lives in the compiled core, next to grad mode.
"""

from __future__ import annotations

import functools
import sys
import traceback
import warnings

from ember._C import _core

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

# NOTE [ check_nan ]
# The engine checks for NaN whenever anomaly mode is on. Until the core has its own
# check_nan flag (set_anomaly_check_nan_flag), check_nan=False is only remembered here
# (is_anomaly_check_nan_enabled reports it) and NaN checking still happens.
_check_nan = True
_set_core_check_nan = getattr(_core, "set_anomaly_check_nan_flag", None)


def _forward_trace(skip: int = 1) -> list[str]:
    """The formatted stack of the caller, less ember's own frames at its end: the
    forward traceback kept on a node in anomaly mode."""
    f = sys._getframe(skip)
    while f is not None and f.f_globals.get("__name__", "").split(".", 1)[0] == "ember":
        f = f.f_back
    return traceback.format_stack(f)


def is_anomaly_enabled() -> bool:
    """True if anomaly detection is on."""
    return _core.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """True if anomaly detection also checks backward results for NaN."""
    return _check_nan


def _set_anomaly_enabled(mode: bool, check_nan: bool) -> None:
    global _check_nan
    _core.set_anomaly_flag(bool(mode))
    _check_nan = bool(check_nan)
    if _set_core_check_nan is not None:
        _set_core_check_nan(_check_nan)


class _AnomalyContext:
    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self._clone():
                return func(*args, **kwargs)
        return wrapper

    def __exit__(self, *args) -> None:
        _set_anomaly_enabled(self.prev, self.prev_check_nan)


class detect_anomaly(_AnomalyContext):
    r"""Context manager (and decorator) that turns on anomaly detection.

    - The forward pass records, for every node, the traceback of the call that made
      it, so errors in backward can point at the forward line.
    - With ``check_nan=True`` (the default), a backward computation that produces
      NaN raises an error naming the node and showing that traceback.

    Only for debugging: it slows every op down.

    Example::

        >>> x = ember.tensor([0.0], requires_grad=True)
        >>> with ember.autograd.detect_anomaly():
        ...     y = x.sqrt() * 0
        ...     y.sum().backward()
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
        Traceback of forward call that caused the error: ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.prev_check_nan = _check_nan
        _set_anomaly_enabled(True, self.check_nan)

    def _clone(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return detect_anomaly(self.check_nan)


class set_detect_anomaly(_AnomalyContext):
    r"""Turn anomaly detection on or off.

    Called as a function it takes effect at once; as a context manager (or
    decorator) the previous setting comes back on exit.

    Args:
        mode (bool): turn anomaly detection on (``True``) or off (``False``).
        check_nan (bool): also raise when backward produces NaN.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.prev_check_nan = _check_nan
        self.mode, self.check_nan = mode, check_nan
        _set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __call__(self, func):
        # As a decorator the setting applies inside the function only.
        _set_anomaly_enabled(self.prev, self.prev_check_nan)
        return super().__call__(func)

    def _clone(self):
        return set_detect_anomaly(self.mode, self.check_nan)
