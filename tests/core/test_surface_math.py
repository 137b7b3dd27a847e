"""The parts of the math surface (issue 15) that the op database does not drive: the
predicates, the top-level in-place functions, the in-place view changes, binomial's
distribution and the errors of bad input. Against NumPy and closed forms; the comparison
with PyTorch is tests/interop/test_surface_math_torch.py."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

import ember
from ember._ops.inplace_functions import NAMES as INPLACE_FUNCTIONS


def test_predicates():
    assert ember.is_nonzero(ember.tensor([2])) is True
    assert ember.is_nonzero(ember.tensor([[0.0]])) is False
    assert ember.is_nonzero(ember.tensor([math.nan])) is True
    with pytest.raises(RuntimeError, match="more than one value"):
        ember.is_nonzero(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="no values"):
        ember.tensor([]).is_nonzero()
    x = ember.zeros(2, 3)
    assert ember.is_same_size(x, ember.ones(2, 3, dtype=ember.int64)) and x.is_same_size(x)
    assert not ember.is_same_size(x, x.t())
    assert [ember.is_signed(ember.zeros(1, dtype=d)) for d in
            (ember.uint8, ember.bool, ember.int8, ember.float16, ember.complex64)] == \
        [False, False, True, True, True]
    for fn in (ember.is_nonzero, ember.is_signed):
        with pytest.raises(TypeError, match="must be Tensor"):
            fn(1)


@pytest.mark.parametrize("name", INPLACE_FUNCTIONS)
def test_top_level_in_place_functions_are_the_methods(name):
    method = getattr(ember.Tensor, name)
    fn = getattr(ember, name)
    assert name in ember.__all__ and fn.__name__ == name
    params = list(inspect.signature(fn).parameters)
    assert params[0] == "input"
    assert params[1:] == list(inspect.signature(method).parameters)[1:]


def test_top_level_in_place_functions_write_into_their_input():
    x = ember.tensor([-1.5, 0.25, 4.0])
    assert ember.abs_(x) is x
    np.testing.assert_array_equal(x.numpy(), [1.5, 0.25, 4.0])
    ember.clamp_(x, max=1.0)
    np.testing.assert_array_equal(x.numpy(), [1.0, 0.25, 1.0])
    ember.sqrt_(x)
    np.testing.assert_allclose(x.numpy(), [1.0, 0.5, 1.0])
    i = ember.tensor([12, 18])
    ember.gcd_(i, ember.tensor([8, 27]))
    np.testing.assert_array_equal(i.numpy(), [4, 9])
    ember.lcm_(i, ember.tensor([6, 6]))
    np.testing.assert_array_equal(i.numpy(), [12, 18])
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember.sin_(ember.tensor([1, 2]))


def test_in_place_view_changes_keep_the_tensor_and_its_storage():
    base = ember.arange(6.0).reshape(2, 3)
    row = base[1]
    assert row.unsqueeze_(0) is row and tuple(row.shape) == (1, 3)
    row.mul_(10)
    np.testing.assert_array_equal(base.numpy(), [[0, 1, 2], [30, 40, 50]])
    t = ember.arange(12.0).reshape(3, 4)
    t.t_()
    assert tuple(t.shape) == (4, 3) and not t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), np.arange(12.0).reshape(3, 4).T)
    b = ember.zeros(2, 3, 4)
    b.transpose_(0, 2).swapaxes_(0, 1).swapdims_(1, 2)
    assert tuple(b.shape) == (3, 2, 4)
    s = ember.zeros(1, 3, 1)
    assert tuple(s.squeeze_(0).shape) == (3, 1) and tuple(s.squeeze_().shape) == (3,)
    with pytest.raises(RuntimeError, match="t_\\(\\) expects a tensor with <= 2"):
        ember.zeros(2, 2, 2).t_()
    with pytest.raises(IndexError):
        ember.zeros(2, 3).transpose_(0, 2)


def test_in_place_view_changes_under_autograd():
    x = ember.arange(6.0, dtype=ember.float64).reshape(2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.unsqueeze_(0)
    y = x * 2
    y.t_()
    w = np.arange(6.0).reshape(3, 2)
    (y * ember.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * w.T)
    assert ember.autograd.gradcheck(lambda a: (a * 1).t_().unsqueeze_(1), (x,))


def test_binomial_distribution_and_edges():
    ember.manual_seed(1)
    n, p = 30.0, 0.4
    k = ember.binomial(ember.full((40000,), n, dtype=ember.float64),
                       ember.full((40000,), p, dtype=ember.float64)).numpy()
    assert k.dtype == np.float64 and (k == np.round(k)).all() and k.min() >= 0 and k.max() <= n
    assert abs(k.mean() - n * p) < 0.05 and abs(k.var() - n * p * (1 - p)) < 0.2
    edges = ember.binomial(ember.tensor([5.0, 5.0, -2.0, 7.5, math.nan, math.inf]),
                           ember.tensor([1.0, 0.0, 1.0, 2.0, 0.5, 0.5])).numpy()
    np.testing.assert_array_equal(edges, [5.0, 0.0, 0.0, 7.5, math.nan, math.nan])
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        ember.binomial(ember.tensor([1]), ember.tensor([0.5]))
    with pytest.raises(TypeError, match="prob"):
        ember.binomial(ember.tensor([1.0]), 0.5)


def test_cov_warns_and_matches_numpy_with_weights():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6))
    fw, aw = rng.integers(1, 4, 6), rng.uniform(0.2, 2.0, 6)
    got = ember.cov(ember.tensor(x), correction=2, fweights=ember.tensor(fw),
                    aweights=ember.tensor(aw))
    np.testing.assert_allclose(got.numpy(), np.cov(x, ddof=2, fweights=fw, aweights=aw),
                               rtol=1e-12)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert ember.cov(ember.ones(3, 1)).isnan().all()


def test_histogram_and_histogramdd_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(500)
    h, e = ember.histogram(ember.tensor(x), 13, density=True)
    nh, ne = np.histogram(x, 13, density=True)
    np.testing.assert_allclose(h.numpy(), nh, rtol=1e-12)
    np.testing.assert_allclose(e.numpy(), ne, rtol=1e-12, atol=1e-15)
    pts = rng.uniform(-1, 1, (200, 3))
    w = rng.uniform(0, 1, 200)
    r = ember.histogramdd(ember.tensor(pts), [2, 3, 4], weight=ember.tensor(w))
    nh, nes = np.histogramdd(pts, [2, 3, 4], weights=w)
    np.testing.assert_allclose(r.hist.numpy(), nh, rtol=1e-12)
    for a, b in zip(r.bin_edges, nes, strict=True):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-12, atol=1e-15)
    with pytest.raises(RuntimeError, match="is not finite"):
        ember.histogram(ember.tensor([1.0, math.inf]), 3)
    with pytest.raises(NotImplementedError, match="histogramdd"):
        ember.histogram(ember.tensor([1, 2]), 3)


def test_index_reduce_warns_once_and_checks_its_arguments():
    import ember._ops.index_reduce as mod

    mod._warned = False
    x = ember.ones(3, 2)
    with pytest.warns(UserWarning, match="in beta"):
        ember.index_reduce(x, 0, ember.tensor([0]), ember.ones(1, 2), "prod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.index_reduce(x, 0, ember.tensor([0]), ember.ones(1, 2), "prod")
    with pytest.raises(RuntimeError, match="Expected reduce to be one of"):
        ember.index_reduce(x, 0, ember.tensor([0]), ember.ones(1, 2), "sum")
    with pytest.raises(IndexError, match="index out of range"):
        x.index_reduce_(0, ember.tensor([3]), ember.ones(1, 2), "amax")


def test_unravel_index_and_triangle_indices_against_numpy():
    idx = np.arange(-24, 48).reshape(6, 12)
    got = ember.unravel_index(ember.tensor(idx), (2, 3, 4))
    for g, n in zip(got, np.unravel_index(idx % 24, (2, 3, 4)), strict=True):
        np.testing.assert_array_equal(g.numpy(), n)
    for row, col, k in [(4, 6, 0), (5, 3, -1), (3, 3, 2), (0, 2, 0)]:
        np.testing.assert_array_equal(ember.tril_indices(row, col, k).numpy(),
                                      np.stack(np.tril_indices(row, k, col)))
        np.testing.assert_array_equal(ember.triu_indices(row, col, k).numpy(),
                                      np.stack(np.triu_indices(row, k, col)))
    assert ember.tril_indices(3, 3, dtype=ember.int32).dtype == ember.int32
    with pytest.raises(NotImplementedError, match="tril_indices"):
        ember.tril_indices(3, 3, dtype=ember.float32)
