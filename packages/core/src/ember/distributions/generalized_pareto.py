"""The generalized Pareto distribution."""

from __future__ import annotations

import math
import numbers

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location ``loc``, scale ``scale`` and shape
    ``concentration`` xi: ``1 - F(x) = (1 + xi z)^(-1/xi)`` for ``z = (x - loc) / scale``
    (``exp(-z)`` at xi = 0). Its support is ``[loc, loc - scale / xi]`` for xi < 0, else
    ``[loc, inf)``.

    Args:
        loc (float or Tensor): the location.
        scale (float or Tensor): the scale (positive).
        concentration (float or Tensor): the shape xi.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(ember.Size() if scalar else self.loc.shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _safe(self):
        """(xi == 0 up to isclose's tolerance, xi with 1 there)."""
        eq_zero = self.concentration.abs() <= 1e-8
        return eq_zero, ember.where(eq_zero, 1.0, self.concentration)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._safe()
        y = 1 / xi + 1
        nonzero = ember.where(y == 0, y, y * (xi * z).log1p())
        return -self.scale.log() - ember.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, xi = self._safe()
        return ember.where(eq_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, xi = self._safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / xi * (-xi * logu).expm1()
        return ember.where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self):
        xi = self.concentration
        valid = xi < 1
        result = self.loc + self.scale / (1 - ember.where(valid, xi, 0.5))
        return ember.where(valid, result, math.nan)

    @property
    def variance(self):
        xi = self.concentration
        valid = xi < 0.5
        safe = ember.where(valid, xi, 0.25)
        result = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return ember.where(valid, result, math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        ans = self.scale.log() + self.concentration + 1
        return ans.expand(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        neg = self.concentration < 0
        upper = ember.where(neg, lower - self.scale / ember.where(neg, self.concentration, -1.0),
                            math.inf)
        return constraints.interval(lower, upper)
