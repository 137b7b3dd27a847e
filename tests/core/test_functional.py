"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp, against analytic
results and against torch.autograd.functional."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.autograd import functional as F

_rng = np.random.default_rng(0)
X = _rng.standard_normal((3, 2))
Y = _rng.standard_normal((3, 2))
V_IN = _rng.standard_normal((3, 2))
V_OUT = _rng.standard_normal(3)


def _t(a, T=ember, **kw):
    return T.tensor(np.asarray(a, dtype=np.float64), **kw)


# functions written once, for any library module T
def exp_reducer(x):
    return x.exp().sum(dim=1)


def two_in_two_out(x, y):
    return (x * y).sum(dim=1), (x.sin() * 2 + y).sum()


def cube_sum(x):
    return x.pow(3).sum()


def mixed_scalar(x, y):
    return (2 * x.pow(2) * y + 3 * y.pow(3)).sum()


def _np(r):
    if isinstance(r, tuple):
        return tuple(_np(v) for v in r)
    return r.detach().numpy()


def _close(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=False):
            _close(x, y)
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- analytic results ---------------------------------------------------------------

def test_jacobian_analytic():
    J = F.jacobian(exp_reducer, _t(X))
    expected = np.zeros((3, 3, 2))
    for i in range(3):
        expected[i, i] = np.exp(X[i])
    assert J.shape == (3, 3, 2) and not J.requires_grad
    np.testing.assert_allclose(J.numpy(), expected)


def test_jacobian_tuples_and_unused_input():
    (jxx, jxy), (jsx, jsy) = F.jacobian(two_in_two_out, (_t(X), _t(Y)))
    assert jxx.shape == (3, 3, 2) and jsx.shape == (3, 2) and jsy.shape == (3, 2)
    np.testing.assert_allclose(jsx.numpy(), 2 * np.cos(X))
    np.testing.assert_allclose(jsy.numpy(), np.ones((3, 2)))
    z = F.jacobian(lambda a, b: a * 2, (_t([1.0, 2.0]), _t([3.0])))
    np.testing.assert_allclose(z[0].numpy(), 2 * np.eye(2))
    np.testing.assert_allclose(z[1].numpy(), np.zeros((2, 1)))  # unused: zeros


def test_jacobian_create_graph_is_differentiable():
    x = _t([1.0, 2.0], requires_grad=True)
    J = F.jacobian(lambda a: a ** 3, x, create_graph=True)
    assert J.requires_grad
    (g,) = ember.autograd.grad(J.sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 12.0])      # d/dx of 3x^2


def test_hessian_analytic():
    x = np.array([1.0, -2.0, 0.5])
    H = F.hessian(cube_sum, _t(x))
    np.testing.assert_allclose(H.numpy(), np.diag(6 * x))
    (hxx, hxy), (hyx, hyy) = F.hessian(mixed_scalar, (_t([1.0, 2.0]), _t([3.0, -1.0])))
    np.testing.assert_allclose(hxx.numpy(), np.diag([12.0, -4.0]))   # 4y
    np.testing.assert_allclose(hxy.numpy(), np.diag([4.0, 8.0]))     # 4x
    np.testing.assert_allclose(hyx.numpy(), np.diag([4.0, 8.0]))
    np.testing.assert_allclose(hyy.numpy(), np.diag([54.0, -18.0]))  # 18y


def test_products_analytic():
    x = np.array([1.0, -2.0, 0.5])
    v = np.array([0.3, 1.0, -2.0])
    out, res = F.vjp(cube_sum, _t(x))
    np.testing.assert_allclose(out.numpy(), (x ** 3).sum())
    np.testing.assert_allclose(res.numpy(), 3 * x ** 2)
    out, res = F.jvp(lambda a: a ** 3, _t(x), _t(v))
    np.testing.assert_allclose(res.numpy(), 3 * x ** 2 * v)
    for fn in (F.hvp, F.vhp):
        out, res = fn(cube_sum, _t(x), _t(v))
        np.testing.assert_allclose(res.numpy(), 6 * x * v)
        assert not res.requires_grad and not out.requires_grad


def test_create_graph_products():
    x = _t([1.0, 2.0], requires_grad=True)
    out, res = F.vjp(lambda a: a ** 3, x, _t([1.0, 1.0]), create_graph=True)
    assert out.requires_grad and res.requires_grad
    (g,) = ember.autograd.grad(res.sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 12.0])
    _, res = F.hvp(cube_sum, x, _t([1.0, 0.0]), create_graph=True)
    (g,) = ember.autograd.grad(res.sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 0.0])


