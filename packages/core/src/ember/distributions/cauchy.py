"""The module path of ``torch.distributions.cauchy``: :class:`Cauchy` (defined in
:mod:`ember.distributions.normal`)."""

from ember.distributions.normal import Cauchy

__all__ = ["Cauchy"]
