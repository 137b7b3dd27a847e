"""Gumbel is a transformed uniform, as in PyTorch (base_dist, transforms, rsample through
the transforms), with the closed forms checked against SciPy."""

import numpy as np
import pytest
import scipy.stats

import ember
from ember.distributions import Gumbel, TransformedDistribution, Uniform
from ember.distributions.transforms import AffineTransform


def test_gumbel_is_a_transformed_uniform():
    g = Gumbel(ember.tensor([1.0, 2.0]), ember.tensor([2.0, 0.5]))
    assert isinstance(g, TransformedDistribution)
    assert isinstance(g.base_dist, Uniform)
    assert len(g.transforms) == 4 and isinstance(g.transforms[-1], AffineTransform)
    assert g.has_rsample and g.batch_shape == (2,) and g.event_shape == ()
    assert Gumbel(0.0, 1.0).base_dist.low.item() == pytest.approx(np.finfo(np.float32).tiny)


def test_gumbel_closed_forms_against_scipy():
    loc, scale = np.array([1.0, -2.0]), np.array([2.0, 0.5])
    g = Gumbel(ember.tensor(loc), ember.tensor(scale))
    v = np.array([0.3, 5.0])
    ref = scipy.stats.gumbel_r(loc, scale)
    np.testing.assert_allclose(g.log_prob(ember.tensor(v)).numpy(), ref.logpdf(v), rtol=1e-12)
    np.testing.assert_allclose(g.cdf(ember.tensor(v)).numpy(), ref.cdf(v), rtol=1e-12)
    q = np.array([0.2, 0.9])
    np.testing.assert_allclose(g.icdf(ember.tensor(q)).numpy(), ref.ppf(q), rtol=1e-12)
    np.testing.assert_allclose(g.entropy().numpy(), ref.entropy(), rtol=1e-12)
    np.testing.assert_allclose(g.mean.numpy(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(g.variance.numpy(), ref.var(), rtol=1e-12)


def test_gumbel_rsample_moments_and_gradients():
    ember.manual_seed(0)
    loc = ember.tensor(1.5, dtype=ember.float64, requires_grad=True)
    scale = ember.tensor(0.7, dtype=ember.float64, requires_grad=True)
    x = Gumbel(loc, scale).rsample((20000,))
    assert abs(x.mean().item() - (1.5 + 0.7 * np.euler_gamma)) < 0.03
    x.mean().backward()
    # d E[x] / d loc = 1, d E[x] / d scale = Euler's constant (sample means of the pushforward)
    assert loc.grad.item() == pytest.approx(1.0)
    assert scale.grad.item() == pytest.approx(np.euler_gamma, abs=0.03)


def test_gumbel_expand_keeps_the_parameters():
    g = Gumbel(ember.tensor([1.0]), ember.tensor([2.0])).expand((3, 1))
    assert g.batch_shape == (3, 1) and g.loc.shape == (3, 1)
    assert g.sample().shape == (3, 1)


def test_multivariate_normal_precision_matrix_on_the_loc_device():
    cov = ember.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=ember.float64)
    m = ember.distributions.MultivariateNormal(ember.zeros(2, dtype=ember.float64), cov)
    assert m.precision_matrix.device == m.loc.device
    np.testing.assert_allclose(m.precision_matrix.numpy(), np.linalg.inv(cov.numpy()))
