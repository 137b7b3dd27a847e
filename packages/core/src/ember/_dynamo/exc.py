"""The errors of ``ember.compile`` (as ``torch._dynamo.exc``)."""

from __future__ import annotations

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend"]


class TorchDynamoException(RuntimeError):
    """The base of the compiler's errors (PyTorch's name, kept for ``except`` clauses)."""


class Unsupported(TorchDynamoException):
    """The program could not be captured as one graph (raised with ``fullgraph=True``)."""


class InvalidBackend(TorchDynamoException):
    """``backend=`` names no backend."""

    def __init__(self, name) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `ember._dynamo.list_backends()` for "
                         "available backends.")
