"""Settings of the backward engine: multithreading, the gradient layout policy, view
replay."""

from __future__ import annotations

import threading

from ember.autograd.grad_mode import _DecoratorContextManager

__all__ = ["set_multithreading_enabled", "is_multithreading_enabled",
           "enforce_grad_layout_policy", "is_view_replay_enabled"]

_state = threading.local()


def is_multithreading_enabled() -> bool:
    """Whether the backward of different devices may run in threads of their own."""
    return getattr(_state, "multithreading", True)


class set_multithreading_enabled(_DecoratorContextManager):
    r"""Allow or forbid running parts of backward in worker threads; a context manager,
    a decorator, or, called alone, a setting that stays.

    ember's engine runs every backward in the calling thread, which is what PyTorch does
    with ``mode=False``; the setting is kept and reported by
    ``is_multithreading_enabled()``.

    Args:
        mode (bool): enable (True) or disable (False) multithreaded backward.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = is_multithreading_enabled()
        _state.multithreading = bool(mode)
        self.mode = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        _state.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        # as a decorator the setting applies inside the function only
        _state.multithreading = self.prev
        return super().__call__(func)


def _grad_layout_policy_enforced() -> bool:
    return getattr(_state, "layout_policy", True)


class enforce_grad_layout_policy(_DecoratorContextManager):
    r"""Whether accumulated gradients must have their parameter's strides (a context
    manager or, called alone, a setting that stays; per thread).

    ember always accumulates into a new, contiguous gradient (or adds into the existing
    one), so the policy holds either way; the setting is kept.

    Args:
        enable (bool): enforce the policy. Default: True.
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = _grad_layout_policy_enforced()
        _state.layout_policy = bool(enable)
        self.enable = bool(enable)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        _state.layout_policy = self.prev

    def clone(self):
        return self.__class__(self.enable)

    def __call__(self, func):
        _state.layout_policy = self.prev
        return super().__call__(func)


def is_view_replay_enabled() -> bool:
    """Whether the history of a view changed in place is rebuilt by replaying the view
    op. ember always does so (``refresh_view_history`` in the core)."""
    return True
