"""Complex tensors through the ops that used to refuse them or got them wrong, and
gradcheck on complex numbers (NumPy and SciPy references; tests/interop/
test_complex_opdb_torch.py compares every complex op with PyTorch's database)."""

import numpy as np
import pytest
import scipy.linalg

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def ct(*shape, grad=True):
    return ember.tensor(crandn(*shape), requires_grad=grad)


# ---------------------------------------------------------------------------
# gradcheck itself

class _Square(ember.autograd.Function):
    conj = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @classmethod
    def backward(cls, ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * (x.conj() if cls.conj else x)


class _SquareNoConj(_Square):
    conj = False


def test_gradcheck_complex_accepts_the_conjugate_convention_and_rejects_a_missing_conj():
    x = ct(4)
    assert gradcheck(_Square.apply, (x,))
    assert not gradcheck(_SquareNoConj.apply, (x,), raise_exception=False)


def test_gradcheck_complex_inputs_real_outputs_and_mixed():
    x, w = ct(3), ember.tensor(RNG.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda x: (x * x).abs(), (x,))
    assert gradcheck(lambda x, w: x * x.conj() * 2j + w * x.exp(), (x, w))
    assert gradcheck(lambda x: x.real * x.imag, (x,))
    assert gradgradcheck(lambda x, w: x.sin() * w, (x, w))


def test_gradcheck_complex_finds_a_wrong_imaginary_part():
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1j

        @staticmethod
        def backward(ctx, g):
            return g * 1j  # the conjugate, -1j, is right

    with pytest.raises(ember.autograd.GradcheckError):
        gradcheck(Wrong.apply, (ct(2),))


# ---------------------------------------------------------------------------
# scalars, linear, activations, norms

@pytest.mark.parametrize("fn", [
    lambda x: x * (2 + 1j), lambda x: (2 + 1j) * x, lambda x: x / (2 - 1j),
    lambda x: (2 + 1j) / x, lambda x: x ** (2 + 1j), lambda x: (2 + 1j) ** x,
    lambda x: x * np.complex128(1 - 3j), lambda x: x.add(x * x, alpha=2 + 1j),
], ids=["mul", "rmul", "div", "rdiv", "pow", "rpow", "np-scalar", "alpha"])
def test_complex_python_scalars_have_conjugated_gradients(fn):
    assert gradcheck(fn, (ct(3),))


def test_linear_complex_gradients():
    x, w, b = ct(2, 3, 4), ct(5, 4), ct(5)
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (ct(2, 4), ct(3, 4), ct(3)))
    np.testing.assert_allclose(F.linear(x, w, b).detach().numpy(),
                               x.detach().numpy() @ w.detach().numpy().T + b.detach().numpy())


@pytest.mark.parametrize("name,ref", [
    ("softsign", lambda z: z / (1 + np.abs(z))),
    ("tanhshrink", lambda z: z - np.tanh(z)),
    ("silu", lambda z: z / (1 + np.exp(-z))),
])
def test_complex_activations(name, ref):
    z = crandn(6)
    np.testing.assert_allclose(getattr(F, name)(ember.tensor(z)).numpy(), ref(z), rtol=1e-12)
    if name != "silu":  # PyTorch does not differentiate silu on complex numbers
        assert gradcheck(getattr(F, name), (ct(4),))


def test_complex_rms_norm():
    z, w = crandn(3, 5), crandn(5)
    eps = np.finfo(np.float64).eps
    expected = z / np.sqrt((z * z).mean(-1, keepdims=True) + eps) * w
    got = F.rms_norm(ember.tensor(z), (5,), ember.tensor(w)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert gradcheck(lambda x, w: F.rms_norm(x, (5,), w), (ct(2, 5), ct(5)))


# ---------------------------------------------------------------------------
# convolutions, unfold/fold

def _conv1d_ref(x, w, b, stride=1, padding=0):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    n, c, length = x.shape
    o, _, k = w.shape
    out_len = (length - k) // stride + 1
    out = np.zeros((n, o, out_len), complex)
    for t in range(out_len):
        out[:, :, t] = np.einsum("nck,ock->no", x[:, :, t * stride:t * stride + k], w)
    return out + (0 if b is None else b[None, :, None])


def test_conv1d_complex_matches_the_definition_and_gradchecks():
    x, w, b = crandn(2, 3, 9), crandn(4, 3, 3), crandn(4)
    got = F.conv1d(ember.tensor(x), ember.tensor(w), ember.tensor(b), stride=2, padding=1)
    np.testing.assert_allclose(got.numpy(), _conv1d_ref(x, w, b, 2, 1), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.conv1d(x, w, b, padding=1), (ct(1, 2, 5), ct(3, 2, 3),
                                                                       ct(3)))


def test_conv2d_and_transpose_complex_gradcheck():
    assert gradcheck(lambda x, w: F.conv2d(x, w, groups=2), (ct(1, 2, 4, 4), ct(2, 1, 2, 2)))
    assert gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2),
                     (ct(1, 2, 3, 3), ct(2, 1, 2, 2), ct(1)))
    assert gradcheck(lambda x, w: F.conv3d(x, w), (ct(1, 1, 3, 3, 3), ct(1, 1, 2, 2, 2)))


