"""``ember.backends.mkldnn``: oneDNN, which ember does not use (``is_available`` False). The
switches are recorded in ``ember._flags.FLAGS`` and change nothing."""

from __future__ import annotations

from ember._flags import FLAGS
from ember.backends._fp32 import FP32Precision
from ember.backends._prop_module import flag_module, flags_context

# (and the switches enabled, deterministic, allow_tf32)
__all__ = ["verbose", "is_available", "is_acl_available", "flags", "set_flags", "VERBOSE_OFF",
           "VERBOSE_ON", "VERBOSE_ON_CREATION", "conv", "matmul", "rnn"]

conv = FP32Precision("mkldnn", "conv")
matmul = FP32Precision("mkldnn", "matmul")
rnn = FP32Precision("mkldnn", "rnn")

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

FLAGS.setdefault("mkldnn_enabled", True)
FLAGS.setdefault("mkldnn_deterministic", False)
FLAGS.setdefault("mkldnn_allow_tf32", None)  # as torch 2.13 reports it (fp32_precision era)
_ATTRS = {"enabled": "mkldnn_enabled", "deterministic": "mkldnn_deterministic",
          "allow_tf32": "mkldnn_allow_tf32"}


def is_available() -> bool:
    """False: ember does not use oneDNN (MKL-DNN)."""
    return False


def is_acl_available() -> bool:
    """False: ember does not use the Arm Compute Library."""
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the switches given; returns the previous (enabled, deterministic, allow_tf32)."""
    prev = (FLAGS["mkldnn_enabled"], FLAGS["mkldnn_deterministic"], FLAGS["mkldnn_allow_tf32"])
    for key, value in (("mkldnn_enabled", _enabled), ("mkldnn_deterministic", _deterministic),
                       ("mkldnn_allow_tf32", _allow_tf32)):
        if value is not None:
            FLAGS[key] = value
    return prev


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Context manager setting the switches inside it."""
    return flags_context({"mkldnn_enabled": enabled, "mkldnn_deterministic": deterministic,
                          "mkldnn_allow_tf32": allow_tf32})


flag_module(__name__, _ATTRS)


class verbose:  # noqa: N801 - PyTorch's name
    """Context manager for mkldnn's verbose logging. ember does not use MKLDNN, so there is
    nothing to log: the block runs unchanged."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False
