"""The module path of ``torch.distributions.geometric``: :class:`Geometric` (defined in
:mod:`ember.distributions.bernoulli`)."""

from ember.distributions.bernoulli import Geometric

__all__ = ["Geometric"]
