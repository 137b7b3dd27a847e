"""The module path of ``torch.distributions.poisson``: :class:`Poisson` (defined in
:mod:`ember.distributions.exponential`)."""

from ember.distributions.exponential import Poisson

__all__ = ["Poisson"]