def test_conv_complex_is_linear_in_the_real_and_imaginary_parts():
    # conv(x, w) of a complex input with a real weight is conv of the parts
    x, w = crandn(2, 3, 6, 6), RNG.standard_normal((4, 3, 3, 3))
    got = F.conv2d(ember.tensor(x), ember.tensor(w + 0j)).numpy()
    re = F.conv2d(ember.tensor(x.real), ember.tensor(w)).numpy()
    im = F.conv2d(ember.tensor(x.imag), ember.tensor(w)).numpy()
    np.testing.assert_allclose(got, re + 1j * im, rtol=1e-12, atol=1e-12)


def test_unfold_fold_complex():
    x = crandn(2, 3, 5, 5)
    got = F.unfold(ember.tensor(x), 2, padding=1).numpy()
    re = F.unfold(ember.tensor(x.real), 2, padding=1).numpy()
    im = F.unfold(ember.tensor(x.imag), 2, padding=1).numpy()
    np.testing.assert_allclose(got, re + 1j * im)
    assert gradcheck(lambda x: F.fold(F.unfold(x, 2), (3, 3), 2), (ct(1, 1, 3, 3),))


# ---------------------------------------------------------------------------
# reductions and scans

def test_logsumexp_complex_is_the_principal_value():
    z = crandn(5, 5) * 3 + np.array([1000, 0, 0, 0, 0])[:, None]
    got = ember.logsumexp(ember.tensor(z), 0).numpy()
    expected = np.log(np.exp(z - 1000).sum(0)) + 1000
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.all(np.abs(got.imag) <= np.pi)


def test_logcumsumexp_complex():
    z = crandn(3, 6)
    got = ember.logcumsumexp(ember.tensor(z), 1).numpy()
    expected = np.log(np.cumsum(np.exp(z), 1))
    # equal up to multiples of 2 pi in the imaginary part (PyTorch keeps the branch of
    # the running maximum's imaginary part)
    np.testing.assert_allclose(np.exp(got), np.exp(expected), rtol=1e-10)
    np.testing.assert_allclose(got.real, expected.real, rtol=1e-12)
    assert gradcheck(lambda x: ember.logcumsumexp(x, 0), (ct(4),))
    big = ember.logcumsumexp(ember.tensor([1000 + 1j, 999 - 2j]), 0).numpy()
    assert np.isfinite(big).all()
    assert ember.logcumsumexp(ember.zeros(0, 3, dtype=ember.complex128), 0).shape == (0, 3)


# ---------------------------------------------------------------------------
# linalg

def test_lu_factor_complex_pivots_as_lapack():
    a = crandn(6, 5)
    lu, piv = scipy.linalg.lu_factor(a)
    got = ember.linalg.lu_factor(ember.tensor(a))
    np.testing.assert_array_equal(got.pivots.numpy(), piv[:5] + 1)
    np.testing.assert_allclose(got.LU.numpy(), lu, rtol=1e-10, atol=1e-12)


def test_qr_zero_size_backward():
    for shape in [(5, 0), (0, 5), (2, 0, 0)]:
        a = ember.zeros(*shape, dtype=ember.complex128, requires_grad=True)
        q, r = ember.linalg.qr(a)
        (g,) = ember.autograd.grad([q, r], [a], [ember.ones_like(q), ember.ones_like(r)])
        assert g.shape == shape


