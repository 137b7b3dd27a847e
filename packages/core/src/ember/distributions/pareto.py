"""The module path of ``torch.distributions.pareto``: :class:`Pareto` (defined in
:mod:`ember.distributions.transformed_families`)."""

from ember.distributions.transformed_families import Pareto

__all__ = ["Pareto"]
