"""The module path of ``torch.distributions.one_hot_categorical``: :class:`OneHotCategorical`,
:class:`OneHotCategoricalStraightThrough` (defined in
:mod:`ember.distributions.categorical`)."""

from ember.distributions.categorical import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
