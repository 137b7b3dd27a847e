"""Gradient scaling for mixed precision, as ``torch.amp.GradScaler``."""

from __future__ import annotations

import warnings
from enum import Enum
from typing import Any

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """Scale the loss before backward so that small low-precision gradients do not flush to
    zero, unscale the gradients before the optimizer step, skip steps whose gradients hold
    inf or NaN, and adapt the scale (PyTorch's dynamic loss scaling).

    Args:
        device (str): the device type of the gradients (``"cuda"`` or ``"cpu"``).
            Default: ``"cuda"``; without a GPU a ``"cuda"`` scaler warns and is disabled, as
            in PyTorch.
        init_scale (float): the initial scale. Default: ``2.**16``.
        growth_factor (float): the factor the scale grows by after ``growth_interval``
            steps without inf/NaN gradients. Default: 2.0.
        backoff_factor (float): the factor the scale shrinks by after a step with inf/NaN
            gradients. Default: 0.5.
        growth_interval (int): the number of good steps before the scale grows.
            Default: 2000.
        enabled (bool): if False, every method does what it would without scaling.

    Example::

        >>> scaler = ember.amp.GradScaler("cpu")
        >>> for x, y in loader:
        ...     optimizer.zero_grad()
        ...     with ember.autocast("cpu", dtype=ember.bfloat16):
        ...         loss = loss_fn(model(x), y)
        ...     scaler.scale(loss).backward()
        ...     scaler.step(optimizer)
        ...     scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from ember.cuda import is_available

            if not is_available():
                warnings.warn("ember.amp.GradScaler is enabled, but CUDA is not available.  "
                              "Disabling.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale: float | None = None
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._init_growth_tracker = 0
            self._growth_tracker: int | None = None
        self._per_optimizer_states: dict = {}

    def _state_of(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": None})

    def _lazy_init(self) -> None:
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs):
        """Multiply ``outputs`` (a tensor, or an iterable of tensors, nested) by the scale."""
        if not self._enabled:
            return outputs
        from ember._tensor import Tensor

        self._lazy_init()
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            out = [self.scale(o) for o in outputs]
            return type(outputs)(out) if isinstance(outputs, tuple) else out
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale: float, allow_fp16: bool) -> bool:
        from ember._dtype import float16
        from ember.autograd.grad_mode import no_grad

        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not allow_fp16 and p.grad.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inv_scale)
                    if not bool(p.grad.isfinite().all()):
                        found_inf = True
        return found_inf

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place (once per
        :meth:`update`; :meth:`step` calls it when it has not been called)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale
        state["found_inf"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args: Any, **kwargs: Any) -> float | None:
        """Unscale the gradients if :meth:`unscale_` was not called, then run
        ``optimizer.step(*args, **kwargs)`` unless they hold inf or NaN. Returns what
        ``optimizer.step`` returned (None for a skipped step)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Any | None = None) -> None:
        """Update the scale: shrink it by ``backoff_factor`` if any optimizer's step saw
        inf/NaN gradients, grow it by ``growth_factor`` after ``growth_interval`` good
        steps; or set it to ``new_scale``."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            from ember._tensor import Tensor

            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a 1-element tensor.")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    def _check_scale_growth_tracker(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            self._growth_tracker

    def is_enabled(self) -> bool:
        """True if the scaler scales."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state (``{}`` when disabled), PyTorch's keys."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_per_optimizer_states"] = {}
        return state

