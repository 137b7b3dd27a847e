"""Products: matmul and relatives, the add-product family, einsum, tensordot, kron, cross
and trace. The op database covers values against NumPy and gradcheck; here: errors,
dtype rules, in-place forms, einsum's parser and gradients (incl. repeated indices),
hypothesis shapes, and a case table compared with PyTorch when it is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def t64(*shape, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# matmul

@pytest.mark.parametrize("sa,sb", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
    ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (3, 3, 4)), ((0, 3), (3, 2)),
])
def test_matmul_shapes_and_grads(sa, sb):
    a, b = t64(*sa), t64(*sb, seed=1)
    out = a @ b
    assert tuple(out.shape) == np.matmul(np.ones(sa), np.ones(sb)).shape
    assert_close(out.detach().numpy(), a.detach().numpy() @ b.detach().numpy())
    if out.numel():
        assert gradcheck(lambda x, y: x @ y, (a, b))


def test_matmul_second_order():
    a, b = t64(2, 3, 4), t64(4, 2, seed=1)
    assert gradgradcheck(lambda x, y: x @ y, (a, b))


def test_matmul_fold_gradient_of_matrix():
    # (batch, n, k) @ (k, m): the matrix's gradient is one folded product
    a, w = t64(4, 3, 5), t64(5, 2, seed=1)
    (a @ w).sum().backward()
    expected = np.einsum("bnk,bnm->km", a.detach().numpy(), np.ones((4, 3, 2)))
    assert_close(w.grad.numpy(), expected)
    assert tuple(w.grad.shape) == (5, 2)


@pytest.mark.parametrize("sa,sb,msg", [
    ((3,), (4,), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    ((2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ((2, 3), (4,), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    ((3,), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"),
    ((2, 2, 3), (3, 4, 5), r"The size of tensor a \(2\) must match the size of tensor b \(3\) "
                           r"at non-singleton dimension 0"),
    ((2, 2, 4), (2, 2, 3), r"Expected size for first two dimensions of batch2 tensor to be: "
                           r"\[2, 4\] but got: \[2, 2\]"),
    ((3, 2, 4), (5, 2), r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 5x2\)"),
    ((), (3,), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
])
def test_matmul_shape_errors(sa, sb, msg):
    with pytest.raises(RuntimeError, match=msg):
        ember.matmul(ember.ones(sa), ember.ones(sb))


def test_matmul_dtype_rules():
    f, d = ember.ones(2, 3), ember.ones(3, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: "
                                           "float != double"):
        f @ d
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        ember.ones(2, 2, 3) @ ember.ones(2, 3, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype"):
        ember.ones(3) @ ember.ones(3, dtype=ember.float64)
    ints = ember.ones(2, 3, dtype=ember.int64) @ ember.ones(3, 2, dtype=ember.int64)
    assert ints.dtype == ember.int64 and ints.tolist() == [[3, 3], [3, 3]]
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        ember.ones(2, 3, dtype=ember.bool) @ ember.ones(3, 2, dtype=ember.bool)
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.matmul(ember.ones(3), 2.0)


def test_matmul_out_and_rmatmul():
    a, b = ember.ones(2, 3), ember.full((3, 4), 2.0)
    out = ember.empty(2, 4)
    r = ember.matmul(a, b, out=out)
    assert r is out and out.tolist() == [[6.0] * 4] * 2
    assert (b.__rmatmul__(a)).tolist() == out.tolist()


def test_mm_bmm_mv_dot_errors():
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        ember.mm(ember.ones(3), ember.ones(3, 3))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        ember.mm(ember.ones(2, 3), ember.ones(3))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        ember.bmm(ember.ones(2, 3), ember.ones(2, 3, 3))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[2, 3\] but got: \[3, 3\]"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 3))
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 1, 2, 2"):
        ember.mv(ember.ones(2, 3), ember.ones(3, 1))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        ember.dot(ember.ones(2, 2), ember.ones(2))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        ember.vdot(ember.ones(2, 2), ember.ones(2))


def test_vdot_conjugates_first():
    a = ember.tensor([1 + 2j, 3 - 1j])
    b = ember.tensor([2 - 1j, 1 + 1j])
    assert ember.vdot(a, b).item() == pytest.approx(np.vdot(a.numpy(), b.numpy()))
    assert ember.dot(a, b).item() == pytest.approx(np.dot(a.numpy(), b.numpy()))


def test_inner_outer():
    a, b = ember.arange(6.).reshape(2, 3), ember.arange(12.).reshape(4, 3)
    assert_close(ember.inner(a, b).numpy(), np.inner(a.numpy(), b.numpy()))
    assert ember.inner(ember.tensor(2.0), b).tolist() == (2 * b).tolist()
    with pytest.raises(RuntimeError, match=r"inner\(\) the last dimension must match"):
        ember.inner(a, ember.ones(4, 2))
    o = ember.outer(ember.arange(3), ember.tensor([1.5, 2.0]))
    assert o.dtype == ember.float32 and o.shape == (3, 2)  # outer promotes
    assert ember.ger is ember.outer
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        ember.outer(ember.ones(2, 2), ember.ones(2))


# ---------------------------------------------------------------------------
# the add-product family

@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
def test_addmm_family_values(beta, alpha):
    rng = np.random.default_rng(0)
    i, a, b = (rng.standard_normal(s) for s in [(3,), (2, 4), (4, 3)])
    got = ember.addmm(ember.tensor(i), ember.tensor(a), ember.tensor(b), beta=beta, alpha=alpha)
    assert_close(got.numpy(), beta * i + alpha * (a @ b))
    bi, b1, b2 = (rng.standard_normal(s) for s in [(2, 1, 3), (2, 2, 4), (2, 4, 3)])
    got = ember.baddbmm(ember.tensor(bi), ember.tensor(b1), ember.tensor(b2), beta=beta,
                        alpha=alpha)
    assert_close(got.numpy(), beta * bi + alpha * (b1 @ b2))
    got = ember.addbmm(ember.tensor(i), ember.tensor(b1), ember.tensor(b2), beta=beta,
                       alpha=alpha)
    assert_close(got.numpy(), beta * i + alpha * (b1 @ b2).sum(0))
    v1, v2 = rng.standard_normal(2), rng.standard_normal(3)
    m = rng.standard_normal((2, 3))
    got = ember.addr(ember.tensor(m), ember.tensor(v1), ember.tensor(v2), beta=beta, alpha=alpha)
    assert_close(got.numpy(), beta * m + alpha * np.outer(v1, v2))
    got = ember.addmv(ember.tensor(v1), ember.tensor(m), ember.tensor(v2), beta=beta,
                      alpha=alpha)
    assert_close(got.numpy(), beta * v1 + alpha * (m @ v2))


def test_addmm_beta_zero_ignores_nan():
    i = ember.full((2, 2), float("nan"))
    out = ember.addmm(i, ember.ones(2, 3), ember.ones(3, 2), beta=0)
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_add_family_gradients():
    cases = [
        (ember.addmm, [(3,), (2, 4), (4, 3)]), (ember.addmv, [(2,), (2, 4), (4,)]),
        (ember.addr, [(2, 3), (2,), (3,)]), (ember.baddbmm, [(2, 1, 3), (2, 2, 4), (2, 4, 3)]),
        (ember.addbmm, [(2, 3), (3, 2, 4), (3, 4, 3)]),
    ]
    def scaled(fn):
        return lambda i, a, b: fn(i, a, b, beta=0.5, alpha=-2.0)

    for fn, shapes in cases:
        args = tuple(t64(*s, seed=k) for k, s in enumerate(shapes))
        assert gradcheck(scaled(fn), args), fn.__name__
        assert gradgradcheck(scaled(fn), args), fn.__name__


def test_add_family_inplace():
    x = t64(2, 3)
    y = x * 1
    a, b = t64(2, 4, seed=1), t64(4, 3, seed=2)
    r = y.addmm_(a, b, beta=0.5, alpha=2)
    assert r is y
    assert_close(y.detach().numpy(),
                 0.5 * x.detach().numpy() + 2 * a.detach().numpy() @ b.detach().numpy())
    y.sum().backward()
    assert_close(x.grad.numpy(), np.full((2, 3), 0.5))
    assert_close(a.grad.numpy(), 2 * np.ones((2, 3)) @ b.detach().numpy().T)
    m = ember.zeros(2, 3)
    m.addr_(ember.ones(2), ember.arange(3.))
    assert m.tolist() == [[0.0, 1.0, 2.0]] * 2
    z = ember.zeros(2, 2, 3)
    z.baddbmm_(ember.ones(2, 2, 4), ember.ones(2, 4, 3))
    assert z.tolist() == [[[4.0] * 3] * 2] * 2
    w = ember.ones(2, 3)
    w.addbmm_(ember.ones(5, 2, 1), ember.ones(5, 1, 3), beta=2)
    assert w.tolist() == [[7.0] * 3] * 2
    v = ember.ones(2)
    v.addmv_(ember.ones(2, 3), ember.ones(3))
    assert v.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size \[3\] and "
                                           r"output tensor size \[2, 3\] should match"):
        ember.ones(3).addmm_(ember.ones(2, 4), ember.ones(4, 3))


def test_add_family_errors():
    with pytest.raises(RuntimeError, match="mat1 must be a matrix, got 1-D tensor"):
        ember.addmm(ember.ones(3), ember.ones(3), ember.ones(3, 3))
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got "
                                           "Double and Float"):
        ember.addmm(ember.ones(3, dtype=ember.float64), ember.ones(2, 3), ember.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match "
                                           r"the existing size \(4\) at non-singleton dimension 1"):
        ember.addmm(ember.ones(4), ember.ones(2, 3), ember.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(3\), mat \(2x3\), vec "
                                           r"\(3\)"):
        ember.addmv(ember.ones(3), ember.ones(2, 3), ember.ones(3))
    with pytest.raises(RuntimeError, match="addr: Expected 1-D argument vec1, but got 2-D"):
        ember.addr(ember.ones(2, 3), ember.ones(2, 1), ember.ones(3))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument beta must not "
                                           "be a floating point number."):
        ints = ember.ones(2, dtype=ember.int64)
        ember.addr(ember.ones(2, 2, dtype=ember.int64), ints, ints, beta=0.5)
    with pytest.raises(RuntimeError, match="Boolean beta only supported for Boolean results."):
        ember.addr(ember.ones(2, 3), ember.ones(2), ember.ones(3), beta=True)
    with pytest.raises(RuntimeError, match="Input dtypes must be the same, got: input double, "
                                           "batch1: float, batch2: float"):
        ember.baddbmm(ember.ones(2, 2, 3, dtype=ember.float64), ember.ones(2, 2, 3),
                      ember.ones(2, 3, 3))
    with pytest.raises(RuntimeError, match="batch1 and batch2 must have same number of batches, "
                                           "got 2 and 3"):
        ember.addbmm(ember.ones(2, 3), ember.ones(2, 2, 3), ember.ones(3, 3, 3))
    with pytest.raises(RuntimeError, match=r"Incompatible matrix sizes for bmm \(2x3 and 4x3\)"):
        ember.addbmm(ember.ones(2, 3), ember.ones(2, 2, 3), ember.ones(2, 4, 3))


def test_addr_bool_and_promotion():
    b = ember.addr(ember.zeros(2, 2, dtype=ember.bool), ember.tensor([True, False]),
                   ember.tensor([True, True]))
    assert b.dtype == ember.bool and b.tolist() == [[True, True], [False, False]]
    p = ember.addr(ember.zeros(2, 2), ember.ones(2, dtype=ember.float64), ember.ones(2))
    assert p.dtype == ember.float64
    ints = ember.addmm(ember.ones(2, 2, dtype=ember.int64), ember.ones(2, 2, dtype=ember.int64),
                       ember.ones(2, 2, dtype=ember.int64), beta=1.5, alpha=2.7)
    assert ints.tolist() == [[5, 5], [5, 5]]  # integer inputs truncate float scalars


# ---------------------------------------------------------------------------
# einsum

@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii->", [(3, 3)]), ("ii", [(3, 3)]),
    ("iij->ij", [(3, 3, 2)]), ("iij,j->i", [(3, 3, 2), (2,)]), ("ii,i->i", [(3, 3), (3,)]),
    ("iii->i", [(2, 2, 2)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("ab,cd->", [(2, 3), (2, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]), ("b...->...b", [(2, 3, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)]), ("ij,ij->ij", [(2, 1), (2, 3)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("i,i->", [(3,), (3,)]),
])
def test_einsum_gradients(eq, shapes):
    args = tuple(t64(*s, seed=k) for k, s in enumerate(shapes))
    assert gradcheck(lambda *xs: ember.einsum(eq, *xs), args)
    assert gradgradcheck(lambda *xs: ember.einsum(eq, *xs), args)


def test_einsum_values():
    a = ember.arange(9.).reshape(3, 3)
    assert ember.einsum("ii", a).item() == 12.0
    assert ember.einsum("ii->i", a).tolist() == [0.0, 4.0, 8.0]
    assert ember.einsum("ij->ji", a).tolist() == a.numpy().T.tolist()
    # implicit output: letters seen once, sorted (upper case first)
    assert ember.einsum("Ba,aA", ember.ones(2, 3), ember.ones(3, 4)).shape == (4, 2)
    assert ember.einsum("i,j", ember.ones(2), ember.ones(3)).shape == (2, 3)
    # operands as a list, spaces, sublist format
    assert ember.einsum("i j , j k -> i k", [ember.ones(2, 3), ember.ones(3, 4)]).shape == (2, 4)
    s = ember.einsum(ember.ones(2, 3), [0, 1], ember.ones(3, 4), [1, 2], [0, 2])
    assert s.tolist() == [[3.0] * 4] * 2
    assert ember.einsum(ember.ones(2, 3), [0, Ellipsis], [Ellipsis]).tolist() == [2.0] * 3
    # ellipsis dims that are not in an explicit output are summed
    assert ember.einsum("...i->i", ember.ones(2, 3)).tolist() == [2.0] * 3


def test_einsum_output_owns_its_memory():
    a = ember.arange(4.).reshape(2, 2)
    t = ember.einsum("ij->ji", a)
    t.add_(1)
    assert a.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_einsum_dtypes():
    i32 = ember.ones(2, 3, dtype=ember.int32)
    assert ember.einsum("ij->i", i32).dtype == ember.int64  # a plain sum
    assert ember.einsum("ij->ji", i32).dtype == ember.int32
    assert ember.einsum("ij,j->i", i32, ember.ones(3, dtype=ember.int32)).dtype == ember.int32
    assert ember.einsum("ij->i", ember.ones(2, 3, dtype=ember.bool)).tolist() == [3, 3]
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        ember.einsum("i,i->", ember.ones(3), ember.ones(3, dtype=ember.float64))


@pytest.mark.parametrize("eq,shapes,err,msg", [
    ("ii->i", [(2, 3)], RuntimeError, "subscript i is repeated for operand 0 but the sizes "
                                      "don't match, 3 != 2"),
    ("i,i->ii", [(3,), (3,)], RuntimeError, "output subscript i appears more than once"),
    ("ij->k", [(3, 3)], RuntimeError, "output subscript k does not appear in the equation"),
    ("ij", [(3, 3), (3,)], RuntimeError, "more operands were provided than specified"),
    ("i,i", [(3,)], RuntimeError, "fewer operands were provided than specified"),
    ("ijk->", [(3, 3)], RuntimeError, r"the number of subscripts in the equation \(3\) does not "
                                      r"match the number of dimensions \(2\) for operand 0"),
    ("i.->", [(3, 2)], RuntimeError, "found '.' for operand 0 that is not part of any ellipsis"),
    ("i1->", [(2, 3)], RuntimeError, "invalid subscript given at index 1"),
    ("ij,jk->ik", [(2, 3), (4, 5)], RuntimeError, "subscript j has size 4 for operand 1 which "
                                                  "does not broadcast with previously seen size 3"),
    ("...,...->...", [(2, 3), (4, 3)], RuntimeError, "dimension 0 covered by ellipsis in "
                                                     "operand 1has size 4"),
])
def test_einsum_errors(eq, shapes, err, msg):
    with pytest.raises(err, match=msg):
        ember.einsum(eq, *[ember.ones(s) for s in shapes])


def test_einsum_no_operands():
    with pytest.raises(ValueError, match="must specify the equation string and at least one"):
        ember.einsum("i->i")
    with pytest.raises(ValueError, match="not within the valid range"):
        ember.einsum(ember.ones(2, 3), [0, 52])


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_einsum_matches_numpy_hypothesis(data):
    letters = "abcde"
    n_ops = data.draw(st.integers(1, 3))
    sizes = {c: data.draw(st.integers(1, 3)) for c in letters}
    terms = [data.draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
             for _ in range(n_ops)]
    used = sorted({c for t in terms for c in t})
    out = data.draw(st.permutations(used))[:data.draw(st.integers(0, len(used)))]
    eq = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    arrays = [rng.standard_normal([sizes[c] for c in t]) for t in terms]
    got = ember.einsum(eq, *[ember.tensor(a) for a in arrays])
    assert_close(got.numpy(), np.asarray(np.einsum(eq, *arrays)), atol=1e-10, rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3),
       st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
       st.sampled_from(["both", "left_vector", "right_vector"]))
def test_matmul_matches_numpy_hypothesis(batch, n, k, m, kind):
    rng = np.random.default_rng(0)
    sa = batch.input_shapes[0] + (n, k) if kind != "left_vector" else (k,)
    sb = batch.input_shapes[1] + (k, m) if kind != "right_vector" else (k,)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    got = ember.tensor(a) @ ember.tensor(b)
    assert_close(got.numpy(), a @ b, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# tensordot, kron, cross, trace

def test_tensordot():
    a, b = ember.arange(60.).reshape(3, 4, 5), ember.arange(24.).reshape(4, 3, 2)
    got = ember.tensordot(a, b, dims=([1, 0], [0, 1]))
    assert_close(got.numpy(), np.tensordot(a.numpy(), b.numpy(), axes=([1, 0], [0, 1])))
    assert ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=ember.tensor(1)).shape == (2, 4)
    assert ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=0).shape == (2, 3, 3, 4)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0, but got dims=-1"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=-1)
    with pytest.raises(RuntimeError, match="tensordot expects dims < ndim_a or ndim_b"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=3)
    with pytest.raises(RuntimeError, match="both dimension lists should have same length"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=([1, 0], [0]))
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has "
                                           "size 3 in dim 1 and second has size 4 in dim 1"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=([1], [1]))
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4, dtype=ember.float64), dims=1)
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=(1, 0))


def test_kron():
    a, b = ember.tensor([[1, 2], [3, 4]]), ember.tensor([[0, 1], [1, 0]])
    assert ember.kron(a, b).tolist() == np.kron(a.numpy(), b.numpy()).tolist()
    assert ember.kron(ember.ones(2, 3), ember.ones(2, 2, 2)).shape == (2, 4, 6)
    assert ember.kron(ember.ones(2), ember.ones(3, dtype=ember.float64)).dtype == ember.float64
    assert gradcheck(ember.kron, (t64(2, 3), t64(3, seed=1)))


def test_cross():
    a, b = ember.tensor([[1., 0, 0], [0, 1, 0]]), ember.tensor([[0., 1, 0], [0, 0, 1]])
    assert ember.cross(a, b, dim=1).tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    assert a.cross(b, dim=-1).tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        assert ember.cross(a.mT, b.mT).tolist() == [[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    assert gradcheck(lambda x, y: ember.cross(x, y, dim=1), (t64(4, 3), t64(1, 3, seed=1)))
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension 1 must have length 3. "
                                           "Got 2 and 2"):
        ember.cross(ember.ones(3, 2), ember.ones(3, 2), dim=1)
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        ember.cross(ember.ones(2, 3), ember.ones(3), dim=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            ember.cross(ember.ones(2, 2), ember.ones(2, 2))


def test_trace():
    assert ember.trace(ember.arange(12.).reshape(3, 4)).item() == 15.0
    assert ember.arange(6).reshape(2, 3).trace().dtype == ember.int64
    assert ember.trace(ember.ones(3, 3, dtype=ember.int32)).dtype == ember.int64
    assert gradcheck(ember.trace, (t64(3, 4),))
    assert gradgradcheck(ember.trace, (t64(3, 3),))
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        ember.trace(ember.ones(3))
    with pytest.raises(NotImplementedError, match="\"trace\" not implemented for 'Bool'"):
        ember.trace(ember.ones(2, 2, dtype=ember.bool))


def test_chain_matmul():
    a, b, c = ember.ones(2, 3), ember.ones(3, 4), ember.ones(4, 5)
    assert ember.chain_matmul(a, b, c).tolist() == [[12.0] * 5] * 2


# ---------------------------------------------------------------------------
# against PyTorch: values, dtypes, gradients and error messages

def _einsum_case(eq):
    return lambda m, *ts: m.einsum(eq, *ts)


_TORCH_CASES = [
    ("matmul", lambda m, a, b: m.matmul(a, b), [(2, 1, 2, 3), (3, 3, 4)]),
    ("matmul_1d3d", lambda m, a, b: a @ b, [(3,), (5, 3, 4)]),
    ("matmul_3d1d", lambda m, a, b: a @ b, [(5, 2, 3), (3,)]),
    ("matmul_err_1d3d", lambda m, a, b: a @ b, [(4,), (2, 2, 3)]),
    ("matmul_err_batch", lambda m, a, b: a @ b, [(2, 3, 2, 4), (2, 1, 5, 2)]),
    ("dot", lambda m, a, b: m.dot(a, b), [(3,), (3,)]),
    ("inner", lambda m, a, b: m.inner(a, b), [(2, 5, 3), (4, 3)]),
    ("addmm", lambda m, i, a, b: m.addmm(i, a, b, beta=-1.5, alpha=0.25), [(3,), (2, 4), (4, 3)]),
    ("addmv", lambda m, i, a, b: m.addmv(i, a, b, beta=0.5, alpha=2), [(), (2, 4), (4,)]),
    ("addr", lambda m, i, a, b: m.addr(i, a, b, beta=0.5, alpha=2), [(1, 3), (2,), (3,)]),
    ("baddbmm", lambda m, i, a, b: m.baddbmm(i, a, b, alpha=3), [(2, 1, 3), (2, 2, 4), (2, 4, 3)]),
    ("addbmm", lambda m, i, a, b: m.addbmm(i, a, b, beta=2), [(2, 3), (5, 2, 4), (5, 4, 3)]),
    ("addbmm_err", lambda m, i, a, b: m.addbmm(i, a, b), [(2, 3), (5, 2, 4), (4, 4, 3)]),
    ("baddbmm_err", lambda m, i, a, b: m.baddbmm(i, a, b), [(3, 2, 3), (2, 2, 4), (2, 4, 3)]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, dims=([2, 0], [1, 0])),
     [(4, 3, 5), (4, 5, 6)]),
    ("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (2, 2, 2)]),
    ("cross", lambda m, a, b: m.cross(a, b, dim=0), [(3, 2, 4), (1, 2, 4)]),
    ("trace", lambda m, a: m.trace(a), [(4, 2)]),
] + [(f"einsum {eq}", _einsum_case(eq), shapes) for eq, shapes in [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ii->", [(3, 3)]), ("iij,j->i", [(3, 3, 2), (2,)]),
    ("iji->j", [(3, 2, 3)]), ("iii", [(2, 2, 2)]), ("ijj->i", [(2, 3, 3)]),
    ("...i->i", [(2, 3)]), ("...->", [(2, 3, 4)]), ("i...->...", [(2, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]), ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 4, 5)]),
    ("ij,jk,kl->il", [(20, 30), (30, 40), (40, 5)]),
    ("i...,i...,i...->", [(2, 3), (2, 4), (2,)]), ("i......,i->", [(2, 3), (2,)]),
    ("ij->ij->", [(2, 3)]), ("", [(3,)]), ("->", [()]),
]]


def _run(lib, fn, arrays, dtype):
    ts = [lib.tensor(a) for a in arrays]
    for t in ts:
        t.requires_grad_(True)
    try:
        out = fn(lib, *ts)
    except Exception as e:  # noqa: BLE001 - compared with the other library's error
        return ("error", type(e).__name__, str(e).split("\n")[0])
    w = np.random.default_rng(5).standard_normal(tuple(out.shape))
    if dtype == np.complex128:
        w = w + 1j * np.random.default_rng(6).standard_normal(tuple(out.shape))
    grads = lib.autograd.grad([out], ts, [lib.tensor(w)], allow_unused=True)
    return ("ok", out.detach().numpy(), [None if g is None else g.numpy() for g in grads])


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name,fn,shapes", _TORCH_CASES, ids=[c[0] for c in _TORCH_CASES])
def test_matches_torch(name, fn, shapes, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype == np.complex128
                                         else 0) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _run(torch, fn, arrays, dtype)
        got = _run(ember, fn, arrays, dtype)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1:] == expected[1:]
        return
    assert got[1].dtype == expected[1].dtype
    assert_close(got[1], expected[1], rtol=1e-10, atol=1e-10)
    for g, e in zip(got[2], expected[2], strict=True):
        assert (g is None) == (e is None)
        if g is not None:
            assert_close(g, e, rtol=1e-10, atol=1e-10)
