"""StudentT and FisherSnedecor: ratios involving chi-squared variables."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.exponential import Chi2, Gamma
from ember.distributions.utils import broadcast_all

__all__ = ["StudentT", "FisherSnedecor"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location and scale.

    Args:
        df (float or Tensor): the degrees of freedom (positive).
        loc (float or Tensor): the location.
        scale (float or Tensor): the scale (positive).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return ember.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2).clamp(min=1e-300)
        return ember.where(df > 2, finite, ember.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = ember.randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + ember.lgamma(0.5 * self.df) - ember.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lbeta = (ember.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - ember.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ember.digamma(0.5 * (self.df + 1))
                                         - ember.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The F-distribution with ``df1`` and ``df2`` degrees of freedom.

    Args:
        df1 (float or Tensor): the numerator's degrees of freedom (positive).
        df2 (float or Tensor): the denominator's degrees of freedom (positive).
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2
        return ember.where(df2 > 2, df2 / (df2 - 2).clamp(min=1e-300), math.nan)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        d = (df2 - 4).clamp(min=1e-300)
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * d)
        return ember.where(df2 > 4, var, math.nan)

    def rsample(self, sample_shape=()):
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        tiny = ember.finfo(x2.dtype).tiny
        x2 = x2.clamp(min=tiny)
        y = x1 / x2
        return y.clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ember.lgamma(ct1 + ct2) - ember.lgamma(ct1) - ember.lgamma(ct2))
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
