"""The compiled backward formulas of the hottest nodes (NOTE [ Compiled backward formulas ] in
ember/_C/_fast_backward.pxi) give the same gradients, bit for bit, as the nodes' own Python
backward, and fall back to it wherever they do not apply."""

import numpy as np
import pytest

import ember
from ember.autograd.graph import saved_tensors_hooks

RNG = np.random.default_rng(7)


def _leaf(shape, dtype, low=0.5, high=1.5):
    return ember.tensor(RNG.uniform(low, high, shape).astype(dtype), requires_grad=True)


def _grads(fn, leaves, seed, create_graph):
    """The leaves' gradients of fn(*leaves) with seed; create_graph=True runs the nodes'
    Python formulas (the compiled ones are for backward without create_graph)."""
    for t in leaves:
        t.grad = None
    out = fn(*leaves)
    got = ember.autograd.grad(out, leaves, seed, create_graph=create_graph, allow_unused=True)
    return [None if g is None else g.detach().numpy().copy() for g in got]


UNARY = {
    "exp": lambda x: x.exp(), "log": lambda x: x.log(), "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(), "neg": lambda x: -x, "relu": lambda x: (x - 1).relu(),
    "sqrt": lambda x: x.sqrt(), "sin": lambda x: x.sin(), "cos": lambda x: x.cos(),
    "abs": lambda x: (x - 1).abs(),
}

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "add_scalar": lambda a, b: (a + 2.5) * b, "rsub_scalar": lambda a, b: (3 - a) * b,
    "mul_scalar": lambda a, b: (a * 1.7) + b, "rmul_int": lambda a, b: (2 * a) + b,
    "div_scalar": lambda a, b: (a / 3.0) * b, "rdiv_scalar": lambda a, b: (2.0 / a) * b,
    "function_forms": lambda a, b: ember.mul(ember.add(a, b), ember.tanh(b)),
}


def _assert_same(fast, slow):
    assert len(fast) == len(slow)
    for f, s in zip(fast, slow, strict=True):
        assert (f is None) == (s is None)
        if f is not None:
            assert f.dtype == s.dtype
            np.testing.assert_array_equal(f, s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_python_formula(name, dtype):
    x = _leaf((5, 7), dtype)
    seed = ember.tensor(RNG.standard_normal((5, 7)).astype(dtype))
    fn = UNARY[name]
    _assert_same(_grads(fn, [x], seed, False), _grads(fn, [x], seed, True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_python_formula(name, dtype):
    a, b = _leaf((4, 6), dtype), _leaf((4, 6), dtype)
    seed = ember.tensor(RNG.standard_normal((4, 6)).astype(dtype))
    fn = BINARY[name]
    _assert_same(_grads(fn, [a, b], seed, False), _grads(fn, [a, b], seed, True))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_broadcast_operands_are_summed_back(op):
    fn = BINARY[op]
    a, b = _leaf((3, 1, 5), np.float32), _leaf((4, 1), np.float32)
    seed = ember.tensor(RNG.standard_normal((3, 4, 5)).astype(np.float32))
    fast = _grads(fn, [a, b], seed, False)
    assert fast[0].shape == (3, 1, 5) and fast[1].shape == (4, 1)
    _assert_same(fast, _grads(fn, [a, b], seed, True))


def test_one_side_needs_grad():
    a = _leaf((6,), np.float32)
    c = ember.tensor(RNG.uniform(0.5, 1.5, 6).astype(np.float32))  # no grad
    for fn in (lambda a: a * c, lambda a: c * a, lambda a: c / a, lambda a: a / c,
               lambda a: c - a, lambda a: a - c):
        seed = ember.ones(6)
        _assert_same(_grads(fn, [a], seed, False), _grads(fn, [a], seed, True))


def test_nonfinite_and_zero_size_and_noncontiguous():
    x = ember.tensor(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 80.0], np.float32),
                     requires_grad=True)
    seed = ember.ones(7)
    for fn in UNARY.values():
        _assert_same(_grads(fn, [x], seed, False), _grads(fn, [x], seed, True))
    empty = ember.zeros(0, 3, requires_grad=True)
    (empty.exp() * empty).sum().backward()
    assert empty.grad.shape == (0, 3)
    base = _leaf((6, 8), np.float64)
    seed = ember.tensor(RNG.standard_normal((4, 6)))
    fn = lambda t: (t.t()[::2] * t.t()[1::2]).tanh()  # noqa: E731
    _assert_same(_grads(fn, [base], seed, False), _grads(fn, [base], seed, True))


def test_modified_in_place_after_saving_raises():
    x = _leaf((4,), np.float32)
    y = x * 1.0
    z = y.exp()  # saves its output
    w = y * y  # saves y
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


def test_second_backward_through_freed_graph_raises():
    x = _leaf((4,), np.float32)
    y = (x * x).tanh()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_saved_tensors_hooks_still_run():
    x = _leaf((4,), np.float64)
    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    with saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()
    y.sum().backward()
    assert calls.count("unpack") == calls.count("pack") > 0
    np.testing.assert_allclose(x.grad.numpy(),
                               (np.exp(x.detach().numpy() ** 2) * 2 * x.detach().numpy()))


def test_complex_takes_the_python_formula():
    z = ember.tensor(np.array([1 + 2j, -0.5 + 0.25j]), requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())
    z.grad = None
    (z.exp() * z).abs().sum().backward()
    zt = z.detach().numpy()
    f = np.exp(zt) * zt
    np.testing.assert_allclose(z.grad.numpy(), (f / np.abs(f)) * np.conj(np.exp(zt) * (zt + 1)))


def test_gradients_equal_finite_differences():
    x = _leaf((5,), np.float64)
    w = _leaf((5,), np.float64)

    def chain(x, w):
        h = (x * w + w).tanh()
        h = (h - x).sigmoid()
        h = (-(h * x)).exp()
        return (h / w).tanh()

    assert ember.autograd.gradcheck(chain, (x, w))


def test_tensor_backward_forms():
    x = _leaf((3,), np.float32)
    (x * x).sum().backward()  # implicit gradient of a scalar
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * x).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * x).backward(ember.ones(4))
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        (x * x).backward([1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(3).backward(ember.ones(3))
    y = x.exp()
    x.grad = None
    y.backward(ember.ones(3), retain_graph=True)
    y.backward(ember.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()), rtol=1e-6)
