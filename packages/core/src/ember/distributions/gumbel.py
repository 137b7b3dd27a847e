"""The module path of ``torch.distributions.gumbel``: :class:`Gumbel` (defined in
:mod:`ember.distributions.normal`)."""

from ember.distributions.normal import Gumbel

__all__ = ["Gumbel"]
