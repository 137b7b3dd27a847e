"""The module path of ``torch.distributions.half_normal``: :class:`HalfNormal` (defined in
:mod:`ember.distributions.transformed_distribution`)."""

from ember.distributions.transformed_distribution import HalfNormal

__all__ = ["HalfNormal"]
