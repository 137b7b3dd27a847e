"""Shape ops beyond the op database: errors, as_strided, view(dtype), out=, higher-order
gradients and hypothesis tests against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.autograd import gradcheck, gradgradcheck


def _t(*shape, dtype=ember.float64, requires_grad=False):
    n = int(np.prod(shape)) if shape else 1
    return ember.tensor(np.arange(n, dtype=np.float64).reshape(shape) * 0.5 - 1,
                        dtype=dtype, requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# errors, with PyTorch's messages

X = ember.arange(6.0).reshape(2, 3)

ERRORS = [
    (lambda: X.view(4), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
    (lambda: X.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: X.view(-2, 3), RuntimeError, r"invalid shape dimension -2 at index 0 of shape"),
    (lambda: X.t().view(6), RuntimeError, "view size is not compatible with input tensor's"),
    (lambda: X.view(2, 3.0), TypeError, "must be a sequence of ints"),
    (lambda: X.reshape(4), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
    (lambda: X.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda: X.unflatten(1, (2, 2)), RuntimeError,
     r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\)"),
    (lambda: X.unflatten(1, ()), RuntimeError, "unflatten: sizes must be non-empty"),
    (lambda: X.squeeze(5), IndexError, r"expected to be in range of \[-2, 1\], but got 5"),
    (lambda: X.unsqueeze(3), IndexError, r"expected to be in range of \[-3, 2\], but got 3"),
    (lambda: X.permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda: X.permute(0), RuntimeError, r"input.dim\(\) = 2 is not equal to len\(dims\) = 1"),
    (lambda: X.transpose(0, 2), IndexError, "Dimension out of range"),
    (lambda: ember.zeros(2, 3, 4).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 "
                                                     "dimensions, but self is 3D"),
    (lambda: X.movedim((0, 1), (0,)), RuntimeError, "should contain the same number of dims"),
    (lambda: X.movedim((0, 0), (0, 1)), RuntimeError, r"repeated dim in `source` \(\[0, 0\]\)"),
    (lambda: X.expand(3, 3), RuntimeError,
     r"The expanded size of the tensor \(3\) must match the existing size \(2\) at "
     r"non-singleton dimension 0.  Target sizes: \[3, 3\].  Tensor sizes: \[2, 3\]"),
    (lambda: X.expand(3), RuntimeError, r"the number of sizes provided \(1\) must be greater"),
    (lambda: X.expand(-1, -1, 3), RuntimeError, "isn't allowed in a leading, non-existing"),
    (lambda: ember.broadcast_shapes((2, 3), (3, 3)), RuntimeError,
     "Attempting to broadcast a dimension of length 3 at -2! Mismatching argument at index 1"),
    (lambda: ember.broadcast_shapes((2, -1)), ValueError, "negative length"),
    (lambda: ember.broadcast_tensors(X, ember.zeros(3, 3)), RuntimeError,
     r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton "
     "dimension 0"),
    (lambda: X.repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
    (lambda: X.narrow(0, 1, 5), RuntimeError,
     r"start \(1\) \+ length \(5\) exceeds dimension size \(2\)."),
    (lambda: X.narrow(0, 3, 0), IndexError,
     r"start out of range \(expected to be in range of \[-2, 2\], but got 3\)"),
    (lambda: X.narrow(0, 1, -1), RuntimeError, "length must be non-negative"),
    (lambda: X.select(0, 5), IndexError,
     r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 0"),
    (lambda: ember.tensor(1.0).select(0, 0), IndexError, "cannot be applied to a 0-dim tensor"),
    (lambda: X.split([1, 1], 1), RuntimeError,
     r"split_with_sizes expects split_sizes to sum exactly to 3 \(input tensor's size at "
     r"dimension 1\), but got split_sizes=\[1, 1\]"),
    (lambda: X.split([1, 3, -1], 1), RuntimeError, "only non-negative entries"),
    (lambda: X.split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda: X.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: X.tensor_split(0), RuntimeError, "number of sections must be larger than 0"),
    (lambda: X.tensor_split(ember.tensor([[1]])), RuntimeError, "but got a tensor with 2 dims"),
    (lambda: X.tensor_split(ember.tensor(1.0)), RuntimeError, "dtype of long, but got Float"),
    (lambda: ember.hsplit(X, 2), RuntimeError, "size of the dimension 3 is not divisible by "
                                               "the split_size 2"),
    (lambda: ember.vsplit(ember.zeros(3), 3), RuntimeError, "at least 2 dimension"),
    (lambda: ember.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (lambda: ember.cat([ember.tensor(1.0), X]), RuntimeError,
     r"zero-dimensional tensor \(at position 0\) cannot be concatenated"),
    (lambda: ember.cat([X, ember.zeros(2)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda: ember.cat([X, ember.zeros(2, 2)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
     "tensor number 1 in the list."),
    (lambda: ember.cat([X, X], 2), IndexError, "Dimension out of range"),
    (lambda: ember.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda: ember.stack([X, ember.zeros(3, 3)]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3, 3\] "
     "at entry 1"),
    (lambda: X.flip(0, 0), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: ember.zeros(3).fliplr(), RuntimeError, "Input must be >= 2-d."),
    (lambda: ember.tensor(1.0).flipud(), RuntimeError, "Input must be >= 1-d."),
    (lambda: X.roll((1, 2), 0), RuntimeError, "shifts and dimensions must align. shifts: 2, "
                                              "dims:1"),
    (lambda: X.roll((), ()), RuntimeError, "`shifts` required"),
    (lambda: ember.tensor(1.0).roll(1, 0), IndexError, "tensor has no dimensions"),
    (lambda: X.diagonal(0, 1, 1), RuntimeError, "diagonal dimensions cannot be identical 1, 1"),
    (lambda: ember.diag(ember.zeros(2, 2, 2)), RuntimeError, "Supports 1D or 2D tensors. Got 3D"),
    (lambda: ember.diag_embed(X, 0, 0, 0), RuntimeError, "diagonal dimensions cannot be"),
    (lambda: ember.tril(ember.zeros(3)), RuntimeError,
     "tril: input tensor must have at least 2 dimensions"),
    (lambda: ember.triu(ember.zeros(3)), RuntimeError, "triu: input tensor must have at least"),
    (lambda: X.unfold(1, 4, 1), RuntimeError,
     "maximum size for tensor at dimension 1 is 3 but size is 4"),
    (lambda: X.unfold(1, 2, 0), RuntimeError, "step is 0 but must be > 0"),
    (lambda: X.as_strided((2, 4), (3, 1)), RuntimeError,
     r"setStorage: sizes \[2, 4\], strides \[3, 1\], storage offset 0, and itemsize 4 requiring "
     "a storage size of 28 are out of bounds for storage of size 24"),
    (lambda: X.as_strided((3,), (-1,)), RuntimeError, "Negative strides are not supported"),
    (lambda: X.as_strided((3, 2), (1,)), RuntimeError, "mismatch in length of strides and shape"),
    (lambda: X.view(ember.float16).t().view(ember.float32), RuntimeError,
     r"self.stride\(-1\) must be 1 to view Half as Float"),
    (lambda: ember.zeros(3).view(ember.complex64), RuntimeError,
     r"self.size\(-1\) must be divisible by 2 to view Float as ComplexFloat"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


# ---------------------------------------------------------------------------
# targeted behaviour

def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 3), 3, (1, 1, 3)) == ember.Size([1, 2, 3])
    assert ember.broadcast_shapes() == ember.Size([])
    assert ember.broadcast_shapes((0, 1), (3,)) == (0, 3)
    assert isinstance(ember.broadcast_shapes((2,)), ember.Size)


def test_view_dtype_reinterprets_bits():
    x = ember.tensor([1.0, -2.0], dtype=ember.float32)
    i = x.view(ember.int32)
    assert i.dtype == ember.int32 and i._base is x
    np.testing.assert_array_equal(i.numpy(), np.array([1.0, -2.0], np.float32).view(np.int32))
    h = ember.zeros(2, 3).view(ember.float16)
    assert h.shape == (2, 6)
    same = x.view(ember.float32)
    assert same._base is x and same.dtype == ember.float32
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    assert not a.view(ember.int32).requires_grad
    assert a.view(ember.float32).requires_grad


def test_reshape_is_a_view_only_when_possible():
    x = ember.arange(12.0).reshape(3, 4).clone()
    assert x.reshape(4, 3)._base is x
    y = x.t().reshape(12)
    assert y._base is None and y.tolist() == x.numpy().T.reshape(-1).tolist()
    assert x.t().flatten()._base is None
    assert x.flatten(0, 0) is x


def test_contiguous():
    x = ember.arange(12.0).reshape(3, 4)
    assert x.contiguous() is x
    c = x.t().contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    np.testing.assert_array_equal(c.numpy(), x.numpy().T)


def test_atleast_forms():
    a, b = ember.atleast_2d(ember.tensor(1.0), ember.zeros(3))
    assert a.shape == (1, 1) and b.shape == (1, 3)
    (c,) = ember.atleast_1d([ember.tensor(2.0)])
    assert c.shape == (1,)
    d = ember.zeros(2, 3)
    assert ember.atleast_2d(d) is d


def test_split_chunk_tensor_split_edges():
    x = ember.arange(6)
    assert [t.tolist() for t in x.chunk(4)] == [[0, 1], [2, 3], [4, 5]]
    assert [t.tolist() for t in ember.arange(5).tensor_split([1, 4, 2])] == \
        [[0], [1, 2, 3], [], [2, 3, 4]]
    assert [t.tolist() for t in x.tensor_split(ember.tensor(4))] == \
        [[0, 1], [2, 3], [4], [5]]
    assert [t.tolist() for t in x.tensor_split(ember.tensor([2]))] == [[0, 1], [2, 3, 4, 5]]
    assert [t.tolist() for t in ember.tensor_split(x, sections=2)] == [[0, 1, 2], [3, 4, 5]]
    assert [t.tolist() for t in ember.tensor_split(x, indices=[1])] == [[0], [1, 2, 3, 4, 5]]
    assert [t.shape for t in ember.zeros(0, 2).split(0)] == [(0, 2)]
    assert [t.shape for t in ember.zeros(0, 2).chunk(2)] == [(0, 2), (0, 2)]


def test_cat_and_stack_out_and_promotion():
    a = ember.zeros(2, dtype=ember.int64)
    b = ember.ones(2, dtype=ember.float32)
    assert ember.cat([a, b]).dtype == ember.float32
    out = ember.empty(4)
    r = ember.cat([b, b], out=out)
    assert r is out and out.tolist() == [1.0] * 4
    out = ember.empty(2, 2)
    assert ember.stack([b, b], out=out) is out and out.tolist() == [[1.0, 1.0]] * 2


def test_cat_gradient_with_skipped_empty_tensor():
    a = ember.tensor([[1.0, 2.0]], requires_grad=True)
    e = ember.zeros(0, requires_grad=True)
    ember.cat([a, e, a]).sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0]]
    assert e.grad.shape == (0,)


def test_unfold_of_0d_tensor_and_empty_windows():
    assert ember.tensor(3.0).unfold(0, 1, 1).tolist() == [3.0]
    assert ember.zeros(2, 3).unfold(1, 0, 1).shape == (2, 4, 0)


def test_as_strided_views_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    cases = [((2, 2), (1, 2), 1), ((2, 2), (1, 1), None), ((3, 2), (1, 3), None),
             ((2, 3), (3, 1), 0), ((4,), (0,), 2)]
    for size, stride, offset in cases:
        base_np = np.arange(6.0).reshape(2, 3)
        for sub in (lambda t: t, lambda t: t.t(), lambda t: t[1]):
            e = ember.tensor(base_np, requires_grad=True)
            t = torch.tensor(base_np, requires_grad=True)
            ev, tv = sub(e * 1), sub(t * 1)
            if int(np.prod(size)) and (offset or tv.storage_offset()) + sum(
                    (n - 1) * s for n, s in zip(size, stride, strict=True)) >= 6:
                continue
            eo = ev.as_strided(size, stride, offset)
            to = tv.as_strided(size, stride, offset)
            np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
            assert eo.storage_offset() == to.storage_offset()
            w = np.arange(int(np.prod(size)), dtype=np.float64).reshape(size) + 1
            (eo * ember.tensor(w)).sum().backward()
            (to * torch.tensor(w)).sum().backward()
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


def test_as_strided_shares_storage():
    x = ember.arange(6.0).reshape(2, 3).clone()
    v = x.as_strided((2, 2), (1, 2), 1)
    x.add_(10)
    assert v.tolist() == [[11.0, 13.0], [12.0, 14.0]]
    assert v._base is x and v._version == x._version == 1
    w = v.as_strided((2,), (3,), 0)
    assert w.tolist() == [10.0, 13.0]


# gradients of the backward nodes themselves (create_graph=True)
GRADGRAD = [
    ("basic_index", lambda x: x[1:, ::2]),
    ("select", lambda x: x.select(1, 2)),
    ("unbind", lambda x: x.unbind(1)[1] * x.unbind(1)[0]),
    ("split", lambda x: x.split([1, 2], 0)[1]),
    ("tensor_split_overlap", lambda x: x.tensor_split([2, 1], 0)[2].sum(0) *
     x.tensor_split([2, 1], 0)[0]),
    ("diagonal", lambda x: x.diagonal(1)),
    ("diag_embed", lambda x: ember.diag_embed(x, 1)),
    ("unfold", lambda x: x.unfold(1, 2, 1) ** 2),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 1)) ** 2),
    ("repeat", lambda x: x.repeat(2, 1, 2) ** 2),
    ("expand", lambda x: x[:, :1].expand(3, 4) ** 2),
    ("flip_roll", lambda x: x.flip(1).roll(1, 0) ** 2),
    ("tril", lambda x: x.tril(1) ** 2),
    ("cat_stack", lambda x: ember.stack([ember.cat([x, x * x], 1), ember.cat([x, x], 1)])),
]


@pytest.mark.parametrize("fn", [f for _, f in GRADGRAD], ids=[n for n, _ in GRADGRAD])
def test_second_order_gradients(fn):
    x = ember.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# ---------------------------------------------------------------------------
# hypothesis: random shapes against NumPy

@st.composite
def _array_and_perm(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    a = draw(hnp.arrays(np.float64, shape, elements=st.floats(-10, 10)))
    perm = draw(st.permutations(range(len(shape))))
    return a, tuple(perm)


@settings(max_examples=40, deadline=None)
@given(_array_and_perm(), st.integers(0, 3), st.booleans())
def test_reshape_permute_flip_match_numpy(data, k, neg):
    a, perm = data
    t = ember.tensor(a)
    p = t.permute(*perm)
    np.testing.assert_array_equal(p.numpy(), a.transpose(perm))
    np.testing.assert_array_equal(p.reshape(-1).numpy(), a.transpose(perm).reshape(-1))
    d = k % a.ndim
    dd = d - a.ndim if neg else d
    np.testing.assert_array_equal(p.flip(dd).numpy(), np.flip(a.transpose(perm), d))
    np.testing.assert_array_equal(p.flatten(dd).numpy(),
                                  a.transpose(perm).reshape(a.transpose(perm).shape[:d] + (-1,)))
    np.testing.assert_array_equal(p.movedim(dd, 0).numpy(), np.moveaxis(a.transpose(perm), d, 0))
    n = a.transpose(perm).shape[d]
    sizes = [n // 2, n - n // 2]
    for got, exp in zip(p.split(sizes, dd), np.split(a.transpose(perm), [n // 2], d),
                        strict=True):
        np.testing.assert_array_equal(got.numpy(), exp)


@settings(max_examples=40, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3),
       hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
def test_broadcast_matches_numpy(s1, s2):
    try:
        expected = np.broadcast_shapes(s1, s2)
    except ValueError:
        with pytest.raises(RuntimeError):
            ember.broadcast_shapes(s1, s2)
        return
    assert tuple(ember.broadcast_shapes(s1, s2)) == expected
    a, b = ember.broadcast_tensors(ember.zeros(s1), ember.ones(s2))
    assert tuple(a.shape) == tuple(b.shape) == expected
