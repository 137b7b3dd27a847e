"""Kullback-Leibler divergences in closed form, with a registry: ``kl_divergence(p, q)``
and the ``register_kl`` decorator."""

from __future__ import annotations

import math
import warnings
from functools import total_ordering

import ember
from ember.distributions._nodes import solve_lower
from ember.distributions.bernoulli import Bernoulli, Geometric
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical, OneHotCategorical
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.dirichlet import Beta, Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exponential import Exponential, Gamma, Poisson
from ember.distributions.independent import Independent
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Cauchy, Gumbel, Laplace, Normal
from ember.distributions.transformed_distribution import (
    HalfNormal,
    LogNormal,
    TransformedDistribution,
)
from ember.distributions.transformed_families import Pareto
from ember.distributions.uniform import Uniform
from ember.distributions.utils import _sum_rightmost

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """A decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from
    ``type_q`` (subclasses are matched by the most specific registered pair).

    Examples::

        >>> @register_kl(Normal, Normal)
        ... def kl_normal_normal(p, q):
        ...     ...
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types, strict=True):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fun


def _infinite_like(tensor):
    return ember.full_like(tensor, math.inf)


def kl_divergence(p, q):
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched over the batch shape.

    Args:
        p (Distribution): the first distribution.
        q (Distribution): the second distribution.

    Raises:
        NotImplementedError: if no closed form is registered for the pair of types.
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _x_log_x(t):
    return t * t.log()


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ember.distributions.bernoulli import _softplus

    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = ember.where(q.probs == 0, math.inf, t1)
    t1 = ember.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = ember.where(q.probs == 1, math.inf, t2)
    t2 = ember.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = ember.where(q.probs == 0, math.inf, t)
    t = ember.where(p.probs == 0, 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return ember.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = ember.lgamma(q.concentration1) + ember.lgamma(q.concentration0) + ember.lgamma(
        sum_params_p)
    t2 = ember.lgamma(p.concentration1) + ember.lgamma(p.concentration0) + ember.lgamma(
        sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * ember.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ember.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * ember.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = ember.lgamma(sum_p_concentration) - ember.lgamma(sum_q_concentration)
    t2 = (ember.lgamma(p.concentration) - ember.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ember.digamma(p.concentration) - ember.digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * 0.57721566490153286061
    t3 = (ct2 + ember.lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + 0.57721566490153286061)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    k = p.event_shape[0]
    shape = ember.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    lq_full = lq.expand(tuple(shape) + (k, k))
    lp_full = lp.expand(tuple(shape) + (k, k))
    diff = (q.loc - p.loc).expand(tuple(shape) + (k,))
    term2 = (solve_lower(lq_full, lp_full) ** 2).sum((-2, -1))
    y = solve_lower(lq_full, diff.unsqueeze(-1)).squeeze(-1)
    term3 = (y * y).sum(-1)
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * ember.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + ember.lgamma(q.concentration) + q.concentration * 0.57721566490153286061 \
        - (1 + 0.57721566490153286061)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return ember.where(p.scale < q.scale, math.inf, result)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return ember.where(inf_idxs, math.inf, kl)


# pairs whose KL is infinite: p puts mass where q has none
def _kl_infinite(p, q):
    return _infinite_like(p.mean if not isinstance(p, Cauchy) else p.loc)


for _p_type in (Normal, Laplace, Gumbel):
    for _q_type in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform):
        register_kl(_p_type, _q_type)(_kl_infinite)
for _p_type in (Exponential, Gamma):
    for _q_type in (Beta, ContinuousBernoulli, Pareto, Uniform):
        register_kl(_p_type, _q_type)(_kl_infinite)
for _q_type in (Beta, ContinuousBernoulli, Uniform):
    register_kl(Pareto, _q_type)(_kl_infinite)
for _q_type in (Bernoulli, Binomial):
    register_kl(Poisson, _q_type)(_kl_infinite)
