"""The compiled GELU kernels (ember._C._activation) against the array-module path and a
float64 reference: every range of the erf approximation, special values, gradients."""

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import cpu

SQRT2 = math.sqrt(2.0)


def _gelu_ref(x):
    return np.array([v * 0.5 * (1 + math.erf(v / SQRT2)) for v in x.ravel()]).reshape(x.shape)


def _gelu_grad_ref(x):
    return np.array([0.5 * (1 + math.erf(v / SQRT2)) + v * math.exp(-v * v / 2)
                     / math.sqrt(2 * math.pi) for v in x.ravel()]).reshape(x.shape)


def _inputs():
    """Values in every range of erf(x / sqrt 2) (|z| <= 0.46875, <= 4, > 4), their borders
    on both sides, the tails where Phi underflows, and a random sample."""
    edges = np.array([0.46875, 4.0]) * SQRT2
    near = np.concatenate([edges + d for d in (-1e-6, 0.0, 1e-6)])
    x = np.concatenate([near, -near, np.linspace(-12, 12, 2401),
                        np.random.default_rng(0).standard_normal(997) * 3,
                        [0.0, 1e-30, -1e-30, 30.0, -30.0, 200.0, -200.0]])
    return x


def _kernels(x):
    return (cpu.kernel("gelu_forward", x), cpu.kernel("gelu_backward", x),
            cpu.kernel("gelu_forward", x, generic=True),
            cpu.kernel("gelu_backward", x, generic=True))


def test_the_compiled_kernel_takes_contiguous_floats_only():
    x = np.zeros((3, 4), np.float32)
    assert cpu.kernel("gelu_forward", x) is not cpu.kernel("gelu_forward", x, generic=True)
    assert cpu.kernel("gelu_forward", x.T) is cpu.kernel("gelu_forward", x, generic=True)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 4e-7), (np.float64, 1e-15)])
def test_forward_and_backward_match_the_reference(dtype, tol):
    x64 = _inputs()
    x = x64.astype(dtype)
    fwd, bwd, fwd_generic, bwd_generic = _kernels(x)
    xr = x.astype(np.float64)
    y, ref = fwd(x), _gelu_ref(xr)
    assert y.dtype == dtype and y.shape == x.shape
    # absolute error in units of max(1, |x|): float32 rounding of x * Phi(x)
    np.testing.assert_allclose(y, ref, rtol=2 * tol, atol=tol)
    np.testing.assert_allclose(y, fwd_generic(x), rtol=4 * tol, atol=2 * tol)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    dx = bwd(g, x)
    np.testing.assert_allclose(dx, g * _gelu_grad_ref(xr), rtol=4 * tol, atol=4 * tol)
    np.testing.assert_allclose(dx, bwd_generic(g, x), rtol=8 * tol, atol=8 * tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values(dtype):
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, -200.0, 200.0], dtype)
    fwd, bwd, fwd_generic, bwd_generic = _kernels(x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fwd(x), fwd_generic(x))
        g = np.ones_like(x)
        np.testing.assert_array_equal(bwd(g, x), bwd_generic(g, x))
    y = fwd(x)
    assert y[0] == np.inf and np.isnan(y[1]) and np.isnan(y[2])
    assert y[5] == 0 and y[6] == 200.0


def test_backward_takes_a_non_contiguous_gradient_and_empty_arrays():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    g = np.ascontiguousarray(np.arange(12, dtype=np.float32).reshape(4, 3)).T
    assert not g.flags.c_contiguous and g.shape == x.shape
    _, bwd, _, bwd_generic = _kernels(x)
    np.testing.assert_allclose(bwd(g, x), bwd_generic(g, x), rtol=1e-6, atol=1e-6)
    e = np.zeros((0, 3), np.float32)
    assert cpu.kernel("gelu_forward", e)(e).shape == (0, 3)
    assert cpu.kernel("gelu_backward", e)(e, e).shape == (0, 3)


def test_bad_arrays_are_python_errors():
    from ember._C import _activation

    with pytest.raises(TypeError, match="float32 or float64"):
        _activation.gelu_forward(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="C-contiguous"):
        _activation.gelu_forward(np.zeros((3, 4), np.float32).T)
    with pytest.raises(ValueError, match="expected float32"):
        _activation.gelu_backward(np.zeros(3, np.float64), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="shape"):
        _activation.gelu_backward(np.zeros(4, np.float32), np.zeros(3, np.float32))


def test_gelu_through_autograd_uses_the_kernel_and_its_gradient():
    x0 = np.random.default_rng(2).standard_normal((8, 33)).astype(np.float32) * 3
    x = ember.tensor(x0, requires_grad=True)
    y = F.gelu(x)
    (y * y).sum().backward()
    ref = _gelu_ref(x0.astype(np.float64))
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * ref * _gelu_grad_ref(x0.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    xd = ember.tensor(x0.astype(np.float64)[:2, :5], requires_grad=True)
    assert ember.autograd.gradcheck(F.gelu, (xd,))
    assert ember.autograd.gradgradcheck(F.gelu, (xd,))


def test_gelu_matches_torch():
    torch = pytest.importorskip("torch")
    x0 = _inputs().astype(np.float32)
    x = ember.tensor(x0, requires_grad=True)
    xt = torch.tensor(x0, requires_grad=True)
    g = np.random.default_rng(3).standard_normal(x0.shape).astype(np.float32)
    F.gelu(x).backward(ember.tensor(g))
    yt = torch.nn.functional.gelu(xt)
    yt.backward(torch.tensor(g))
    torch.testing.assert_close(torch.from_numpy(F.gelu(x).detach().numpy()), yt.detach())
    torch.testing.assert_close(torch.from_numpy(x.grad.numpy()), xt.grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_forward_gives_the_single_calls_bits(dtype):
    from ember._backend import _cpu_threads
    from ember._C import _activation

    x = np.concatenate([_inputs(), [np.nan, np.inf, -np.inf]]).astype(dtype)
    x = np.tile(x, 40)[:-5]  # ~140K elements: several blocks, a ragged last one
    old_min, old_threads = _cpu_threads.set_parallel_min(1024), ember.get_num_threads()
    ember.set_num_threads(2)
    calls = []
    run = _cpu_threads._pool.run
    try:
        _cpu_threads._pool.run = lambda fns: (calls.append(len(fns)), run(fns))
        got = cpu.kernel("gelu_forward", x)(x)
    finally:
        _cpu_threads._pool.run = run
        ember.set_num_threads(old_threads)
        _cpu_threads.set_parallel_min(old_min)
    assert calls and calls[0] >= 2
    assert got.tobytes() == _activation.gelu_forward(x).tobytes()
    out = np.empty_like(x)
    assert _activation.gelu_forward(x, out=out) is out and out.tobytes() == got.tobytes()
    with pytest.raises(ValueError, match="out has dtype"):
        _activation.gelu_forward(x, out=np.empty(3, dtype))
