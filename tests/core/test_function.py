"""Custom autograd Functions (ember.autograd.Function): forward in NumPy, backward,
ctx features and the checks on what backward returns, compared with PyTorch."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.autograd import Function, gradcheck, gradgradcheck, once_differentiable


def _f64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# -- custom ops whose forward and backward are NumPy ------------------------------


class NumpyExp(Function):
    @staticmethod
    def forward(ctx, x):
        result = ember.from_numpy(np.exp(x.detach().numpy()))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class NumpyCubeScaled(Function):
    """y = k * x**3 with a NumPy backward (so it is only once differentiable)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return ember.from_numpy(k * x.detach().numpy() ** 3)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        gx = 3 * ctx.k * x.detach().numpy() ** 2 * g.detach().numpy()
        return ember.from_numpy(gx), None


class NumpyMatmul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ember.from_numpy(a.detach().numpy() @ b.detach().numpy())

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        gn = g.detach().numpy()
        ga = ember.from_numpy(gn @ b.detach().numpy().T) if ctx.needs_input_grad[0] else None
        gb = ember.from_numpy(a.detach().numpy().T @ gn) if ctx.needs_input_grad[1] else None
        return ga, gb


def test_numpy_forward_and_backward():
    x = _f64([0.0, 1.0, -2.0])
    y = NumpyExp.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), np.exp([0.0, 1.0, -2.0]))
    assert y.grad_fn.name() == "NumpyExpBackward"
    assert type(y.grad_fn).__name__ == "NumpyExpBackward"
    assert "grad_fn=<NumpyExpBackward>" in repr(y)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0, -2.0]))


def test_gradcheck_of_custom_ops():
    rng = np.random.default_rng(0)
    x = _f64(rng.standard_normal(4))
    assert gradcheck(NumpyExp.apply, (x,))
    assert gradgradcheck(NumpyExp.apply, (x,))  # saved output keeps its grad_fn
    assert gradcheck(lambda t: NumpyCubeScaled.apply(t, 2.5), (x,))
    a, b = _f64(rng.standard_normal((3, 4))), _f64(rng.standard_normal((4, 2)))
    assert gradcheck(NumpyMatmul.apply, (a, b))


