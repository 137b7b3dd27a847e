"""``GradBucket``: what a DDP communication hook is handed (``torch.distributed.GradBucket``)."""

from __future__ import annotations

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket of gradients of a :class:`~ember.nn.parallel.DistributedDataParallel`
    model, as a communication hook (``register_comm_hook``) sees it: a flat tensor holding
    the gradients of a few parameters one after the other.

    Made by DDP's reducer, not by the user.
    """

    def __init__(self, index: int, buffer, views: list, parameters: list,
                 is_last: bool) -> None:
        self._index = index
        self._buffer = buffer
        self._views = views
        self._parameters = parameters
        self._is_last = is_last

    def index(self) -> int:
        """The bucket's index. Buckets are reduced in index order; the bucket of the
        parameters whose gradients come first in backward (the last layers) has index 0
        once the buckets were rebuilt after the first iteration."""
        return self._index

    def buffer(self):
        """The flat 1-d tensor of the bucket's gradients (not divided by the world size)."""
        return self._buffer

    def gradients(self) -> list:
        """The gradients of the bucket's parameters, one per parameter, as views of
        :meth:`buffer` shaped like their parameters."""
        return list(self._views)

    def parameters(self) -> list:
        """The bucket's parameters, in the order of :meth:`gradients`."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """True for the last bucket of an iteration (the one reduced last)."""
        return self._is_last

    def set_buffer(self, buffer) -> None:
        """Replace the bucket's flat tensor by ``buffer`` (same number of elements)."""
        if buffer.numel() != self._buffer.numel():
            raise ValueError(f"set_buffer: expected a tensor of {self._buffer.numel()} "
                             f"elements, got {buffer.numel()}")
        self._buffer = buffer

    def __repr__(self) -> str:
        return (f"GradBucket(index={self._index}, numel={self._buffer.numel()}, "
                f"parameters={len(self._parameters)}, is_last={self._is_last})")
