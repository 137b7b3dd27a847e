"""Pareto, Weibull, InverseGamma, Kumaraswamy and LogisticNormal: transformed
exponential, gamma, uniform and normal distributions."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.exponential import Exponential, Gamma
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, ExpTransform, PowerTransform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all

__all__ = ["Pareto", "Weibull", "InverseGamma", "Kumaraswamy", "LogisticNormal"]

_EULER = 0.57721566490153286061


class Pareto(TransformedDistribution):
    """The Pareto type I distribution: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``.

    Args:
        scale (float or Tensor): the scale (the support's lower end, positive).
        alpha (float or Tensor): the shape (positive).
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # inf for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # inf for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution: ``scale * E^(1/concentration)`` for a
    standard exponential E.

    Args:
        scale (float or Tensor): the scale lambda (positive).
        concentration (float or Tensor): the shape k (positive).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * ember.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (ember.lgamma(1 + 2 * r).exp()
                                    - (2 * ember.lgamma(1 + r)).exp())

    def entropy(self):
        r = self.concentration_reciprocal
        return _EULER * (1 - r) + (self.scale * r).log() + 1


class InverseGamma(TransformedDistribution):
    """The distribution of ``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    Args:
        concentration (float or Tensor): the shape (positive).
        rate (float or Tensor): the scale of the inverse-gamma (the gamma's rate, positive).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = ember.tensor(-1.0, dtype=base_dist.rate.dtype)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return ember.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        result = self.rate.square() / ((c - 1).square() * (c - 2))
        return ember.where(c > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + ember.lgamma(c) - (1 + c) * ember.digamma(c)


def _kumaraswamy_moment(a, b, n):
    arg1 = 1 + n / a
    return b * (ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1): ``(1 - (1 - U)^(1/b))^(1/a)`` for uniform U.

    Args:
        concentration1 (float or Tensor): a (positive).
        concentration0 (float or Tensor): b (positive).
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(ember.zeros_like(self.concentration0),
                            ember.ones_like(self.concentration0), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a); nan when a < 1 or b < 1. (PyTorch 2.13's formula,
        # log1p(-b) / b - log1p(-a b), is nan for every b > 1.)
        a, b = self.concentration1, self.concentration0
        log_mode = a.reciprocal() * ((a - 1).log() - (a * b - 1).log())
        return ember.where((b < 1) | (a < 1), math.nan, log_mode.exp())

    @property
    def variance(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) \
            - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = ember.digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: the stick-breaking transform of a
    ``Normal(loc, scale)`` vector of size K - 1.

    Args:
        loc (float or Tensor): the mean of the base normal distribution.
        scale (float or Tensor): its standard deviation.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        from ember.distributions.normal import Normal
        from ember.distributions.transforms import StickBreakingTransform

        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