def test_composes_with_builtin_ops():
    x = _f64([0.5, 1.5])
    y = (NumpyExp.apply(x * 2) * x).sum()
    y.backward()
    xn = np.array([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(2 * xn) * (1 + 2 * xn))


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["forward"] = ctx.needs_input_grad
            seen["grad_mode_in_forward"] = ember.is_grad_enabled()
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = ctx.needs_input_grad
            return g, None, None

    a, b = ember.ones(2, requires_grad=True), ember.ones(2)
    Probe.apply(a, b, 3).sum().backward()
    # as in PyTorch: one flag per forward argument, in forward too, grad off in forward
    assert seen == {"forward": (True, False, False), "grad_mode_in_forward": False,
                    "backward": (True, False, False)}
    with ember.no_grad():
        out = Probe.apply(a, b, 3)
    assert seen["forward"] == (True, False, False)
    assert out.grad_fn is None and not out.requires_grad


def test_no_input_requires_grad_records_nothing():
    out = NumpyExp.apply(ember.ones(2))
    assert out.grad_fn is None and not out.requires_grad


def test_non_differentiable_outputs_and_non_tensor_outputs():
    got = {}

    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = ember.from_numpy(np.argsort(x.detach().numpy()))
            ctx.mark_non_differentiable(idx)
            return x * 2, idx, 5

        @staticmethod
        def backward(ctx, g, g_idx, g_int):
            got["grads"] = (g, g_idx, g_int)
            return g * 2

    x = ember.tensor([3.0, 1.0], requires_grad=True)
    y, idx, k = SortLike.apply(x)
    assert k == 5 and idx.dtype == ember.int64 and not idx.requires_grad
    y.sum().backward()
    g, g_idx, g_int = got["grads"]
    # the unused non-differentiable output gets materialized zeros; a non-tensor None
    assert g_idx.tolist() == [0, 0] and g_int is None
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_non_differentiable_float_output():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            z = x * 3
            ctx.mark_non_differentiable(z)
            return x * 2, z

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2.tolist() == [0.0, 0.0]
            return g1

    x = ember.ones(2, requires_grad=True)
    y, z = Two.apply(x)
    assert not z.requires_grad and z.is_leaf and y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        z.sum().backward()


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads(materialize):
    got = {}

    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            got["g2"] = g2
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    x = ember.ones(2, requires_grad=True)
    a, _ = Split.apply(x)
    a.sum().backward()
    if materialize:
        assert got["g2"].tolist() == [0.0, 0.0]
    else:
        assert got["g2"] is None
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_inplace_numpy():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.detach().numpy()[...] += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    v0 = a._version
    out = AddOneInplace.apply(a)
    assert out is a
    assert a._version == v0 + 1
    assert a.grad_fn.name() == "AddOneInplaceBackward"
    assert a.tolist() == [3.0, 5.0]
    (a * a).sum().backward()
    assert x.grad.tolist() == [12.0, 20.0]   # d/dx (2x+1)^2 = 4(2x+1)


def test_mark_dirty_invalidates_saved_tensors():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()                     # ExpBackward0 saves its output a
    AddOneInplace.apply(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        a.sum().backward()


def test_mark_dirty_errors():
    class Dirty(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used "
                                           "in an in-place operation"):
        Dirty.apply(leaf)
    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                           "method were not returned as output"):
        NotReturned.apply(leaf * 1)
    with ember.no_grad():
        assert Dirty.apply(leaf) is leaf     # allowed without grad mode


def test_mark_dirty_on_non_requiring_input_takes_history():
    class AddInplace(Function):
        @staticmethod
        def forward(ctx, buf, w):
            buf.add_(w)
            ctx.mark_dirty(buf)
            return buf

        @staticmethod
        def backward(ctx, g):
            return g, g

    w = ember.ones(2, requires_grad=True)
    buf = ember.zeros(2)
    out = AddInplace.apply(buf, w)
    assert out is buf and not buf.is_leaf and buf.requires_grad
    buf.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_saved_tensors_version_check_and_release():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y

    x = ember.ones(2, requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([2 * np.e] * 2)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()

    y = Exp.apply(x)
    with ember.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\], which is output 0 of "
                                           r"Exp, is at version 1; expected version 0 instead"):
        y.sum().backward()

    x2 = x * 1
    y = Exp.apply(x2)
    with ember.no_grad():
        x2.mul_(2)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Mul, is at version 1"):
        y.sum().backward()


def test_saved_tensors_released_after_backward():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            tmp = x * 2
            ctx.save_for_backward(tmp)
            return tmp + 1

        @staticmethod
        def backward(ctx, g):
            (tmp,) = ctx.saved_tensors
            assert not tmp.requires_grad       # an intermediate, as in PyTorch
            return g * 2

    x = ember.ones(3, requires_grad=True)
    y = Keep.apply(x)
    ref = weakref.ref(y.grad_fn._saved[0].tensor)
    gc.collect()
    assert ref() is not None
    y.sum().backward()
    gc.collect()
    assert ref() is None


def test_wrong_number_of_gradients():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return g

    class NonTensorGrad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class ExtraNones(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect "
                                           r"number of gradients \(expected 3, got 1\)"):
        TooFew.apply(x, ember.ones(2), 3).sum().backward()
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position "
                                           "2, but the corresponding forward input was not a "
                                           "Variable"):
        NonTensorGrad.apply(x, 2).sum().backward()
    ExtraNones.apply(x, 2).sum().backward()          # trailing Nones are dropped
    assert x.grad.tolist() == [2.0, 2.0]


def test_bad_gradient_shape_type_and_dtype():
    def make(result):
        class F(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return result()
        return F

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Function FBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]"):
        make(lambda: ember.ones(3)).apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        make(lambda: 3.0).apply(x).sum().backward()
    # a gradient broadcast over the input is summed back, a wrong dtype is cast
    x31 = ember.ones(3, 1, requires_grad=True)
    make(lambda: ember.ones(3, 2)).apply(x31).sum().backward()
    assert x31.grad.tolist() == [[2.0], [2.0], [2.0]]
    make(lambda: ember.ones(2, dtype=ember.float64)).apply(x).sum().backward()
    assert x.grad.dtype == ember.float32 and x.grad.tolist() == [1.0, 1.0]