def test_matrix_power_zero_and_empty_pinv_keep_the_graph():
    a = ct(2, 3, 3)
    p = ember.linalg.matrix_power(a, 0)
    assert p.requires_grad
    np.testing.assert_array_equal(p.detach().numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    (g,) = ember.autograd.grad(p.abs().sum(), a)
    assert not g.numpy().any()
    e = ember.zeros(3, 0, requires_grad=True)
    assert ember.pinverse(e).shape == (0, 3) and ember.pinverse(e).requires_grad
    assert not ember.linalg.matrix_power(ember.randn(3, 3), 0).requires_grad


def test_pinv_positional_rcond():
    a = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(ember.linalg.pinv(ember.tensor(a), 1e-5).numpy(),
                               np.linalg.pinv(a), rtol=1e-10)
    np.testing.assert_allclose(ember.linalg.pinv(ember.tensor(a), 1e-5, False).numpy(),
                               np.linalg.pinv(a), rtol=1e-10)
    with pytest.raises(TypeError, match="rcond"):
        ember.linalg.pinv(ember.tensor(a), 1e-5, rtol=0.1)


def test_tensorsolve_with_dims():
    a, b = crandn(2, 3, 6), crandn(2, 3)
    moved = np.moveaxis(a, [0, 2], [1, 2])  # dims (0, 2) moved to the end
    got = ember.linalg.tensorsolve(ember.tensor(a), ember.tensor(b), dims=(0, 2)).numpy()
    assert got.shape == (6,)  # moved.shape[b.ndim:]
    x = np.linalg.solve(moved.reshape(6, 6), b.reshape(6))
    np.testing.assert_allclose(got.reshape(-1), x, rtol=1e-10)


def test_vander_of_a_number_ldl_and_matrix_rank_of_empty():
    np.testing.assert_array_equal(ember.linalg.vander(ember.tensor(2.0), N=3).numpy(),
                                  [[1.0, 2.0, 4.0]])
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3)]:
        ld, piv, info = ember.linalg.ldl_factor_ex(ember.zeros(*shape))
        assert ld.shape == shape and piv.shape == shape[:-1] and info.shape == shape[:-2]
    assert ember.linalg.matrix_rank(ember.zeros(0, 0)).item() == 0
    assert ember.linalg.matrix_rank(ember.zeros(2, 0, 3)).tolist() == [0, 0]


# ---------------------------------------------------------------------------
# the rest

def test_istft_two_sided_real_output_uses_the_first_half():
    spec = crandn(10, 4)
    got = ember.istft(ember.tensor(spec), n_fft=10, window=ember.ones(10), onesided=False)
    half = ember.istft(ember.tensor(spec[:6]), n_fft=10, window=ember.ones(10))
    np.testing.assert_allclose(got.numpy(), half.numpy(), rtol=1e-12)


def test_gradient_spacing_none_is_one():
    x = ember.arange(5.0) ** 2
    np.testing.assert_array_equal(ember.gradient(x, spacing=None)[0].numpy(),
                                  np.gradient(np.arange(5.0) ** 2))


@pytest.mark.parametrize("name,dtype", [
    ("byte", ember.uint8), ("char", ember.int8), ("short", ember.int16), ("int", ember.int32),
    ("long", ember.int64), ("half", ember.float16), ("float", ember.float32),
    ("double", ember.float64), ("bool", ember.bool), ("cfloat", ember.complex64),
    ("cdouble", ember.complex128)])
def test_dtype_methods_take_memory_format(name, dtype):
    t = ember.ones(2, 3)
    assert getattr(t, name)(memory_format=ember.preserve_format).dtype == dtype
    assert getattr(t, name)().dtype == dtype


def test_real_to_complex_cast_gradient_is_real():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = x.to(ember.complex128) * ember.tensor([1 + 2j, 3 - 1j])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y.abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [np.sqrt(5), np.sqrt(10)])


# ---------------------------------------------------------------------------
# operators with operands of other types

class _Reflected:
    def __radd__(self, other):
        return "radd"

    def __rsub__(self, other):
        return "rsub"

    def __rmul__(self, other):
        return "rmul"

    def __rtruediv__(self, other):
        return "rtruediv"

    def __rmatmul__(self, other):
        return "rmatmul"


def test_operators_return_notimplemented_for_other_types():
    """As PyTorch's: ``tensor + obj`` reaches ``obj.__radd__``; unknown types raise
    Python's TypeError; the methods (``t.add(obj)``) still raise their own TypeError."""
    import operator

    t, o = ember.ones(2), _Reflected()
    assert [f(t, o) for f in (operator.add, operator.sub, operator.mul, operator.truediv,
                              operator.matmul)] == ["radd", "rsub", "rmul", "rtruediv",
                                                    "rmatmul"]
    for bad in ([1, 2], "a", None):
        with pytest.raises(TypeError, match="unsupported operand"):
            t + bad
    with pytest.raises(TypeError, match="add"):
        t.add(o)
    assert (t + np.ones(2)).tolist() == [2.0, 2.0]
    assert (t * True).tolist() == [1.0, 1.0] and (2j * t).dtype == ember.complex64
