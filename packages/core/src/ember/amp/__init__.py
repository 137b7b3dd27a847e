"""``ember.amp``: automatic mixed precision, as ``torch.amp``: :class:`autocast` regions and
:class:`GradScaler` (see NOTE [ How autocast casts ] in ``ember.amp.autocast_mode``)."""

from ember.amp import autocast_mode, grad_scaler
from ember.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from ember.amp.grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler",
           "autocast_mode", "grad_scaler"]
