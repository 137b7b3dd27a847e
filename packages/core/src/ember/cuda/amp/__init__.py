"""``ember.cuda.amp``: PyTorch's deprecated CUDA spellings of :mod:`ember.amp`
(``autocast(...)`` is ``ember.amp.autocast("cuda", ...)``)."""

from __future__ import annotations

import functools
import warnings

from ember import _dtype
from ember.amp import autocast_mode as _autocast_mode
from ember.amp import grad_scaler as _grad_scaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "amp_definitely_not_available"]


def amp_definitely_not_available() -> bool:
    """True when CUDA autocast cannot run here (no GPU)."""
    from ember.cuda import is_available

    return not is_available()


class autocast(_autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """Deprecated: ``ember.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype=_dtype.float16, cache_enabled: bool = True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """Deprecated: ``ember.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``ember.amp.custom_fwd(device_type="cuda", ...)``."""
    warnings.warn("`ember.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`ember.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda",
                             cast_inputs=cast_inputs)(fwd) if fwd is not None else \
        functools.partial(_autocast_mode.custom_fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: ``ember.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`ember.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`ember.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return _autocast_mode.custom_bwd(bwd, device_type="cuda")
