"""The module path of ``torch.distributions.logistic_normal``: :class:`LogisticNormal` (defined in
:mod:`ember.distributions.transformed_families`)."""

from ember.distributions.transformed_families import LogisticNormal

__all__ = ["LogisticNormal"]
