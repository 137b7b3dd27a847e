"""The CPU "sigmoid" kernel (ember._C._core.sigmoid_array): PyTorch's formula
1 / (1 + exp(-x)), silent on overflow and NaN, for every size, layout and float dtype."""

import warnings

import numpy as np
import pytest

import ember


def _reference(x):
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return 1 / (1 + np.exp(-x64))


@pytest.mark.parametrize("n", [0, 1, 7, 16384, 16385, 100_000])  # both sides of the loop limit
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_within_an_ulp(n, dtype):
    x = np.random.default_rng(n).uniform(-40, 40, n).astype(dtype)
    got = ember.tensor(x).sigmoid().numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, _reference(x), rtol=4 * np.finfo(dtype).eps, atol=0)


def test_nonfinite_inputs_are_silent():
    x = np.array([np.nan, np.inf, -np.inf, -1e4, 1e4, 0.0, -0.0], np.float32)
    for arr in (x, np.tile(x, 5000)):  # the compiled loop and NumPy's path
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = ember.sigmoid(ember.tensor(arr)).numpy()[:7]
        np.testing.assert_array_equal(got, [np.nan, 1, 0, 0, 1, 0.5, 0.5])


def test_shapes_layouts_and_dtypes():
    assert ember.tensor(np.float32(3.0)).sigmoid().shape == ()
    base = np.random.default_rng(0).standard_normal((6, 9)).astype(np.float32)
    t = ember.tensor(base).t()[::2]  # not contiguous
    np.testing.assert_allclose(t.sigmoid().numpy(), _reference(base.T[::2]), rtol=1e-6)
    h = ember.tensor(base.astype(np.float16)).sigmoid()
    assert h.dtype == ember.float16
    np.testing.assert_allclose(h.numpy().astype(np.float64), _reference(base), rtol=1e-3)
    z = ember.tensor(np.array([1 + 1j, -2 + 0.5j]))
    np.testing.assert_allclose(z.sigmoid().numpy(), 1 / (1 + np.exp(-z.numpy())))
    i = ember.tensor(np.array([0, 1, -2]))  # integers: the default float dtype
    assert i.sigmoid().dtype == ember.float32


def test_gradient():
    x = ember.tensor(np.linspace(-5, 5, 11), requires_grad=True)
    assert ember.autograd.gradcheck(ember.sigmoid, (x,))
    assert ember.autograd.gradgradcheck(ember.sigmoid, (x,))
