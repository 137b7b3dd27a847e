"""Graph passes (as ``torch.fx.passes``)."""

from ember.fx.passes import shape_prop

__all__ = ["shape_prop"]
