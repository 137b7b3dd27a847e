"""The elementwise-style layers of ember.nn and their functional forms, without PyTorch:
activations, softmax family, linear/bilinear, dropout, embedding/embedding_bag, padding,
distances, pixel/channel shuffle, one_hot and normalize.

Forward passes are checked against NumPy references, gradients with finite differences
in float64 (gradcheck, and gradgradcheck for the recorded create_graph backward), and
the error messages against PyTorch's. tests/interop/test_nn_layers_torch.py compares
the same layers with torch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def arr(t):
    return t.detach().numpy()


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


def _softplus_ref(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(beta * x)) / beta)


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# (id, function of a tensor, NumPy reference): every pointwise activation of the family.
POINTWISE = [
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("relu6", F.relu6, lambda x: np.clip(x, 0, 6)),
    ("hardtanh", lambda x: F.hardtanh(x, -0.7, 1.3), lambda x: np.clip(x, -0.7, 1.3)),
    ("threshold", lambda x: F.threshold(x, 0.2, -3.0), lambda x: np.where(x > 0.2, x, -3.0)),
    ("elu", lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x))),
    ("selu", F.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    ("celu", lambda x: F.celu(x, 0.7),
     lambda x: np.maximum(x, 0) + np.minimum(0, 0.7 * np.expm1(x / 0.7))),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("rrelu_eval", lambda x: F.rrelu(x, 0.1, 0.3), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("gelu", F.gelu, lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", F.silu, lambda x: x * _sig(x)),
    ("mish", F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hardsigmoid", F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    ("hardshrink", lambda x: F.hardshrink(x, 0.4), lambda x: np.where(np.abs(x) > 0.4, x, 0)),
    ("softshrink", lambda x: F.softshrink(x, 0.4),
     lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0))),
    ("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x)),
    ("sigmoid", F.sigmoid, _sig),
    ("tanh", F.tanh, np.tanh),
    ("logsigmoid", F.logsigmoid, lambda x: np.log(_sig(x))),
    ("softplus", F.softplus, _softplus_ref),
    ("softplus_beta", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
     lambda x: _softplus_ref(x, 2.0, 3.0)),
    ("softsign", F.softsign, lambda x: x / (1 + np.abs(x))),
]
IDS = [p[0] for p in POINTWISE]


def _points(shape=(3, 7), scale=3.0, seed=1):
    """Values away from the kinks (|x - k| > 1e-3 for the kinks of the table)."""
    x = np.random.default_rng(seed).uniform(-scale, scale, shape)
    kinks = np.array([0, 6, -0.7, 1.3, 0.2, 0.4, -0.4, 3, -3, 1.5])
    near = np.abs(x[..., None] - kinks).min(-1) < 1e-2
    return np.where(near, x + 0.05, x)


@pytest.mark.parametrize("name,fn,ref", POINTWISE, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_forward(name, fn, ref, dtype):
    x = _points().astype(dtype)
    out = fn(ember.tensor(x))
    assert out.dtype == ember.tensor(x).dtype
    assert out.shape == x.shape
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(arr(out), ref(x.astype(np.float64)), rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("name,fn,ref", POINTWISE, ids=IDS)
def test_pointwise_gradcheck(name, fn, ref):
    x = t64(_points((2, 5)))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name,fn,ref", POINTWISE, ids=IDS)
def test_pointwise_noncontiguous_and_empty(name, fn, ref):
    x = _points((6, 4))
    t = ember.tensor(x).t()
    np.testing.assert_allclose(arr(fn(t)), ref(x.T), rtol=1e-5, atol=1e-6)
    assert fn(ember.zeros(0, 3)).shape == (0, 3)


def test_pointwise_extreme_values_are_finite():
    x = ember.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
    for f in (F.silu, F.mish, F.logsigmoid, F.softplus, F.elu, F.selu, F.celu, F.gelu):
        y = f(x)
        y.sum().backward()
        assert np.isfinite(arr(y)).all(), f
        assert np.isfinite(x.grad.numpy()).all(), f
        x.grad = None
    np.testing.assert_allclose(arr(F.logsigmoid(x))[[0, 4]], [-1000.0, 0.0])
    np.testing.assert_allclose(arr(F.softplus(x))[[0, 4]], [0.0, 1000.0])


INPLACE = [
    ("relu", lambda x: F.relu(x, inplace=True), F.relu_, F.relu),
    ("elu", lambda x: F.elu(x, 0.5, inplace=True), lambda x: F.elu_(x, 0.5),
     lambda x: F.elu(x, 0.5)),
    ("selu", lambda x: F.selu(x, inplace=True), F.selu_, F.selu),
    ("celu", lambda x: F.celu(x, 0.5, inplace=True), lambda x: F.celu_(x, 0.5),
     lambda x: F.celu(x, 0.5)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.3, True), lambda x: F.leaky_relu_(x, 0.3),
     lambda x: F.leaky_relu(x, 0.3)),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5, True), lambda x: F.hardtanh_(x, -0.5, 0.5),
     lambda x: F.hardtanh(x, -0.5, 0.5)),
    ("threshold", lambda x: F.threshold(x, 0.1, 2.0, True), lambda x: F.threshold_(x, 0.1, 2.0),
     lambda x: F.threshold(x, 0.1, 2.0)),
    ("rrelu", lambda x: F.rrelu(x, inplace=True), F.rrelu_, F.rrelu),
    ("relu6", lambda x: F.relu6(x, inplace=True), None, F.relu6),
    ("silu", lambda x: F.silu(x, inplace=True), None, F.silu),
    ("mish", lambda x: F.mish(x, inplace=True), None, F.mish),
    ("hardswish", lambda x: F.hardswish(x, inplace=True), None, F.hardswish),
    ("hardsigmoid", lambda x: F.hardsigmoid(x, inplace=True), None, F.hardsigmoid),
]


@pytest.mark.parametrize("name,inplace,underscore,plain", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants(name, inplace, underscore, plain):
    x = _points((3, 4))
    for fn in (inplace, underscore):
        if fn is None:
            continue
        t = ember.tensor(x)
        out = fn(t)
        assert out is t
        np.testing.assert_allclose(arr(t), arr(plain(ember.tensor(x))), rtol=1e-6)
    # under autograd: on a non-leaf, gradients equal the out-of-place form's
    a = t64(x)
    b = t64(x)
    inplace(a * 1.0).sum().backward()
    plain(b * 1.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        inplace(t64(x))


def test_pointwise_dtype_errors():
    i = ember.tensor([1, -2, 3])
    for fn, kernel in [(F.elu, "elu_cpu"), (F.selu, "elu_cpu"), (F.leaky_relu, "leaky_relu_cpu"),
                       (F.gelu, "GeluKernelImpl"), (F.silu, "silu_cpu"), (F.mish, "mish_cpu"),
                       (F.hardswish, "hardswish_cpu"), (F.hardsigmoid, "hardsigmoid_cpu"),
                       (F.hardshrink, "hardshrink_cpu"), (F.logsigmoid, "log_sigmoid_cpu"),
                       (F.softplus, "softplus_cpu")]:
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Long\''):
            fn(i)
    # integer inputs that PyTorch takes
    np.testing.assert_array_equal(arr(F.relu(i)), [1, 0, 3])
    np.testing.assert_array_equal(arr(F.hardtanh(i)), [1, -1, 1])
    assert F.hardtanh(i).dtype == ember.int64
    np.testing.assert_array_equal(arr(F.threshold(i, 1.5, 5.5)), [5, 5, 3])
    assert F.softsign(i).dtype == ember.float32
    assert F.tanhshrink(i).dtype == ember.float32
    b = ember.tensor([True, False])
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.hardtanh(b)
    with pytest.raises(NotImplementedError, match='"threshold_cpu" not implemented for \'Bool\''):
        F.threshold(b, 0.5, 1.0)


def test_pointwise_argument_errors():
    x = ember.randn(2, 3)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(x, approximate="foo")
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for "
                                           "input dtype Float, but found -1"):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(2\)"):
        nn.Hardtanh(2, 1)


def test_rrelu_training():
    ember.manual_seed(3)
    x = ember.tensor(-np.abs(_points((200,))) - 0.1, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = arr(y) / arr(x)
    assert (slopes >= 0.1).all() and (slopes < 0.3).all()
    assert slopes.std() > 0.03  # random, one slope per element
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-5)
    pos = ember.tensor([1.0, 2.0])
    np.testing.assert_array_equal(arr(F.rrelu(pos, training=True)), [1.0, 2.0])
    ember.manual_seed(5)
    a = F.rrelu(x.detach(), training=True)
    ember.manual_seed(5)
    b = F.rrelu(x.detach(), training=True)
    np.testing.assert_array_equal(arr(a), arr(b))
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(arr(m(x)), 0.2 * arr(x), rtol=1e-6)


def test_prelu():
    x = t64(_points((2, 3, 4)))
    w = t64([0.1, 0.2, 0.3])
    out = F.prelu(x, w)
    xa = arr(x)
    np.testing.assert_allclose(arr(out), np.where(xa > 0, xa, xa * np.array([0.1, 0.2, 0.3])
                                                  [:, None]))
    assert gradcheck(F.prelu, (x, w))
    assert gradcheck(F.prelu, (t64(_points((4,))), t64([0.25])))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 2 and channel size "
                                           "= 3."):
        F.prelu(ember.randn(2, 3), ember.ones(2))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, "
                                           "but got: ndim = 2"):
        F.prelu(ember.randn(2, 3), ember.ones(1, 3))
    m = nn.PReLU(3, init=0.1)
    np.testing.assert_allclose(m.weight.detach().numpy(), [0.1] * 3)
    assert nn.PReLU().weight.item() == 0.25
    assert list(m.state_dict()) == ["weight"]


def test_glu():
    x = t64(RNG.standard_normal((2, 6)))
    a, b = arr(x)[:, :3], arr(x)[:, 3:]
    np.testing.assert_allclose(arr(F.glu(x)), a * _sig(b))
    np.testing.assert_allclose(arr(F.glu(x, 0)), arr(x)[:1] * _sig(arr(x)[1:]))
    assert gradcheck(lambda t: F.glu(t, 1), (x,))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 3"):
        F.glu(ember.randn(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ember.tensor(1.0))


# ---------------------------------------------------------------------------
# softmax family

def _np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_softmax_family_forward(dim):
    x = RNG.standard_normal((3, 4, 5)) * 4
    sm = _np_softmax(x, dim)
    np.testing.assert_allclose(arr(F.softmax(ember.tensor(x), dim)), sm, rtol=1e-12)
    np.testing.assert_allclose(arr(F.log_softmax(ember.tensor(x), dim)), np.log(sm),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(arr(F.softmin(ember.tensor(x), dim)), _np_softmax(-x, dim),
                               rtol=1e-12)
    x32 = ember.tensor(x.astype(np.float32))
    assert F.softmax(x32, dim).dtype == ember.float32
    np.testing.assert_allclose(arr(F.softmax(x32, dim)), sm, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.softmin])
def test_softmax_family_grad(fn):
    x = t64(RNG.standard_normal((3, 4)))
    assert gradcheck(lambda t: fn(t, 1), (x,))
    assert gradcheck(lambda t: fn(t, 0), (x,))
    assert gradgradcheck(lambda t: fn(t, -1), (x,))


def test_softmax_stability_and_edge_cases():
    x = ember.tensor([[1000.0, 0.0, -1000.0]])
    np.testing.assert_allclose(arr(F.softmax(x, 1)), [[1, 0, 0]])
    np.testing.assert_allclose(arr(F.log_softmax(x, 1)), [[0, -1000, -2000]])
    assert F.softmax(ember.tensor(2.0), 0).item() == 1.0
    assert F.log_softmax(ember.tensor(2.0), -1).item() == 0.0
    assert F.softmax(ember.zeros(0, 3), 0).shape == (0, 3)
    assert F.log_softmax(ember.zeros(2, 0), 1).shape == (2, 0)
    # dtype= casts first
    i = ember.tensor([1, 2, 3])
    out = F.softmax(i, 0, dtype=ember.float64)
    assert out.dtype == ember.float64
    np.testing.assert_allclose(arr(out), _np_softmax(np.array([1.0, 2, 3]), 0))
    assert F.log_softmax(ember.randn(3), 0, dtype=ember.float64).dtype == ember.float64


def test_softmax_errors_and_implicit_dim():
    with pytest.raises(NotImplementedError,
                       match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.softmax(ember.tensor([1, 2]), 0)
    with pytest.raises(NotImplementedError,
                       match="\"softmax_kernel_impl\" not implemented for 'Long'"):
        F.softmax(ember.tensor([[1, 2]]), 0)
    with pytest.raises(NotImplementedError,
                       match="\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.log_softmax(ember.tensor([1, 2]), 0)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        F.softmax(ember.randn(2, 3), 2)
    x = RNG.standard_normal((2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been "
                                         "deprecated"):
        out = F.softmax(ember.tensor(x))
    np.testing.assert_allclose(arr(out), _np_softmax(x, 1), rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(ember.randn(3))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(ember.randn(2, 3))


def test_softmax2d():
    x = RNG.standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(arr(nn.Softmax2d()(ember.tensor(x))), _np_softmax(x, 1),
                               rtol=1e-12)
    np.testing.assert_allclose(arr(nn.Softmax2d()(ember.tensor(x[0]))), _np_softmax(x[0], 0),
                               rtol=1e-12)


# ---------------------------------------------------------------------------
# linear, bilinear

@pytest.mark.parametrize("xshape", [(4, 3), (3,), (2, 5, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_and_grad(xshape, bias):
    x = RNG.standard_normal(xshape)
    w = RNG.standard_normal((2, 3))
    b = RNG.standard_normal(2) if bias else None
    out = F.linear(ember.tensor(x), ember.tensor(w), None if b is None else ember.tensor(b))
    ref = x @ w.T + (0 if b is None else b)
    assert out.shape == ref.shape
    np.testing.assert_allclose(arr(out), ref, rtol=1e-12)
    args = (t64(x), t64(w)) + ((t64(b),) if bias else ())
    assert gradcheck(F.linear, args)
    assert gradgradcheck(F.linear, args)


def test_linear_variants():
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3))
    # a bias that broadcasts to the output
    b2 = RNG.standard_normal((4, 2))
    assert gradcheck(F.linear, (t64(x), t64(w), t64(b2)))
    # a 1-d weight: a dot product per row
    v = RNG.standard_normal(3)
    np.testing.assert_allclose(arr(F.linear(ember.tensor(x), ember.tensor(v))), x @ v)
    # integers
    i = F.linear(ember.tensor([[1, 2]]), ember.tensor([[1, 2]]))
    assert i.dtype == ember.int64 and i.tolist() == [[5]]
    # empty inner dimension: the bias
    out = F.linear(ember.zeros(2, 0), ember.zeros(4, 0), ember.ones(4))
    np.testing.assert_array_equal(arr(out), np.ones((2, 4)))


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(4x3 and 5x2\)"):
        F.linear(ember.randn(4, 3), ember.randn(2, 5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(10x3 and 5x2\)"):
        F.linear(ember.randn(2, 5, 3), ember.randn(2, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but "
                                           "got: double != float"):
        F.linear(ember.randn(4, 3, dtype=ember.float64), ember.randn(2, 3))
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got "
                                           "Double and Float"):
        F.linear(ember.randn(4, 3), ember.randn(2, 3), ember.randn(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(2\) must match "
                                           r"the existing size \(3\) at non-singleton "
                                           r"dimension 1.  Target sizes: \[4, 2\].  Tensor "
                                           r"sizes: \[3\]"):
        F.linear(ember.randn(4, 3), ember.randn(2, 3), ember.randn(3))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D, "
                                           "but they are 0D and 2D"):
        F.linear(ember.tensor(1.0), ember.randn(4, 3))
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but "
                                           "self is 3D"):
        F.linear(ember.randn(2, 3), ember.randn(2, 4, 3))
    with pytest.raises(TypeError, match="linear\\(\\): argument 'weight' \\(position 2\\) must "
                                        "be Tensor, not list"):
        F.linear(ember.randn(2, 3), [[1.0]])


def test_linear_version_check():
    lin = nn.Linear(3, 2)
    out = lin(ember.randn(4, 3)).sum()
    with ember.no_grad():
        lin.weight.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_bilinear():
    x1, x2 = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    w, b = RNG.standard_normal((5, 3, 2)), RNG.standard_normal(5)
    ref = np.einsum("ni,kij,nj->nk", x1, w, x2) + b
    out = F.bilinear(ember.tensor(x1), ember.tensor(x2), ember.tensor(w), ember.tensor(b))
    np.testing.assert_allclose(arr(out), ref, rtol=1e-12)
    assert gradcheck(F.bilinear, (t64(x1), t64(x2), t64(w), t64(b)))
    # leading batch dims and no bias
    y1, y2 = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    out = F.bilinear(ember.tensor(y1), ember.tensor(y2), ember.tensor(w))
    np.testing.assert_allclose(arr(out), np.einsum("abi,kij,abj->abk", y1, w, y2), rtol=1e-12)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not "
                                           "match at dim 0: got 2 and 3"):
        F.bilinear(ember.randn(2, 3), ember.randn(3, 4), ember.randn(5, 3, 4))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 4 but "
                                           "expected 5"):
        F.bilinear(ember.randn(2, 3), ember.randn(2, 4), ember.randn(5, 3, 5))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but "
                                           "expected 2"):
        F.bilinear(ember.randn(2, 3), ember.randn(2, 4), ember.randn(5, 2, 4))
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 4 but "
                                           "expected 5"):
        F.bilinear(ember.randn(2, 3), ember.randn(2, 4), ember.randn(5, 3, 4), ember.randn(4))


# ---------------------------------------------------------------------------
# modules: repr, state_dict keys, default initialization

REPRS = [
    (nn.Identity(3, k=1), "Identity()"),
    (nn.Linear(3, 4), "Linear(in_features=3, out_features=4, bias=True)"),
    (nn.Linear(3, 4, bias=False), "Linear(in_features=3, out_features=4, bias=False)"),
    (nn.Bilinear(2, 3, 4), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"),
    (nn.ReLU(), "ReLU()"), (nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (nn.ReLU6(), "ReLU6()"), (nn.ReLU6(True), "ReLU6(inplace=True)"),
    (nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (nn.PReLU(), "PReLU(num_parameters=1)"), (nn.PReLU(3, 0.1), "PReLU(num_parameters=3)"),
    (nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)"),
    (nn.RReLU(0.1, 0.3, True), "RReLU(lower=0.1, upper=0.3, inplace=True)"),
    (nn.ELU(), "ELU(alpha=1.0)"), (nn.ELU(2.0, True), "ELU(alpha=2.0, inplace=True)"),
    (nn.SELU(), "SELU()"), (nn.SELU(True), "SELU(inplace=True)"), (nn.CELU(), "CELU(alpha=1.0)"),
    (nn.GELU(), "GELU(approximate='none')"), (nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (nn.SiLU(), "SiLU()"),
    (nn.SiLU(True), "SiLU(inplace=True)"),
    (nn.Mish(True), "Mish(inplace=True)"),
    (nn.Hardswish(True), "Hardswish()"), (nn.Hardsigmoid(), "Hardsigmoid()"),
    (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (nn.Hardtanh(-2, 3, True), "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    (nn.Hardshrink(), "Hardshrink(0.5)"), (nn.Softshrink(0.3), "Softshrink(0.3)"),
    (nn.Tanhshrink(), "Tanhshrink()"),
    (nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"),
    (nn.Threshold(0.1, 20, True), "Threshold(threshold=0.1, value=20, inplace=True)"),
    (nn.Sigmoid(), "Sigmoid()"), (nn.LogSigmoid(), "LogSigmoid()"), (nn.Tanh(), "Tanh()"),
    (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"), (nn.Softsign(), "Softsign()"),
    (nn.Softmax(), "Softmax(dim=None)"), (nn.Softmax(1), "Softmax(dim=1)"),
    (nn.LogSoftmax(-1), "LogSoftmax(dim=-1)"), (nn.Softmin(0), "Softmin(dim=0)"),
    (nn.Softmax2d(), "Softmax2d()"), (nn.GLU(), "GLU(dim=-1)"),
    (nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (nn.Dropout(0.2, True), "Dropout(p=0.2, inplace=True)"),
    (nn.Dropout1d(), "Dropout1d(p=0.5, inplace=False)"),
    (nn.Dropout2d(0.3), "Dropout2d(p=0.3, inplace=False)"),
    (nn.Dropout3d(), "Dropout3d(p=0.5, inplace=False)"),
    (nn.AlphaDropout(), "AlphaDropout(p=0.5, inplace=False)"),
    (nn.FeatureAlphaDropout(0.1), "FeatureAlphaDropout(p=0.1, inplace=False)"),
    (nn.Embedding(10, 3), "Embedding(10, 3)"),
    (nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True),
     "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)"),
    (nn.Embedding(10, 3, padding_idx=-2), "Embedding(10, 3, padding_idx=8)"),
    (nn.EmbeddingBag(10, 3), "EmbeddingBag(10, 3, mode='mean')"),
    (nn.EmbeddingBag(10, 3, max_norm=2., norm_type=1., scale_grad_by_freq=True, mode="sum",
                     include_last_offset=True, padding_idx=2),
     "EmbeddingBag(10, 3, max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True, mode='sum', "
     "padding_idx=2)"),
    (nn.ZeroPad1d(2), "ZeroPad1d((2, 2))"), (nn.ZeroPad2d((1, 2, 3, 4)), "ZeroPad2d((1, 2, 3, 4))"),
    (nn.ZeroPad3d(1), "ZeroPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)"),
    (nn.ConstantPad2d(1, 0), "ConstantPad2d(padding=(1, 1, 1, 1), value=0)"),
    (nn.ConstantPad3d((1, 2, 3, 4, 5, 6), -1),
     "ConstantPad3d(padding=(1, 2, 3, 4, 5, 6), value=-1)"),
    (nn.ReflectionPad1d(2), "ReflectionPad1d((2, 2))"),
    (nn.ReflectionPad2d(1), "ReflectionPad2d((1, 1, 1, 1))"),
    (nn.ReflectionPad3d(1), "ReflectionPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.ReplicationPad1d((1, 2)), "ReplicationPad1d((1, 2))"),
    (nn.ReplicationPad2d(1), "ReplicationPad2d((1, 1, 1, 1))"),
    (nn.ReplicationPad3d(1), "ReplicationPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.CircularPad1d(1), "CircularPad1d((1, 1))"),
    (nn.CircularPad2d(1), "CircularPad2d((1, 1, 1, 1))"),
    (nn.CircularPad3d(1), "CircularPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.CosineSimilarity(), "CosineSimilarity()"), (nn.PairwiseDistance(), "PairwiseDistance()"),
    (nn.PixelShuffle(2), "PixelShuffle(upscale_factor=2)"),
    (nn.PixelUnshuffle(3), "PixelUnshuffle(downscale_factor=3)"),
    (nn.ChannelShuffle(2), "ChannelShuffle(groups=2)"),
]


@pytest.mark.parametrize("module,text", REPRS, ids=[r[1] for r in REPRS])
def test_module_repr(module, text):
    assert repr(module) == text


def test_module_state_dict_keys_and_attributes():
    assert list(nn.Linear(3, 4).state_dict()) == ["weight", "bias"]
    assert list(nn.Linear(3, 4, bias=False).state_dict()) == ["weight"]
    assert nn.Linear(3, 4, bias=False).bias is None
    assert list(nn.Bilinear(2, 3, 4).state_dict()) == ["weight", "bias"]
    assert list(nn.Embedding(5, 2).state_dict()) == ["weight"]
    assert list(nn.EmbeddingBag(5, 2).state_dict()) == ["weight"]
    for m in (nn.ReLU(), nn.Dropout(), nn.Softmax(1), nn.ZeroPad2d(1), nn.PixelShuffle(2)):
        assert list(m.state_dict()) == []
    lin = nn.Linear(3, 4)
    assert (lin.in_features, lin.out_features) == (3, 4)
    assert lin.weight.shape == (4, 3) and lin.bias.shape == (4,)
    assert nn.Bilinear(2, 3, 4).weight.shape == (4, 2, 3)
    pd = nn.PairwiseDistance(1, 1e-5, True)
    assert (pd.norm, pd.eps, pd.keepdim) == (1, 1e-5, True)
    emb = nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True)
    assert (emb.mode, emb.include_last_offset, emb.padding_idx) == ("sum", True, None)


def test_default_initialization():
    ember.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # uniform(-bound, bound)
    assert np.abs(b).max() <= bound and b.std() > 0.5 * bound / math.sqrt(3)
    bl = nn.Bilinear(50, 40, 30)
    bound = 1 / math.sqrt(50)
    assert np.abs(bl.weight.detach().numpy()).max() <= bound
    assert abs(bl.weight.detach().numpy().std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(bl.bias.detach().numpy()).max() <= bound
    emb = nn.Embedding(1000, 50, padding_idx=3)
    e = emb.weight.detach().numpy()
    assert abs(e.mean()) < 0.02 and abs(e.std() - 1) < 0.02
    np.testing.assert_array_equal(e[3], 0)
    bag = nn.EmbeddingBag(100, 4, padding_idx=-1)
    np.testing.assert_array_equal(bag.weight.detach().numpy()[99], 0)
    assert lin.weight.requires_grad and emb.weight.requires_grad
    assert nn.Linear(3, 2, dtype=ember.float64).weight.dtype == ember.float64
    assert nn.Linear(0, 2).weight.shape == (2, 0)


def test_dropout_module_errors():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got -0.1"):
        F.dropout(ember.randn(3), -0.1)


# ---------------------------------------------------------------------------
# dropout

def test_dropout_semantics():
    x = ember.ones(200, 100)
    assert F.dropout(x, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.alpha_dropout(x) is x  # training=False by default
    assert F.dropout2d(ember.ones(2, 3, 4, 5), training=False).shape == (2, 3, 4, 5)
    ember.manual_seed(0)
    y = arr(F.dropout(x, 0.3))
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.02
    np.testing.assert_array_equal(arr(F.dropout(x, 1.0)), np.zeros((200, 100)))
    # reproducible with the seed
    ember.manual_seed(7)
    a = arr(F.dropout(x, 0.5))
    ember.manual_seed(7)
    np.testing.assert_array_equal(a, arr(F.dropout(x, 0.5)))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        F.dropout(ember.tensor([1, 2]), 0.5)


def test_dropout_backward_uses_the_mask():
    ember.manual_seed(1)
    x = ember.randn(50, 40, requires_grad=True)
    y = F.dropout(x, 0.4)
    y.backward(ember.ones(50, 40))
    kept = arr(y) != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.6, 0), rtol=1e-6)
    # create_graph: the gradient is recorded (a function of the incoming gradient)
    x.grad = None
    g = ember.ones(50, 40, requires_grad=True)
    (gx,) = ember.autograd.grad(F.dropout(x, 0.4), x, g, create_graph=True)
    assert gx.requires_grad


def test_dropout_inplace():
    ember.manual_seed(2)
    x = ember.ones(10, 10)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x
    assert set(np.unique(arr(x))) <= {0.0, 2.0}
    a = ember.ones(10, 10, requires_grad=True)
    h = a * 1
    F.dropout(h, 0.5, inplace=True).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), arr(h))


@pytest.mark.parametrize("fn,shape,mask_dims", [
    (F.dropout1d, (4, 6, 30), 2), (F.dropout1d, (40, 30), 1),
    (F.dropout2d, (4, 6, 5, 6), 2), (F.dropout3d, (4, 6, 2, 3, 5), 2),
    (F.dropout3d, (40, 2, 3, 5), 1),
])
def test_channel_dropout(fn, shape, mask_dims):
    ember.manual_seed(4)
    y = arr(fn(ember.ones(*shape), 0.5))
    flat = y.reshape(shape[:mask_dims] + (-1,))
    # every channel is either all zero or all 2
    assert ((flat == 0).all(-1) | (flat == 2).all(-1)).all()
    assert (flat == 0).all(-1).any() and (flat == 2).all(-1).any()


def test_channel_dropout_warnings_and_errors():
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d"):
        y = F.dropout2d(ember.ones(2, 3, 4))
    assert y.shape == (2, 3, 4)
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d, which "
                                         "is deprecated"):
        F.dropout2d(ember.ones(2, 3))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d"):
        F.dropout3d(ember.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "4D input."):
        F.dropout1d(ember.ones(2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in "
                                           "the input"):
        F.feature_alpha_dropout(ember.ones(3), training=True)


def test_alpha_dropout_keeps_statistics():
    ember.manual_seed(0)
    x = ember.randn(400, 500)
    y = arr(F.alpha_dropout(x, 0.2, training=True))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    ya = arr(F.feature_alpha_dropout(ember.randn(100, 200, 10), 0.3, training=True))
    assert abs(ya.mean()) < 0.03 and abs(ya.std() - 1) < 0.03
    dropped = 1.7580993408473766
    a = 1 / math.sqrt((dropped ** 2 * 0.2 + 1) * 0.8)
    b = dropped * a * 0.2 - dropped * a  # the value of dropped elements
    xa = arr(x)
    is_dropped = np.isclose(y, b, atol=1e-6) & ~np.isclose(xa * a + dropped * a * 0.2, b)
    assert abs(is_dropped.mean() - 0.2) < 0.01
    m = nn.AlphaDropout(0.2)
    m.eval()
    assert m(x) is x
    np.testing.assert_array_equal(arr(F.alpha_dropout(x, 1.0, training=True)), 0)


def test_dropout_modules_follow_training_mode():
    m = nn.Sequential(nn.Dropout(0.5), nn.Dropout2d(0.5))
    x = ember.ones(4, 8, 3, 3)
    m.eval()
    np.testing.assert_array_equal(arr(m(x)), arr(x))
    m.train()
    ember.manual_seed(0)
    assert (arr(m(x)) == 0).any()


# ---------------------------------------------------------------------------
# padding

_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}


def _np_pad(x, pad, mode, value=0.0):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, mode=_NP_MODES[mode], **kw)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [
    ((2, 5), (2, 1)), ((2, 3, 5), (1, 3)), ((3, 4, 5), (1, 2, 3, 0)),
    ((2, 3, 4, 5), (2, 1, 1, 2)), ((2, 3, 3, 4, 5), (1, 1, 2, 1, 0, 2)),
    ((1, 3, 4, 4, 3), (1, 2, 2, 1, 1, 1)),
])
def test_pad_modes(mode, shape, pad):
    x = RNG.standard_normal(shape)
    out = F.pad(ember.tensor(x), pad, mode=mode)
    np.testing.assert_array_equal(arr(out), _np_pad(x, pad, mode))
    assert gradcheck(lambda t: F.pad(t, pad, mode=mode), (t64(x),))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_gradgrad(mode):
    x = t64(RNG.standard_normal((1, 2, 4)))
    assert gradgradcheck(lambda t: F.pad(t, (2, 1), mode=mode) ** 2, (x,))


def test_pad_negative_amounts_crop():
    x = np.arange(6.0).reshape(1, 2, 3)
    t = ember.tensor(x)
    np.testing.assert_array_equal(arr(F.pad(t, (-1, 1), mode="reflect")),
                                  [[[1, 2, 1], [4, 5, 4]]])
    np.testing.assert_array_equal(arr(F.pad(t, (-1, 1), mode="replicate")),
                                  [[[1, 2, 2], [4, 5, 5]]])
    np.testing.assert_array_equal(arr(F.pad(t, (-1, 1), mode="circular")),
                                  [[[1, 2, 1], [4, 5, 4]]])
    np.testing.assert_array_equal(arr(F.pad(t, (-3, 1))), np.zeros((1, 2, 1)))
    np.testing.assert_array_equal(arr(F.pad(t, (1, -2, 0, 0, -1, 1))), np.zeros((1, 2, 2)))
    assert gradcheck(lambda a: F.pad(a, (-1, 2, 1, -1)), (t64(x),))
    np.testing.assert_array_equal(arr(F.pad(t, (3, 1), mode="circular")),
                                  [[[0, 1, 2, 0, 1, 2, 0], [3, 4, 5, 3, 4, 5, 3]]])


def test_pad_values_and_dtypes():
    np.testing.assert_array_equal(arr(F.pad(ember.tensor([0, 1, 2]), (1, 1), value=2.5)),
                                  [2, 0, 1, 2, 2])
    out = F.pad(ember.ones(2, 2), [1, 1], "constant", 7.0)
    np.testing.assert_array_equal(arr(out), _np_pad(np.ones((2, 2)), (1, 1), "constant", 7.0))
    assert F.pad(ember.zeros(0, 3, 3), (1, 1), mode="reflect").shape == (0, 3, 5)
    assert F.pad(ember.ones(1, 2, 3), (1, 1), mode="reflect", value=0.0).shape == (1, 2, 5)


def test_pad_errors():
    x = ember.ones(1, 2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                                           "times the input dimension but got padding length 8 "
                                           "and input of dimension 3"):
        F.pad(x, (1, 1) * 4)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value '
                                           'argument'):
        F.pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(RuntimeError, match=r"Argument #4: Padding size should be less than the "
                                           r"corresponding input dimension, but got: padding "
                                           r"\(3, 1\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than "
                                           "once."):
        F.pad(x, (4, 1), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D "
                                                  "input tensor."):
        F.pad(ember.ones(3), (1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="Padding size 6 is not supported for 3D"):
        F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate")
    with pytest.raises(RuntimeError, match="narrow\\(\\): length must be non-negative."):
        F.pad(x, (-4, 1))
    with pytest.raises(TypeError, match="pad\\(\\): argument 'pad' \\(position 2\\) must be "
                                        "tuple of ints, but found element of type float at "
                                        "pos 0"):
        F.pad(x, (1.5, 1))
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor with "
                                           r"possibly 0 batch size and other non-zero "
                                           r"dimensions for input, but got: \[1, 3, 0\]"):
        F.pad(ember.zeros(1, 3, 0), (1, 1), mode="replicate")
    with pytest.raises(ValueError, match="expected 3D or 4D input \\(got 2D input\\)"):
        nn.CircularPad2d(1)(ember.ones(2, 2))


@pytest.mark.parametrize("module,mode,pad", [
    (nn.ZeroPad1d(2), "constant", (2, 2)), (nn.ZeroPad2d((1, 0, 2, 1)), "constant", (1, 0, 2, 1)),
    (nn.ConstantPad3d(1, 3.0), "constant", (1,) * 6),
    (nn.ReflectionPad1d((2, 1)), "reflect", (2, 1)),
    (nn.ReflectionPad2d(1), "reflect", (1,) * 4), (nn.ReflectionPad3d(1), "reflect", (1,) * 6),
    (nn.ReplicationPad1d(3), "replicate", (3, 3)), (nn.ReplicationPad2d((0, 1, 2, 0)), "replicate",
                                                    (0, 1, 2, 0)),
    (nn.ReplicationPad3d(2), "replicate", (2,) * 6), (nn.CircularPad1d(2), "circular", (2, 2)),
    (nn.CircularPad2d(1), "circular", (1,) * 4), (nn.CircularPad3d((1, 0, 0, 1, 1, 1)), "circular",
                                                  (1, 0, 0, 1, 1, 1)),
])
def test_padding_modules(module, mode, pad):
    x = RNG.standard_normal((2, 3, 4, 4, 5)[: 2 + len(pad) // 2])
    value = getattr(module, "value", 0.0)
    np.testing.assert_array_equal(arr(module(ember.tensor(x))), _np_pad(x, pad, mode, value))


# ---------------------------------------------------------------------------
# distances, shuffles, normalize, one_hot

def test_cosine_similarity():
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    ref = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(arr(F.cosine_similarity(ember.tensor(a), ember.tensor(b))), ref,
                               rtol=1e-12)
    assert gradcheck(F.cosine_similarity, (t64(a), t64(b)))
    ref0 = (a * b).sum(0) / (np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0))
    np.testing.assert_allclose(arr(nn.CosineSimilarity(0)(ember.tensor(a), ember.tensor(b))),
                               ref0, rtol=1e-12)
    # broadcasting and the eps clamp
    out = F.cosine_similarity(ember.tensor(a), ember.tensor(b[:1]), dim=-1)
    assert out.shape == (4,)
    z = F.cosine_similarity(ember.zeros(2, 3), ember.ones(2, 3))
    np.testing.assert_array_equal(arr(z), [0.0, 0.0])
    x = ember.zeros(2, 3, requires_grad=True)
    F.cosine_similarity(x, ember.ones(2, 3)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet "
                                           "common dtype is Long"):
        F.cosine_similarity(ember.tensor([[1, 2]]), ember.tensor([[1, 2]]))


def test_pairwise_distance_and_pdist():
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    for p in (1.0, 2.0, 3.0, math.inf):
        ref = np.linalg.norm(a - b + 1e-6, ord=p, axis=1)
        np.testing.assert_allclose(arr(F.pairwise_distance(ember.tensor(a), ember.tensor(b), p)),
                                   ref, rtol=1e-12)
    assert F.pairwise_distance(ember.tensor(a), ember.tensor(b), keepdim=True).shape == (4, 1)
    assert F.pairwise_distance(ember.tensor(a), ember.tensor(b[0])).shape == (4,)
    assert gradcheck(F.pairwise_distance, (t64(a), t64(b)))
    i, j = np.triu_indices(4, 1)
    np.testing.assert_allclose(arr(F.pdist(ember.tensor(a))),
                               np.linalg.norm(a[i] - a[j], axis=1), rtol=1e-12)
    np.testing.assert_allclose(arr(F.pdist(ember.tensor(a), 1)),
                               np.abs(a[i] - a[j]).sum(1), rtol=1e-12)
    assert gradcheck(F.pdist, (t64(a),))
    assert F.pdist(ember.randn(1, 2)).shape == (0,)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(ember.randn(3, 2, 1))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(ember.randn(3, 2), -1)


def test_pixel_and_channel_shuffle():
    x = RNG.standard_normal((2, 8, 3, 5))
    out = arr(F.pixel_shuffle(ember.tensor(x), 2))
    ref = x.reshape(2, 2, 2, 2, 3, 5).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 10)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(arr(F.pixel_unshuffle(ember.tensor(out), 2)), x)
    np.testing.assert_array_equal(arr(nn.PixelShuffle(2)(ember.tensor(x[0]))), ref[0])
    assert nn.PixelUnshuffle(3)(ember.randn(1, 2, 3, 6, 9)).shape == (1, 2, 27, 2, 3)
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2), (t64(x[:1]),))
    y = np.arange(12.0).reshape(1, 6, 2)
    cs = arr(F.channel_shuffle(ember.tensor(y), 3))
    np.testing.assert_array_equal(cs, y.reshape(1, 3, 2, 2).transpose(0, 2, 1, 3).reshape(1, 6, 2))
    np.testing.assert_array_equal(arr(nn.ChannelShuffle(2)(ember.tensor(y))),
                                  y.reshape(1, 2, 3, 2).transpose(0, 2, 1, 3).reshape(1, 6, 2))
    assert gradcheck(lambda t: F.channel_shuffle(t, 2), (t64(y),))
    with pytest.raises(RuntimeError, match="pixel_shuffle expects its input's 'channel' "
                                           "dimension to be divisible by the square of "
                                           "upscale_factor, but input.size\\(-3\\)=5 is not "
                                           "divisible by 4"):
        F.pixel_shuffle(ember.randn(5, 3, 3), 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects input to have at least 3 "
                                           "dimensions, but got input with 2 dimension"):
        F.pixel_shuffle(ember.randn(4, 3), 2)
    with pytest.raises(RuntimeError, match="pixel_unshuffle expects width to be divisible by "
                                           "downscale_factor, but input.size\\(-1\\)=3 is not "
                                           "divisible by 2"):
        F.pixel_unshuffle(ember.randn(4, 4, 3), 2)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. "
                                           "Got 5 channels and 2 groups."):
        F.channel_shuffle(ember.randn(2, 5, 3), 2)
    with pytest.raises(RuntimeError, match="channel_shuffle expects input with > 2 dims, but "
                                           "got input with sizes \\[2, 4\\]"):
        F.channel_shuffle(ember.randn(2, 4), 2)


def test_normalize():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(arr(F.normalize(ember.tensor(x))),
                               x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(arr(F.normalize(ember.tensor(x), p=1, dim=0)),
                               x / np.abs(x).sum(0), rtol=1e-12)
    np.testing.assert_array_equal(arr(F.normalize(ember.zeros(2, 3))), np.zeros((2, 3)))
    assert gradcheck(lambda t: F.normalize(t, dim=-1), (t64(x),))
    out = ember.empty(3, 4, dtype=ember.float64)
    assert F.normalize(ember.tensor(x), out=out) is out


def test_one_hot():
    out = F.one_hot(ember.tensor([0, 2, 1]))
    assert out.dtype == ember.int64
    np.testing.assert_array_equal(arr(out), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(ember.tensor([[1], [0]]), 4).shape == (2, 1, 4)
    assert F.one_hot(ember.tensor([], dtype=ember.int64), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type "
                                           "LongTensor."):
        F.one_hot(ember.tensor([0.0, 2.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(ember.tensor([0, -2]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(ember.tensor([0, 5]), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty "
                                           "tensor."):
        F.one_hot(ember.tensor([], dtype=ember.int64))


def test_functional_namespace():
    names = ["threshold", "relu", "relu_", "hardtanh", "relu6", "elu", "elu_", "selu", "celu",
             "leaky_relu", "prelu", "rrelu", "glu", "gelu", "logsigmoid", "hardshrink",
             "tanhshrink", "softsign", "softplus", "softmin", "softmax", "log_softmax",
             "softshrink", "tanh", "sigmoid", "hardsigmoid", "silu", "mish", "hardswish",
             "normalize", "one_hot", "linear", "bilinear", "dropout", "alpha_dropout",
             "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "embedding",
             "embedding_bag", "pad", "cosine_similarity", "pairwise_distance", "pdist",
             "pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]
    for name in names:
        assert callable(getattr(F, name)), name
        assert name in F.__all__


def test_modules_run_forward():
    x = ember.randn(2, 4, 3, 4)
    for cls in (nn.ReLU, nn.ReLU6, nn.LeakyReLU, nn.PReLU, nn.RReLU, nn.ELU, nn.SELU, nn.CELU,
                nn.GELU, nn.SiLU, nn.Mish, nn.Hardswish, nn.Hardsigmoid, nn.Hardtanh,
                nn.Hardshrink, nn.Softshrink, nn.Tanhshrink, nn.Sigmoid, nn.LogSigmoid,
                nn.Tanh, nn.Softplus, nn.Softsign, nn.GLU, nn.Identity, nn.Softmax2d):
        assert cls()(x).shape[:-1] == x.shape[:-1], cls
    for m in (nn.Softmax(1), nn.LogSoftmax(1), nn.Softmin(1), nn.Threshold(0.1, 0.0)):
        assert m(x).shape == x.shape
    inplace = ember.randn(3, 3)
    assert nn.ReLU(inplace=True)(inplace) is inplace


def test_mlp_trains():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3),
                          nn.LogSoftmax(dim=1))
    x = ember.randn(64, 4)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = []
    for _ in range(60):
        out = model(x)
        loss = -(out * F.one_hot(y, 3)).sum() / 64
        model.zero_grad()
        loss.backward()
        with ember.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------------------
# hypothesis: shapes and values drawn for the activations, softmax and pad

@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=5),
                    elements=st.floats(-20, 20)),
       which=st.sampled_from(POINTWISE))
def test_hypothesis_pointwise(x, which):
    _, fn, ref = which
    np.testing.assert_allclose(arr(fn(ember.tensor(x))), ref(x), rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=5),
                    elements=st.floats(-50, 50)),
       data=st.data())
def test_hypothesis_softmax(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    np.testing.assert_allclose(arr(F.softmax(ember.tensor(x), dim)), _np_softmax(x, dim),
                               rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(arr(F.log_softmax(ember.tensor(x), dim)),
                               np.log(_np_softmax(x, dim)), rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=3, max_dims=5, min_side=3,
                                                 max_side=5),
                    elements=st.floats(-5, 5)),
       data=st.data())
def test_hypothesis_pad(x, data):
    k = data.draw(st.sampled_from([k for k in (x.ndim - 2, x.ndim - 1) if 1 <= k <= 3]))
    mode = data.draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    pad = tuple(data.draw(st.integers(0, 2)) for _ in range(2 * k))
    np.testing.assert_array_equal(arr(F.pad(ember.tensor(x), pad, mode=mode)),
                                  _np_pad(x, pad, mode))


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.randn(3, 4, requires_grad=True)
        y = F.softmax(F.gelu(F.linear(x, ember.randn(5, 4))), dim=1)
        y.sum().backward()
