"""ember.distributions.kl_divergence against PyTorch 2.13, pair by pair: every pair in
torch's KL registry is in ember's, and every concrete pair gives torch's value in float64
on a 4 x 4 grid of parameter sets (p's four against q's four), infinite where the
supports don't nest. The Bregman-divergence fallback for exponential families is checked
against the closed forms.

Skipped as a whole when torch is not installed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.distributions as D  # noqa: E402
import ember.distributions.kl as ekl  # noqa: E402
from ember.testing import assert_close  # noqa: E402

TD = torch.distributions
tkl = TD.kl

_RNG = np.random.default_rng(0)


def _spd(n, p):
    a = _RNG.normal(size=(n, p, p))
    return a @ np.swapaxes(a, -1, -2) + np.eye(p)


_CAT = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [1 / 3, 1 / 3, 1 / 3], [0.05, 0.9, 0.05]])

# four parameter sets per family (the leading axis), with edges of the supports: Uniform(0,
# 1) and intervals inside, around and above (0, 1); Pareto with alpha <= 1 and <= 2
PARAMS = {
    "Normal": {"loc": [0.0, 1.0, -2.0, 0.5], "scale": [1.0, 0.5, 3.0, 2.0]},
    "Laplace": {"loc": [0.0, 1.0, -2.0, 0.5], "scale": [1.0, 0.5, 3.0, 2.0]},
    "Gumbel": {"loc": [0.0, 1.0, -2.0, 0.5], "scale": [1.0, 0.5, 3.0, 2.0]},
    "Cauchy": {"loc": [0.0, 1.0, -2.0, 0.5], "scale": [1.0, 0.5, 3.0, 2.0]},
    "HalfNormal": {"scale": [1.0, 0.5, 3.0, 2.0]},
    "LogNormal": {"loc": [0.0, 1.0, -2.0, 0.5], "scale": [1.0, 0.5, 3.0, 2.0]},
    "Exponential": {"rate": [1.0, 0.5, 3.0, 2.0]},
    "Gamma": {"concentration": [0.7, 2.0, 5.0, 1.0], "rate": [1.0, 0.5, 3.0, 2.0]},
    "Beta": {"concentration1": [0.7, 2.0, 5.0, 1.0], "concentration0": [1.5, 0.5, 3.0, 1.0]},
    "Uniform": {"low": [0.0, 0.2, -1.0, 1.5], "high": [1.0, 0.7, 2.0, 3.0]},
    "Pareto": {"scale": [1.0, 0.1, 2.0, 0.5], "alpha": [2.5, 0.8, 3.0, 1.5]},
    "ContinuousBernoulli": {"probs": [0.2, 0.5, 0.9, 0.7]},
    "Bernoulli": {"probs": [0.3, 0.8, 0.5, 0.05]},
    "Geometric": {"probs": [0.3, 0.8, 0.5, 0.1]},
    "Poisson": {"rate": [0.5, 4.0, 1.0, 2.0]},
    "Binomial": {"total_count": None, "probs": [0.3, 0.8, 0.5, 0.1]},
    "Categorical": {"probs": _CAT},
    "OneHotCategorical": {"probs": _CAT},
    "Dirichlet": {"concentration": [[0.5, 2.0, 1.0], [1.0, 1.0, 3.0], [4.0, 0.3, 2.0],
                                    [1.0, 1.0, 1.0]]},
    "MultivariateNormal": {"loc": _RNG.normal(size=(4, 3)), "covariance_matrix": _spd(4, 3)},
    "LowRankMultivariateNormal": {"loc": _RNG.normal(size=(4, 3)),
                                  "cov_factor": _RNG.normal(size=(4, 3, 2)),
                                  "cov_diag": _RNG.uniform(0.5, 2.0, size=(4, 3))},
}


def _grid(name, which):
    """The parameters of ``name`` on the 4 x 4 grid: p varies along the last batch axis,
    q along the first."""
    out = {}
    for key, value in PARAMS[name].items():
        if value is None:
            out[key] = 10.0
            continue
        value = np.asarray(value, dtype=np.float64)
        x = value[None] if which == "p" else value[:, None]
        out[key] = np.broadcast_to(x, (4, 4) + value.shape[1:]).copy()
    return out


def _make(lib, name, params):
    mod = D if lib is ember else TD
    conv = ember.tensor if lib is ember else torch.tensor
    kw = {k: (v if isinstance(v, float) else conv(v)) for k, v in params.items()}
    return getattr(mod, name)(**kw)


def _pairs():
    out = []
    for tp, tq in tkl._KL_REGISTRY:
        if tp.__name__ in PARAMS and tq.__name__ in PARAMS:
            out.append((tp.__name__, tq.__name__))
    return sorted(out)


PAIRS = _pairs()

# PyTorch 2.13 calls these infinite also when the supports only touch ([0, 1] against
# Uniform(0, 1)); ember returns the finite value (checked against quadrature below)
_TORCH_BOUNDARY_INF = {("ContinuousBernoulli", "Uniform"): (0, slice(None)),
                       ("Uniform", "ContinuousBernoulli"): (slice(None), 0)}


def test_registry_has_every_torch_pair():
    # (pairs that other tests register for their own subclasses left out)
    names = {(a.__name__, b.__name__) for a, b in ekl._KL_REGISTRY
             if a.__module__.startswith("ember.") and b.__module__.startswith("ember.")}
    want = {(a.__name__, b.__name__) for a, b in tkl._KL_REGISTRY}
    assert sorted(want - names) == []
    assert sorted(names - want) == [("LogNormal", "LogNormal")]  # torch gets it by transforms


def test_the_grid_covers_the_concrete_pairs():
    abstract = {"ExponentialFamily", "TransformedDistribution", "Independent"}
    concrete = {(a.__name__, b.__name__) for a, b in tkl._KL_REGISTRY
                if a.__name__ not in abstract and b.__name__ not in abstract}
    assert concrete == set(PAIRS)


@pytest.mark.parametrize("pname,qname", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_kl_matches_torch(pname, qname):
    pe, pt = (_make(lib, pname, _grid(pname, "p")) for lib in (ember, torch))
    qe, qt = (_make(lib, qname, _grid(qname, "q")) for lib in (ember, torch))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = D.kl_divergence(pe, qe).detach().numpy()
        want = TD.kl_divergence(pt, qt).detach().numpy()
    assert got.shape == want.shape == (4, 4)
    assert got.dtype == np.float64
    if (pname, qname) in _TORCH_BOUNDARY_INF:
        where = _TORCH_BOUNDARY_INF[pname, qname]
        assert np.all(np.isinf(want[where])) and np.all(np.isfinite(got[where]))
        want = want.copy()
        want[where] = got[where]
    assert_close(got, want, rtol=1e-9, atol=1e-11, equal_nan=True)
    assert not np.any(np.isnan(got))


def test_kl_infinite_cases():
    # supports that don't nest
    p = D.Uniform(ember.tensor([-0.5, 0.2]), ember.tensor([0.5, 1.2]))
    for q in (D.Beta(ember.tensor(2.0), ember.tensor(3.0)),
              D.ContinuousBernoulli(ember.tensor(0.3))):
        assert np.all(np.isinf(D.kl_divergence(p, q).numpy())), type(q).__name__
    for q in (D.Exponential(ember.tensor(1.0)), D.Gamma(ember.tensor(2.0), ember.tensor(1.0))):
        kl = D.kl_divergence(p, q).numpy()
        assert np.isinf(kl[0]) and np.isfinite(kl[1]), type(q).__name__
    pareto = D.Pareto(ember.tensor([1.0, 1.0, 1.0]), ember.tensor([0.5, 1.5, 2.5]))
    kl_exp = D.kl_divergence(pareto, D.Exponential(ember.tensor(1.0))).numpy()
    kl_norm = D.kl_divergence(pareto, D.Normal(ember.tensor(0.0), ember.tensor(1.0))).numpy()
    assert np.isinf(kl_exp[0]) and np.all(np.isfinite(kl_exp[1:]))
    assert np.all(np.isinf(kl_norm[:2])) and np.isfinite(kl_norm[2])
    assert np.isinf(float(D.kl_divergence(D.Beta(ember.tensor(2.0), ember.tensor(3.0)),
                                          D.Pareto(ember.tensor(0.1), ember.tensor(2.0)))))


def test_kl_continuous_bernoulli_uniform_boundary_by_quadrature():
    integrate = pytest.importorskip("scipy.integrate")
    for lam in (0.2, 0.5, 0.9):
        cb = D.ContinuousBernoulli(ember.tensor(lam, dtype=ember.float64))
        u = D.Uniform(ember.tensor(0.0, dtype=ember.float64),
                      ember.tensor(1.0, dtype=ember.float64))

        def logp(x, cb=cb):
            return float(cb.log_prob(ember.tensor(x, dtype=ember.float64)))

        want_pq = integrate.quad(lambda x: math.exp(logp(x)) * logp(x), 0, 1)[0]
        want_qp = integrate.quad(lambda x: -logp(x), 0, 1)[0]
        assert_close(float(D.kl_divergence(cb, u)), want_pq, rtol=1e-8, atol=1e-10)
        assert_close(float(D.kl_divergence(u, cb)), want_qp, rtol=1e-8, atol=1e-10)


# -- the exponential-family fallback --------------------------------------------------------

EF_CASES = [
    ("Normal", {"loc": [0.0, 1.0], "scale": [1.0, 2.0]},
     {"loc": [0.5, -1.0], "scale": [2.0, 0.7]}),
    ("Gamma", {"concentration": [2.0, 0.7], "rate": [1.0, 2.0]},
     {"concentration": [1.5, 4.0], "rate": [2.0, 1.0]}),
    ("Exponential", {"rate": [1.0, 2.0]}, {"rate": [3.0, 0.5]}),
    ("Poisson", {"rate": [2.0, 5.0]}, {"rate": [3.0, 0.4]}),
    ("Bernoulli", {"probs": [0.3, 0.8]}, {"probs": [0.5, 0.1]}),
    ("ContinuousBernoulli", {"probs": [0.3, 0.8]}, {"probs": [0.6, 0.1]}),
    ("Beta", {"concentration1": [2.0, 0.7], "concentration0": [1.0, 2.0]},
     {"concentration1": [1.5, 4.0], "concentration0": [2.0, 1.0]}),
    ("Dirichlet", {"concentration": [[2.0, 0.7, 1.0]]}, {"concentration": [[1.5, 4.0, 0.3]]}),
]


def test_exponential_families_as_torch():
    for name in TD.__all__:
        t = getattr(TD, name)
        if isinstance(t, type) and issubclass(t, TD.Distribution):
            assert issubclass(getattr(D, name), D.ExponentialFamily) == \
                issubclass(t, TD.ExponentialFamily), name


@pytest.mark.parametrize("name,sp,sq", EF_CASES, ids=[c[0] for c in EF_CASES])
def test_expfamily_bregman_matches_closed_form(name, sp, sq):
    def make(lib, spec):
        conv = ember.tensor if lib is ember else torch.tensor
        mod = D if lib is ember else TD
        return getattr(mod, name)(**{k: conv(np.asarray(v, dtype=np.float64))
                                     for k, v in spec.items()})

    pe, qe = make(ember, sp), make(ember, sq)
    pt, qt = make(torch, sp), make(torch, sq)
    got = ekl._kl_expfamily_expfamily(pe, qe).detach().numpy()
    assert_close(got, D.kl_divergence(pe, qe).numpy(), rtol=1e-9, atol=1e-12)
    assert_close(got, tkl._kl_expfamily_expfamily(pt, qt).detach().numpy(), rtol=1e-9,
                 atol=1e-12)


def test_expfamily_fallback_dispatch_and_errors():
    # Wishart has no closed form registered in either library: both use the fallback
    cov1, cov2 = _spd(1, 3)[0], _spd(1, 3)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pe = D.Wishart(ember.tensor(5.0, dtype=ember.float64),
                       covariance_matrix=ember.tensor(cov1))
        qe = D.Wishart(ember.tensor(7.5, dtype=ember.float64),
                       covariance_matrix=ember.tensor(cov2))
        pt = TD.Wishart(torch.tensor(5.0, dtype=torch.float64),
                        covariance_matrix=torch.tensor(cov1))
        qt = TD.Wishart(torch.tensor(7.5, dtype=torch.float64),
                        covariance_matrix=torch.tensor(cov2))
        got = D.kl_divergence(pe, qe)
        assert_close(got.detach().numpy(), TD.kl_divergence(pt, qt).detach().numpy(),
                     rtol=1e-9, atol=1e-12)
    # the closed form: KL(W(n1, S1) || W(n2, S2))
    p, n1, n2 = 3, 5.0, 7.5
    s2inv_s1 = np.linalg.solve(cov2, cov1)
    from scipy.special import multigammaln, psi
    mvdig = sum(psi(n1 / 2 - i / 2) for i in range(p))
    want = (-n2 / 2 * np.linalg.slogdet(s2inv_s1)[1] + n1 / 2 * (np.trace(s2inv_s1) - p)
            + multigammaln(n2 / 2, p) - multigammaln(n1 / 2, p) + (n1 - n2) / 2 * mvdig)
    assert_close(float(got), want, rtol=1e-9, atol=1e-12)
    with pytest.raises(NotImplementedError) as ee:
        ekl._kl_expfamily_expfamily(D.Normal(ember.tensor(0.0), ember.tensor(1.0)),
                                    D.Gamma(ember.tensor(1.0), ember.tensor(1.0)))
    with pytest.raises(NotImplementedError) as et:
        tkl._kl_expfamily_expfamily(TD.Normal(torch.tensor(0.0), torch.tensor(1.0)),
                                    TD.Gamma(torch.tensor(1.0), torch.tensor(1.0)))
    assert str(ee.value).split()[:6] == str(et.value).split()[:6]


def test_expfamily_fallback_batched_matrix_parameter():
    # a batch of Wisharts: each KL its own (the scalar natural parameter is not summed over
    # the batch)
    cov = _spd(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pe = D.Wishart(ember.tensor([5.0, 6.0], dtype=ember.float64),
                       covariance_matrix=ember.tensor(cov))
        qe = D.Wishart(ember.tensor([7.5, 4.0], dtype=ember.float64),
                       covariance_matrix=ember.tensor(cov[::-1].copy()))
        got = D.kl_divergence(pe, qe).detach().numpy()
        for i in range(2):
            one = D.kl_divergence(
                D.Wishart(pe.df[i], covariance_matrix=pe.covariance_matrix[i]),
                D.Wishart(qe.df[i], covariance_matrix=qe.covariance_matrix[i]))
            assert_close(got[i], float(one), rtol=1e-10, atol=1e-12)


def test_lowrank_kl_gradients_match_torch():
    loc = _RNG.normal(size=3)
    w, d = _RNG.normal(size=(3, 2)), _RNG.uniform(0.5, 2.0, size=3)
    cov = _spd(1, 3)[0]
    for order in ("lr-mvn", "mvn-lr", "lr-lr"):
        grads = []
        for lib in (ember, torch):
            mod = D if lib is ember else TD
            conv = ember.tensor if lib is ember else torch.tensor
            lw = conv(w).requires_grad_()
            lc = conv(cov).requires_grad_()
            lr = mod.LowRankMultivariateNormal(conv(loc), lw, conv(d))
            mvn = mod.MultivariateNormal(conv(-loc), covariance_matrix=lc)
            lr2 = mod.LowRankMultivariateNormal(conv(-loc), conv(w[::-1].copy()),
                                                conv(d[::-1].copy()))
            pair = {"lr-mvn": (lr, mvn), "mvn-lr": (mvn, lr), "lr-lr": (lr, lr2)}[order]
            mod.kl_divergence(*pair).backward()
            grads.append([lw.grad.detach().numpy().copy(),
                          (lc.grad.detach().numpy().copy() if lc.grad is not None else None)])
        for a, b in zip(grads[0], grads[1], strict=True):
            if b is None:
                continue
            assert_close(a, b, rtol=1e-8, atol=1e-10)
