"""ember.special beyond the op database: accuracy over wide ranges against SciPy, the
gradients that exist only in one argument, errors, and PyTorch's edge values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember.testing import assert_close

sp = pytest.importorskip("scipy.special")


def _t(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


_WIDE = np.concatenate([np.linspace(-60, 60, 2401), np.geomspace(1e-8, 700, 400)])


@pytest.mark.parametrize("name,ref,xs,rtol,atol", [
    ("i0e", sp.i0e, _WIDE, 1e-14, 1e-300),
    ("i1e", sp.i1e, _WIDE, 1e-14, 1e-300),
    ("modified_bessel_i0", sp.i0, _WIDE, 1e-14, 1e-300),
    ("modified_bessel_i1", sp.i1, _WIDE, 1e-14, 1e-300),
    ("modified_bessel_k0", sp.k0, np.abs(_WIDE), 1e-13, 1e-300),
    ("modified_bessel_k1", sp.k1, np.abs(_WIDE), 1e-13, 1e-300),
    ("scaled_modified_bessel_k0", sp.k0e, np.abs(_WIDE), 1e-13, 1e-300),
    ("scaled_modified_bessel_k1", sp.k1e, np.abs(_WIDE), 1e-13, 1e-300),
    ("bessel_j0", sp.j0, _WIDE, 1e-10, 1e-14),
    ("bessel_j1", sp.j1, _WIDE, 1e-10, 1e-14),
    ("bessel_y0", sp.y0, np.abs(_WIDE), 1e-10, 1e-14),
    ("bessel_y1", sp.y1, np.abs(_WIDE), 1e-10, 1e-14),
    ("airy_ai", lambda x: sp.airy(x)[0], np.linspace(-60, 40, 2001), 1e-10, 1e-13),
    ("erfcx", sp.erfcx, np.linspace(-26, 1e3, 4001), 1e-13, 0),
    ("log_ndtr", sp.log_ndtr, np.linspace(-1e3, 30, 4001), 1e-13, 0),
    ("ndtri", sp.ndtri, np.concatenate([np.geomspace(1e-300, 0.5, 500),
                                        1 - np.geomspace(1e-16, 0.5, 300)]), 1e-14, 0),
])
def test_accuracy_against_scipy(name, ref, xs, rtol, atol):
    got = getattr(ember.special, name)(_t(xs)).numpy()
    with np.errstate(all="ignore"):
        expected = ref(xs)
    assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def test_zeta_and_polygamma_wide():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(1.01, 60, 500), [2.0, 3.0, 4.0]])
    q = np.concatenate([rng.uniform(0.01, 50, 500), [1.0, 1.0, -1.5]])
    assert_close(ember.special.zeta(_t(x), _t(q)).numpy(), sp.zeta(x, q), rtol=1e-13, atol=0)
    assert ember.special.zeta(2.0, _t([1.0])).item() == pytest.approx(math.pi ** 2 / 6, 1e-15)
    # poles and domain as Cephes: inf at x == 1 and q a non-positive integer, nan for x < 1
    out = ember.special.zeta(_t([1.0, 0.5, 2.0, 2.5]), _t([1.0, 1.0, -2.0, -1.5])).numpy()
    assert np.isinf(out[0]) and np.isnan(out[1]) and np.isinf(out[2]) and np.isnan(out[3])
    xs = rng.uniform(-4.9, 8, 300)
    for n in (2, 3, 6):
        assert_close(ember.special.polygamma(n, _t(xs)).numpy(), sp.polygamma(n, xs),
                     rtol=1e-11, atol=0)


def test_gammainc_wide():
    rng = np.random.default_rng(1)
    a = np.concatenate([rng.uniform(1e-3, 30, 400), rng.uniform(100, 3000, 100)])
    x = np.concatenate([rng.uniform(0, 60, 400), a[400:] * rng.uniform(0.8, 1.2, 100)])
    assert_close(ember.special.gammainc(_t(a), _t(x)).numpy(), sp.gammainc(a, x),
                 rtol=1e-10, atol=1e-15)
    assert_close(ember.special.gammaincc(_t(a), _t(x)).numpy(), sp.gammaincc(a, x),
                 rtol=1e-10, atol=1e-15)
    edges_a = np.array([0.0, 1.0, 1.0, 2.0, -1.0, 1.0])
    edges_x = np.array([1.0, 0.0, np.inf, -1.0, 1.0, np.nan])
    assert_close(ember.igamma(_t(edges_a), _t(edges_x)).numpy(), sp.gammainc(edges_a, edges_x),
                 equal_nan=True)


def test_one_argument_gradients():
    q = _t([0.7, 1.5, 3.0]).requires_grad_()
    assert ember.autograd.gradcheck(lambda q: ember.special.zeta(2.5, q), (q,))
    x = _t([0.3, 1.5, 4.0]).requires_grad_()
    a = _t([0.5, 2.0, 3.5])
    assert ember.autograd.gradcheck(lambda x: ember.special.gammainc(a, x), (x,))
    assert ember.autograd.gradcheck(lambda x: ember.special.gammaincc(a, x), (x,))
    s = _t([2.0, 3.0]).requires_grad_()
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        ember.special.zeta(s, _t([1.0, 2.0])).sum().backward()
    with pytest.raises(NotImplementedError, match="igamma: input"):
        ember.special.gammainc(s, _t([1.0, 2.0])).sum().backward()


def test_nondifferentiable_functions():
    x = _t([0.5, 1.5]).requires_grad_()
    for name in ("bessel_j0", "bessel_y1", "modified_bessel_i0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "spherical_bessel_j0", "airy_ai"):
        assert not getattr(ember.special, name)(x).requires_grad, name
    assert not ember.special.chebyshev_polynomial_t(x, 3).requires_grad
    assert ember.special.i0(x).requires_grad


def test_higher_order_gradients():
    x = _t([0.4, 1.3, 2.2]).requires_grad_()
    for fn in (ember.special.i0, ember.special.i1, ember.special.ndtr, ember.special.erfcx,
               ember.special.log_ndtr, lambda t: ember.special.polygamma(1, t + 1)):
        assert ember.autograd.gradgradcheck(fn, (x,))


def test_errors():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not support negative n"):
        ember.special.polygamma(-1, x)
    # PyTorch 2.13 does not check mvlgamma's domain: lgamma(0) in the sum gives inf
    assert ember.mvlgamma(x, 4).tolist()[0] == math.inf
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ember.mvlgamma(x, 0)
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        ember.special.i0e(ember.tensor([1 + 1j]))
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember.tensor([1, 2]).xlogy_(ember.tensor([1.0, 2.0]))


def test_dtypes_and_methods():
    i = ember.tensor([1, 2, 3])
    assert ember.special.i0(i).dtype == ember.float32
    assert ember.special.chebyshev_polynomial_t(i, i).dtype == ember.float32
    h = ember.tensor([0.5, 1.5], dtype=ember.float16)
    assert ember.special.erfcx(h).dtype == ember.float16
    x = ember.tensor([0.5, 1.5, 2.5], dtype=ember.float64)
    assert_close(x.polygamma(2), ember.special.polygamma(2, x))
    y = x.clone()
    y.polygamma_(1)
    assert_close(y, ember.special.polygamma(1, x))
    y = x.clone() + 1
    y.mvlgamma_(2)
    assert_close(y, ember.special.multigammaln(x + 1, 2))
    y = x.clone()
    y.i0_()
    assert_close(y, ember.i0(x))
    y = x.clone()
    y.igamma_(2.0)
    assert_close(y, ember.igamma(x, ember.tensor(2.0, dtype=ember.float64)))
    assert_close(ember.special.xlogy(2.0, x), 2.0 * x.log())
    assert ember.special.psi is ember.special.digamma
    assert ember.special.expit(x).numpy() == pytest.approx(1 / (1 + np.exp(-x.numpy())))


def test_polynomial_special_cases():
    x = ember.tensor([1.0, -1.0, 0.3, 0.3], dtype=ember.float64)
    n = ember.tensor([5.0, 5.0, -1.0, 20.0], dtype=ember.float64)
    t = ember.special.chebyshev_polynomial_t(x, n).numpy()
    assert list(t[:3]) == [1.0, -1.0, 0.0]
    assert t[3] == pytest.approx(math.cos(20 * math.acos(0.3)), abs=1e-13)
    u = ember.special.chebyshev_polynomial_u(x, n).numpy()
    assert list(u[:2]) == [6.0, -6.0]
    assert np.isnan(ember.special.hermite_polynomial_h(x, 600.0).numpy()).all()
    assert ember.special.laguerre_polynomial_l(0.0, ember.tensor([7.0])).item() == 1.0
