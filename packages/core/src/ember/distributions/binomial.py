"""Binomial, NegativeBinomial and Multinomial: counts of Bernoulli and categorical trials."""

from __future__ import annotations

import ember
from ember._backend import backend_of
from ember._ops.random import _generator
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial", "NegativeBinomial", "Multinomial"]


def _host(t):
    return backend_of(t._data).to_numpy(t._data)


def _logsigmoid(x):
    return -(x.clamp(max=0).neg() + (-x.abs()).exp().log1p())


class _CountsOfTrials(Distribution):
    """The shared parameter handling of Binomial and NegativeBinomial."""

    def __init__(self, total_count, probs, logits, validate_args):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            self._param = self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape


class Binomial(_CountsOfTrials):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials.

    Args:
        total_count (int or Tensor): the number of trials.
        probs (Tensor): the success probability.
        logits (Tensor): the success log-odds (give one of the two).
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rng = _generator(None, self.probs.device)._rng
        with ember.no_grad():
            n = _host(self.total_count.expand(shape).contiguous()).astype("int64")
            p = _host(self.probs.expand(shape).contiguous())
            draws = rng.binomial(n, p).astype(p.dtype)
            return ember.tensor(draws, device=self.probs.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorials = (ember.lgamma(n + 1) - ember.lgamma(value + 1)
                          - ember.lgamma(n - value + 1))
        # k log p + (n - k) log(1 - p) = k logit - n (max(logit, 0) + log1p(exp(-|logit|)))
        normalize = n * (self.logits.clamp(min=0) + (-self.logits.abs()).exp().log1p())
        return value * self.logits + log_factorials - normalize

    def entropy(self):
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = ember.arange(1 + total, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class NegativeBinomial(_CountsOfTrials):
    """The number of successes before ``total_count`` failures of Bernoulli(``probs``)
    trials.

    Args:
        total_count (float or Tensor): the number of failures (non-negative).
        probs (Tensor): the success probability, in [0, 1).
        logits (Tensor): the success log-odds (give one of the two).
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rng = _generator(None, self.probs.device)._rng
        with ember.no_grad():
            r = _host(self.total_count.expand(shape).contiguous())
            odds = _host(self.logits.exp().expand(shape).contiguous())
            # a gamma-Poisson mixture: rate ~ Gamma(r, scale = p / (1 - p))
            rate = rng.standard_gamma(r) * odds
            return ember.tensor(rng.poisson(rate).astype(r.dtype), device=self.probs.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * _logsigmoid(-self.logits) \
            + value * _logsigmoid(self.logits)
        log_normalization = (-ember.lgamma(self.total_count + value) + ember.lgamma(1.0 + value)
                             + ember.lgamma(self.total_count))
        log_normalization = ember.where(self.total_count + value == 0.0, 0.0,
                                        log_normalization)
        return log_unnormalized - log_normalization


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a Categorical(``probs``): vectors of the last
    dimension's size.

    Args:
        total_count (int): the number of draws.
        probs (Tensor): event probabilities (normalized along the last dim).
        logits (Tensor): event log-probabilities (give one of the two).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rng = _generator(None, self.probs.device)._rng
        with ember.no_grad():
            p = _host(self.probs.expand(shape).contiguous()).astype("float64")
            p = p / p.sum(-1, keepdims=True)
            counts = rng.multinomial(self.total_count, p)
            return ember.tensor(counts.astype(_host(self.probs).dtype),
                                device=self.probs.device)

    def entropy(self):
        n = ember.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - ember.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = ember.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        logits = ember.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
