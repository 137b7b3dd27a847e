"""``ember.cuda.profiler``: start and stop NVIDIA's profilers' collection (``cudaProfilerStart``
/ ``cudaProfilerStop``, through CuPy), as ``torch.cuda.profiler``."""

from __future__ import annotations

import contextlib

from ember._backend import cupy as _seam
from ember.cuda._utils import lazy_init

__all__ = ["init", "start", "stop", "profile"]


def init(output_file, flags=None, output_mode="key_value"):
    """The legacy command-line profiler's setup: CUDA 12 removed it, so this raises, as
    PyTorch does there."""
    lazy_init()
    raise RuntimeError("ember.cuda.profiler.init: the legacy CUDA command-line profiler was "
                       "removed in CUDA 12; use start()/stop() with Nsight Systems")


def start() -> None:
    """Start the collection of an attached profiler (Nsight Systems, ``nsys --capture-range
    cudaProfilerApi``)."""
    lazy_init()
    _seam.module().cuda.profiler.start()


def stop() -> None:
    """Stop the collection started by :func:`start`."""
    lazy_init()
    _seam.module().cuda.profiler.stop()


@contextlib.contextmanager
def profile():
    """Context manager: :func:`start` on entry, :func:`stop` on exit."""
    try:
        start()
        yield
    finally:
        stop()
