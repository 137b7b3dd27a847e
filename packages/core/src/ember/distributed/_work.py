"""Work: the handle of an operation started with ``async_op=True`` (and of isend/irecv)."""

from __future__ import annotations

from datetime import timedelta

from ember.distributed import _mpi
from ember.distributed._types import DistBackendError

__all__ = ["Work"]


class Work:
    """A started operation: :meth:`wait` for it, or ask :meth:`is_completed`.

    Returned by the collectives with ``async_op=True``, by :func:`isend`, :func:`irecv` and
    :func:`batch_isend_irecv`. The output tensors hold the result once :meth:`wait` returns
    (or :meth:`is_completed` returned True).

    MPI moves the data while ember polls it: during :meth:`wait`, :meth:`is_completed` and
    the other operations of the process.
    """

    def __init__(self, pg, op_name: str, requests: list, finish=None, outputs=(),
                 statuses=None) -> None:
        from ember.distributed._debug import comm_name

        self._pg = pg
        name = comm_name()
        self._op_name = op_name if name is None else f"{name} ({op_name})"
        self._requests = list(requests)
        self._finish = finish
        self._outputs = list(outputs)
        self._statuses = statuses
        self._done = False
        self._exception: BaseException | None = None
        self._source_rank = -1

    def _describe(self, timeout: timedelta) -> str:
        pg = self._pg
        return (f"ember.distributed: {self._op_name} on rank {pg.rank()} (group of "
                f"{pg.size()}, timeout {timeout})")

    def _complete(self) -> None:
        self._done = True
        self._requests = []
        if self._statuses:
            self._source_rank = self._statuses[0].Get_source()
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish(self)

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        """Block until the operation completes; raise DistBackendError if it does not within
        ``timeout`` (zero, the default: the group's timeout) or another rank failed.

        Returns:
            True.
        """
        if self._done:
            if self._exception is not None:
                raise self._exception
            return True
        pg = self._pg
        if isinstance(timeout, (int, float)):
            timeout = timedelta(seconds=timeout)
        use = pg._timeout if timeout is None or timeout <= timedelta(0) else timeout
        try:
            _mpi.wait(self._requests, pg._deadline(use), lambda: self._describe(use),
                      self._statuses)
        except DistBackendError as e:
            # the group cannot recover: its MPI requests are still outstanding
            pg._aborted = f"{self._op_name} failed ({e})"
            self._exception = e
            self._done = True
            raise
        self._complete()
        return True

    def synchronize(self) -> None:
        """Wait for the operation (CPU: the same as :meth:`wait`)."""
        self.wait()

    def block_current_stream(self) -> None:
        """Wait for the operation (CPU has no streams: the same as :meth:`wait`)."""
        self.wait()

    def is_completed(self) -> bool:
        """True if the operation has completed (checking once, without blocking)."""
        if not self._done:
            if _mpi.test(self._requests, self._statuses):
                self._complete()
            else:
                _mpi.check_failures()
        return self._done

    def is_success(self) -> bool:
        """True if the operation completed without error (checking once)."""
        return self.is_completed() and self._exception is None

    def exception(self):
        """The error the operation raised, or None."""
        return self._exception

    def source_rank(self) -> int:
        """The group rank the message came from (recv from any source), after :meth:`wait`."""
        if not self._done:
            raise RuntimeError("source_rank() is only available after the receive completed")
        return self._source_rank

    def result(self) -> list:
        """The output tensors of the operation."""
        self.wait()
        return list(self._outputs)

    def get_future(self):
        """A :class:`ember.futures.Future` completed with :meth:`result` (a list of tensors)
        when the operation completes. Its callbacks run when it is waited on or polled
        (ember has no progress thread)."""
        from ember.futures import Future

        fut = Future()

        def poll(block: bool) -> None:
            if fut._done:
                return
            try:
                if block:
                    self.wait()
                elif not self.is_completed():
                    return
            except Exception as e:  # noqa: BLE001 - handed to the future's waiter
                fut.set_exception(e)
                return
            fut.set_result(list(self._outputs))

        fut._poll = poll
        return fut

    def __repr__(self) -> str:
        state = "completed" if self._done else "pending"
        return f"<ember.distributed.Work {self._op_name} {state}>"
