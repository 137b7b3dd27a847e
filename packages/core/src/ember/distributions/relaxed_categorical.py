"""The module path of ``torch.distributions.relaxed_categorical``:
:class:`ExpRelaxedCategorical`, :class:`RelaxedOneHotCategorical` (defined in
:mod:`ember.distributions.relaxed`)."""

from ember.distributions.relaxed import ExpRelaxedCategorical, RelaxedOneHotCategorical

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
