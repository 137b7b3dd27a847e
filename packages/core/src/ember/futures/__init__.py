"""Futures: values that an asynchronous operation delivers later (torch.futures).

ember's futures come from :meth:`ember.distributed.Work.get_future` and from user code
(``Future()`` completed with :meth:`Future.set_result`). ember has no progress thread: a
future of a communication completes, and runs its callbacks, when it is waited on or polled
(:meth:`Future.wait`, :meth:`Future.done`), in the thread that does so.
"""

from __future__ import annotations

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value that becomes available later.

    Args:
        devices (list, optional): the devices of the tensors in the value (CPU: unused).

    Example::

        >>> fut = ember.futures.Future()
        >>> doubled = fut.then(lambda f: f.value() * 2)
        >>> fut.set_result(21)
        >>> doubled.wait()
        42
    """

    def __init__(self, *, devices=None) -> None:
        self._done = False
        self._value = None
        self._exception: BaseException | None = None
        self._callbacks: list = []
        self._poll = None          # poll(block): completes the future from its source
        self._cond = threading.Condition()

    def done(self) -> bool:
        """True if the future has a value or an error (polling its source once)."""
        if not self._done and self._poll is not None:
            self._poll(False)
        return self._done

    def wait(self):
        """Block until the future is done; return its value or raise its error."""
        if not self._done:
            if self._poll is not None:
                self._poll(True)
            else:
                with self._cond:
                    self._cond.wait_for(lambda: self._done)
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        """The value of a done future (raises its error; raises if it is not done)."""
        if not self.done():
            raise RuntimeError("value() called on a Future that is not completed yet; "
                               "call wait() first")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result) -> None:
        """Complete the future with ``result`` and run its callbacks."""
        self._finish(result, None)

    def set_exception(self, result) -> None:
        """Complete the future with the error ``result`` (raised by wait and value)."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result!r} is of type {type(result)}, not an Exception.")
        self._finish(None, result)

    def _finish(self, value, exception) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exception, self._done = value, exception, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when the future is done (at once if it is)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        """A new future completed with ``callback(self)`` once this one is done (with the
        callback's error if it raises)."""
        child = Future()

        def run(parent: Future) -> None:
            try:
                result = callback(parent)
            except Exception as e:  # noqa: BLE001 - handed to the child future
                child.set_exception(e)
                return
            child.set_result(result)

        if self._poll is not None:
            parent_poll = self._poll

            def poll(block: bool) -> None:
                if not self._done:
                    parent_poll(block)
            child._poll = poll
        self.add_done_callback(run)
        return child

    def __repr__(self) -> str:
        return f"<ember.futures.Future {'done' if self._done else 'pending'}>"


def collect_all(futures: list) -> Future:
    """A future completed with the list ``futures`` once all of them are done."""
    futures = list(futures)
    out = Future()
    if not futures:
        out.set_result([])
        return out
    remaining = [len(futures)]

    def one_done(_f):
        remaining[0] -= 1
        if remaining[0] == 0:
            out.set_result(futures)

    def poll(block: bool) -> None:
        for f in futures:
            if block:
                try:
                    f.wait()
                except Exception:  # noqa: BLE001 - the error stays on its future
                    pass
            else:
                f.done()
    out._poll = poll
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list) -> list:
    """Wait for every future; return their values (raising the first error)."""
    return [f.wait() for f in collect_all(futures).wait()]
