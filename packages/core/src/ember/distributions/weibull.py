"""The module path of ``torch.distributions.weibull``: :class:`Weibull` (defined in
:mod:`ember.distributions.transformed_families`)."""

from ember.distributions.transformed_families import Weibull

__all__ = ["Weibull"]
