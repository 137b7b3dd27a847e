"""CorrCholeskyTransform, LKJCholesky and Wishart against NumPy and SciPy: Wishart
densities, entropies and moments against scipy.stats.wishart, the 2 x 2 LKJ density
against its Beta closed form, the transform's log-det-Jacobian against a finite-difference
Jacobian, and float64 gradchecks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.testing import assert_close

stats = pytest.importorskip("scipy.stats")


def t(x):
    return ember.tensor(np.asarray(x, dtype=np.float64))


def _spd(rng, p):
    a = rng.normal(size=(p, p))
    return a @ a.T + p * np.eye(p)


@pytest.mark.parametrize("p,df", [(2, 2.5), (3, 3.0), (3, 7.5), (4, 20.0)])
def test_wishart_against_scipy(p, df):
    rng = np.random.default_rng(p)
    cov = _spd(rng, p)
    ref = stats.wishart(df=df, scale=cov)
    values = ref.rvs(size=5, random_state=rng)
    for kw in ({"covariance_matrix": t(cov)}, {"precision_matrix": t(np.linalg.inv(cov))},
               {"scale_tril": t(np.linalg.cholesky(cov))}):
        d = D.Wishart(t(df), **kw)
        assert_close(d.log_prob(t(values)).numpy(), ref.logpdf(values.transpose(1, 2, 0)),
                     rtol=1e-9, atol=1e-9)
        assert_close(d.entropy().numpy(), np.asarray(ref.entropy()), rtol=1e-10, atol=1e-12)
        assert_close(d.mean.numpy(), ref.mean(), rtol=1e-12, atol=1e-12)
        assert_close(d.variance.numpy(), ref.var(), rtol=1e-12, atol=1e-12)
        if df > p + 1:
            assert_close(d.mode.numpy(), ref.mode(), rtol=1e-12, atol=1e-12)
        else:
            assert np.isnan(d.mode.numpy()).all()


def test_wishart_entropy_and_mean_of_samples():
    # Monte-Carlo: -E[log p(W)] is the entropy, E[W] = df Sigma
    rng = np.random.default_rng(0)
    cov = _spd(rng, 3) / 3
    d = D.Wishart(t(6.0), covariance_matrix=t(cov))
    ember.manual_seed(0)
    w = d.rsample((20000,))
    lp = d.log_prob(w).numpy()
    assert abs(-lp.mean() - float(d.entropy())) < 4 * lp.std() / math.sqrt(20000)
    assert_close(w.numpy().mean(0), 6.0 * cov, rtol=0.03, atol=0.05)


def test_wishart_gradcheck():
    rng = np.random.default_rng(1)
    cov, value = _spd(rng, 3), _spd(rng, 3) * 4

    def f(df, a):
        c = a @ a.transpose(-2, -1) + ember.eye(3, dtype=ember.float64)
        d = D.Wishart(df, covariance_matrix=c)
        return d.log_prob(t(value)) + d.entropy()

    a = t(np.linalg.cholesky(cov)).requires_grad_()
    assert ember.autograd.gradcheck(f, (t(5.5).requires_grad_(), a))


@pytest.mark.parametrize("eta", [0.3, 1.0, 2.5])
def test_lkj_2x2_is_a_scaled_beta(eta):
    # L = [[1, 0], [r, sqrt(1 - r^2)]] with r ~ Beta(eta, eta) on (-1, 1)
    r = np.array([-0.95, -0.3, 0.0, 0.4, 0.8])
    value = np.zeros((5, 2, 2))
    value[:, 0, 0], value[:, 1, 0], value[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    got = D.LKJCholesky(2, t(eta)).log_prob(t(value)).numpy()
    assert_close(got, stats.beta(eta, eta, loc=-1, scale=2).logpdf(r), rtol=1e-11, atol=1e-12)
    ember.manual_seed(0)
    s = D.LKJCholesky(2, t(eta)).sample((4000,)).numpy()[:, 1, 0]
    assert stats.kstest(s, stats.beta(eta, eta, loc=-1, scale=2).cdf).pvalue > 1e-3


def test_lkj_3x3_density_integrates_to_one():
    # over correlation matrices parameterized by the Cholesky rows' off-diagonal entries
    # (l21, l31, l32) with l21^2 < 1 and l31^2 + l32^2 < 1, a Monte-Carlo integral
    rng = np.random.default_rng(2)
    n = 200000
    x = rng.uniform(-1, 1, size=(n, 3))
    ok = (x[:, 1] ** 2 + x[:, 2] ** 2) < 1
    x = x[ok]
    value = np.zeros((len(x), 3, 3))
    value[:, 0, 0] = 1
    value[:, 1, 0], value[:, 1, 1] = x[:, 0], np.sqrt(1 - x[:, 0] ** 2)
    value[:, 2, 0], value[:, 2, 1] = x[:, 1], x[:, 2]
    value[:, 2, 2] = np.sqrt(1 - x[:, 1] ** 2 - x[:, 2] ** 2)
    dens = np.exp(D.LKJCholesky(3, t(1.8)).log_prob(t(value)).numpy())
    integral = dens.sum() * 8 / n
    assert abs(integral - 1) < 0.02


def test_lkj_gradcheck():
    value = D.LKJCholesky(4, t(1.0)).sample((3,))
    assert ember.autograd.gradcheck(
        lambda c: D.LKJCholesky(4, c).log_prob(value), (t([0.7, 2.0]).reshape(2, 1)
                                                         .requires_grad_(),))


def _jacobian_fd(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, -1)


@pytest.mark.parametrize("n", [1, 3, 6, 10])
def test_corr_cholesky_transform_against_numpy(n):
    tr = D.transforms.CorrCholeskyTransform()
    x = np.random.default_rng(n).normal(size=n)
    y = tr(t(x))
    d = y.shape[-1]
    rows, cols = np.tril_indices(d, -1)
    yn = y.numpy()
    assert_close(np.linalg.norm(yn, axis=-1), np.ones(d), rtol=1e-12, atol=1e-12)
    assert np.all(np.diagonal(yn) > 0) and np.allclose(np.triu(yn, 1), 0)
    assert_close(tr.inv(y).numpy(), x, rtol=1e-9, atol=1e-9)
    jac = _jacobian_fd(lambda v: tr(t(v)).numpy()[rows, cols], x)
    assert_close(float(tr.log_abs_det_jacobian(t(x), y)), np.linalg.slogdet(jac)[1],
                 rtol=1e-6, atol=1e-6)
    assert ember.autograd.gradcheck(lambda v: tr(v), (t(x).requires_grad_(),))
    # the inverse of the biject_to transform of corr_cholesky round-trips LKJ draws
    s = D.LKJCholesky(d, t(1.5)).sample((4,)) if d >= 2 else None
    if s is not None:
        back = D.biject_to(D.constraints.corr_cholesky)
        assert_close(back(back.inv(s)).numpy(), s.numpy(), rtol=1e-9, atol=1e-9)


def test_tril_vec_helpers():
    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    m = np.arange(32.0).reshape(2, 4, 4)
    for diag in (-2, -1, 0, 1):
        r, c = np.tril_indices(4, diag)
        v = tril_matrix_to_vec(t(m), diag)
        assert_close(v.numpy(), m[:, r, c], rtol=0, atol=0)
        back = vec_to_tril_matrix(v, diag).numpy()
        assert_close(back, np.tril(m, diag), rtol=0, atol=0)
    with pytest.raises(ValueError, match="outside"):
        tril_matrix_to_vec(t(m), 4)
    with pytest.raises(ValueError, match="cannot be expressed"):
        vec_to_tril_matrix(t(np.zeros(4)), -1)


def test_zero_size_nan_and_noncontiguous_inputs():
    tr = D.transforms.CorrCholeskyTransform()
    empty = ember.zeros(0, 3, dtype=ember.float64)
    assert tuple(tr(empty).shape) == (0, 3, 3)
    assert tuple(tr.inv(tr(empty)).shape) == (0, 3)
    assert tuple(tr.log_abs_det_jacobian(empty, tr(empty)).shape) == (0,)
    x = ember.tensor(np.random.default_rng(3).normal(size=(6, 4))).t()  # (4, 6), strided
    assert_close(tr(x).numpy(), tr(x.contiguous()).numpy(), rtol=0, atol=0)
    y = tr(t([0.3, math.nan, 0.1])).numpy()
    assert np.isnan(y[2, :2]).all() and np.isfinite(y[1]).all()
    w = D.Wishart(t(np.full(0, 5.0)), covariance_matrix=ember.eye(3, dtype=ember.float64))
    assert tuple(w.rsample((2,)).shape) == (2, 0, 3, 3)
    assert tuple(w.log_prob(ember.eye(3, dtype=ember.float64)).shape) == (0,)
    assert tuple(w.entropy().shape) == (0,)
    lkj = D.LKJCholesky(3, t(np.ones(0)))
    assert tuple(lkj.sample((2,)).shape) == (2, 0, 3, 3)
    assert tuple(lkj.log_prob(ember.eye(3, dtype=ember.float64)).shape) == (0,)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    strided = t(np.asfortranarray(cov)).t()
    assert_close(D.Wishart(t(4.0), covariance_matrix=strided).entropy().numpy(),
                 np.asarray(stats.wishart(df=4.0, scale=cov).entropy()), rtol=1e-10,
                 atol=1e-12)


def test_wishart_number_df_with_batched_matrices():
    cov = np.stack([np.eye(2), [[2.0, 0.5], [0.5, 1.0]]])
    d = D.Wishart(3.5, covariance_matrix=t(cov))
    assert tuple(d.df.shape) == (2,)
    assert_close(d.mean.numpy(), 3.5 * cov, rtol=1e-12, atol=1e-12)
    want = np.stack([stats.wishart(df=3.5, scale=c).var() for c in cov])
    assert_close(d.variance.numpy(), want, rtol=1e-12, atol=1e-12)
    assert_close(d.mode.numpy(), 0.5 * cov, rtol=1e-12, atol=1e-12)
