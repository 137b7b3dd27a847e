"""The module path of ``torch.distributions.laplace``: :class:`Laplace` (defined in
:mod:`ember.distributions.normal`)."""

from ember.distributions.normal import Laplace

__all__ = ["Laplace"]
