"""``ember.Stream`` and ``ember.Event``: PyTorch's device-generic stream and event.

On the CPU work runs in order on the calling thread, so a CPU stream has nothing queued:
``query()`` is True and ``synchronize()`` returns at once; a CPU event records the time it
was recorded (for ``elapsed_time``). On CUDA they wrap :class:`ember.cuda.Stream` and
:class:`ember.cuda.Event`.
"""

from __future__ import annotations

import itertools
import time

__all__ = ["Stream", "Event"]

_ids = itertools.count(1)


def _device_of(device):
    from ember._device import device as device_cls

    if device is None:
        return device_cls("cpu")
    if isinstance(device, int):
        return device_cls("cuda", device)
    return device if isinstance(device, device_cls) else device_cls(device)


class Stream:
    """An ordered queue of work on a device (``torch.Stream``).

    Args:
        device (ember.device or str or int, optional): the device (the CPU by default).
        priority (int, optional): the stream's priority (CUDA). Default: 0.
    """

    def __init__(self, device=None, *, priority: int = 0) -> None:
        self.device = _device_of(device)
        self.device_type = self.device.type
        self.device_index = -1 if self.device.type == "cpu" else (self.device.index or 0)
        self._cuda = None
        if self.device.type == "cuda":
            from ember.cuda import Stream as CudaStream

            self._cuda = CudaStream(self.device_index, priority=priority)
        elif self.device.type != "cpu":
            raise RuntimeError(f"ember has no streams for device type {self.device.type!r}")
        self.stream_id = 0 if self._cuda is None else self._cuda.cuda_stream

    @property
    def native_handle(self) -> int:
        return self.stream_id

    def query(self) -> bool:
        """True if all work queued on the stream has finished (always, on the CPU)."""
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self) -> None:
        """Wait for the work queued on the stream."""
        if self._cuda is not None:
            self._cuda.synchronize()

    def is_capturing(self) -> bool:
        return False

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream; returns it."""
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait for ``event``."""
        if self._cuda is not None:
            self._cuda.wait_event(event._cuda)

    def wait_stream(self, stream: Stream) -> None:
        """Make later work on this stream wait for ``stream``'s queued work."""
        self.wait_event(stream.record_event())

    def __repr__(self) -> str:
        return (f"ember.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a stream (``torch.Event``).

    Args:
        device (ember.device or str or int, optional): the device (the CPU by default).
        enable_timing (bool): record times for :meth:`elapsed_time`. Default: False.
        blocking (bool), interprocess (bool): CUDA event options. Default: False.
    """

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.device = _device_of(device)
        self.device_type = self.device.type
        self.device_index = -1 if self.device.type == "cpu" else (self.device.index or 0)
        self.event_id = next(_ids)
        self._enable_timing = enable_timing
        self._time = None
        self._cuda = None
        if self.device.type == "cuda":
            from ember.cuda import Event as CudaEvent

            self._cuda = CudaEvent(enable_timing, blocking, interprocess)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event (on ``stream``, or the current stream)."""
        if self._cuda is not None:
            self._cuda.record(stream._cuda if stream is not None else None)
        else:
            self._time = time.perf_counter()

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` wait for the event."""
        if self._cuda is not None:
            self._cuda.wait(stream._cuda if stream is not None else None)

    def query(self) -> bool:
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self) -> None:
        if self._cuda is not None:
            self._cuda.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both recorded, with timing)."""
        if self._cuda is not None:
            return self._cuda.elapsed_time(end_event._cuda)
        if not (self._enable_timing and end_event._enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self) -> str:
        return (f"ember.Event device_type={self.device_type}, device_index={self.device_index}"
                f", event_id={self.event_id}")
