"""ember.distributions.kl_divergence for pairs of different families against numerical
integration of ``p log(p / q)`` (scipy.integrate.quad over p's support, from ember's own
log-densities), and the multivariate pairs against Monte-Carlo estimates."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.testing import assert_close

integrate = pytest.importorskip("scipy.integrate")


def t(x):
    return ember.tensor(np.asarray(x, dtype=np.float64))


def _quad_kl(p, q, lo, hi):
    def integrand(x):
        v = t(x)
        lp = float(p.log_prob(v))
        if math.exp(lp) == 0.0:  # far in p's tails, where q's log-density may be -inf
            return 0.0
        return math.exp(lp) * (lp - float(q.log_prob(v)))
    points = None if math.isinf(lo) or math.isinf(hi) else [lo + (hi - lo) * 1e-9]
    return integrate.quad(integrand, lo, hi, limit=400, points=points, epsabs=1e-12,
                          epsrel=1e-10)[0]


N = lambda m, s: D.Normal(t(m), t(s))  # noqa: E731
G = lambda a, b: D.Gamma(t(a), t(b))  # noqa: E731
E = lambda r: D.Exponential(t(r))  # noqa: E731
B = lambda a, b: D.Beta(t(a), t(b))  # noqa: E731
U = lambda lo, hi: D.Uniform(t(lo), t(hi), validate_args=False)  # noqa: E731
GU = lambda m, s: D.Gumbel(t(m), t(s))  # noqa: E731
P = lambda s, a: D.Pareto(t(s), t(a))  # noqa: E731
CB = lambda lam: D.ContinuousBernoulli(t(lam))  # noqa: E731
INF = math.inf

# p, q, p's support for the integral
CASES = [
    ("Beta-ContinuousBernoulli", B(2.0, 3.0), CB(0.3), 0, 1),
    ("Beta-Exponential", B(2.0, 3.0), E(1.5), 0, 1),
    ("Beta-Gamma", B(2.0, 3.0), G(2.5, 1.5), 0, 1),
    ("Beta-Normal", B(2.0, 3.0), N(0.3, 0.7), 0, 1),
    ("Beta-Uniform", B(2.0, 3.0), U(-0.5, 2.0), 0, 1),
    ("ContinuousBernoulli-ContinuousBernoulli", CB(0.2), CB(0.7), 0, 1),
    ("ContinuousBernoulli-Exponential", CB(0.2), E(2.0), 0, 1),
    ("ContinuousBernoulli-Normal", CB(0.8), N(0.5, 0.4), 0, 1),
    ("ContinuousBernoulli-Uniform", CB(0.8), U(0.0, 1.0), 0, 1),
    ("Exponential-Gumbel", E(1.5), GU(0.5, 2.0), 0, INF),
    ("Exponential-Normal", E(1.5), N(0.5, 2.0), 0, INF),
    ("Gamma-Exponential", G(2.5, 1.5), E(0.7), 0, INF),
    ("Gamma-Gumbel", G(2.5, 1.5), GU(1.0, 1.5), 0, INF),
    ("Gamma-Normal", G(2.5, 1.5), N(1.0, 1.5), 0, INF),
    ("Gumbel-Normal", GU(0.5, 1.2), N(0.0, 2.0), -INF, INF),
    ("Laplace-Normal", D.Laplace(t(0.5), t(1.2)), N(0.0, 2.0), -INF, INF),
    ("Normal-Gumbel", N(0.5, 1.2), GU(0.0, 2.0), -INF, INF),
    ("Pareto-Exponential", P(1.0, 3.0), E(0.7), 1, INF),
    ("Pareto-Gamma", P(1.0, 3.0), G(2.0, 0.7), 1, INF),
    ("Pareto-Normal", P(1.0, 3.0), N(1.0, 2.0), 1, INF),
    ("Uniform-Beta", U(0.1, 0.6), B(2.0, 3.0), 0.1, 0.6),
    ("Uniform-Beta-edge", U(0.0, 1.0), B(2.0, 3.0), 0.0, 1.0),
    ("Uniform-ContinuousBernoulli", U(0.0, 1.0), CB(0.3), 0.0, 1.0),
    ("Uniform-Exponential", U(0.0, 2.0), E(1.5), 0.0, 2.0),
    ("Uniform-Gamma", U(0.5, 2.0), G(2.5, 1.5), 0.5, 2.0),
    ("Uniform-Gumbel", U(-1.0, 2.0), GU(0.5, 1.5), -1.0, 2.0),
    ("Uniform-Pareto", U(1.5, 4.0), P(1.0, 2.5), 1.5, 4.0),
]


@pytest.mark.parametrize("name,p,q,lo,hi", CASES, ids=[c[0] for c in CASES])
def test_kl_against_quadrature(name, p, q, lo, hi):
    assert_close(float(D.kl_divergence(p, q)), _quad_kl(p, q, lo, hi), rtol=1e-6, atol=1e-8)


def test_bernoulli_poisson_by_summation():
    p, q = D.Bernoulli(t(0.3)), D.Poisson(t(1.7))
    want = 0.7 * math.log(0.7 / math.exp(-1.7)) + 0.3 * math.log(0.3 / (1.7 * math.exp(-1.7)))
    assert_close(float(D.kl_divergence(p, q)), want, rtol=1e-12, atol=1e-12)


def test_multivariate_pairs_against_monte_carlo():
    rng = np.random.default_rng(0)
    loc1, loc2 = rng.normal(size=3), rng.normal(size=3)
    w1, w2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 1))
    d1, d2 = rng.uniform(0.5, 1.5, 3), rng.uniform(0.5, 1.5, 3)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    lr1 = D.LowRankMultivariateNormal(t(loc1), t(w1), t(d1))
    lr2 = D.LowRankMultivariateNormal(t(loc2), t(w2), t(d2))
    mvn = D.MultivariateNormal(t(loc2), covariance_matrix=t(cov))
    full1 = D.MultivariateNormal(t(loc1), covariance_matrix=lr1.covariance_matrix)
    full2 = D.MultivariateNormal(t(loc2), covariance_matrix=lr2.covariance_matrix)
    # the low-rank forms equal the dense closed form exactly
    for p, q, fp, fq in ((lr1, lr2, full1, full2), (lr1, mvn, full1, mvn),
                         (mvn, lr1, mvn, full1)):
        assert_close(float(D.kl_divergence(p, q)), float(D.kl_divergence(fp, fq)),
                     rtol=1e-10, atol=1e-12)
    ember.manual_seed(0)
    x = lr1.sample((40000,))
    mc = (lr1.log_prob(x) - lr2.log_prob(x)).numpy()
    assert abs(mc.mean() - float(D.kl_divergence(lr1, lr2))) < 4 * mc.std() / 200
