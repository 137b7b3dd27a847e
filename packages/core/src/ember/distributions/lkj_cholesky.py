"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.dirichlet import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim`` correlation
    matrices ``M = L L^T``, with density proportional to ``det(M) ** (concentration - 1)``:
    uniform over correlation matrices for ``concentration == 1``, concentrated near the
    identity for larger values. Sampled by the onion method (Lewandowski, Kurowicka and
    Joe, 2009, section 3.2), vectorized over rows: row ``i`` (0-based) is
    ``sqrt(y_i) u_i`` with ``u_i`` uniform on the sphere of its ``i`` off-diagonal entries,
    ``y_i ~ Beta(i / 2, concentration + (dim - 1 - i) / 2)``, and the diagonal entry the
    rest of the unit norm.

    .. note::
        PyTorch 2.13 draws ``y_i`` from ``Beta(i - 1 / 2, ...)``, which is right only for
        the first two rows: its draws for ``dim >= 3`` do not follow its own ``log_prob``
        (e.g. off-diagonal correlations of variance 1/4 instead of 1/5 for ``dim = 4``,
        ``concentration = 1``). ember draws from the LKJ distribution itself.

    Args:
        dim (int): the dimension of the matrices (at least 2).
        concentration (float or Tensor): the concentration (shape) parameter ``eta``,
            positive.
        validate_args (bool, optional): whether to check parameters and samples.

    Examples::

        >>> l = ember.distributions.LKJCholesky(3, 0.5)
        >>> s = l.sample()
        >>> (s @ s.T).diagonal()
        tensor([1., 1., 1.])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        # y_i ~ Beta(i / 2, eta + (dim - 2) / 2 - (i - 1) / 2): the squared norm of the
        # off-diagonal part of row i (row 0 has none; its draw is unused)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(0.5 * offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, ember.Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                   device=y.device).tril(-1)
            norm = (u_normal * u_normal).sum(-1, keepdim=True).sqrt()
            # the first row has no off-diagonal part (0 / 0): it is zero
            tiny = ember.finfo(y.dtype).tiny
            u_hypersphere = ember.where(norm > 0, u_normal / norm.clamp(min=tiny),
                                        ember.zeros_like(u_normal))
            w = y.sqrt() * u_hypersphere
            diag = (1 - (w * w).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        # p(L) is proportional to prod_i L_ii ** (2 (eta - 1) + D - i), i = 2..D (1-based):
        # det(M) ** (eta - 1) times the Jacobian prod_i L_ii ** (D - i) of L -> L L^T
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ember.lgamma(alpha) * dm1
        numerator = ember.mvlgamma(alpha - 0.5, dm1)
        # the normalizer's pi term is D (D - 1) / 4 log(pi); mvlgamma carries
        # (D - 1) (D - 2) / 4 log(pi) of it
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
