"""``ember.backends.mha``: the switch of the fused "fast path" of ``nn.MultiheadAttention``
and ``nn.TransformerEncoder`` in inference, as ``torch.backends.mha``. ember's attention runs
one path (the composite one), so the switch is recorded and changes no result."""

from __future__ import annotations

from ember._flags import FLAGS

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

FLAGS.setdefault("mha_fastpath_enabled", True)


def get_fastpath_enabled() -> bool:
    """Whether the fast path of MultiheadAttention / TransformerEncoder is enabled."""
    return FLAGS["mha_fastpath_enabled"]


def set_fastpath_enabled(value: bool) -> None:
    """Enable or disable the fast path (recorded; ember has one attention path)."""
    FLAGS["mha_fastpath_enabled"] = bool(value)
