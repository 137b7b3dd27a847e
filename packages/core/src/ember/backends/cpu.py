"""``ember.backends.cpu``: what the CPU offers."""

from __future__ import annotations

import functools

__all__ = ["get_cpu_capability"]


@functools.cache
def get_cpu_capability() -> str:
    """The widest vector instruction set of this CPU that ember's compiled kernels use, in
    PyTorch's words: ``"AVX512"``, ``"AVX2"``, ``"DEFAULT"`` on x86 (ember compiles its
    hot kernels for AVX-512, AVX2 and the baseline and picks one at run time);
    ``"DEFAULT"`` elsewhere."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "AVX512"
    if {"avx2", "fma"} <= set(flags):
        return "AVX2"
    return "DEFAULT"
