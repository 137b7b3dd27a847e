"""The multivariate normal distribution, parameterized by a covariance or precision
matrix or a lower-triangular scale factor."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions._nodes import cholesky, solve_lower
from ember.distributions.distribution import Distribution
from ember.distributions.utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` for lower-triangular ``bL`` and vectors ``bx`` (broadcast)."""
    y = solve_lower(bL, bx.unsqueeze(-1)).squeeze(-1)
    return (y * y).sum(-1)


def _precision_to_scale_tril(P):
    # L with L L^T = P^-1, from the Cholesky factor of the flipped precision matrix
    flip = P.flip((-2, -1))
    lf = cholesky(flip)
    l_inv = lf.flip((-2, -1)).transpose(-2, -1)
    eye = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device).expand(l_inv.shape)
    return solve_lower(l_inv, eye)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean ``loc`` and one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (the lower Cholesky
    factor of the covariance).

    Args:
        loc (Tensor): the mean, of shape ``batch_shape + (k,)``.
        covariance_matrix (Tensor): positive-definite ``(..., k, k)`` covariance.
        precision_matrix (Tensor): positive-definite ``(..., k, k)`` precision.
        scale_tril (Tensor): lower-triangular ``(..., k, k)`` factor with a positive diagonal.

    Examples::

        >>> m = ember.distributions.MultivariateNormal(ember.zeros(2), ember.eye(2))
        >>> m.sample().shape
        ember.Size([2])
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is not None and m.dim() < 2:
                raise ValueError(f"{name} matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
        m = scale_tril if scale_tril is not None else (
            covariance_matrix if covariance_matrix is not None else precision_matrix)
        batch_shape = ember.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        if m.shape[-1] != k or m.shape[-2] != k:
            raise ValueError(f"The matrix must be of shape (..., {k}, {k}) to match loc, "
                             f"but got {tuple(m.shape)}")
        full = tuple(batch_shape) + (k, k)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(full)
        else:
            self.precision_matrix = precision_matrix.expand(full)
        self.loc = loc.expand(tuple(batch_shape) + (k,))
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.transpose(-2, -1)).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        lower = self._unbroadcasted_scale_tril
        eye = ember.eye(self._event_shape[0], dtype=self.loc.dtype,
                        device=self.loc.device).expand(lower.shape)
        linv = solve_lower(lower, eye)
        return (linv.transpose(-2, -1) @ linv).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        lower = self._unbroadcasted_scale_tril
        shape = ember.broadcast_shapes(tuple(lower.shape[:-2]), tuple(diff.shape[:-1]))
        k = self._event_shape[0]
        m = _batch_mahalanobis(lower.expand(tuple(shape) + (k, k)),
                               diff.expand(tuple(shape) + (k,)))
        half_log_det = lower.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (k * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
