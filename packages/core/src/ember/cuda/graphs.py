"""CUDA graphs, as ``torch.cuda.graphs``.

Capturing ember's GPU work into a CUDA graph needs the graph-capture work (issue 23): ember
ops allocate from CuPy's pool during capture and some synchronize, which stream capture
forbids. Until then :class:`CUDAGraph`, :class:`graph` and :func:`make_graphed_callables`
raise ``RuntimeError`` saying so (without a GPU, the no-CUDA error first), and
:func:`is_current_stream_capturing` answers truthfully.
"""

from __future__ import annotations

from ember._backend import cupy as _seam
from ember.cuda._utils import is_available, lazy_init

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_NOT_YET = ("CUDA graph capture is not available in ember yet (it comes with the "
            "graph-capture work, issue 23); run the callable eagerly")


def is_current_stream_capturing() -> bool:
    """True if the current CUDA stream is capturing a graph (False without a GPU)."""
    if not is_available():
        return False
    return bool(_seam.module().cuda.get_current_stream().is_capturing())


def graph_pool_handle():
    """A memory-pool handle to share between graph captures (see the module's note)."""
    lazy_init()
    raise RuntimeError(_NOT_YET)


class CUDAGraph:
    """A captured CUDA graph (see the module's note: raises ``RuntimeError`` for now)."""

    def __init__(self, keep_graph: bool = False):
        lazy_init()
        raise RuntimeError(_NOT_YET)


class graph:  # noqa: N801 - PyTorch's name
    """Context manager capturing CUDA work into ``cuda_graph`` (see the module's note)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global",
                 enable_annotations: bool = False, check_input_liveness: bool = False):
        lazy_init()
        raise RuntimeError(_NOT_YET)


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool=None):
    """Graph-captured versions of ``callables`` (see the module's note: raises)."""
    lazy_init()
    raise RuntimeError(_NOT_YET)
