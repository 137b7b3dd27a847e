"""The process-wide switches of PyTorch's API, kept in one place.

NOTE [ Global flags ]
Every switch a PyTorch program sets on the framework as a whole lives in :data:`FLAGS`:
``ember.backends.cudnn.benchmark`` / ``deterministic`` / ``enabled`` / ``allow_tf32``,
``ember.backends.cuda.matmul.allow_tf32`` / ``allow_fp16_reduced_precision_reduction`` /
``allow_bf16_reduced_precision_reduction``, ``ember.use_deterministic_algorithms``,
``set_deterministic_debug_mode``, ``set_float32_matmul_precision``, ``set_warn_always`` and
``set_flush_denormal``. The public functions and module attributes read and write this dict
and nothing else, so the CUDA backend (and any kernel that has a deterministic or a
reduced-precision variant) asks here: ``ember._flags.FLAGS["deterministic"]``.

What each flag changes in ember today: ``flush_denormal`` sets the CPU's FTZ/DAZ bits
(:func:`ember.set_flush_denormal`); ``deterministic`` with ``deterministic_debug_mode`` is
checked by :func:`alert_not_deterministic`, which ops without a deterministic
implementation call. ember has no cuDNN and no TF32 kernels (CuPy's matmul runs in the
array's dtype), so the cuDNN and TF32 flags are recorded for the CUDA backend and change
no result yet.
"""

from __future__ import annotations

import warnings

__all__ = [
    "FLAGS", "alert_not_deterministic", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_flush_denormal",
    "set_warn_always", "is_warn_always_enabled",
]

FLAGS: dict = {
    # torch.backends.cudnn
    "cudnn_enabled": True,
    "cudnn_benchmark": False,
    "cudnn_benchmark_limit": None,   # None without cuDNN, as a PyTorch without cuDNN says
    "cudnn_deterministic": False,
    "cudnn_allow_tf32": True,
    # torch.backends.cuda.matmul
    "matmul_allow_tf32": False,
    "matmul_allow_fp16_reduced_precision_reduction": True,
    "matmul_allow_bf16_reduced_precision_reduction": True,
    "matmul_allow_fp16_accumulation": False,
    # torch.use_deterministic_algorithms, set_deterministic_debug_mode
    "deterministic": False,
    "deterministic_warn_only": False,
    "deterministic_fill_uninitialized_memory": True,
    # torch.set_float32_matmul_precision
    "float32_matmul_precision": "highest",
    # torch.set_warn_always
    "warn_always": False,
    # torch.set_flush_denormal
    "flush_denormal": False,
    # torch.backends.opt_einsum
    "opt_einsum_enabled": True,
    "opt_einsum_strategy": "auto",
}


def alert_not_deterministic(caller: str) -> None:
    """What an op without a deterministic implementation calls: PyTorch's RuntimeError when
    deterministic algorithms are on, its UserWarning with ``warn_only=True``."""
    if not FLAGS["deterministic"]:
        return
    msg = (f"{caller} does not have a deterministic implementation, but you set "
           "'ember.use_deterministic_algorithms(True)'. You can turn off determinism just "
           "for this operation, or you can use the 'warn_only=True' option, if that's "
           "acceptable for your application.")
    if FLAGS["deterministic_warn_only"]:
        warnings.warn(msg, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(msg)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make ops use deterministic algorithms where they have a choice, and make ops that
    have none raise (or, with ``warn_only=True``, warn).

    ember's CPU kernels are deterministic (their parallel loops give each thread its own
    outputs and reduce in a fixed order), so on the CPU this changes no result; the flag
    is read by ops whose only implementation is not deterministic (see
    NOTE [ Global flags ] in ``ember._flags``).

    Args:
        mode (bool): True to enable, False to disable.
        warn_only (bool): warn instead of raising for ops without a deterministic
            implementation. Default: False.

    Example::

        >>> ember.use_deterministic_algorithms(True)
        >>> ember.are_deterministic_algorithms_enabled()
        True
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    FLAGS["deterministic"] = mode
    FLAGS["deterministic_warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """True if :func:`use_deterministic_algorithms` turned deterministic algorithms on."""
    return FLAGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """True if deterministic algorithms are on with ``warn_only=True``."""
    return FLAGS["deterministic_warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """The debug mode of deterministic operations: ``"default"`` (0) off, ``"warn"`` (1)
    warn on ops without a deterministic implementation, ``"error"`` (2) raise. The same
    switch as :func:`use_deterministic_algorithms` (``warn`` is ``warn_only=True``)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    FLAGS["deterministic"] = debug_mode != 0
    FLAGS["deterministic_warn_only"] = debug_mode == 1


def get_deterministic_debug_mode() -> int:
    """The current debug mode of deterministic operations (0, 1 or 2; see
    :func:`set_deterministic_debug_mode`)."""
    if not FLAGS["deterministic"]:
        return 0
    return 1 if FLAGS["deterministic_warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """The internal precision of float32 matrix products: ``"highest"`` (float32 throughout,
    the default), ``"high"`` (TF32 allowed) or ``"medium"`` (bfloat16 allowed).

    As in PyTorch, ``"high"`` and ``"medium"`` also set
    ``ember.backends.cuda.matmul.allow_tf32``. ember's CPU products are float32 throughout
    at every setting (NumPy's BLAS has no reduced-precision mode), as PyTorch's CPU products
    are.
    """
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    FLAGS["float32_matmul_precision"] = precision
    FLAGS["matmul_allow_tf32"] = precision != "highest"


def get_float32_matmul_precision() -> str:
    """The float32 matrix-product precision set by :func:`set_float32_matmul_precision`."""
    return FLAGS["float32_matmul_precision"]


def _mxcsr_set(on: bool) -> bool:
    # NOTE [ Flushing denormals ]: FTZ (bit 15) and DAZ (bit 6) of the SSE control register,
    # through glibc's fegetenv/fesetenv (x86-64's fenv_t ends with the 32-bit MXCSR at byte
    # 28). Like PyTorch's, it changes the calling thread's register only.
    import ctypes
    import platform
    import sys

    if platform.machine() not in ("x86_64", "AMD64") or not sys.platform.startswith("linux"):
        return False
    try:
        libm = ctypes.CDLL("libm.so.6")
    except OSError:
        return False
    env = (ctypes.c_ubyte * 32)()
    if libm.fegetenv(env) != 0:
        return False
    mxcsr = ctypes.c_uint32.from_buffer(env, 28)
    mxcsr.value = mxcsr.value | 0x8040 if on else mxcsr.value & ~0x8040
    return libm.fesetenv(env) == 0


def set_flush_denormal(mode: bool) -> bool:
    """Flush denormal floating-point numbers to zero on the CPU (FTZ and DAZ), for the
    calling thread, as PyTorch does.

    Returns True if the CPU supports it (x86-64 on Linux here), False otherwise (then
    nothing changes).

    Example::

        >>> ember.set_flush_denormal(True)
        True
        >>> (ember.tensor([1e-39]) * 1.0).tolist()   # a float32 denormal
        [0.0]
    """
    ok = _mxcsr_set(bool(mode))
    if ok:
        FLAGS["flush_denormal"] = bool(mode)
    return ok


def set_warn_always(b: bool, /) -> None:
    """When True, warnings that PyTorch gives once per process are given every time."""
    FLAGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """True if :func:`set_warn_always` turned repeated warnings on."""
    return FLAGS["warn_always"]
