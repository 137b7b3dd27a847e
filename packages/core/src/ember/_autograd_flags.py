"""Top-level autograd flags of ``ember`` (as ``torch``): anomaly mode and inference tensors."""

from __future__ import annotations

from ember._C import _core
from ember.autograd.anomaly_mode import _set_anomaly_enabled, is_anomaly_check_nan_enabled

__all__ = ["is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
           "is_inference"]


def is_anomaly_enabled() -> bool:
    """True if anomaly detection is on (see ``ember.autograd.detect_anomaly``)."""
    return _core.is_anomaly_enabled()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``check_nan``: also raise when backward
    produces NaN); the setting stays until changed."""
    _set_anomaly_enabled(bool(enabled), bool(check_nan))


def is_inference(input) -> bool:
    """True if ``input`` is an inference tensor (made in ``ember.inference_mode``)."""
    if not isinstance(input, _core.TensorBase):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()
