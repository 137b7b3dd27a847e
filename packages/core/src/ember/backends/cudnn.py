"""``ember.backends.cudnn``: PyTorch's cuDNN switches.

ember has no cuDNN (CuPy 14 dropped it; its GPU convolutions and pooling are its own
kernels), so :func:`is_available` is False and :func:`version` None. The switches
(``enabled``, ``benchmark``, ``benchmark_limit``, ``deterministic``, ``allow_tf32``) are
kept in ``ember._flags.FLAGS`` (NOTE [ Global flags ]) for the CUDA backend; setting them
changes no result today::

    >>> ember.backends.cudnn.benchmark = True
    >>> ember.backends.cudnn.deterministic
    False
"""

from __future__ import annotations

from ember._flags import FLAGS
from ember.backends._fp32 import FP32Precision
from ember.backends._prop_module import flag_module, flags_context

# (and the switches enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
__all__ = ["is_available", "version", "is_acceptable", "flags", "set_flags", "conv", "rnn"]

conv = FP32Precision("cuda", "conv", "tf32")  # PyTorch's defaults
rnn = FP32Precision("cuda", "rnn", "tf32")

_ATTRS = {"enabled": "cudnn_enabled", "benchmark": "cudnn_benchmark",
          "benchmark_limit": "cudnn_benchmark_limit", "deterministic": "cudnn_deterministic",
          "allow_tf32": "cudnn_allow_tf32"}


def is_available() -> bool:
    """False: ember does not use cuDNN."""
    return False


def version() -> int | None:
    """The cuDNN version: None (ember does not use cuDNN)."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: False (no cuDNN)."""
    return False


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Set the cuDNN switches given (None leaves one alone); returns the previous values as
    (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)."""
    prev = tuple(FLAGS[_ATTRS[k]] for k in ("enabled", "benchmark", "benchmark_limit",
                                            "deterministic", "allow_tf32"))
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark),
                        ("benchmark_limit", _benchmark_limit),
                        ("deterministic", _deterministic), ("allow_tf32", _allow_tf32)):
        if value is not None:
            FLAGS[_ATTRS[name]] = value
    return prev


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Context manager setting all the cuDNN switches inside it."""
    return flags_context({"cudnn_enabled": enabled, "cudnn_benchmark": benchmark,
                          "cudnn_benchmark_limit": benchmark_limit,
                          "cudnn_deterministic": deterministic, "cudnn_allow_tf32": allow_tf32})


flag_module(__name__, _ATTRS)
