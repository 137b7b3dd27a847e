"""The module path of ``torch.distributions.half_cauchy``: :class:`HalfCauchy` (defined in
:mod:`ember.distributions.transformed_distribution`)."""

from ember.distributions.transformed_distribution import HalfCauchy

__all__ = ["HalfCauchy"]
