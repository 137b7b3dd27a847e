"""What every backend provides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Backend:
    """One array library behind ember tensors.

    Attributes:
        name: ``"cpu"`` or ``"cuda"``.
        xp: the array module (``numpy`` or ``cupy``).
        device_of: array -> ``ember.device``.
        to_device: (array, device index or None) -> array on this backend.
        to_numpy: array -> ``numpy.ndarray`` (a copy for CUDA).
        kernels: the named kernels that differ between backends.
    """

    name: str
    xp: Any
    device_of: Callable
    to_device: Callable
    to_numpy: Callable
    kernels: dict = field(default_factory=dict)

    def kernel(self, name: str) -> Callable:
        try:
            return self.kernels[name]
        except KeyError:
            raise NotImplementedError(
                f"the {self.name} backend has no kernel '{name}'") from None
