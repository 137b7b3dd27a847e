"""The error of a failed checkpoint save or load (``torch.distributed.checkpoint.api``)."""

from __future__ import annotations

import traceback as tb

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """Raised on every rank when saving or loading a checkpoint failed on at least one.

    Args:
        msg (str): what failed.
        failures (dict): ``{rank: (exception, traceback)}`` of the failures this rank saw.
    """

    def __init__(self, msg: str, failures: dict) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict:
        """``{rank: (exception, traceback)}``."""
        return self._failures

    def __str__(self) -> str:
        out = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            out += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                out += "".join(tb.format_list(trace))
            out += "".join(tb.format_exception_only(type(exc), value=exc))
        return out
