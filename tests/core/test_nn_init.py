"""ember.nn.init: gains and fan computations, the deterministic fills, and statistical
checks of the random ones (moments and empirical CDFs against the target distribution,
with a seeded generator so the tests are deterministic)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn as nn
from ember.nn import init

N_ROWS, N_COLS = 200, 300  # 60,000 samples per statistical check


def gen(seed=0):
    return ember.Generator().manual_seed(seed)


def normal_cdf(x, mean=0.0, std=1.0):
    return 0.5 * (1.0 + math.erf((x - mean) / (std * math.sqrt(2.0))))


def max_cdf_gap(samples, cdf, points):
    """The largest gap between the empirical and the target CDF at ``points``."""
    s = np.sort(samples.ravel())
    return max(abs(np.searchsorted(s, p, side="right") / s.size - cdf(p)) for p in points)


# -- gains and fans --------------------------------------------------------------------------
@pytest.mark.parametrize("name, expected", [
    ("linear", 1), ("conv1d", 1), ("conv2d", 1), ("conv3d", 1), ("conv_transpose1d", 1),
    ("conv_transpose2d", 1), ("conv_transpose3d", 1), ("sigmoid", 1), ("tanh", 5.0 / 3),
    ("relu", math.sqrt(2.0)), ("leaky_relu", math.sqrt(2.0 / (1 + 0.01 ** 2))), ("selu", 0.75)])
def test_calculate_gain(name, expected):
    assert init.calculate_gain(name) == expected


def test_calculate_gain_param():
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("leaky_relu", 1) == 1.0
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")


@pytest.mark.parametrize("shape, fans", [
    ((3, 4), (4, 3)), ((5, 2, 3), (6, 15)), ((2, 3, 4, 5), (60, 40)), ((6, 1, 1, 1, 2), (2, 12)),
    ((0, 3), (3, 0))])
def test_fans(shape, fans):
    t = ember.empty(shape)
    assert init._calculate_fan_in_and_fan_out(t) == fans
    assert init._calculate_correct_fan(t, "fan_in") == fans[0]
    assert init._calculate_correct_fan(t, "FAN_OUT") == fans[1]


def test_fan_errors():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of "
                                         "\\['fan_in', 'fan_out'\\]"):
        init._calculate_correct_fan(ember.empty(2, 2), "fan_avg")


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=5),
       mode=st.sampled_from(["fan_in", "fan_out"]),
       nonlinearity=st.sampled_from(["relu", "leaky_relu", "tanh", "linear"]),
       a=st.floats(0.0, 1.0), seed=st.integers(0, 1000))
def test_kaiming_and_xavier_bounds(shape, mode, nonlinearity, a, seed):
    """The fans follow the shape (NumPy arithmetic) and every value lies in the bound."""
    t = ember.empty(*shape, dtype=ember.float64)
    fan_in = shape[1] * int(np.prod(shape[2:]))
    fan_out = shape[0] * int(np.prod(shape[2:]))
    assert init._calculate_fan_in_and_fan_out(t) == (fan_in, fan_out)
    gain = init.calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / (fan_in if mode == "fan_in" else fan_out))
    init.kaiming_uniform_(t, a=a, mode=mode, nonlinearity=nonlinearity, generator=gen(seed))
    assert np.abs(t.numpy()).max() <= bound
    bound = 1.5 * math.sqrt(6.0 / (fan_in + fan_out))
    init.xavier_uniform_(t, gain=1.5, generator=gen(seed))
    assert np.abs(t.numpy()).max() <= bound


# -- deterministic fills -------------------------------------------------------------------
def test_constant_ones_zeros():
    assert init.constant_(ember.empty(2), 0.5).tolist() == [0.5, 0.5]
    assert init.ones_(ember.empty(2)).tolist() == [1.0, 1.0]
    assert init.zeros_(ember.empty(2)).tolist() == [0.0, 0.0]
    t = ember.empty(3, dtype=ember.int64)
    assert init.constant_(t, 7).tolist() == [7, 7, 7]


@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (4, 4)])
def test_eye(shape):
    np.testing.assert_array_equal(init.eye_(ember.empty(shape)).numpy(), np.eye(*shape))


def test_dirac():
    w = init.dirac_(ember.empty(4, 2, 3)).numpy()
    expected = np.zeros((4, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1
    np.testing.assert_array_equal(w, expected)
    w = init.dirac_(ember.empty(4, 2, 3, 3), groups=2).numpy()
    expected = np.zeros((4, 2, 3, 3))
    for g in range(2):
        for d in range(2):
            expected[g * 2 + d, d, 1, 1] = 1
    np.testing.assert_array_equal(w, expected)
    w = init.dirac_(ember.empty(2, 3, 1, 2, 3)).numpy()
    expected = np.zeros((2, 3, 1, 2, 3))
    expected[0, 0, 0, 1, 1] = expected[1, 1, 0, 1, 1] = 1
    np.testing.assert_array_equal(w, expected)


def test_dirac_preserves_identity_through_a_convolution():
    """A 1-d convolution (written with NumPy) with a dirac_ kernel returns its input."""
    w = init.dirac_(ember.empty(3, 3, 5)).numpy()
    x = np.random.default_rng(0).standard_normal((3, 10))
    padded = np.pad(x, ((0, 0), (2, 2)))
    out = np.stack([sum(np.convolve(padded[c], w[o, c][::-1], "valid") for c in range(3))
                    for o in range(3)])
    np.testing.assert_allclose(out, x)


def test_deterministic_errors():
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(3))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are "
                                         "supported"):
        init.dirac_(ember.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.empty(3, 3, 3), 2)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are "
                                         "supported"):
        init.orthogonal_(ember.empty(3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(ember.empty(3), 0.1)


# -- random fills: statistics ------------------------------------------------------------------
def test_uniform():
    t = init.uniform_(ember.empty(N_ROWS, N_COLS), -2.0, 3.0, generator=gen()).numpy()
    assert t.min() >= -2.0 and t.max() < 3.0
    assert max_cdf_gap(t, lambda x: (x + 2.0) / 5.0, [-1.5, 0.0, 1.0, 2.5]) < 0.01
    t = init.uniform_(ember.empty(N_ROWS, N_COLS), generator=gen()).numpy()
    assert t.min() >= 0.0 and t.max() < 1.0 and abs(t.mean() - 0.5) < 0.01


def test_normal():
    t = init.normal_(ember.empty(N_ROWS, N_COLS), 1.5, 0.5, generator=gen()).numpy()
    assert abs(t.mean() - 1.5) < 0.01 and abs(t.std() - 0.5) < 0.01
    assert max_cdf_gap(t, lambda x: normal_cdf(x, 1.5, 0.5), [0.8, 1.2, 1.5, 2.0]) < 0.01


def truncated_normal_cdf(mean, std, a, b):
    lo, hi = normal_cdf(a, mean, std), normal_cdf(b, mean, std)
    return lambda x: (normal_cdf(min(max(x, a), b), mean, std) - lo) / (hi - lo)


@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0),    # the default: most draws accepted
    (0.0, 0.02, -0.04, 0.04),  # as used by vision transformers
    (0.0, 1.0, 2.0, 3.0),     # a window in the tail: the rejection-sampling path
    (1.0, 1.0, -0.5, 0.0),    # below the mean
])
def test_trunc_normal(mean, std, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # far windows warn, as in PyTorch
        t = init.trunc_normal_(ember.empty(N_ROWS, N_COLS), mean, std, a, b,
                               generator=gen()).numpy()
    assert t.min() >= a and t.max() <= b
    points = np.linspace(a, b, 7)[1:-1]
    assert max_cdf_gap(t, truncated_normal_cdf(mean, std, a, b), points) < 0.01


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\] in "
                                         "nn.init.trunc_normal_"):
        init.trunc_normal_(ember.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)


def test_xavier():
    t = ember.empty(N_ROWS, N_COLS)
    std = 2.0 * math.sqrt(2.0 / (N_ROWS + N_COLS))
    u = init.xavier_uniform_(t, gain=2.0, generator=gen()).numpy()
    bound = math.sqrt(3.0) * std
    assert np.abs(u).max() <= bound and abs(u.std() - std) < 0.01 * std * 3
    n = init.xavier_normal_(t, gain=2.0, generator=gen()).numpy()
    assert abs(n.std() - std) < 0.01 * std * 3 and abs(n.mean()) < 0.01 * std * 3


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity, a", [("relu", 0), ("leaky_relu", 0.2), ("tanh", 0)])
def test_kaiming(mode, nonlinearity, a):
    t = ember.empty(N_ROWS, N_COLS // 10, 2, 5)
    fan = (N_COLS // 10) * 10 if mode == "fan_in" else N_ROWS * 10
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    u = init.kaiming_uniform_(t, a, mode, nonlinearity, generator=gen()).numpy()
    assert np.abs(u).max() <= math.sqrt(3.0) * std
    assert abs(u.std() - std) < 0.03 * std
    n = init.kaiming_normal_(t, a, mode, nonlinearity, generator=gen()).numpy()
    assert abs(n.std() - std) < 0.03 * std
    assert max_cdf_gap(n, lambda x: normal_cdf(x, 0, std), [-std, 0.0, 0.5 * std]) < 0.01


def test_kaiming_zero_element_warns():
    t = ember.empty(0, 3)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(t) is t


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5), (6, 2, 2), (3, 2, 3, 2)])
def test_orthogonal(shape):
    t = init.orthogonal_(ember.empty(shape, dtype=ember.float64), gain=1.5, generator=gen())
    q = t.numpy().reshape(shape[0], -1)
    gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(gram, 2.25 * np.eye(gram.shape[0]), atol=1e-10)
    assert init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)


def test_orthogonal_half():
    t = init.orthogonal_(ember.empty(4, 4, dtype=ember.float16))
    assert t.dtype == ember.float16
    q = t.numpy().astype(np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=5e-3)


def test_sparse():
    t = init.sparse_(ember.empty(10, 7), 0.25, std=0.5, generator=gen()).numpy()
    assert ((t == 0).sum(axis=0) == 3).all()  # ceil(0.25 * 10) zeros per column
    big = init.sparse_(ember.empty(N_ROWS, N_COLS), 0.1, std=0.5, generator=gen()).numpy()
    nonzero = big[big != 0]
    assert abs(nonzero.std() - 0.5) < 0.01
    assert (init.sparse_(ember.empty(4, 3), 0.0) != 0).all()
    # the zero rows differ between columns
    zero_rows = {tuple(np.flatnonzero(big[:, j] == 0)) for j in range(N_COLS)}
    assert len(zero_rows) > N_COLS // 2


RANDOM_INITS = [
    (init.uniform_, ()), (init.normal_, ()), (init.trunc_normal_, ()),
    (init.xavier_uniform_, ()), (init.xavier_normal_, ()), (init.kaiming_uniform_, ()),
    (init.kaiming_normal_, ()), (init.orthogonal_, ()), (init.sparse_, (0.5,)),
]


@pytest.mark.parametrize("fn, args", RANDOM_INITS, ids=lambda v: getattr(v, "__name__", ""))
def test_generator_reproducible(fn, args):
    a = fn(ember.empty(5, 4), *args, generator=gen(3)).numpy()
    b = fn(ember.empty(5, 4), *args, generator=gen(3)).numpy()
    c = fn(ember.empty(5, 4), *args, generator=gen(4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_global_seed_reproducible():
    ember.manual_seed(7)
    a = init.kaiming_uniform_(ember.empty(5, 4)).numpy()
    ember.manual_seed(7)
    np.testing.assert_array_equal(a, init.kaiming_uniform_(ember.empty(5, 4)).numpy())


ALL_INITS = RANDOM_INITS + [(init.constant_, (0.3,)), (init.ones_, ()), (init.zeros_, ()),
                            (init.eye_, ())]


@pytest.mark.parametrize("fn, args", ALL_INITS, ids=lambda v: getattr(v, "__name__", ""))
def test_parameters_in_place_without_grad(fn, args):
    """Parameters are filled in place under no_grad: same object, still a leaf."""
    p = nn.Parameter(ember.ones(4, 6))
    assert fn(p, *args) is p
    assert p.requires_grad and p.grad_fn is None and p.is_leaf
    (p * 2).sum().backward()
    assert p.grad.tolist() == [[2.0] * 6] * 4


@pytest.mark.parametrize("dtype", [ember.float64, ember.float16])
@pytest.mark.parametrize("fn, args", RANDOM_INITS, ids=lambda v: getattr(v, "__name__", ""))
def test_dtype_preserved(fn, args, dtype):
    t = fn(ember.empty(6, 5, dtype=dtype), *args)
    assert t.dtype == dtype and np.isfinite(t.numpy()).all()


def test_deprecated_aliases():
    for name in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
                 "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        assert getattr(init, name).__name__ == name
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of "
                                           "`nn.init.uniform_`."):
        init.uniform(ember.empty(2))
