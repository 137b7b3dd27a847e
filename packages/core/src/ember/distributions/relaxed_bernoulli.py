"""The module path of ``torch.distributions.relaxed_bernoulli``:
:class:`LogitRelaxedBernoulli`, :class:`RelaxedBernoulli` (defined in
:mod:`ember.distributions.relaxed`)."""

from ember.distributions.relaxed import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
