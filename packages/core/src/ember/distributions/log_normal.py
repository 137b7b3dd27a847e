"""The module path of ``torch.distributions.log_normal``: :class:`LogNormal` (defined in
:mod:`ember.distributions.transformed_distribution`)."""

from ember.distributions.transformed_distribution import LogNormal

__all__ = ["LogNormal"]