def test_setup_context_style():
    class Scale(Function):
        @staticmethod
        def forward(x, k=2.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = ember.ones(2, requires_grad=True)
    Scale.apply(x).sum().backward()           # default k bound as in PyTorch
    Scale.apply(x, k=3.0).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_once_differentiable_blocks_double_backward():
    x = _f64([1.0, 2.0])
    y = NumpyCubeScaled.apply(x, 1.0)
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])
    assert not g.requires_grad   # the NumPy backward is outside the graph (as in PyTorch)


def test_once_differentiable_raises_on_double_backward():
    x = _f64([1.0, 2.0])
    go = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(NumpyCubeScaled.apply(x, 1.0), x, go, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "Error"    # PyTorch's node name
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


def test_saved_non_differentiable_output_has_no_grad_fn():
    class Argsort(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_non_differentiable(y)
            ctx.save_for_backward(y)
            return x * 1, y

        @staticmethod
        def backward(ctx, g, g_y):
            (y,) = ctx.saved_tensors
            assert y.grad_fn is None and not y.requires_grad
            return g

    x = ember.ones(2, requires_grad=True)
    out, _ = Argsort.apply(x)
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_forward_may_call_numpy_on_inputs_without_detach():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return ember.from_numpy(x.numpy() * 2)     # grad mode is off in forward

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = ember.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_on_a_view_matches_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(ember.Tensor, "copy_"):
        pytest.skip("in-place on views needs Tensor.copy_ (another op family)")

    def run(T):
        class MulInplace(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                x.mul_(k)
                ctx.mark_dirty(x)
                ctx.k = k
                return x

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
        base = x * 1
        view = base.narrow(0, 1, 2)
        out = MulInplace.apply(view, 3.0)
        assert out is view
        (base * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
        return x.grad.numpy(), base.detach().numpy(), base.grad_fn.name().rsplit("::")[-1]

    ours, theirs = run(ember), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1])
    assert ours[2] == theirs[2] == "CopySlices"


def test_double_backward_through_custom_op_with_ember_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = _f64([1.0, -3.0])
    (g,) = ember.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0]


def test_missing_backward_and_instantiation():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="You must implement either the backward or "
                                                  "vjp method"):
        NoBackward.apply(x).sum().backward()
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        NoBackward()


def test_vjp_alias():
    class ViaVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    x = ember.ones(2, requires_grad=True)
    ViaVjp.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3.0)
            return x * 2

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but "
                                        "argument 1 is of type float"):
        Bad.apply(ember.ones(2, requires_grad=True))


def test_matches_torch_on_a_custom_op():
    torch = pytest.importorskip("torch")

    def build(lib):
        class Softplus(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, beta):
                ctx.save_for_backward(x)
                ctx.beta = beta
                xn = x.detach().numpy()
                return lib.from_numpy(np.log1p(np.exp(beta * xn)) / beta)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                s = 1 / (1 + np.exp(-ctx.beta * x.detach().numpy()))
                return g * lib.from_numpy(s), None
        return Softplus

    data = np.array([[-1.0, 0.5], [2.0, 0.0]])
    xs = {}
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        out = build(lib).apply(x, 2.0)
        (out * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
        xs[lib.__name__] = (out.detach().numpy(), x.grad.numpy(), type(out.grad_fn).__name__)
    np.testing.assert_allclose(xs["ember"][0], xs["torch"][0])
    np.testing.assert_allclose(xs["ember"][1], xs["torch"][1])
    assert xs["ember"][2] == xs["torch"][2] == "SoftplusBackward"


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-3, 3)))
def test_hypothesis_numpy_exp_matches_numpy(arr):
    x = ember.tensor(arr, requires_grad=True)
    y = NumpyExp.apply(x)
    g = np.random.default_rng(0).standard_normal(arr.shape)
    y.backward(ember.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), np.exp(arr))
    np.testing.assert_allclose(x.grad.numpy(), g * np.exp(arr))
