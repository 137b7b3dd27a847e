"""The module path of ``torch.distributions.beta``: :class:`Beta` (defined in
:mod:`ember.distributions.dirichlet`)."""

from ember.distributions.dirichlet import Beta

__all__ = ["Beta"]
