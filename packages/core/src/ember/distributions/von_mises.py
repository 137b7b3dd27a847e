"""The von Mises distribution on the circle."""

from __future__ import annotations

import math

import numpy as np

import ember
from ember._backend import backend_of
from ember._ops.random import _generator
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["VonMises"]


def _best_fisher(rng, loc, kappa):
    """Best and Fisher's (1979) rejection sampler, vectorized, in float64: angles in
    [-pi, pi) around ``loc`` (arrays of one shape)."""
    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    with np.errstate(all="ignore"):
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))
    x = np.zeros(loc.shape)
    done = np.zeros(loc.shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = rng.random((3,) + loc.shape)
        z = np.cos(math.pi * u1)
        with np.errstate(all="ignore"):
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        accept &= ~done
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        done |= accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular von Mises distribution with mean direction ``loc`` and
    ``concentration`` kappa. ``loc`` and values may be any real numbers (angles modulo
    2 pi); samples lie in [-pi, pi).

    Args:
        loc (Tensor): an angle in radians.
        concentration (Tensor): the concentration (positive).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _log_i0(self):
        return ember.special.i0e(self.concentration).log() + self.concentration

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) \
            - self._log_i0()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rng = _generator(None, self.loc.device)._rng
        with ember.no_grad():
            loc = backend_of(self.loc._data).to_numpy(self.loc.expand(shape).contiguous()._data)
            kappa = backend_of(self.concentration._data).to_numpy(
                self.concentration.expand(shape).contiguous()._data)
            x = _best_fisher(rng, loc.astype(np.float64), kappa.astype(np.float64))
            return ember.tensor(x.astype(loc.dtype), device=self.loc.device)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        return 1 - ember.special.i1e(self.concentration) / ember.special.i0e(self.concentration)
