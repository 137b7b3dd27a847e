"""The module path of ``torch.distributions.kumaraswamy``: :class:`Kumaraswamy` (defined in
:mod:`ember.distributions.transformed_families`)."""

from ember.distributions.transformed_families import Kumaraswamy

__all__ = ["Kumaraswamy"]