def test_errors():
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors"):
        F.jacobian(exp_reducer, [1.0])
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                                           "function returns a single Tensor with a single "
                                           "element."):
        F.vjp(exp_reducer, _t(X))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be ember.Size\(\[3\]\) "
                                           r"but got ember.Size\(\[2\]\)."):
        F.vjp(exp_reducer, _t(X), _t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="The function given to hessian should return a "
                                           "single Tensor"):
        F.hessian(lambda a: (a.sum(), a.sum()), _t([1.0]))
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hvp "
                                           "should contain a single element"):
        F.hvp(lambda a: a * 2, _t([1.0, 2.0]), _t([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1. This is not allowed in "
                                           "strict mode."):
        F.jacobian(lambda a, b: a * 2, (_t([1.0]), _t([1.0])), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.vjp(lambda a: _t([1.0]), _t([1.0]), strict=True)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        F.jacobian(exp_reducer, _t(X), strategy="forward-mode")


def test_does_not_touch_inputs():
    x = _t(X, requires_grad=True)
    F.jacobian(exp_reducer, x)
    F.hessian(cube_sum, x)
    assert x.grad is None and x.requires_grad


# -- against PyTorch ------------------------------------------------------------------

CALLS = {
    "jacobian_single": lambda T, M: M.jacobian(exp_reducer, _t(X, T)),
    "jacobian_tuple": lambda T, M: M.jacobian(two_in_two_out, (_t(X, T), _t(Y, T))),
    "jacobian_vectorize": lambda T, M: M.jacobian(exp_reducer, _t(X, T), vectorize=True),
    "hessian_single": lambda T, M: M.hessian(cube_sum, _t(X, T)),
    "hessian_tuple": lambda T, M: M.hessian(mixed_scalar, (_t(X, T), _t(Y, T))),
    "vjp": lambda T, M: M.vjp(exp_reducer, _t(X, T), _t(V_OUT, T)),
    "vjp_tuple": lambda T, M: M.vjp(two_in_two_out, (_t(X, T), _t(Y, T)),
                                    (_t(V_OUT, T), _t(2.0, T))),
    "jvp": lambda T, M: M.jvp(exp_reducer, _t(X, T), _t(V_IN, T)),
    "jvp_tuple": lambda T, M: M.jvp(two_in_two_out, (_t(X, T), _t(Y, T)),
                                    (_t(V_IN, T), _t(X, T))),
    "hvp": lambda T, M: M.hvp(cube_sum, _t(X, T), _t(V_IN, T)),
    "vhp": lambda T, M: M.vhp(cube_sum, _t(X, T), _t(V_IN, T)),
    "hvp_tuple": lambda T, M: M.hvp(mixed_scalar, (_t(X, T), _t(Y, T)),
                                    (_t(V_IN, T), _t(Y, T))),
    "vhp_tuple": lambda T, M: M.vhp(mixed_scalar, (_t(X, T), _t(Y, T)),
                                    (_t(V_IN, T), _t(Y, T))),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF

    ours = _np(CALLS[name](ember, F))
    theirs = _np(CALLS[name](torch, TF))
    _close(ours, theirs)


CREATE_GRAPH_CALLS = {
    "jacobian": lambda T, M, x: M.jacobian(exp_reducer, x, create_graph=True),
    "hessian": lambda T, M, x: M.hessian(cube_sum, x, create_graph=True),
    "vjp": lambda T, M, x: M.vjp(exp_reducer, x, _t(V_OUT, T), create_graph=True)[1],
    "jvp": lambda T, M, x: M.jvp(exp_reducer, x, _t(V_IN, T), create_graph=True)[1],
    "hvp": lambda T, M, x: M.hvp(cube_sum, x, _t(V_IN, T), create_graph=True)[1],
    "vhp": lambda T, M, x: M.vhp(cube_sum, x, _t(V_IN, T), create_graph=True)[1],
}


@pytest.mark.parametrize("name", sorted(CREATE_GRAPH_CALLS))
def test_create_graph_matches_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF

    grads = []
    for T, M in ((ember, F), (torch, TF)):
        x = _t(X, T, requires_grad=True)
        res = CREATE_GRAPH_CALLS[name](T, M, x)
        assert res.requires_grad
        (g,) = T.autograd.grad((res * res).sum(), x)
        grads.append(g.detach().numpy())
    _close(grads[0], grads[1])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2 ** 31 - 1))
def test_hypothesis_quadratic_form(n, seed):
    # f(x) = x^T A x has gradient (A + A^T) x and Hessian A + A^T
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    x = rng.standard_normal(n)
    v = rng.standard_normal(n)
    A = _t(a)

    def f(t):
        return (t * A.matmul(t)).sum()

    H = F.hessian(f, _t(x))
    np.testing.assert_allclose(H.numpy(), a + a.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(F.vjp(f, _t(x))[1].numpy(), (a + a.T) @ x, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(F.hvp(f, _t(x), _t(v))[1].numpy(), (a + a.T) @ v, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(F.jacobian(lambda t: A.matmul(t), _t(x)).numpy(), a,
                               rtol=1e-10, atol=1e-12)
