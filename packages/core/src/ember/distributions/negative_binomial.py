"""The module path of ``torch.distributions.negative_binomial``: :class:`NegativeBinomial`
(defined in :mod:`ember.distributions.binomial`)."""

from ember.distributions.binomial import NegativeBinomial

__all__ = ["NegativeBinomial"]
