"""The multivariate normal distribution with a low-rank plus diagonal covariance."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions._nodes import cholesky, solve_lower
from ember.distributions.distribution import Distribution
from ember.distributions.utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(w, d):
    """The Cholesky factor of ``I + W^T D^-1 W`` (the capacitance matrix)."""
    m = w.shape[-1]
    wt_dinv = w.transpose(-2, -1) / d.unsqueeze(-2)
    k = wt_dinv @ w
    eye = ember.eye(m, dtype=w.dtype, device=w.device)
    return cholesky(k + eye)


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal distribution with covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)``: log-densities by the Woodbury
    identity and the matrix determinant lemma, in O(k r^2) for rank r.

    Args:
        loc (Tensor): the mean, of shape ``batch_shape + (k,)``.
        cov_factor (Tensor): the factor, of shape ``batch_shape + (k, r)``.
        cov_diag (Tensor): the positive diagonal, of shape ``batch_shape + (k,)``.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{tuple(event_shape)}")
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = ember.broadcast_tensors(loc_, cov_factor,
                                                                       cov_diag_)
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
                             ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        w = self._unbroadcasted_cov_factor
        return ((w ** 2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        cov = w @ w.transpose(-2, -1) + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C = L L^T the capacitance
        w = self._unbroadcasted_cov_factor
        d_inv = self._unbroadcasted_cov_diag.reciprocal()
        wt_dinv = w.transpose(-2, -1) * d_inv.unsqueeze(-2)
        a = solve_lower(self._capacitance_tril, wt_dinv)
        prec = d_inv.diag_embed() - a.transpose(-2, -1) @ a
        return prec.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = ember.randn(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        w = self._unbroadcasted_cov_factor
        return self.loc + (w @ eps_w.unsqueeze(-1)).squeeze(-1) \
            + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _log_det(self):
        return 2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) \
            + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        d = self._unbroadcasted_cov_diag
        w = self._unbroadcasted_cov_factor
        # x^T (W W^T + D)^-1 x = x^T D^-1 x - |L^-1 W^T D^-1 x|^2
        wt_dinv = w.transpose(-2, -1) / d.unsqueeze(-2)
        wt_dinv_x = (wt_dinv @ diff.unsqueeze(-1))
        lower = self._capacitance_tril
        shape = ember.broadcast_shapes(tuple(lower.shape[:-2]), tuple(wt_dinv_x.shape[:-2]))
        r = lower.shape[-1]
        a = solve_lower(lower.expand(tuple(shape) + (r, r)),
                        wt_dinv_x.expand(tuple(shape) + (r, 1))).squeeze(-1)
        m = (diff * diff / d).sum(-1) - (a * a).sum(-1)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * (k * (1.0 + math.log(2 * math.pi)) + self._log_det())
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
