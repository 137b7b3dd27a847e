"""ember.distributions: densities, distribution functions, entropies and moments against
scipy.stats; sample moments over many seeded draws; KL divergences against Monte-Carlo
estimates; reparameterized gradients; argument validation; transforms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions import constraints, transforms
from ember.testing import assert_close

stats = pytest.importorskip("scipy.stats")


def t(x):
    return ember.tensor(np.asarray(x, dtype=np.float64))


LOC, SCALE = [0.0, 1.5, -2.0], [1.0, 0.5, 3.0]
CONC, RATE = [0.7, 2.0, 5.0], [1.0, 0.5, 3.0]

# name, ember distribution, frozen scipy distribution, test points
CONTINUOUS = [
    ("Normal", lambda: D.Normal(t(LOC), t(SCALE)), stats.norm(LOC, SCALE), [-1.0, 0.3, 2.0]),
    ("Laplace", lambda: D.Laplace(t(LOC), t(SCALE)), stats.laplace(LOC, SCALE),
     [-1.0, 0.3, 2.0]),
    ("Cauchy", lambda: D.Cauchy(t(LOC), t(SCALE)), stats.cauchy(LOC, SCALE), [-1.0, 0.3, 2.0]),
    ("Gumbel", lambda: D.Gumbel(t(LOC), t(SCALE)), stats.gumbel_r(LOC, SCALE),
     [-1.0, 0.3, 2.0]),
    ("Exponential", lambda: D.Exponential(t(RATE)), stats.expon(scale=1 / np.array(RATE)),
     [0.2, 1.0, 3.0]),
    ("Gamma", lambda: D.Gamma(t(CONC), t(RATE)), stats.gamma(CONC, scale=1 / np.array(RATE)),
     [0.2, 1.0, 3.0]),
    ("Chi2", lambda: D.Chi2(t(CONC)), stats.chi2(CONC), [0.2, 1.0, 3.0]),
    ("Uniform", lambda: D.Uniform(t(LOC), t(np.array(LOC) + SCALE)),
     stats.uniform(LOC, SCALE), [0.5, 1.7, 0.0]),
    ("Beta", lambda: D.Beta(t(CONC), t(RATE)), stats.beta(CONC, RATE), [0.2, 0.5, 0.9]),
    ("LogNormal", lambda: D.LogNormal(t(LOC), t(SCALE)),
     stats.lognorm(SCALE, scale=np.exp(LOC)), [0.2, 1.0, 3.0]),
    ("HalfNormal", lambda: D.HalfNormal(t(SCALE)), stats.halfnorm(scale=SCALE),
     [0.2, 1.0, 3.0]),
    ("HalfCauchy", lambda: D.HalfCauchy(t(SCALE)), stats.halfcauchy(scale=SCALE),
     [0.2, 1.0, 3.0]),
    ("StudentT", lambda: D.StudentT(t([3.0, 5.5, 10.0]), t(LOC), t(SCALE)),
     stats.t([3.0, 5.5, 10.0], LOC, SCALE), [-1.0, 0.3, 2.0]),
    ("FisherSnedecor", lambda: D.FisherSnedecor(t([3.0, 5.0, 10.0]), t([5.0, 9.0, 12.0])),
     stats.f([3.0, 5.0, 10.0], [5.0, 9.0, 12.0]), [0.2, 1.0, 3.0]),
    ("Pareto", lambda: D.Pareto(t(SCALE), t([2.5, 3.0, 4.5])),
     stats.pareto([2.5, 3.0, 4.5], scale=SCALE), [1.2, 0.9, 3.5]),
    ("Weibull", lambda: D.Weibull(t(SCALE), t(CONC)), stats.weibull_min(CONC, scale=SCALE),
     [0.2, 1.0, 3.0]),
    ("InverseGamma", lambda: D.InverseGamma(t([2.5, 3.0, 4.5]), t(RATE)),
     stats.invgamma([2.5, 3.0, 4.5], scale=RATE), [0.2, 1.0, 3.0]),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(t(LOC), t(SCALE), t([0.2, 0.0, -0.3])),
     stats.genpareto([0.2, 0.0, -0.3], LOC, SCALE), [0.4, 1.9, 2.0]),
]

DISCRETE = [
    ("Poisson", lambda: D.Poisson(t(RATE)), stats.poisson(RATE), [0.0, 1.0, 4.0]),
    ("Bernoulli", lambda: D.Bernoulli(t([0.2, 0.5, 0.9])), stats.bernoulli([0.2, 0.5, 0.9]),
     [0.0, 1.0, 1.0]),
    ("Geometric", lambda: D.Geometric(t([0.2, 0.5, 0.9])),
     stats.geom([0.2, 0.5, 0.9], loc=-1), [0.0, 1.0, 4.0]),
    ("Binomial", lambda: D.Binomial(10, t([0.2, 0.5, 0.9])), stats.binom(10, [0.2, 0.5, 0.9]),
     [0.0, 4.0, 10.0]),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t([3.0, 5.0, 2.5]), t([0.2, 0.5, 0.7])),
     stats.nbinom([3.0, 5.0, 2.5], [0.8, 0.5, 0.3]), [0.0, 4.0, 10.0]),
]

NO_CDF = {"Beta", "StudentT", "FisherSnedecor", "Weibull", "Pareto", "InverseGamma"}
NO_ENTROPY = {"FisherSnedecor"}


@pytest.mark.parametrize("name,make,ref,points", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_against_scipy(name, make, ref, points):
    d = make()
    x = t(points)
    assert_close(d.log_prob(x).numpy(), ref.logpdf(points), rtol=1e-10, atol=1e-12)
    if name not in NO_CDF:
        assert_close(d.cdf(x).numpy(), ref.cdf(points), rtol=1e-10, atol=1e-12)
    if name in ("Normal", "Laplace", "Cauchy", "Gumbel", "Exponential", "Uniform",
                "LogNormal", "HalfNormal", "HalfCauchy", "GeneralizedPareto"):
        q = t([0.1, 0.5, 0.8])
        assert_close(d.icdf(q).numpy(), ref.ppf([0.1, 0.5, 0.8]), rtol=1e-10, atol=1e-12)
    if name not in NO_ENTROPY:
        assert_close(d.entropy().numpy(), ref.entropy(), rtol=1e-10, atol=1e-12)
    if name in ("Cauchy", "HalfCauchy"):  # PyTorch's values where SciPy has nan
        assert np.isnan(d.mean.numpy()).all() if name == "Cauchy" else \
            np.isinf(d.mean.numpy()).all()
        assert np.isinf(d.variance.numpy()).all()
        return
    assert_close(d.mean.numpy(), ref.mean(), rtol=1e-10, atol=1e-12)
    assert_close(d.variance.numpy(), ref.var(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,make,ref,points", DISCRETE, ids=[c[0] for c in DISCRETE])
def test_discrete_against_scipy(name, make, ref, points):
    d = make()
    assert_close(d.log_prob(t(points)).numpy(), ref.logpmf(points), rtol=1e-10, atol=1e-12)
    assert_close(d.mean.numpy(), ref.mean(), rtol=1e-10, atol=1e-12)
    assert_close(d.variance.numpy(), ref.var(), rtol=1e-10, atol=1e-12)
    if name not in ("Poisson", "NegativeBinomial"):  # PyTorch has no entropy for these
        assert_close(d.entropy().numpy(), ref.entropy(), rtol=1e-10, atol=1e-12)


def test_categorical_and_one_hot():
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    d = D.Categorical(t(p * 4))  # normalized
    assert_close(d.probs.numpy(), p)
    assert_close(d.log_prob(ember.tensor([2, 0])).numpy(), np.log([0.5, 0.6]))
    assert_close(d.entropy().numpy(), -(p * np.log(p)).sum(-1))
    assert d.support.check(ember.tensor([0, 2, 3])).tolist() == [True, True, False]
    assert d.enumerate_support().shape == (3, 2)
    assert d.mode.tolist() == [2, 0]
    dl = D.Categorical(logits=t(np.log(p) + 3))
    assert_close(dl.probs.numpy(), p)
    oh = D.OneHotCategorical(t(p))
    assert oh.sample((5,)).shape == (5, 2, 3)
    assert_close(oh.log_prob(t([[0, 0, 1], [1, 0, 0]])).numpy(), np.log([0.5, 0.6]))
    assert oh.enumerate_support().shape == (3, 2, 3)
    st = D.OneHotCategoricalStraightThrough(t(p).requires_grad_())
    s = st.rsample()
    assert s.requires_grad and set(np.unique(s.detach().numpy())) <= {0.0, 1.0}


def test_multivariate_normal_against_scipy():
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.7]])
    loc = np.array([0.5, -1.0, 2.0])
    ref = stats.multivariate_normal(loc, cov)
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.5]])
    lower = np.linalg.cholesky(cov)
    for d in (D.MultivariateNormal(t(loc), covariance_matrix=t(cov)),
              D.MultivariateNormal(t(loc), scale_tril=t(lower)),
              D.MultivariateNormal(t(loc), precision_matrix=t(np.linalg.inv(cov)))):
        assert_close(d.log_prob(t(x)).numpy(), ref.logpdf(x), rtol=1e-10, atol=1e-12)
        assert_close(d.entropy().numpy(), ref.entropy(), rtol=1e-10, atol=1e-12)
        assert_close(d.covariance_matrix.numpy(), cov, rtol=1e-10, atol=1e-12)
        assert_close(d.scale_tril.numpy(), lower, rtol=1e-10, atol=1e-12)
        assert_close(d.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-9, atol=1e-12)
        assert_close(d.variance.numpy(), np.diag(cov), rtol=1e-10, atol=1e-12)
    batched = D.MultivariateNormal(t(np.zeros((4, 3))), t(cov))
    assert batched.batch_shape == (4,) and batched.sample((2,)).shape == (2, 4, 3)


def test_multivariate_normal_gradients():
    cov = t([[2.0, 0.5], [0.5, 1.0]]).requires_grad_()
    loc = t([0.3, -0.2]).requires_grad_()
    x = t([[0.1, 0.4], [1.0, -1.0]])

    def f(loc, cov):
        c = 0.5 * (cov + cov.transpose(-2, -1))
        return D.MultivariateNormal(loc, c).log_prob(x)
    assert ember.autograd.gradcheck(f, (loc, cov))


def test_lowrank_multivariate_normal():
    rng = np.random.default_rng(0)
    w, d, loc = rng.normal(size=(4, 2)), rng.uniform(0.5, 2, size=4), rng.normal(size=4)
    cov = w @ w.T + np.diag(d)
    lr = D.LowRankMultivariateNormal(t(loc), t(w), t(d))
    ref = stats.multivariate_normal(loc, cov)
    x = rng.normal(size=(3, 4))
    assert_close(lr.log_prob(t(x)).numpy(), ref.logpdf(x), rtol=1e-10, atol=1e-12)
    assert_close(lr.entropy().numpy(), ref.entropy(), rtol=1e-10, atol=1e-12)
    assert_close(lr.covariance_matrix.numpy(), cov, rtol=1e-10, atol=1e-12)
    assert_close(lr.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-9, atol=1e-12)
    assert_close(lr.variance.numpy(), np.diag(cov), rtol=1e-10, atol=1e-12)
    ember.manual_seed(6)
    s = lr.sample((40000,)).numpy()
    assert_close(np.cov(s.T), cov, atol=0.08, rtol=0)
    wt, dt = t(w).requires_grad_(), t(d).requires_grad_()
    assert ember.autograd.gradcheck(
        lambda w, d: D.LowRankMultivariateNormal(t(loc), w, d).log_prob(t(x)), (wt, dt))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(t(loc), t(w[:3]), t(d))


def test_mixture_same_family():
    w = np.array([0.3, 0.7])
    mix = D.MixtureSameFamily(D.Categorical(t(w)), D.Normal(t([0.0, 2.0]), t([1.0, 0.5])))
    x = np.array([-0.5, 1.0, 2.2])
    ref = np.log(w[0] * stats.norm.pdf(x, 0, 1) + w[1] * stats.norm.pdf(x, 2, 0.5))
    assert_close(mix.log_prob(t(x)).numpy(), ref, rtol=1e-10, atol=1e-12)
    cdf = w[0] * stats.norm.cdf(x, 0, 1) + w[1] * stats.norm.cdf(x, 2, 0.5)
    assert_close(mix.cdf(t(x)).numpy(), cdf, rtol=1e-10, atol=1e-12)
    assert mix.mean.item() == pytest.approx(1.4)
    var = w @ (np.array([1.0, 0.25]) + np.array([0.0, 2.0]) ** 2) - 1.4 ** 2
    assert mix.variance.item() == pytest.approx(var)
    ember.manual_seed(3)
    s = mix.sample((40000,)).numpy()
    assert abs(s.mean() - 1.4) < 0.03 and abs(s.var() - var) < 0.05
    mvn_mix = D.MixtureSameFamily(D.Categorical(t(w)), D.Independent(
        D.Normal(t(np.zeros((2, 3))), t(np.ones((2, 3)))), 1))
    assert mvn_mix.event_shape == (3,) and mvn_mix.sample((4,)).shape == (4, 3)


SAMPLED = [
    ("Normal", lambda: D.Normal(t(LOC), t(SCALE))),
    ("Laplace", lambda: D.Laplace(t(LOC), t(SCALE))),
    ("Gumbel", lambda: D.Gumbel(t(LOC), t(SCALE))),
    ("Exponential", lambda: D.Exponential(t(RATE))),
    ("Gamma", lambda: D.Gamma(t(CONC), t(RATE))),
    ("Chi2", lambda: D.Chi2(t(CONC))),
    ("Uniform", lambda: D.Uniform(t(LOC), t(np.array(LOC) + SCALE))),
    ("Beta", lambda: D.Beta(t(CONC), t(RATE))),
    ("LogNormal", lambda: D.LogNormal(t([0.0, 0.5]), t([0.3, 0.5]))),
    ("HalfNormal", lambda: D.HalfNormal(t(SCALE))),
    ("Poisson", lambda: D.Poisson(t(RATE))),
    ("Bernoulli", lambda: D.Bernoulli(t([0.2, 0.5, 0.9]))),
    ("Geometric", lambda: D.Geometric(t([0.2, 0.5, 0.9]))),
    ("Dirichlet", lambda: D.Dirichlet(t([[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(t([1.0, -1.0]),
                                                        t([[2.0, 0.5], [0.5, 1.0]]))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(t([0.2, 0.3, 0.5]))),
    ("StudentT", lambda: D.StudentT(t([5.0, 9.0]), t([0.0, 1.0]), t([1.0, 2.0]))),
    ("FisherSnedecor", lambda: D.FisherSnedecor(t([6.0, 10.0]), t([12.0, 20.0]))),
    ("Pareto", lambda: D.Pareto(t([1.0, 2.0]), t([5.0, 6.0]))),
    ("Weibull", lambda: D.Weibull(t([1.0, 2.0]), t([1.5, 3.0]))),
    ("InverseGamma", lambda: D.InverseGamma(t([5.0, 6.0]), t([1.0, 2.0]))),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t([2.0, 0.7]), t([3.0, 1.5]))),
    ("Binomial", lambda: D.Binomial(t([10.0, 3.0]), t([0.3, 0.8]))),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t([3.0, 5.0]), t([0.3, 0.6]))),
    ("Multinomial", lambda: D.Multinomial(7, t([0.2, 0.3, 0.5]))),
]


@pytest.mark.parametrize("name,make", SAMPLED, ids=[s[0] for s in SAMPLED])
def test_sample_moments(name, make):
    ember.manual_seed(0)
    d = make()
    n = 40000
    s = d.sample((n,)).numpy()
    assert s.shape == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
    mean, var = d.mean.numpy(), d.variance.numpy()
    # the sample mean within 5 standard errors
    assert np.all(np.abs(s.mean(0) - mean) < 5 * np.sqrt(var / n) + 1e-12), (s.mean(0), mean)
    assert_close(s.var(0), var, rtol=0.06, atol=1e-3)
    assert bool(d.support.check(ember.tensor(s)).all())
    if d.has_rsample:
        r = d.rsample((1000,)).numpy()
        assert r.shape == s[:1000].shape


def test_kumaraswamy_and_multinomial():
    a, b = 2.0, 3.0
    d = D.Kumaraswamy(t(a), t(b))
    x = np.array([0.1, 0.5, 0.9])
    pdf = a * b * x ** (a - 1) * (1 - x ** a) ** (b - 1)
    assert_close(d.log_prob(t(x)).numpy(), np.log(pdf), rtol=1e-10, atol=1e-12)
    assert_close(d.cdf(t(x)).numpy(), 1 - (1 - x ** a) ** b, rtol=1e-10, atol=1e-12)
    assert d.mode.item() == pytest.approx(((a - 1) / (a * b - 1)) ** (1 / a))
    # the entropy by quadrature of -p log p
    grid = np.linspace(1e-6, 1 - 1e-6, 200001)
    p = a * b * grid ** (a - 1) * (1 - grid ** a) ** (b - 1)
    assert d.entropy().item() == pytest.approx(np.trapezoid(-p * np.log(p), grid), abs=1e-6)
    m = D.Multinomial(6, t([0.2, 0.3, 0.5]))
    counts = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]])
    assert_close(m.log_prob(t(counts)).numpy(),
                 stats.multinomial(6, [0.2, 0.3, 0.5]).logpmf(counts), rtol=1e-10, atol=1e-12)
    assert m.entropy().item() == pytest.approx(stats.multinomial(6, [0.2, 0.3, 0.5]).entropy())
    with pytest.raises(ValueError, match="Expected value argument"):
        m.log_prob(t([1.0, 2.0, 4.0]))


def test_relaxed_distributions():
    # the densities integrate to 1 (over (0, 1), and over the 2-simplex)
    z = np.linspace(-60, 60, 20001)  # in logit space, x = sigmoid(z): a smooth integrand
    x = 1 / (1 + np.exp(-z))
    for temp in (0.5, 2.0):
        d = D.RelaxedBernoulli(t(temp), probs=t(0.3))
        dens = d.log_prob(t(x)).exp().numpy() * x * (1 - x)
        assert np.trapezoid(dens, z) == pytest.approx(1.0, abs=1e-6)
    d = D.RelaxedOneHotCategorical(t(1.5), probs=t([0.2, 0.3, 0.5]))
    g = np.linspace(1e-4, 1 - 1e-4, 401)
    x, y = np.meshgrid(g, g, indexing="ij")
    mask = x + y < 1 - 1e-4
    pts = np.stack([x[mask], y[mask], 1 - x[mask] - y[mask]], -1)
    # the density of the first K - 1 coordinates: ember's log_prob is for the full vector
    dens = d.log_prob(t(pts)).exp().numpy()
    total = dens.sum() * (g[1] - g[0]) ** 2
    assert total == pytest.approx(1.0, abs=0.02)
    # rsample is differentiable and lies in the support
    logits = t([0.2, -0.5, 1.0]).requires_grad_()
    s = D.RelaxedOneHotCategorical(t(0.5), logits=logits).rsample((4,))
    assert bool(constraints.simplex.check(s).all())
    s[:, 2].sum().backward()
    assert logits.grad is not None and bool((logits.grad != 0).any())
    ln = D.LogisticNormal(t([0.0, 0.5]), t([1.0, 0.3]))
    assert ln.event_shape == (3,) and bool(constraints.simplex.check(ln.sample((5,))).all())


def test_exponential_family_entropy():
    for d in (D.Normal(t(LOC), t(SCALE)), D.Exponential(t(RATE)), D.Gamma(t(CONC), t(RATE)),
              D.Bernoulli(t([0.2, 0.5, 0.9]))):
        assert isinstance(d, D.ExponentialFamily)
        assert_close(D.ExponentialFamily.entropy(d).detach().numpy(), d.entropy().numpy(),
                     rtol=1e-10, atol=1e-12)


def test_continuous_bernoulli():
    for p in (0.2, 0.5, 0.9997):
        d = D.ContinuousBernoulli(t(p))
        z = np.linspace(0, 1, 20001)
        dens = d.log_prob(t(z)).exp().numpy()
        assert np.trapezoid(dens, z) == pytest.approx(1.0, abs=1e-7)
        assert np.trapezoid(z * dens, z) == pytest.approx(d.mean.item(), abs=1e-7)
        assert np.trapezoid((z - d.mean.item()) ** 2 * dens, z) == pytest.approx(
            d.variance.item(), abs=1e-7)
        assert np.trapezoid(-dens * np.log(dens), z) == pytest.approx(d.entropy().item(),
                                                                       abs=1e-6)
        u = t([0.1, 0.5, 0.9])
        assert_close(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-9, atol=1e-9)
    assert_close(D.ExponentialFamily.entropy(D.ContinuousBernoulli(t([0.2, 0.9]))).detach()
                 .numpy(),
                 D.ContinuousBernoulli(t([0.2, 0.9])).entropy().numpy(), rtol=1e-8, atol=1e-10)


def test_von_mises():
    loc, kappa = np.array([0.5, -2.0, 3.0]), np.array([0.3, 2.0, 40.0])
    d = D.VonMises(t(loc), t(kappa))
    x = np.array([0.1, -1.5, 3.1])
    assert_close(d.log_prob(t(x)).numpy(), stats.vonmises(kappa, loc).logpdf(x), rtol=1e-10,
                 atol=1e-12)
    ember.manual_seed(5)
    s = d.sample((30000,)).numpy()
    assert s.min() >= -math.pi and s.max() < math.pi
    # E cos(x - loc) = I1 / I0 = 1 - circular variance
    assert_close(np.cos(s - loc).mean(0), 1 - d.variance.numpy(), atol=0.01, rtol=0)
    assert_close(np.sin(s - loc).mean(0), np.zeros(3), atol=0.015, rtol=0)


def test_categorical_sample_frequencies():
    ember.manual_seed(1)
    p = np.array([0.1, 0.2, 0.7])
    s = D.Categorical(t(p)).sample((30000,)).numpy()
    assert_close(np.bincount(s, minlength=3) / 30000, p, atol=0.015, rtol=0)


KL_PAIRS = [
    ("Normal", lambda: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Normal(t([0.5, -1.0]), t([2.0, 1.0]))),
    ("Laplace", lambda: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Laplace(t([0.5, -1.0]), t([2.0, 1.0]))),
    ("Gumbel", lambda: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Gumbel(t([0.5, -1.0]), t([2.0, 1.0]))),
    ("Exponential", lambda: D.Exponential(t([1.0, 2.0])), lambda: D.Exponential(t([3.0, 0.5]))),
    ("Gamma", lambda: D.Gamma(t([2.0, 3.0]), t([1.0, 2.0])),
     lambda: D.Gamma(t([1.5, 4.0]), t([2.0, 1.0]))),
    ("Beta", lambda: D.Beta(t([2.0, 3.0]), t([1.5, 2.0])),
     lambda: D.Beta(t([1.5, 4.0]), t([2.0, 1.0]))),
    ("Dirichlet", lambda: D.Dirichlet(t([[2.0, 3.0, 1.0]])),
     lambda: D.Dirichlet(t([[1.0, 1.0, 1.0]]))),
    ("Uniform", lambda: D.Uniform(t([0.0]), t([1.0])), lambda: D.Uniform(t([-1.0]), t([2.0]))),
    ("Bernoulli", lambda: D.Bernoulli(t([0.3, 0.8])), lambda: D.Bernoulli(t([0.5, 0.4]))),
    ("Categorical", lambda: D.Categorical(t([0.2, 0.3, 0.5])),
     lambda: D.Categorical(t([0.4, 0.4, 0.2]))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(t([0.2, 0.3, 0.5])),
     lambda: D.OneHotCategorical(t([0.4, 0.4, 0.2]))),
    ("Poisson", lambda: D.Poisson(t([2.0, 5.0])), lambda: D.Poisson(t([3.0, 4.0]))),
    ("Geometric", lambda: D.Geometric(t([0.3, 0.6])), lambda: D.Geometric(t([0.5, 0.4]))),
    ("MultivariateNormal",
     lambda: D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
     lambda: D.MultivariateNormal(t([1.0, 0.0]), t([[1.0, -0.2], [-0.2, 0.5]]))),
    ("Independent", lambda: D.Independent(D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), 1),
     lambda: D.Independent(D.Normal(t([0.5, -1.0]), t([2.0, 1.0])), 1)),
    ("LogNormal", lambda: D.LogNormal(t([0.0]), t([1.0])), lambda: D.LogNormal(t([0.5]),
                                                                              t([0.7]))),
    ("HalfNormal", lambda: D.HalfNormal(t([1.0])), lambda: D.HalfNormal(t([2.0]))),
    ("Normal-Laplace", lambda: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Laplace(t([0.5, -1.0]), t([2.0, 1.0]))),
    ("Exponential-Gamma", lambda: D.Exponential(t([1.0, 2.0])),
     lambda: D.Gamma(t([1.5, 4.0]), t([2.0, 1.0]))),
    ("Uniform-Normal", lambda: D.Uniform(t([0.0]), t([1.0])), lambda: D.Normal(t([0.3]),
                                                                              t([0.8]))),
    ("Cauchy", lambda: D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Cauchy(t([0.5, -1.0]), t([2.0, 1.0]))),
    ("Pareto", lambda: D.Pareto(t([1.0, 2.0]), t([2.5, 3.0])),
     lambda: D.Pareto(t([0.5, 1.5]), t([1.5, 4.0]))),
    ("Binomial", lambda: D.Binomial(10, t([0.3, 0.8])), lambda: D.Binomial(10, t([0.5, 0.4]))),
]


@pytest.mark.parametrize("name,make_p,make_q", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_against_monte_carlo(name, make_p, make_q):
    ember.manual_seed(2)
    p, q = make_p(), make_q()
    kl = D.kl_divergence(p, q).numpy()
    n = 60000
    x = p.sample((n,))
    diff = (p.log_prob(x) - q.log_prob(x)).numpy()
    mc, se = diff.mean(0), diff.std(0) / math.sqrt(n)
    assert np.all(np.abs(kl - mc) < 5 * se + 1e-3), (kl, mc, se)


def test_kl_registry():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(t(0.0), t(1.0)), D.Normal(t(1.0), t(1.0))
    assert D.kl_divergence(p, q).item() == pytest.approx(0.5)  # the parent's closed form

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return ember.tensor(42.0)
    assert D.kl_divergence(p, q).item() == 42.0
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Cauchy(t(0.0), t(1.0)), D.Normal(t(0.0), t(1.0)))
    # two different exponential families reach the Bregman fallback, which refuses them
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Poisson(t(1.0)), D.Normal(t(0.0), t(1.0)))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)
    assert np.isinf(D.kl_divergence(D.Normal(t(0.0), t(1.0)), D.Beta(t(2.0), t(1.0))).item())


def test_rsample_gradients():
    ember.manual_seed(4)
    n = 20000
    # d/d(loc, scale) E[x^2] = (2 loc, 2 scale) for Normal
    loc, scale = t(0.7).requires_grad_(), t(1.3).requires_grad_()
    (D.Normal(loc, scale).rsample((n,)) ** 2).mean().backward()
    assert loc.grad.item() == pytest.approx(1.4, abs=0.05)
    assert scale.grad.item() == pytest.approx(2.6, abs=0.05)
    # Gamma: E[x] = a / b, d/da = 1 / b, d/db = -a / b^2
    a, b = t(2.5).requires_grad_(), t(2.0).requires_grad_()
    D.Gamma(a, b).rsample((n,)).mean().backward()
    assert a.grad.item() == pytest.approx(0.5, abs=0.02)
    assert b.grad.item() == pytest.approx(-0.625, abs=0.03)
    # small concentrations too: E[x^2] = a (a + 1), d/da = 2a + 1
    a = t(0.3).requires_grad_()
    (D.Gamma(a, t(1.0)).rsample((n,)) ** 2).mean().backward()
    assert a.grad.item() == pytest.approx(1.6, rel=0.1)
    # Beta: E[x] = a / (a + b)
    a, b = t(2.0).requires_grad_(), t(3.0).requires_grad_()
    D.Beta(a, b).rsample((n,)).mean().backward()
    assert a.grad.item() == pytest.approx(3 / 25, abs=0.01)
    assert b.grad.item() == pytest.approx(-2 / 25, abs=0.01)
    # Dirichlet: E[x_0] = a_0 / sum(a)
    c = t([2.0, 1.0, 1.0]).requires_grad_()
    D.Dirichlet(c).rsample((n,))[:, 0].mean().backward()
    assert_close(c.grad.numpy(), np.array([2 / 16, -2 / 16, -2 / 16]), atol=0.01, rtol=0)
    # Uniform, Exponential, Laplace: E[x] = (lo + hi) / 2, 1 / rate, loc
    lo, hi = t(1.0).requires_grad_(), t(3.0).requires_grad_()
    D.Uniform(lo, hi).rsample((n,)).mean().backward()
    assert lo.grad.item() == pytest.approx(0.5, abs=0.02)
    rate = t(2.0).requires_grad_()
    D.Exponential(rate).rsample((n,)).mean().backward()
    assert rate.grad.item() == pytest.approx(-0.25, abs=0.01)
    # MultivariateNormal: d/dL E[|x|^2] = 2 L
    lower = t([[1.0, 0.0], [0.5, 2.0]]).requires_grad_()
    (D.MultivariateNormal(t([0.0, 0.0]), scale_tril=lower).rsample((n,)) ** 2).sum(-1) \
        .mean().backward()
    assert_close(lower.grad.numpy(), 2 * np.array([[1.0, 0.0], [0.5, 2.0]]), atol=0.08,
                 rtol=0)


def test_log_prob_gradcheck():
    x = t([0.3, 1.2])
    for make, params in [
        (lambda a, b: D.Normal(a, b).log_prob(x), (t([0.1, 0.2]), t([1.0, 2.0]))),
        (lambda a, b: D.Gamma(a, b).log_prob(x), (t([1.5, 2.0]), t([1.0, 2.0]))),
        (lambda a, b: D.Beta(a, b).log_prob(x / 2), (t([1.5, 2.0]), t([1.0, 2.0]))),
        (lambda a, b: D.Gamma(a, b).entropy(), (t([1.5, 2.0]), t([1.0, 2.0]))),
        (lambda a, b: D.kl_divergence(D.Beta(a, b), D.Beta(b, a)), (t([1.5, 2.0]),
                                                                  t([1.0, 2.5]))),
    ]:
        assert ember.autograd.gradcheck(make, tuple(p.requires_grad_() for p in params))


def test_validate_args():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* to satisfy the "
                                         r"constraint GreaterThan\(lower_bound=0.0\)"):
        D.Normal(t([0.0]), t([-1.0]))
    D.Normal(t([0.0]), t([-1.0]), validate_args=False)  # no error
    with pytest.raises(ValueError, match="Expected value argument"):
        D.Exponential(t(1.0)).log_prob(t(-1.0))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(t(0.0), t(1.0)).log_prob(1.0)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical(t([0.5, 0.5]), t([0.0, 0.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(t([0.0]))
    with pytest.raises(ValueError, match="positive_definite|PositiveDefinite"):
        D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="Uniform is not defined when low>= high"):
        D.Uniform(t(1.0), t(0.0))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        D.Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.3, 0.2]))


def test_shapes_expand_and_api():
    d = D.Normal(t([0.0, 1.0]), t(1.0))
    assert d.batch_shape == (2,) and d.event_shape == ()
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample((4,)).shape == (4, 3, 2)
    assert d.stddev.tolist() == [1.0, 1.0]
    assert_close(d.perplexity(), d.entropy().exp())
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert d.sample_n(5).shape == (5, 2)
    assert not d.sample().requires_grad
    b = D.Bernoulli(0.3)
    assert b.batch_shape == () and b.enumerate_support().tolist() == [0.0, 1.0]
    assert D.Normal.has_rsample and not D.Poisson.has_rsample
    ind = D.Independent(D.Normal(t(np.zeros((2, 3))), t(np.ones((2, 3)))), 1)
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    assert ind.log_prob(t(np.zeros((2, 3)))).shape == (2,)
    assert "Normal(loc: torch.Size([2]), scale: torch.Size([2]))".replace(
        "torch", "ember") == repr(d)


TRANSFORMS = [
    (transforms.ExpTransform(), [-1.0, 0.3, 2.0]),
    (transforms.AffineTransform(1.5, -2.0), [-1.0, 0.3, 2.0]),
    (transforms.SigmoidTransform(), [-1.0, 0.3, 2.0]),
    (transforms.TanhTransform(), [-1.0, 0.3, 2.0]),
    (transforms.SoftplusTransform(), [-1.0, 0.3, 2.0]),
    (transforms.PowerTransform(t(2.5)), [0.5, 1.0, 2.0]),
    (transforms.ComposeTransform([transforms.AffineTransform(0.5, 2.0),
                                  transforms.ExpTransform()]), [-1.0, 0.3, 2.0]),
    (transforms.ExpTransform().inv, [0.5, 1.0, 2.0]),
]


@pytest.mark.parametrize("tr,points", TRANSFORMS, ids=[repr(tr).split("(")[0] + str(i)
                                                       for i, (tr, _) in enumerate(TRANSFORMS)])
def test_elementwise_transforms(tr, points):
    x = t(points).requires_grad_()
    y = tr(x)
    assert_close(tr.inv(y).detach().numpy(), np.asarray(points), rtol=1e-10, atol=1e-12)
    # log |dy/dx| against autograd's derivative
    (grad,) = ember.autograd.grad(y.sum(), x)
    assert_close(tr.log_abs_det_jacobian(x, y).detach().numpy(), np.log(np.abs(grad.numpy())),
                 rtol=1e-9, atol=1e-10)
    assert bool(tr.codomain.check(y).all())


def test_stick_breaking_and_vector_transforms():
    sb = transforms.StickBreakingTransform()
    x = t([0.3, -1.0, 2.0])
    y = sb(x)
    assert y.shape == (4,) and abs(y.sum().item() - 1) < 1e-12
    assert_close(sb.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-12)
    # log-det of the map to the first K-1 coordinates, against a finite-difference Jacobian
    eps = 1e-6
    jac = np.zeros((3, 3))
    for i in range(3):
        dx = np.zeros(3)
        dx[i] = eps
        jac[:, i] = (sb(t(x.numpy() + dx)).numpy()[:3] - sb(t(x.numpy() - dx)).numpy()[:3]) / (
            2 * eps)
    assert sb.log_abs_det_jacobian(x, y).item() == pytest.approx(
        np.log(abs(np.linalg.det(jac))), abs=1e-6)
    sm = transforms.SoftmaxTransform()
    assert_close(sm(x).numpy(), np.exp(x.numpy()) / np.exp(x.numpy()).sum())
    lc = transforms.LowerCholeskyTransform()
    m = lc(t([[0.1, 5.0], [0.3, -0.2]]))
    assert bool(constraints.lower_cholesky.check(m))
    rs = transforms.ReshapeTransform((2, 3), (6,))
    assert rs(t(np.zeros((4, 2, 3)))).shape == (4, 6)
    cat = transforms.CatTransform([transforms.ExpTransform(), transforms.identity_transform],
                                  dim=0, lengths=[2, 1])
    assert_close(cat(t([0.0, 1.0, -3.0])).numpy(), np.array([1.0, math.e, -3.0]))
    st = transforms.StackTransform([transforms.ExpTransform(), transforms.AbsTransform()], 0)
    assert_close(st(t([1.0, -2.0])).numpy(), np.array([math.e, 2.0]))
    assert_close(D.biject_to(constraints.interval(1.0, 3.0))(t(0.0)).numpy(), np.array(2.0))
    assert D.biject_to(constraints.simplex)(x).shape == (4,)


def test_transformed_distribution_against_lognormal():
    base = D.Normal(t([0.2]), t([0.7]))
    d = D.TransformedDistribution(base, [transforms.ExpTransform()])
    x = t([0.5, 1.0, 2.0]).unsqueeze(-1)
    assert_close(d.log_prob(x).numpy(), stats.lognorm(0.7, scale=np.exp(0.2)).logpdf(
        x.numpy()), rtol=1e-10, atol=1e-12)
    assert_close(d.cdf(x).numpy(), stats.lognorm(0.7, scale=np.exp(0.2)).cdf(x.numpy()),
                 rtol=1e-10, atol=1e-12)
    neg = D.TransformedDistribution(base, [transforms.AffineTransform(0.0, -1.0)])
    assert_close(neg.cdf(t([[0.5]])).numpy(), stats.norm(-0.2, 0.7).cdf([[0.5]]), rtol=1e-10,
                 atol=1e-12)
    assert d.has_rsample and d.rsample((3,)).shape == (3, 1)


def test_constraints():
    assert constraints.positive.check(t([1.0, 0.0, -1.0])).tolist() == [True, False, False]
    assert constraints.simplex.check(t([[0.5, 0.5], [0.6, 0.6]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 3).check(t([0.0, 3.0, 1.5])).tolist() == \
        [True, True, False]
    assert constraints.real_vector.event_dim == 1
    assert constraints.is_dependent(constraints.dependent)
    assert bool(constraints.positive_definite.check(t([[2.0, 0.1], [0.1, 1.0]])))
    assert not bool(constraints.positive_definite.check(t([[1.0, 2.0], [2.0, 1.0]])))
    assert repr(constraints.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
