"""The relaxed (Concrete / Gumbel-softmax) distributions: RelaxedBernoulli and
RelaxedOneHotCategorical, reparameterized continuous stand-ins for Bernoulli and
OneHotCategorical, with their logit-space bases."""

from __future__ import annotations

import ember
from ember.distributions import constraints
from ember.distributions.bernoulli import _OneParameter
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import ExpTransform, SigmoidTransform
from ember.distributions.utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical",
           "RelaxedOneHotCategorical"]


class LogitRelaxedBernoulli(_OneParameter):
    """The logit of a RelaxedBernoulli sample: ``(logit(u) + logits) / temperature``.

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of 1.
        logits (Number, Tensor): the log-odds of 1 (give one of the two).
    """

    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        super().__init__(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        return super().expand(batch_shape, _instance=new)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ember.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return ember.as_tensor(self.temperature, dtype=diff.dtype).log() + diff \
            - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The Concrete (relaxed Bernoulli) distribution on (0, 1): ``sigmoid`` of a
    LogitRelaxedBernoulli sample; ``rsample`` is differentiable.

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of 1.
        logits (Number, Tensor): the log-odds of 1 (give one of the two).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample (log-space Gumbel-softmax).

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): event probabilities.
        logits (Tensor): event log-probabilities (give one of the two).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = ember.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(ember.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype)
        log_scale = ember.lgamma(ember.full_like(temperature, float(k))) \
            + (k - 1) * temperature.log()
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The Concrete / Gumbel-softmax distribution on the simplex: ``exp`` of an
    ExpRelaxedCategorical sample; ``rsample`` is differentiable.

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): event probabilities.
        logits (Tensor): event log-probabilities (give one of the two).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
