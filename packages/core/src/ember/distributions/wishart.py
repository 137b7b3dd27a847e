"""The Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
import numbers
import warnings

import ember
from ember.distributions import constraints
from ember.distributions._nodes import cholesky, solve_lower
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.exponential import Chi2
from ember.distributions.multivariate_normal import _precision_to_scale_tril
from ember.distributions.utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function ``sum_i digamma(x - i / 2)``, i = 0..p-1."""
    if not bool((x > (p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    half = ember.arange(p, dtype=x.dtype, device=x.device) / 2
    return ember.digamma(x.unsqueeze(-1) - half).sum(-1)


def _trace_solve(lower, value):
    """``trace((L L^T)^-1 V)`` for lower-triangular ``L`` and symmetric ``V``."""
    shape = ember.broadcast_shapes(tuple(lower.shape), tuple(value.shape))
    lower = lower.expand(shape)
    a = solve_lower(lower, value.expand(shape))                       # L^-1 V
    b = solve_lower(lower, a.transpose(-2, -1))                       # L^-1 V L^-T
    return b.diagonal(dim1=-2, dim2=-1).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution over ``p x p`` positive-definite matrices, with ``df``
    degrees of freedom and a scale given by one of ``covariance_matrix`` (``Sigma``),
    ``precision_matrix`` (``Sigma^-1``) or ``scale_tril`` (``L`` with ``Sigma = L L^T``):
    the distribution of ``X^T X`` for ``df`` rows ``X_i ~ N(0, Sigma)`` (real ``df`` too).
    Reparameterized samples come from the Bartlett decomposition ``L A A^T L^T`` (``A``
    lower triangular, ``A_ii ** 2 ~ Chi2(df - i)``, ``A_ij ~ N(0, 1)`` below the diagonal).

    Args:
        df (float or Tensor): the degrees of freedom, greater than ``p - 1``.
        covariance_matrix (Tensor): positive-definite ``(..., p, p)`` scale matrix.
        precision_matrix (Tensor): positive-definite ``(..., p, p)`` inverse scale.
        scale_tril (Tensor): lower-triangular ``(..., p, p)`` factor of the scale, with
            a positive diagonal.
        validate_args (bool, optional): whether to check parameters and samples.

    Only one of ``covariance_matrix``, ``precision_matrix`` and ``scale_tril`` may be
    given; the computations use ``scale_tril`` (the others are factored once).

    Examples::

        >>> m = ember.distributions.Wishart(ember.tensor([2.0]), covariance_matrix=ember.eye(2))
        >>> m.sample().shape    # mean df * I; variance df off and 2 df on the diagonal
        ember.Size([1, 2, 2])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if param.shape[-1] != param.shape[-2]:
            raise ValueError(f"The matrix must be square, but got {tuple(param.shape)}")
        if isinstance(df, numbers.Number):
            batch_shape = ember.Size(param.shape[:-2])
            # expanded to the batch (PyTorch 2.13 keeps it 0-d, and its mean, mode and
            # variance then fail for batched matrices)
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device).expand(batch_shape)
        else:
            batch_shape = ember.Size(ember.broadcast_shapes(tuple(param.shape[:-2]),
                                                            tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = ember.Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._make_chi2(batch_shape)

    def _make_chi2(self, batch_shape):
        # Chi2(df - i), i = 0..p-1: the squared diagonal of the Bartlett factor
        lower = self._unbroadcasted_scale_tril
        offset = ember.arange(self._event_shape[-1], dtype=lower.dtype, device=lower.device)
        return Chi2(self.df.unsqueeze(-1) - offset.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._event_shape = self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._dist_chi2 = new._make_chi2(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        lower = self._unbroadcasted_scale_tril
        eye = ember.eye(self._event_shape[-1], dtype=lower.dtype, device=lower.device)
        linv = solve_lower(lower, eye.expand(lower.shape))
        return (linv.transpose(-2, -1) @ linv).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.reshape(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor > 0, factor, ember.full_like(factor, math.nan))
        return factor.reshape(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.reshape(self._batch_shape + (1, 1)) * (
            v * v + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        eps = ember.finfo(self.df.dtype).eps
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        lower = ember.randn(ember.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                            dtype=diag.dtype, device=diag.device)
        noise = diag.diag_embed() + vec_to_tril_matrix(lower, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        # per draw: any batch member singular (any, not amax: empty batches are fine)
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = bad.flatten(bad.dim() - len(self._batch_shape)).any(-1)
        return bad

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Reparameterized draws by the Bartlett decomposition.

        Draws that come out numerically singular (possible for ``df`` near ``p - 1``) are
        redrawn up to ``max_try_correction`` times (10 by default), with a warning; a
        draw that stays singular is returned as it is (its ``log_prob`` may be ``-inf``).

        Args:
            sample_shape (ember.Size): the leading sample dimensions.
            max_try_correction (int, optional): the number of redraws of singular draws.
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = is_singular.reshape(tuple(is_singular.shape)
                                           + (1,) * (sample.dim() - is_singular.dim()))
                sample = ember.where(mask, sample_new, sample)
                is_singular = self._singular(sample)
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        half_log_det = lower.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det)
                - ember.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet
                - _trace_solve(lower, value) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det)
                + ember.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) \
            + ember.mvlgamma(y + (p + 1) / 2, p=p)
