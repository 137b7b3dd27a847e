"""``ember.cpu``: the CPU as a device module, as ``torch.cpu`` (what
``ember.get_device_module("cpu")`` returns): one device, always available, nothing queued."""

from __future__ import annotations

from typing import Any

from ember import _streams
from ember.cpu import amp

__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream",
           "device_count", "get_capabilities", "is_available", "is_initialized",
           "set_device", "stream", "synchronize"]


class Stream(_streams.Stream):
    """A CPU stream: work runs in order on the calling thread, so it has nothing queued."""

    def __init__(self, priority: int = -1) -> None:
        super().__init__("cpu")


class Event(_streams.Event):
    """A CPU event."""

    def __init__(self, enable_timing: bool = False) -> None:
        super().__init__("cpu", enable_timing=enable_timing)


_current = [None]


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    """1."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Nothing to do: there is one CPU device."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""


def current_stream(device: Any = None) -> Stream:
    """The CPU stream."""
    if _current[0] is None:
        _current[0] = Stream()
    return _current[0]


class StreamContext:
    """Context manager making ``stream`` the current CPU stream inside it."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = None

    def __enter__(self):
        self.prev_stream = _current[0]
        if self.stream is not None:
            _current[0] = self.stream
        return self

    def __exit__(self, *exc) -> bool:
        _current[0] = self.prev_stream
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


def get_capabilities() -> dict:
    """What this CPU offers: ``architecture``, ``num_logical_cores``, and a flag per vector
    instruction set found in /proc/cpuinfo (``avx2``, ``avx512_f``, ``fma3``, ...)."""
    import os
    import platform

    caps: dict = {"architecture": platform.machine(), "num_logical_cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next((line.split(":", 1)[1].split() for line in f
                              if line.startswith("flags")), []))
    except OSError:
        flags = set()
    for ours, theirs in (("sse", "sse"), ("sse2", "sse2"), ("sse3", "pni"), ("ssse3", "ssse3"),
                         ("sse4_1", "sse4_1"), ("sse4_2", "sse4_2"), ("avx", "avx"),
                         ("avx2", "avx2"), ("fma3", "fma"), ("f16c", "f16c"),
                         ("avx512_f", "avx512f"), ("avx512_bw", "avx512bw"),
                         ("avx512_vl", "avx512vl"), ("avx512_dq", "avx512dq"),
                         ("avx512_bf16", "avx512_bf16"), ("avx512_vnni", "avx512_vnni")):
        caps[ours] = theirs in flags
    return caps
