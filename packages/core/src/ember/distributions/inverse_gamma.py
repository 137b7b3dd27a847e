"""The module path of ``torch.distributions.inverse_gamma``: :class:`InverseGamma` (defined in
:mod:`ember.distributions.transformed_families`)."""

from ember.distributions.transformed_families import InverseGamma

__all__ = ["InverseGamma"]
