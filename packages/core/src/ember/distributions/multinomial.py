"""The module path of ``torch.distributions.multinomial``: :class:`Multinomial` (defined in
:mod:`ember.distributions.binomial`)."""

from ember.distributions.binomial import Multinomial

__all__ = ["Multinomial"]
