"""Random numbers: generators and seeding (reproducibility, state), dtypes and shapes of
the sampling ops, their errors, and statistical checks of every distribution.

The statistical checks use fixed seeds, so they are deterministic; their tolerances are
several standard errors wide, so a correct sampler passes for any seed.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._ops import random as erandom

N = 200_000


@pytest.fixture(autouse=True)
def _seeded():
    ember.manual_seed(1234)
    yield


def stats(t):
    a = t.double().numpy() if t.dtype != ember.float64 else t.numpy()
    return a.mean(), a.var()


def close_mean(mean, expected, var, n=N, sigmas=6):
    assert abs(mean - expected) < sigmas * math.sqrt(var / n) + 1e-12, (mean, expected)


def chi2_ok(counts, probs):
    """A chi-square statistic within 6 standard deviations of its mean (df)."""
    counts, probs = np.asarray(counts, float), np.asarray(probs, float)
    expected = counts.sum() * probs / probs.sum()
    keep = expected > 0
    chi2 = (((counts - expected) ** 2)[keep] / expected[keep]).sum()
    df = keep.sum() - 1
    assert chi2 < df + 6 * math.sqrt(2 * df), (chi2, df)
    assert (counts[~keep] == 0).all()


# ---------------------------------------------------------------------------
# generators and seeding

def test_manual_seed_reproduces_every_op():
    def draw():
        x = ember.empty(5)
        return [ember.rand(4), ember.randn(4), ember.randint(0, 100, (4,)), ember.randperm(6),
                ember.normal(0.0, 1.0, (3,)), ember.bernoulli(ember.full((5,), 0.5)),
                ember.multinomial(ember.ones(6), 3), ember.poisson(ember.full((3,), 4.0)),
                x.uniform_().clone(), x.normal_().clone(), x.random_(10).clone(),
                x.exponential_().clone(), x.geometric_(0.3).clone(), x.cauchy_().clone(),
                x.log_normal_().clone(), x.bernoulli_(0.5).clone()]
    g = ember.manual_seed(7)
    assert g is ember.default_generator
    first = [t.tolist() for t in draw()]
    ember.manual_seed(7)
    assert [t.tolist() for t in draw()] == first
    ember.manual_seed(8)
    assert [t.tolist() for t in draw()] != first


def test_generator_objects_are_independent():
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = ember.rand(5, generator=g1)
    ember.rand(100)  # the default generator does not affect g2
    assert ember.rand(5, generator=g2).tolist() == a.tolist()
    assert ember.rand(5, generator=g1).tolist() != a.tolist()
    assert ember.Generator().initial_seed() == 67280421310721
    assert ember.Generator().device == ember.device("cpu")
    assert ember.Generator(device="cpu").device.type == "cpu"


def test_seed_and_initial_seed():
    assert ember.manual_seed(5).initial_seed() == 5 and ember.initial_seed() == 5
    s = ember.seed()
    assert isinstance(s, int) and 0 <= s < 2**64 and ember.initial_seed() == s
    g = ember.Generator()
    s2 = g.seed()
    assert g.initial_seed() == s2
    assert ember.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    assert ember.Generator().manual_seed(2**64 - 1).initial_seed() == 2**64 - 1


@pytest.mark.parametrize("bad,err,msg", [
    (1.5, RuntimeError, "manual_seed expected a long, but got float"),
    (True, RuntimeError, "manual_seed expected a long, but got bool"),
    ("3", RuntimeError, "manual_seed expected a long, but got str"),
    (2**64, ValueError, "Overflow when unpacking long long"),
    (-2**63 - 1, ValueError, "Overflow when unpacking long long"),
])
def test_manual_seed_errors(bad, err, msg):
    with pytest.raises(err, match=msg):
        ember.manual_seed(bad)
    with pytest.raises(err, match=msg):
        ember.Generator().manual_seed(bad)


def test_state_round_trip():
    g = ember.Generator().manual_seed(11)
    ember.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == ember.uint8 and state.ndim == 1
    a = [ember.rand(4, generator=g).tolist(), ember.randn(3, generator=g).tolist(),
         ember.randint(5, (6,), generator=g).tolist()]
    assert g.set_state(state) is g
    assert [ember.rand(4, generator=g).tolist(), ember.randn(3, generator=g).tolist(),
            ember.randint(5, (6,), generator=g).tolist()] == a
    assert g.initial_seed() == 11
    # a state moves between generators, and survives an odd number of 32-bit draws
    h = ember.Generator()
    ember.randint(0, 3, (1,), generator=g, dtype=ember.int8)
    h.set_state(g.get_state())
    assert ember.rand(8, generator=h).tolist() == ember.rand(8, generator=g).tolist()


def test_global_rng_state():
    state = ember.get_rng_state()
    a = ember.randn(5).tolist()
    ember.set_rng_state(state)
    assert ember.randn(5).tolist() == a


def test_set_state_errors():
    g = ember.Generator()
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
        g.set_state([1, 2])
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(ember.zeros(3))
    with pytest.raises(RuntimeError, match="but found the input RNG state size to be 3"):
        g.set_state(ember.zeros(3, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="not an ember generator state"):
        g.set_state(ember.zeros(g.get_state().numel(), dtype=ember.uint8))


def test_fork_rng_and_pickle():
    before = ember.get_rng_state()
    with erandom.fork_rng():
        ember.rand(10)
    assert ember.get_rng_state().tolist() == before.tolist()
    with erandom.fork_rng(enabled=False):
        ember.rand(1)
    assert ember.get_rng_state().tolist() != before.tolist()
    g = ember.Generator().manual_seed(9)
    ember.rand(2, generator=g)
    g2 = pickle.loads(pickle.dumps(g))
    assert ember.rand(4, generator=g2).tolist() == ember.rand(4, generator=g).tolist()


def test_generator_errors():
    with pytest.raises(TypeError, match="generator must be an ember.Generator"):
        ember.rand(2, generator=1)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but "
                                           "found 'cuda'"):
        ember.rand(2, generator=ember.Generator("cuda"))


# ---------------------------------------------------------------------------
# factories: dtypes, shapes, errors

def test_factory_dtypes_and_shapes():
    assert ember.rand(2, 3).dtype == ember.float32 and ember.rand((2, 3)).shape == (2, 3)
    assert ember.rand([2, 3]).shape == (2, 3) and ember.rand(()).shape == ()
    assert ember.randn(4, dtype=ember.float64).dtype == ember.float64
    assert ember.rand(3, dtype=ember.float16).dtype == ember.float16
    assert ember.randn(3, dtype=ember.complex64).dtype == ember.complex64
    assert ember.randint(10, (3,)).dtype == ember.int64
    assert ember.randint(0, 10, (3,), dtype=ember.float32).dtype == ember.float32
    assert ember.randperm(5).dtype == ember.int64
    assert ember.randperm(5, dtype=ember.float16).dtype == ember.float16
    assert ember.rand(2, requires_grad=True).requires_grad
    out = ember.empty(3)
    assert ember.rand(3, out=out) is out
    x = ember.zeros(2, 3, dtype=ember.float64)
    assert ember.rand_like(x).dtype == ember.float64 and ember.rand_like(x).shape == (2, 3)
    assert ember.randn_like(x, dtype=ember.float32).dtype == ember.float32
    r = ember.randint_like(x, 5)
    assert r.dtype == ember.float64 and bool(((r >= 0) & (r < 5)).all())
    r = ember.randint_like(x, 2, 5)
    assert bool(((r >= 2) & (r < 5)).all())
    assert ember.randint_like(x, high=3).shape == (2, 3)
    assert ember.randint(low=2, high=4, size=(10,)).min().item() >= 2
    assert ember.randint(0, 2, (50,), dtype=ember.bool).dtype == ember.bool


def test_default_dtype_is_followed():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.rand(2).dtype == ember.float64
        assert ember.randn(2).dtype == ember.float64
        assert ember.normal(0.0, 1.0, (2,)).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("fn,err,msg", [
    (lambda: ember.rand(), TypeError, "missing 1 required positional argument: 'size'"),
    (lambda: ember.rand(2, -3), RuntimeError, "negative dimension -3"),
    (lambda: ember.rand(2, dtype=ember.int64), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda: ember.randn(2, dtype=ember.int64), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda: ember.rand_like(ember.ones(2, dtype=ember.int64)), NotImplementedError,
     "check_uniform_bounds"),
    (lambda: ember.randint(10, 3, (3,)), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=10 >= to=3"),
    (lambda: ember.randint(10, 3), TypeError, "argument 'size' \\(position 2\\) must be tuple"),
    (lambda: ember.randint(0.5, 3.5, (3,)), TypeError, "must be int, not float"),
    (lambda: ember.randint(0, 300, (3,), dtype=ember.uint8), RuntimeError,
     "to - 1 is out of bounds for unsigned char"),
    (lambda: ember.randint(-200, 5, (2,), dtype=ember.int8), RuntimeError,
     "from is out of bounds for signed char"),
    (lambda: ember.randint(0, 3, (3,), dtype=ember.bool), RuntimeError,
     "to - 1 is out of bounds for bool"),
    (lambda: ember.randint(0, 2**63, (2,)), ValueError, "Overflow when unpacking long long"),
    (lambda: ember.randperm(-1), RuntimeError, "negative dimension -1"),
    (lambda: ember.randperm(257, dtype=ember.uint8), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    (lambda: ember.randperm(3, dtype=ember.bool), NotImplementedError, "randperm"),
])
def test_factory_errors(fn, err, msg):
    with pytest.raises(err, match=msg):
        fn()


@settings(max_examples=40, deadline=None)
@given(st.integers(-1000, 1000), st.integers(1, 1000), st.lists(st.integers(0, 4), max_size=3),
       st.sampled_from([ember.int64, ember.int32, ember.int16, ember.float64]))
def test_randint_bounds_hypothesis(low, width, shape, dtype):
    t = ember.randint(low, low + width, tuple(shape), dtype=dtype)
    assert t.dtype == dtype and tuple(t.shape) == tuple(shape)
    if t.numel():
        assert t.min().item() >= low and t.max().item() < low + width


def test_randint_full_int64_range():
    t = ember.randint(-2**63, 2**63 - 1, (1000,))
    assert t.min().item() < -2**61 and t.max().item() > 2**61


# ---------------------------------------------------------------------------
# distributions

@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16])
def test_rand_is_uniform(dtype):
    t = ember.rand(N, dtype=dtype)
    a = t.numpy()
    assert a.min() >= 0 and a.max() < 1
    m, v = stats(t)
    close_mean(m, 0.5, 1 / 12)
    assert abs(v - 1 / 12) < 0.002
    chi2_ok(np.histogram(a.astype(np.float64), bins=20, range=(0, 1))[0], np.ones(20))


def test_rand_complex():
    z = ember.rand(N, dtype=ember.complex128).numpy()
    for part in (z.real, z.imag):
        assert part.min() >= 0 and part.max() < 1
        close_mean(part.mean(), 0.5, 1 / 12)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16])
def test_randn_is_standard_normal(dtype):
    a = ember.randn(N, dtype=dtype).numpy().astype(np.float64)
    close_mean(a.mean(), 0.0, 1.0)
    assert abs(a.var() - 1) < 0.02
    assert abs(np.mean(np.abs(a) < 1) - 0.6827) < 0.006  # the shape, not only moments


def test_randn_complex_has_unit_variance():
    z = ember.randn(N, dtype=ember.complex64).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.02
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01


def test_randint_is_uniform():
    a = ember.randint(3, 13, (N,)).numpy()
    assert a.min() == 3 and a.max() == 12
    chi2_ok(np.bincount(a - 3, minlength=10), np.ones(10))


def test_randperm_is_a_uniform_permutation():
    p = ember.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50))
    firsts = np.array([ember.randperm(4)[0].item() for _ in range(4000)])
    chi2_ok(np.bincount(firsts, minlength=4), np.ones(4))
    assert ember.randperm(0).shape == (0,)


def test_normal_overloads():
    m, s = ember.full((N,), 2.0), ember.full((N,), 3.0)
    a = ember.normal(m, s).numpy().astype(np.float64)
    close_mean(a.mean(), 2.0, 9.0)
    assert abs(a.std() - 3) < 0.05
    b = ember.normal(m, 0.5).numpy().astype(np.float64)
    close_mean(b.mean(), 2.0, 0.25)
    assert abs(b.std() - 0.5) < 0.01
    c = ember.normal(-1.0, s).numpy().astype(np.float64)
    close_mean(c.mean(), -1.0, 9.0)
    d = ember.normal(5.0, 2.0, size=(N,)).numpy().astype(np.float64)
    close_mean(d.mean(), 5.0, 4.0)
    assert abs(d.std() - 2) < 0.03
    assert ember.normal(ember.zeros(2, 3), ember.ones(3)).shape == (2, 3)  # broadcast
    assert ember.normal(ember.zeros(3, dtype=ember.float64), ember.ones(3)).dtype == \
        ember.float64
    assert ember.normal(0, 1, size=(3,)).dtype == ember.float32
    assert ember.normal(0.0, 1.0, (3,), dtype=ember.float64).dtype == ember.float64


def test_normal_gradients_are_zero():
    mean = ember.zeros(3, requires_grad=True)
    std = ember.ones(3, requires_grad=True)
    ember.normal(mean, std).sum().backward()
    assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3


@pytest.mark.parametrize("fn,err,msg", [
    (lambda: ember.normal(0.0, -1.0, (3,)), RuntimeError,
     "normal expects std >= 0.0, but found std -1"),
    (lambda: ember.normal(ember.zeros(3), -1.0), RuntimeError, "normal expects std >= 0.0"),
    (lambda: ember.normal(ember.zeros(3), -ember.ones(3)), RuntimeError,
     "normal expects all elements of std >= 0.0"),
    (lambda: ember.normal(ember.zeros(3), ember.ones(4)), RuntimeError,
     "The size of tensor a \\(3\\) must match the size of tensor b \\(4\\)"),
    (lambda: ember.normal(ember.zeros(3, dtype=ember.int64), 1.0), NotImplementedError,
     "normal_kernel_cpu"),
    (lambda: ember.normal(0.0, 1.0), TypeError, "normal\\(\\) received an invalid combination"),
])
def test_normal_errors(fn, err, msg):
    with pytest.raises(err, match=msg):
        fn()


def test_bernoulli():
    p = ember.tensor([0.0, 0.2, 0.7, 1.0]).expand(N // 4, 4)
    a = ember.bernoulli(p).numpy()
    assert set(np.unique(a)) <= {0.0, 1.0}
    means = a.mean(axis=0)
    assert means[0] == 0 and means[3] == 1
    for got, q in zip(means[1:3], (0.2, 0.7), strict=True):
        close_mean(got, q, q * (1 - q), n=N // 4)
    b = ember.bernoulli(ember.zeros(N), 0.3).numpy()
    close_mean(b.mean(), 0.3, 0.21)
    ints = ember.bernoulli(ember.ones(3, dtype=ember.int64), 0.5)
    assert ints.dtype == ember.int64
    assert ember.full((3,), 0.5).bernoulli().dtype == ember.float32
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true"):
        ember.bernoulli(ember.full((3,), 1.5))
    with pytest.raises(NotImplementedError, match="bernoulli_tensor_cpu_p_"):
        ember.bernoulli(ember.ones(3, dtype=ember.int64))


def test_multinomial_with_replacement():
    w = ember.tensor([1.0, 2.0, 3.0, 0.0, 4.0])
    a = ember.multinomial(w, N, replacement=True).numpy()
    assert a.dtype == np.int64
    chi2_ok(np.bincount(a, minlength=5), w.numpy())
    rows = ember.multinomial(ember.tensor([[1.0, 0.0, 1.0], [0.0, 5.0, 1.0]]), 20000, True)
    assert rows.shape == (2, 20000)
    chi2_ok(np.bincount(rows.numpy()[0], minlength=3), [1, 0, 1])
    chi2_ok(np.bincount(rows.numpy()[1], minlength=3), [0, 5, 1])
    many = ember.multinomial(ember.tensor([[1.0, 3.0]] * 300), 200, True).numpy()
    chi2_ok(np.bincount(many.ravel(), minlength=2), [1, 3])


def test_multinomial_without_replacement():
    w = np.array([1.0, 2.0, 3.0, 0.0, 4.0])
    draws = ember.multinomial(ember.tensor(np.tile(w, (20000, 1))), 3).numpy()
    assert draws.shape == (20000, 3)
    assert all(len(set(r)) == 3 for r in draws[:500])  # no repeats within a row
    assert not (draws == 3).any()  # a zero weight is never drawn while others remain
    chi2_ok(np.bincount(draws[:, 0], minlength=5), w)  # the first draw follows the weights
    # the second draw, given the first: proportional to the remaining weights
    second = draws[draws[:, 0] == 4][:, 1]
    chi2_ok(np.bincount(second, minlength=5), [1, 2, 3, 0, 0])
    full = ember.multinomial(ember.tensor([0.0, 0.0, 1.0, 2.0]), 4).numpy()
    assert sorted(full.tolist()) == [0, 1, 2, 3] and set(full[:2]) == {2, 3}


@pytest.mark.parametrize("args,kwargs,msg", [
    ((ember.tensor([1.0, 2.0]), 3), {}, "cannot sample n_sample > prob_dist.size\\(-1\\) samples "
                                        "without replacement"),
    ((ember.tensor([1.0, 2.0]), 0), {}, "cannot sample n_sample <= 0 samples"),
    ((ember.zeros(3), 1), {}, "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
    ((ember.tensor([1.0, -1.0]), 1), {}, "probability tensor contains either `inf`, `nan` or "
                                         "element < 0"),
    ((ember.tensor([1.0, float("nan")]), 1), {}, "probability tensor contains"),
    ((ember.ones(2, 2, 3), 1), {}, "prob_dist must be 1 or 2 dim"),
    ((ember.ones(3, dtype=ember.int64), 1), {}, "multinomial only supports floating-point dtypes "
                                                "for input, got: Long"),
])
def test_multinomial_errors(args, kwargs, msg):
    with pytest.raises(RuntimeError, match=msg):
        ember.multinomial(*args, **kwargs)


def test_poisson():
    a = ember.poisson(ember.full((N,), 3.5)).numpy()
    assert a.dtype == np.float32 and (a == np.round(a)).all()
    close_mean(a.mean(), 3.5, 3.5)
    assert abs(a.var() - 3.5) < 0.1
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        ember.poisson(ember.tensor([-1.0]))
    with pytest.raises(NotImplementedError, match="poisson_cpu"):
        ember.poisson(ember.ones(2, dtype=ember.int64))


# ---------------------------------------------------------------------------
# in-place fills

def test_uniform_():
    x = ember.empty(N, dtype=ember.float64)
    assert x.uniform_(-2, 3) is x
    a = x.numpy()
    assert a.min() >= -2 and a.max() < 3
    close_mean(a.mean(), 0.5, 25 / 12)
    assert ember.empty(3, dtype=ember.complex64).uniform_().dtype == ember.complex64
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range, "
                                           "but found from=2 > to=1"):
        ember.empty(2).uniform_(2, 1)
    with pytest.raises(RuntimeError, match="to is out of bounds for float"):
        ember.empty(2).uniform_(0, float("inf"))
    with pytest.raises(RuntimeError, match="uniform_ expects to-from <= "
                                           "std::numeric_limits<Float>::max\\(\\)"):
        ember.empty(2).uniform_(-3e38, 3e38)
    with pytest.raises(NotImplementedError, match="check_uniform_bounds"):
        ember.empty(2, dtype=ember.int64).uniform_()


def test_normal_():
    a = ember.empty(N).normal_(3, 2).numpy().astype(np.float64)
    close_mean(a.mean(), 3.0, 4.0)
    assert abs(a.std() - 2) < 0.03
    z = ember.empty(N, dtype=ember.complex128).normal_(1, 2).numpy()
    close_mean(z.real.mean(), 1.0, 2.0)
    close_mean(z.imag.mean(), 1.0, 2.0)
    assert abs(np.var(z) - 4) < 0.1
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        ember.empty(2).normal_(0, -1)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu"):
        ember.empty(2, dtype=ember.int64).normal_()


def test_bernoulli_():
    a = ember.empty(N).bernoulli_(0.25).numpy()
    close_mean(a.mean(), 0.25, 0.1875)
    p = ember.tensor([0.0, 1.0, 0.5])
    b = ember.empty(4, 3).bernoulli_(p)
    assert b.tolist()[0][:2] == [0.0, 1.0] and b.tolist()[3][:2] == [0.0, 1.0]
    assert ember.zeros(3, dtype=ember.int32).bernoulli_(0.5).dtype == ember.int32
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\], but got "
                                           "p=1.5"):
        ember.empty(2).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="Expected p_in >= 0"):
        ember.empty(2).bernoulli_(ember.tensor([0.5, 2.0]))


@pytest.mark.parametrize("dtype,hi", [
    (ember.float32, 2**24), (ember.float64, 2**53), (ember.float16, 2**11),
    (ember.int64, 2**63 - 1), (ember.int32, 2**31 - 1), (ember.int16, 2**15 - 1),
    (ember.int8, 127), (ember.uint8, 255), (ember.bool, 1),
])
def test_random_default_range(dtype, hi):
    a = ember.zeros(20000, dtype=dtype).random_().numpy().astype(np.float64)
    assert a.min() >= 0 and a.max() <= hi
    assert a.max() > hi * 0.9  # covers the range
    if dtype is ember.bool:
        close_mean(a.mean(), 0.5, 0.25, n=20000)


def test_random_from_to():
    a = ember.zeros(N).random_(10).numpy()
    chi2_ok(np.bincount(a.astype(int), minlength=10), np.ones(10))
    b = ember.zeros(N, dtype=ember.int64).random_(-5, 5).numpy()
    assert b.min() == -5 and b.max() == 4
    c = ember.zeros(1000, dtype=ember.int8).random_(-100, to=None).numpy()
    assert c.min() >= -100
    assert ember.zeros(3).random_(0, to=4).max().item() < 4
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got "
                                           "from=10 >= to=3"):
        ember.zeros(3).random_(10, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        ember.zeros(3, dtype=ember.uint8).random_(300)
    with pytest.raises(RuntimeError, match="from is out of bounds for short int"):
        ember.zeros(3, dtype=ember.int16).random_(-40000, 5)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for c10::Half"):
        ember.zeros(3, dtype=ember.float16).random_(0, 2**16)
    with pytest.warns(UserWarning, match="to - 1 is out of bounds \\[-\\(2\\^24\\), 2\\^24\\]"):
        ember.zeros(3).random_(0, 2**30)


def test_exponential_geometric_cauchy_log_normal():
    e = ember.empty(N, dtype=ember.float64).exponential_(2.0).numpy()
    assert e.min() >= 0
    close_mean(e.mean(), 0.5, 0.25)
    g = ember.empty(N, dtype=ember.int64).geometric_(0.25).numpy()
    assert g.min() == 1
    close_mean(g.mean(), 4.0, 0.75 / 0.0625)
    c = ember.empty(N, dtype=ember.float64).cauchy_(1.0, 2.0).numpy()
    q1, q2, q3 = np.percentile(c, [25, 50, 75])
    assert abs(q2 - 1) < 0.05 and abs(q1 - (1 - 2)) < 0.08 and abs(q3 - 3) < 0.08
    ln = ember.empty(N, dtype=ember.float64).log_normal_(0.5, 0.75).numpy()
    assert ln.min() > 0
    close_mean(np.log(ln).mean(), 0.5, 0.5625)
    assert abs(np.log(ln).std() - 0.75) < 0.01


@pytest.mark.parametrize("fn,err,msg", [
    (lambda: ember.empty(2).exponential_(0), RuntimeError,
     "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: ember.empty(2, dtype=ember.int64).exponential_(), RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a "
     "floating point but you specified Long"),
    (lambda: ember.empty(2).geometric_(1), RuntimeError,
     "geometric_ expects p to be in \\(0, 1\\), but got p=1"),
    (lambda: ember.empty(2).cauchy_(0, -1), RuntimeError,
     "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    (lambda: ember.empty(2, dtype=ember.int64).cauchy_(), RuntimeError,
     "you specified long int"),
    (lambda: ember.empty(2).log_normal_(1, 0), RuntimeError,
     "log_normal_ expects std > 0.0, but found std=0"),
    (lambda: ember.empty(2, dtype=ember.int64).log_normal_(), NotImplementedError,
     "log_normal_cpu"),
])
def test_fill_errors(fn, err, msg):
    with pytest.raises(err, match=msg):
        fn()


def test_fills_and_autograd():
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        leaf.uniform_()
    with ember.no_grad():
        leaf.normal_()
    assert leaf.requires_grad and leaf.is_leaf
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]  # the old value no longer matters


def test_fills_respect_generator():
    g = ember.Generator().manual_seed(4)
    a = ember.empty(5).normal_(generator=g).tolist()
    g.manual_seed(4)
    assert ember.empty(5).normal_(generator=g).tolist() == a
    g.manual_seed(4)
    b = ember.multinomial(ember.ones(10), 5, generator=g).tolist()
    g.manual_seed(4)
    assert ember.multinomial(ember.ones(10), 5, generator=g).tolist() == b
