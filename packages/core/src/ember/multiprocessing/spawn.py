"""``spawn``/``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes and surface
their failures (as ``torch.multiprocessing.spawn``)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self),
                (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name))


def _wrap(fn, i, args, error_conn):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_conn.send(traceback.format_exc())
        error_conn.close()
        sys.exit(1)


class ProcessContext:
    """The processes started by :func:`start_processes`; ``join()`` them."""

    def __init__(self, processes, error_conns):
        self.error_conns = error_conns
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes; True once all have finished. If one fails, the others
        are terminated and its error is raised (``ProcessRaisedException`` with its
        traceback, or ``ProcessExitedException``)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join(grace_period if grace_period is not None else 5.0)
            if p.is_alive():
                p.kill()
                p.join()
        failed = self.processes[error_index]
        conn = self.error_conns[error_index]
        if conn.poll():
            original = conn.recv()
            msg = f"\n\n-- Process {error_index} terminated with the following error:\n"
            raise ProcessRaisedException(msg + original, error_index, failed.pid)
        code = failed.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(
                f"process {error_index} terminated with signal {name}", error_index,
                failed.pid, code, name)
        raise ProcessExitedException(
            f"process {error_index} terminated with exit code {code}", error_index,
            failed.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; join
    them if ``join`` (raising the first failure), else return their ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    error_conns, processes = [], []
    for i in range(nprocs):
        reader, writer = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_wrap, args=(fn, i, args, writer), daemon=daemon)
        p.start()
        writer.close()
        error_conns.append(reader)
        processes.append(p)
    context = ProcessContext(processes, error_conns)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """:func:`start_processes` with the ``spawn`` start method by default."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
