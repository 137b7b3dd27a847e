"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator; the mode is per thread (the flags live in
the compiled core as thread-local variables).
"""

from __future__ import annotations

import functools
import inspect

from ember._C import _core

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

is_grad_enabled = _core.is_grad_enabled
is_inference_mode_enabled = _core.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("grad-mode decorators do not apply to classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block (or the decorated function).

    Examples::

        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self, orig_func=None):
        self._orig = orig_func

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return super().__new__(cls)
        return cls()(orig_func)

    def __enter__(self):
        self.prev = _core.set_grad_enabled_flag(False)

    def __exit__(self, *exc):
        _core.set_grad_enabled_flag(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block, e.g. within ``no_grad``."""

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass

    def __enter__(self):
        self.prev = _core.set_grad_enabled_flag(True)

    def __exit__(self, *exc):
        _core.set_grad_enabled_flag(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to ``mode``: as a function call it takes effect at once; as a context
    manager or decorator it is restored on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _core.set_grad_enabled_flag(bool(mode))
        self.mode = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _core.set_grad_enabled_flag(self.prev)

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        _core.set_grad_enabled_flag(self.prev)
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for inference-only code (``mode=False`` leaves grad mode alone)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self):
        if self.mode:
            self.prev_grad = _core.set_grad_enabled_flag(False)
        else:
            self.prev_grad = _core.is_grad_enabled()
        self.prev_inf = _core.set_inference_mode_flag(bool(self.mode))

    def __exit__(self, *exc):
        _core.set_grad_enabled_flag(self.prev_grad)
        _core.set_inference_mode_flag(self.prev_inf)

    def clone(self):
        return self.__class__(self.mode)
