"""CUDA streams and events, as ``torch.cuda.streams``: thin wrappers of CuPy's.

ember's GPU ops run on CuPy's current stream, so work issued inside
``with ember.cuda.stream(s):`` is queued on ``s``. Without a GPU, making a stream or an
event raises, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ember._backend import backend_for_device
from ember._backend import cupy as _seam
from ember.cuda._utils import get_device_index, lazy_init

__all__ = ["Stream", "ExternalStream", "Event"]


def _no_gpu(what: str) -> None:
    try:
        lazy_init()
    except AssertionError:
        raise RuntimeError(f"ember.cuda.{what} requires CUDA support") from None


class Stream:
    """A CUDA stream: an ordered queue of work on one GPU.

    Args:
        device (ember.device or int, optional): the GPU (the current one by default).
        priority (int, optional): the stream's priority; only the default, 0, is available
            (CuPy's streams have no priority). Default: 0.

    Example::

        >>> s = ember.cuda.Stream()
        >>> with ember.cuda.stream(s):
        ...     y = x @ x
        >>> s.synchronize()
    """

    def __init__(self, device: Any = None, priority: int = 0, **kwargs):
        _no_gpu(type(self).__name__)
        self.device_index = get_device_index(device)
        with backend_for_device(f"cuda:{self.device_index}").context():
            self._cupy_stream = self._make(priority=priority, **kwargs)

    def _make(self, priority=0, **kwargs):
        # CuPy's streams take no priority (cupy.cuda.Stream(null, non_blocking, ptds)); a
        # priority other than the default cannot be honoured, so it is refused.
        if priority:
            raise RuntimeError(f"ember.cuda.Stream(priority={priority}): CuPy's streams have "
                               "the default priority only")
        return _seam.module().cuda.Stream(non_blocking=True)

    @classmethod
    def _wrap(cls, cupy_stream, device_index: int) -> Stream:
        s = cls.__new__(cls)
        s._cupy_stream = cupy_stream
        s.device_index = device_index
        return s

    @property
    def device(self):
        from ember._device import device

        return device("cuda", self.device_index)

    @property
    def cuda_stream(self) -> int:
        """The ``cudaStream_t`` address."""
        return int(self._cupy_stream.ptr)

    def wait_event(self, event: Event) -> None:
        """Make work queued later on this stream wait for ``event``."""
        self._cupy_stream.wait_event(event._cupy_event)

    def wait_stream(self, stream: Stream) -> None:
        """Make work queued later on this stream wait for the work queued on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        """True if all work queued on this stream has finished."""
        return bool(self._cupy_stream.done)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream."""
        self._cupy_stream.synchronize()

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return (f"<ember.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")


class ExternalStream(Stream):
    """A :class:`Stream` around a ``cudaStream_t`` made elsewhere (by address); ember neither
    owns nor destroys it.

    Args:
        stream_ptr (int): the stream's address.
        device (ember.device or int, optional): its GPU.
    """

    def __init__(self, stream_ptr: int, device: Any = None, **kwargs):
        self._ptr = int(stream_ptr)
        super().__init__(device=device, **kwargs)

    def _make(self, priority=0, **kwargs):
        return _seam.module().cuda.ExternalStream(self._ptr)


class Event:
    """A CUDA event: a marker in a stream, to wait on or to time work between two of them.

    Args:
        enable_timing (bool): record times (for :meth:`elapsed_time`). Default: False.
        blocking (bool): :meth:`synchronize` blocks the thread instead of spinning.
            Default: False.
        interprocess (bool): shareable with other processes. Default: False.

    Example::

        >>> start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
        >>> start.record(); y = x @ x; end.record(); end.synchronize()
        >>> start.elapsed_time(end)   # milliseconds
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        _no_gpu("Event")
        self._cupy_event = _seam.module().cuda.Event(
            block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (the current stream by default)."""
        cupy_stream = stream._cupy_stream if stream is not None else None
        self._cupy_event.record(cupy_stream)

    def wait(self, stream: Stream | None = None) -> None:
        """Make work queued later on ``stream`` (the current one) wait for this event."""
        if stream is None:
            _seam.module().cuda.get_current_stream().wait_event(self._cupy_event)
        else:
            stream.wait_event(self)

    def query(self) -> bool:
        """True if the work recorded before the event has finished."""
        return bool(self._cupy_event.done)

    def synchronize(self) -> None:
        """Wait for the work recorded before the event."""
        self._cupy_event.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, with timing)."""
        return float(_seam.module().cuda.get_elapsed_time(self._cupy_event,
                                                          end_event._cupy_event))

    def ipc_handle(self):
        """The inter-process handle of an ``interprocess=True`` event."""
        return _seam.module().cuda.runtime.ipcGetEventHandle(self._cupy_event.ptr)

    @classmethod
    def from_ipc_handle(cls, device, handle) -> Event:
        """An event opened from another process's :meth:`ipc_handle`. CuPy cannot wrap an
        opened event handle in an Event, so this raises ``RuntimeError``."""
        _no_gpu("Event")
        raise RuntimeError("ember.cuda.Event.from_ipc_handle: CuPy cannot wrap an event "
                           "opened from an IPC handle")

    def __repr__(self) -> str:
        return f"<ember.cuda.Event {self._cupy_event!r}>"
