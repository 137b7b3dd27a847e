"""The module path of ``torch.distributions.chi2``: :class:`Chi2` (defined in
:mod:`ember.distributions.exponential`)."""

from ember.distributions.exponential import Chi2

__all__ = ["Chi2"]
