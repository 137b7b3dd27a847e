"""Large elementwise ops and reductions on several threads (NOTE [ Threads for large ops ]
in ember._backend._cpu_threads): the threshold is lowered so that small arrays take the
threaded code, and every result is compared bit for bit with NumPy's single call."""

import tracemalloc
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import _cpu_threads
from ember._C import _core

N = 5 * 1024 + 7  # not a multiple of the slices' alignment

# the inputs hold inf and NaN on purpose: NumPy warns as in its single call
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture
def pool_calls(monkeypatch):
    """The number of times work was handed to the pool (a list of slice counts)."""
    calls = []
    run = _cpu_threads._pool.run

    def spy(fns):
        calls.append(len(fns))
        return run(fns)

    monkeypatch.setattr(_cpu_threads._pool, "run", spy)
    return calls


@pytest.fixture
def threaded(pool_calls):
    """Threads from 1024 elements on, two threads (whatever the machine has)."""
    old_min = _cpu_threads.set_parallel_min(1024)
    old_threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        yield pool_calls
    finally:
        ember.set_num_threads(old_threads)
        _cpu_threads.set_parallel_min(old_min)


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def _data(dtype, shape=(N,), seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype) * 10
    x.reshape(-1)[:40:7] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40]
    return x


BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("name,ufunc", BINARY)
def test_binary_bit_identical(threaded, dtype, name, ufunc):
    a, b = _data(dtype), _data(dtype, seed=1)
    ta, tb = ember.tensor(a), ember.tensor(b)
    with np.errstate(all="ignore"):
        expect = ufunc(a, b)
    _bits_equal(getattr(ember, name)(ta, tb).numpy(), expect)
    _bits_equal(getattr(ta, name)(tb).numpy(), expect)
    assert threaded  # the threaded code ran
    scalar = 3 if dtype == np.int64 else 2.5
    with np.errstate(all="ignore"):
        _bits_equal(getattr(ember, name)(ta, scalar).numpy(), ufunc(a, dtype(scalar)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_div_and_reflected_scalars(threaded, dtype):
    a, b = _data(dtype), _data(dtype, seed=1)
    ta, tb = ember.tensor(a), ember.tensor(b)
    with np.errstate(all="ignore"):
        _bits_equal((ta / tb).numpy(), a / b)
        _bits_equal((2.0 / ta).numpy(), dtype(2.0) / a)
        _bits_equal((1.5 - ta).numpy(), dtype(1.5) - a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # division by zero is silent, as in PyTorch
        (ta / ember.zeros(N, dtype=ta.dtype)).numpy()
    assert threaded


def test_int_true_division_is_float(threaded):
    a, b = _data(np.int64), _data(np.int64, seed=1) | 1
    out = ember.tensor(a) / ember.tensor(b)
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), (a / b).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sqrt", "neg", "abs", "sin", "cos"])
def test_unary_bit_identical(threaded, dtype, name):
    a = _data(dtype)
    ufunc = {"neg": np.negative, "abs": np.absolute}.get(name, getattr(np, name, None))
    with np.errstate(all="ignore"):
        expect = ufunc(a)
    t = ember.tensor(a)
    _bits_equal(getattr(t, name)().numpy(), expect)
    _bits_equal(getattr(ember, name)(t).numpy(), expect)
    assert threaded


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_relu_bit_identical(threaded, dtype):
    a = _data(dtype)
    t = ember.tensor(a)
    got_relu = t.relu().numpy()
    assert threaded
    threaded.clear()
    # sigmoid: arrays up to SIGMOID_LOOP_MAX take one compiled pass; above, NumPy's passes
    # in blocks on the threads
    big = ember.tensor(_data(dtype, (_core.SIGMOID_LOOP_MAX + 1000,)))
    got_sigmoid = big.sigmoid().numpy()
    assert threaded
    old = _cpu_threads.set_parallel_min(1 << 62)  # the array-module code of the ops
    try:
        _bits_equal(got_sigmoid, big.sigmoid().numpy())
        _bits_equal(got_relu, F.relu(t).numpy())
    finally:
        _cpu_threads.set_parallel_min(old)
    _bits_equal(got_relu, np.maximum(a, 0))
    i = _data(np.int64)
    _bits_equal(ember.tensor(i).relu().numpy(), np.maximum(i, 0))  # ints: the single call


def test_grad_path_is_threaded_and_correct(threaded):
    a, b = _data(np.float64), _data(np.float64, seed=1)
    a[~np.isfinite(a)] = 1.0
    ta = ember.tensor(a, requires_grad=True)
    tb = ember.tensor(b, requires_grad=True)
    y = (ta * tb + ta - tb / 2.0).sum()
    y.backward()
    np.testing.assert_array_equal(ta.grad.numpy(), b + 1)
    np.testing.assert_array_equal(tb.grad.numpy(), a - 0.5)
    np.testing.assert_allclose(y.item(), (a * b + a - b / 2).sum(), rtol=1e-12)
    assert threaded


@pytest.mark.parametrize("name,ufunc", BINARY + [("div", np.true_divide)])
def test_out_writes_in_place(threaded, name, ufunc):
    a, b = _data(np.float32), _data(np.float32, seed=1)
    ta, tb = ember.tensor(a), ember.tensor(b)
    c = ember.empty(N)
    ptr, version = c.data_ptr(), c._version
    r = getattr(ember, name)(ta, tb, out=c)
    assert r is c and c.data_ptr() == ptr and c._version == version + 1
    with np.errstate(all="ignore"):
        _bits_equal(c.numpy(), ufunc(a, b))
    assert threaded


def test_out_has_no_temporary(threaded):
    n = 1 << 20  # 4 MiB of float32
    ta, tb = ember.ones(n), ember.ones(n)
    c = ember.empty(n)
    ember.add(ta, tb, out=c)  # warm: the pool's threads exist
    tracemalloc.start()
    try:
        ember.add(ta, tb, out=c)
        ember.mul(ta, 2.0, out=c)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n  # far less than one array: nothing of its size was allocated
    assert (c.numpy() == 2).all()


def test_out_aliasing_an_input(threaded):
    a, b = _data(np.float64), _data(np.float64, seed=1)
    ta, tb = ember.tensor(a), ember.tensor(b)
    ember.add(ta, tb, out=ta)
    _bits_equal(ta.numpy(), a + b)
    ember.mul(tb, ta, out=ta)
    _bits_equal(ta.numpy(), b * (a + b))
    assert threaded


def test_out_with_other_dtype_or_shape_takes_the_general_path(threaded):
    a = _data(np.float32)
    ta = ember.tensor(a)
    c = ember.empty(N, dtype=ember.float64)
    ember.add(ta, ta, out=c)
    np.testing.assert_array_equal(c.numpy(), (a + a).astype(np.float64))
    d = ember.empty(3)
    ember.add(ta, 1.0, out=d)  # resized to the result's shape, as in PyTorch
    assert d.shape == (N,)
    _bits_equal(d.numpy(), a + np.float32(1.0))


def test_non_contiguous_and_broadcast_inputs(threaded):
    a = _data(np.float32, (96, 128))
    b = _data(np.float32, (96, 128), seed=1)
    ta, tb = ember.tensor(a), ember.tensor(b)
    with np.errstate(all="ignore"):
        _bits_equal((ta.t() + tb.t()).numpy(), a.T + b.T)
        _bits_equal((ta[:, ::2] * tb[:, 1::2]).numpy(), a[:, ::2] * b[:, 1::2])
        row, col = ember.tensor(b[:1]), ember.tensor(b[:, :1])
        _bits_equal((ta - row).numpy(), a - b[:1])
        _bits_equal((ta * col).numpy(), a * b[:, :1])
        _bits_equal(ta.t().exp().numpy(), np.exp(a.T))
        c = ember.empty(96, 128)
        ember.mul(ta, col, out=c)
        _bits_equal(c.numpy(), a * b[:, :1])


def test_zero_size(threaded):
    e = ember.empty(0, 4096)
    assert (e + e).shape == (0, 4096)
    assert e.sum().item() == 0.0
    assert np.isnan(e.mean().item())
    assert F.softmax(e, -1).shape == (0, 4096)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_everything_is_numpys(threaded, dtype):
    for n in (N, 1 << 16, 3 * 4096 + 1):
        a = np.random.default_rng(n).uniform(0.5, 1.5, n).astype(dtype)
        t = ember.tensor(a)
        _bits_equal(t.sum().numpy(), a.sum())
        _bits_equal(t.mean().numpy(), a.mean())
        _bits_equal(t.reshape(-1, 1).sum().numpy(), a.sum())
    assert threaded


def test_sum_with_nan_and_ints(threaded):
    a = _data(np.float32)
    assert np.isnan(ember.tensor(a).sum().item())
    i = _data(np.int64)
    s = ember.tensor(i).sum()
    assert s.dtype == ember.int64 and s.item() == int(i.sum())
    _bits_equal(ember.tensor(i).amax().numpy(), i.max())
    assert threaded


@pytest.mark.parametrize("dims", [0, 1, 2, (0, 2), (1, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_over_dims(threaded, dims, keepdim):
    a = np.random.default_rng(1).standard_normal((24, 40, 33)).astype(np.float32)
    t = ember.tensor(a)
    axis = dims if isinstance(dims, tuple) else (dims,)
    _bits_equal(t.sum(dims, keepdim).numpy(), a.sum(axis=axis, keepdims=keepdim))
    _bits_equal(t.mean(dims, keepdim).numpy(), a.mean(axis=axis, keepdims=keepdim))
    _bits_equal(ember.amax(t, dims, keepdim).numpy(), a.max(axis=axis, keepdims=keepdim))
    _bits_equal(ember.amin(t, dims, keepdim).numpy(), a.min(axis=axis, keepdims=keepdim))
    assert threaded


def test_max_with_nan(threaded):
    a = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    a[N - 3] = np.nan
    assert np.isnan(ember.tensor(a).max().item())
    assert np.isnan(ember.amax(ember.tensor(a.reshape(-1, 1)), 0).item())


def test_reductions_are_deterministic(threaded):
    a = np.random.default_rng(3).standard_normal(3 * N).astype(np.float32)
    t = ember.tensor(a)
    first = t.sum().numpy()
    for threads in (2, 2, 4, 1):
        ember.set_num_threads(threads)
        # power-of-two slice counts split where NumPy's pairwise sum splits: its result
        _bits_equal(t.sum().numpy(), first)
        _bits_equal(first, a.sum())


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_lastdim_matches_serial(threaded, log, dtype):
    x = np.random.default_rng(4).standard_normal((70, 3, 45)).astype(dtype) * 5
    x[0, 0, 3] = np.nan
    x[1, 2, :] = -np.inf
    x[2, 1, 7] = np.inf
    fn = F.log_softmax if log else F.softmax
    got = fn(ember.tensor(x), -1).numpy()
    assert threaded
    old = _cpu_threads.set_parallel_min(1 << 62)  # the array-module code of the op
    try:
        serial = fn(ember.tensor(x), -1).numpy()
    finally:
        _cpu_threads.set_parallel_min(old)
    _bits_equal(got, serial)
    t = ember.tensor(x[3:], requires_grad=True)
    fn(t, -1).sum().backward()  # the backward works from the kernel's output
    assert np.isfinite(t.grad.numpy()).all()


def test_errors_in_a_worker_reach_the_caller(threaded):
    a = np.ones(N, np.float32)
    a[-5] = 1e30  # in the last slice: a worker's
    t = ember.tensor(a)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            t * t
    (t * t).numpy()  # the pool still works after the error


def test_one_thread_is_serial(threaded):
    a = _data(np.float32)
    t = ember.tensor(a)
    ember.set_num_threads(1)
    threaded.clear()
    _bits_equal((t + t).numpy(), a + a)
    _bits_equal(t.exp().numpy(), np.exp(a))
    _bits_equal(t.sum().numpy(), a.sum())
    F.softmax(t.reshape(-1, 1), -1)
    c = ember.empty(N)
    ember.add(t, t, out=c)
    assert threaded == []  # no work was handed to a thread


def test_small_arrays_stay_on_the_calling_thread(pool_calls):
    t = ember.ones(1000)
    (t + t).exp().sum()
    F.softmax(t.reshape(10, 100), -1)
    assert pool_calls == []
