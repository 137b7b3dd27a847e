"""The module path of ``torch.distributions.gamma``: :class:`Gamma` (defined in
:mod:`ember.distributions.exponential`)."""

from ember.distributions.exponential import Gamma

__all__ = ["Gamma"]
