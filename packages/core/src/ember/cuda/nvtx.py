"""NVTX ranges and markers for NVIDIA's profilers (Nsight), as ``torch.cuda.nvtx``, through
CuPy's NVTX bindings. Without CuPy's NVTX they raise PyTorch's RuntimeError."""

from __future__ import annotations

import contextlib

from ember._backend import cupy as _seam

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def _nvtx():
    try:
        return _seam.module().cuda.nvtx
    except (RuntimeError, AttributeError):
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA "
                           "build?") from None


_ranges: dict = {}


def range_push(msg: str) -> int:
    """Open a nested range named ``msg``; returns its depth (0-based)."""
    _nvtx().RangePush(msg)
    _ranges["depth"] = _ranges.get("depth", 0) + 1
    return _ranges["depth"] - 1


def range_pop() -> int:
    """Close the innermost range; returns its depth."""
    _nvtx().RangePop()
    _ranges["depth"] = max(_ranges.get("depth", 1) - 1, 0)
    return _ranges["depth"]


def range_start(msg: str) -> int:
    """Open a range that may end in another thread; returns its id for :func:`range_end`."""
    nvtx = _nvtx()
    nvtx.RangePush(msg)
    _ranges["next_id"] = _ranges.get("next_id", 0) + 1
    return _ranges["next_id"]


def range_end(range_id: int) -> None:
    """Close the range :func:`range_start` returned ``range_id`` for."""
    _nvtx().RangePop()


def mark(msg: str) -> None:
    """An instantaneous marker named ``msg``."""
    _nvtx().Mark(msg)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001 - PyTorch's name
    """Context manager (or decorator) for a range named ``msg.format(*args, **kwargs)``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
