"""Indexing beyond the op database: t[index] and t[index] = v against NumPy and PyTorch,
errors, gradients through repeated indices, and hypothesis tests for slicing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.autograd import gradcheck, gradgradcheck

A = np.arange(60.0).reshape(3, 4, 5)


def _i(*v):
    return np.array(v, dtype=np.int64)


# indexes valid for a (3, 4, 5) array, in NumPy form (arrays become tensors for ember)
INDEXES = [
    0, -1, slice(None), slice(1, None), slice(None, None, 2), slice(5, 1), slice(-10, 10),
    (1, 2), (1, 2, 3), (Ellipsis, 0), (0, Ellipsis), (None,), (None, 0, None),
    (slice(None), None, 1), (Ellipsis, None), (Ellipsis,), (), (1, slice(1, 3), slice(None, 4, 3)),
    _i(0, 2), _i(-1, 0, -1), np.array([[0, 1], [2, 2]]), (slice(None), _i(3, 0)),
    (_i(0, 1), _i(1, 2)), (_i(0, 2), slice(None), _i(4, 0)), (Ellipsis, _i(1, 1)),
    (None, _i(0), slice(None), 2), (_i(0, 1)[:, None], _i(0, 1, 2)),
    ([0, 2],), ([[0], [1]], [1, 2]), (1, [0, 3], slice(None, 2)), _i(),
    (_i(0, 2, 2), _i(-1, 3, 3), _i(4, 0, 4)), (_i(1), _i(0, 1)[:, None], -2),
    A[:, 0, 0] > 10, (slice(None), A[0, :, 0] > 1), A > 30, A[:, :, 0] > 20,
    (A[:, 0, 0] > 10, _i(1, 3)), (1, A[0] > 3), np.zeros(3, bool), np.array(True),
]


def _ember_index(idx):
    def conv(v):
        if isinstance(v, np.ndarray):
            return ember.tensor(v)
        return v
    return tuple(conv(v) for v in idx) if isinstance(idx, tuple) else conv(idx)


def _torch_index(torch, idx):
    def conv(v):
        if isinstance(v, np.ndarray):
            return torch.tensor(v)
        return v
    return tuple(conv(v) for v in idx) if isinstance(idx, tuple) else conv(idx)


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i)[:40] for i in range(len(INDEXES))])
def test_getitem_matches_numpy(idx):
    t = ember.tensor(A)
    got = t[_ember_index(idx)]
    np.testing.assert_array_equal(got.numpy(), A[idx])
    basic = not any(isinstance(v, (np.ndarray, list)) for v in
                    (idx if isinstance(idx, tuple) else (idx,)))
    assert (got._base is t) == basic
    assert np.shares_memory(got.numpy(), t.numpy()) == (basic and got.numel() > 0)


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i)[:40] for i in range(len(INDEXES))])
def test_setitem_matches_numpy(idx):
    t = ember.tensor(A)
    expected = A.copy()
    shape = A[idx].shape
    value = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 100
    expected[idx] = value
    t[_ember_index(idx)] = ember.tensor(value)
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t._version == 1
    t[_ember_index(idx)] = 7
    expected[idx] = 7
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i)[:40] for i in range(len(INDEXES))])
def test_getitem_and_setitem_gradients_match_torch(idx):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shape = A[idx].shape
    v_np = rng.standard_normal(shape)
    g_np = rng.standard_normal(A.shape)
    gi_np = rng.standard_normal(shape)
    results = []
    for lib, conv in ((ember, _ember_index), (torch, lambda i: _torch_index(torch, i))):
        x = lib.tensor(A, requires_grad=True)
        v = lib.tensor(v_np, requires_grad=True)
        b = x * 2
        picked = b[conv(idx)]
        b2 = b * 1
        b2[conv(idx)] = v * 3
        loss = (picked * lib.tensor(gi_np)).sum() + (b2 * lib.tensor(g_np)).sum()
        loss.backward()
        results.append((picked.detach().numpy(), b2.detach().numpy(), x.grad.numpy(),
                        v.grad.numpy()))
    for got, exp in zip(*results, strict=True):
        np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12)


def test_repeated_indices_accumulate_gradient():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    y = ember.ones(4, 3, requires_grad=True)
    (y[ember.tensor([1, 1, 3])] * ember.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    assert y.grad[:, 0].tolist() == [0.0, 3.0, 0.0, 3.0]
    z = ember.ones(3, 4, dtype=ember.float64, requires_grad=True)
    z[:, [1, 1, 0]].sum().backward()
    assert z.grad[0].tolist() == [1.0, 2.0, 0.0, 0.0]


def test_advanced_index_gradients_second_order():
    x = ember.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    for fn in (lambda t: t[[0, 2, 2]] ** 2, lambda t: t[:, [1, 1]] ** 2,
               lambda t: t[t.detach() > 0] ** 2, lambda t: t.gather(1, ember.tensor(
                   [[0, 0], [1, 2], [2, 2], [0, 1]])) ** 2,
               lambda t: t.index_select(0, ember.tensor([3, 3, 0])) ** 2,
               lambda t: t.scatter_add(0, ember.tensor([[0, 1, 1]]), t[:1] ** 2),
               lambda t: t.index_put((ember.tensor([0, 0]),), t[1] * t[2], accumulate=True),
               lambda t: t.masked_fill(t.detach() > 0, 2.0) ** 2,
               lambda t: t.take(ember.tensor([[0, 11], [11, 5]])) ** 2):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_scatter_reduce_add_and_larger_src_gradients():
    # PyTorch has no derivative for scatter(reduce=...) nor for a src larger than index
    x = ember.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    src = ember.tensor(np.random.default_rng(2).standard_normal((4, 5)), requires_grad=True)
    idx = ember.tensor([[0, 1, 2, 0], [1, 1, 0, 2]])
    assert gradcheck(lambda a, s: a.scatter(0, idx, s, reduce="add"), (x, src))
    assert gradcheck(lambda a, s: a.scatter_add(0, idx, s), (x, src))
    uniq = ember.tensor([[0, 1, 2, 0], [1, 2, 0, 2]])
    assert gradcheck(lambda a, s: a.scatter(0, uniq, s), (x, src))
    out = x.scatter(0, uniq, src)
    np.testing.assert_array_equal(out.detach().numpy()[0, :3],
                                  [src.detach().numpy()[0, 0], x.detach().numpy()[0, 1],
                                   src.detach().numpy()[1, 2]])
    with pytest.raises(RuntimeError, match="multiply"):
        x.scatter(0, uniq, src, reduce="multiply").sum().backward()


def test_index_add_rows_kernel_and_fallback_agree():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 50, 400)
    for dtype, dim in ((np.float32, 0), (np.float64, 0), (np.float32, 1), (np.int64, 0)):
        shape = (50, 70) if dim == 0 else (70, 50)
        src_shape = (400, 70) if dim == 0 else (70, 400)
        x = rng.standard_normal(shape).astype(dtype)
        src = rng.standard_normal(src_shape).astype(dtype)
        got = ember.tensor(x).index_add(dim, ember.tensor(idx), ember.tensor(src), alpha=2)
        exp = x.copy()
        np.add.at(exp, (slice(None),) * dim + (idx,), src * 2)
        np.testing.assert_allclose(got.numpy(), exp, rtol=1e-5, atol=1e-4)
        # the same scatter-add as the gradient of an index_select
        t = ember.tensor(x.astype(np.float64), requires_grad=True)
        t.index_select(dim, ember.tensor(idx)).backward(ember.tensor(src.astype(np.float64)))
        exp = np.zeros(shape)
        np.add.at(exp, (slice(None),) * dim + (idx,), src.astype(np.float64))
        np.testing.assert_allclose(t.grad.numpy(), exp, rtol=1e-12, atol=1e-9)


def test_nonzero_forms():
    x = ember.tensor([[0, 1, 2], [3, 0, 0]])
    assert x.nonzero().tolist() == [[0, 1], [0, 2], [1, 0]]
    rows, cols = ember.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 0, 1] and cols.tolist() == [1, 2, 0]
    assert rows.dtype == ember.int64
    assert ember.nonzero(ember.tensor(3.0)).shape == (1, 0)
    assert [t.tolist() for t in ember.nonzero(ember.tensor(3.0), as_tuple=True)] == [[0]]
    assert [t.tolist() for t in ember.nonzero(ember.tensor(0.0), as_tuple=True)] == [[]]
    assert ember.argwhere(x).tolist() == x.nonzero().tolist()
    if hasattr(ember, "where"):
        assert [t.tolist() for t in ember.where(x > 0)] == [[0, 0, 1], [1, 2, 0]]


def test_zero_dim_integer_tensor_index_is_an_int():
    x = ember.arange(12.0).reshape(3, 4).clone()
    v = x[ember.tensor(1)]
    assert v._base is x and v.tolist() == [4.0, 5.0, 6.0, 7.0]
    x[ember.tensor(2), 1] = -1.0
    assert x[2, 1].item() == -1.0


def test_setitem_casts_the_value_to_the_tensor_dtype():
    y = ember.zeros(2, 3, dtype=ember.int64)
    y[0] = 1.7
    y[1] = ember.tensor([1.7, 2.0, 3.9])
    assert y.tolist() == [[1, 1, 1], [1, 2, 3]]
    y[:, 0] = [5, 6]
    assert y[:, 0].tolist() == [5, 6]
    f = ember.zeros(3)
    f[ember.tensor([0, 2])] = ember.tensor([1, 2])
    assert f.tolist() == [1.0, 0.0, 2.0] and f.dtype == ember.float32


def test_setitem_under_no_grad_and_without_grad_keeps_leaves():
    a = ember.zeros(3)
    v = ember.tensor([1.0], requires_grad=True)
    a[1:2] = v
    assert a.requires_grad and not a.is_leaf
    a.sum().backward()
    assert v.grad.tolist() == [1.0]
    b = ember.zeros(3)
    b[0] = 2.0
    assert b.is_leaf and not b.requires_grad


def test_index_out_of_bounds_error_is_index_and_runtime_error():
    from ember._ops.indexing import IndexOutOfBoundsError

    assert issubclass(IndexOutOfBoundsError, IndexError)
    assert issubclass(IndexOutOfBoundsError, RuntimeError)


X = ember.arange(6.0).reshape(2, 3)
IDX = ember.tensor([[0, 1, 0]])
MASK = ember.tensor([True, False])[:, None]

ERRORS = [
    (lambda: X[5], IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X[:, 5], IndexError, "index 5 is out of bounds for dimension 1 with size 3"),
    (lambda: X[:, -4], IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
    (lambda: X[ember.tensor([5])], IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X[[0, 2]], IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: X[:, [0, -9]], IndexError, "index -9 is out of bounds for dimension 1 with size 3"),
    (lambda: X[::-1], ValueError, "step must be greater than zero"),
    (lambda: X[:, ::0], ValueError, "step must be greater than zero"),
    (lambda: X[ember.tensor([True, False, True])], IndexError,
     r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor "
     r"\[2, 3\] at index 0"),
    (lambda: X[:, ember.tensor([True, False])], IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
     r"\[2, 3\] at index 1"),
    (lambda: X[ember.tensor([1.0])], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: X[1.0], IndexError, r"only integers, slices \(`:`\), ellipsis \(`...`\), None and "
                                 r"long or byte Variables are valid indices \(got float\)"),
    (lambda: X["a"], TypeError, "invalid data type 'str'"),
    (lambda: X[object()], IndexError, r"valid indices \(got object\)"),
    (lambda: X[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
    (lambda: X.__setitem__(0, ember.ones(2)), RuntimeError,
     r"The expanded size of the tensor \(3\) must match the existing size \(2\)"),
    (lambda: X.clone().__setitem__([0, 1], ember.ones(2)), RuntimeError,
     r"shape mismatch: value tensor of shape \[2\] cannot be broadcast to indexing result of "
     r"shape \[2, 3\]"),
    (lambda: X.__setitem__(5, 1.0), IndexError, "index 5 is out of bounds"),
    (lambda: X.gather(0, ember.tensor([[5, 0, 0]])), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X.gather(0, ember.tensor([[-1, 0, 0]])), IndexError,
     "index -1 is out of bounds for dimension 0 with size 2"),
    (lambda: X.gather(0, ember.tensor([[0.0]])), RuntimeError,
     r"gather\(\): Expected dtype int32/int64 for index"),
    (lambda: X.gather(0, ember.tensor([0])), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: X.gather(0, ember.tensor([[0, 0, 0, 0]])), RuntimeError,
     r"Size does not match at dimension 1 expected index \[1, 4\] to be no larger than self "
     r"\[2, 3\] apart from dimension 0"),
    (lambda: X.scatter(0, ember.tensor([[5, 0, 0]]), 1.0), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X.scatter(0, IDX, X.double()), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda: X.scatter(0, ember.tensor([[0, 1, 0, 0]]), 1.0), RuntimeError,
     r"Expected index \[1, 4\] to be no larger than self \[2, 3\] apart from dimension 0"),
    (lambda: X.scatter(0, IDX, ember.zeros(1, 2)), RuntimeError,
     r"and to be no larger size than src \[1, 2\]"),
    (lambda: X.scatter(0, IDX, X, reduce="max"), RuntimeError,
     "reduce argument must be either add or multiply."),
    (lambda: X.scatter_reduce(0, IDX, X, "foo"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda: X.scatter_add(0, ember.tensor([[0, 2, 0]]), X), IndexError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_select(0, ember.tensor([5])), IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_select(0, ember.tensor([[0]])), IndexError,
     r"index_select\(\): Index is supposed to be a vector"),
    (lambda: X.index_select(0, ember.tensor([0.0])), RuntimeError,
     r"index_select\(\): Expected dtype int32 or int64 for index"),
    (lambda: X.index_add(0, ember.tensor([-1]), X[:1]), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_add(0, ember.tensor([0, 1]), X[:1]), RuntimeError,
     r"index_add_\(\): Number of indices \(2\) should be equal to source.size\(dim\)"),
    (lambda: X.index_add(0, ember.tensor([0]), X[:1, :2]), RuntimeError,
     r"source tensor shape must match self tensor shape, excluding the specified dimension. "
     r"Got self.shape = \[2, 3\] source.shape = \[1, 2\]"),
    (lambda: X.index_add(0, ember.tensor([0]), X[:1].double()), RuntimeError,
     r"index_add_\(\): self \(Float\) and source \(Double\) must have the same scalar type"),
    (lambda: X.index_copy(0, ember.tensor([5]), X[:1]), IndexError,
     r"index_copy_\(\): index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_copy(0, ember.tensor([0, 1]), X[:1]), IndexError,
     r"index_copy_\(\): Number of indices \(2\) should be equal to source.size\(dim\) \(1\)"),
    (lambda: X.index_fill(0, ember.tensor([0.0]), 1), IndexError,
     r"index_fill_\(\): Expected dtype int64 for index."),
    (lambda: X.index_fill(0, ember.tensor([2]), 1), IndexError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_fill(0, ember.tensor([0]), ember.tensor([1.0])), RuntimeError,
     "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
     r"dimension\(s\)."),
    (lambda: X.index_put((ember.tensor([0, 5]),), ember.tensor(1.0)), IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: X.index_put((ember.tensor([0]),), ember.tensor(1.0).double()), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the "
     "destination and Double for the source."),
    (lambda: X.index_put((None,), ember.tensor(1.0)), TypeError,
     "expected Tensor as element 0 in argument 0, but got NoneType"),
    (lambda: X.masked_fill(ember.tensor([1, 0])[:, None], 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    (lambda: X.masked_fill(MASK, ember.tensor([1.0, 2.0])), RuntimeError,
     "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
     r"dimension\(s\)."),
    (lambda: X.clone().masked_fill_(ember.ones(3, 2, 3, dtype=ember.bool), 1.0), RuntimeError,
     r"output with shape \[2, 3\] doesn't match the broadcast shape \[3, 2, 3\]"),
    (lambda: X.masked_scatter(ember.tensor([True, True])[:, None], ember.zeros(2)),
     RuntimeError, "Number of elements of source < number of ones in mask"),
    (lambda: X.masked_select(ember.ones(1, 3)), RuntimeError,
     "masked_select: expected BoolTensor for mask"),
    (lambda: X.take(ember.tensor([7])), IndexError,
     r"out of range: tried to access index 7 on a tensor of 6 elements."),
    (lambda: X.put(ember.tensor([-7]), ember.tensor([1.0])), IndexError,
     r"out of range: tried to access index -7 on a tensor of 6 elements."),
    (lambda: X.put(ember.tensor([0, 1]), ember.tensor([1.0])), IndexError,
     r"Expected source and index to have the same number of elements, but got "
     r"source.numel\(\) = 1, index.numel\(\) = 2"),
    (lambda: ember.take_along_dim(X, ember.tensor([[[0]]]), 1), RuntimeError,
     "input and indices should have the same number of dimensions, but got 2 dimensions for "
     "input, and 3 dimensions for indices"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_several_ellipses_are_an_error():
    # NumPy's rule; PyTorch accepts them but then indexes wrongly
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        X[..., 0, ...]


def test_error_types_match_torch():
    torch = pytest.importorskip("torch")
    for i, (fn, exc, _) in enumerate(ERRORS):
        tfn = _with_torch_names(fn, torch)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # PyTorch's deprecation warnings
                tfn()
        except Exception as e:  # noqa: BLE001 - any exception type is compared
            assert isinstance(e, exc) or exc is IndexError and isinstance(e, RuntimeError), \
                (i, type(e), exc)
        else:
            pytest.fail(f"case {i}: torch raised nothing where ember raises {exc}")


def _with_torch_names(fn, torch):
    import types

    g = {**fn.__globals__, "ember": torch, "X": torch.arange(6.0).reshape(2, 3),
         "IDX": torch.tensor([[0, 1, 0]]), "MASK": torch.tensor([True, False])[:, None]}
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


# ---------------------------------------------------------------------------
# hypothesis: basic slicing against NumPy

@st.composite
def _array_and_basic_index(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    a = draw(hnp.arrays(np.float64, shape, elements=st.floats(-100, 100)))
    idx = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    if not isinstance(idx, tuple):
        idx = (idx,)
    # PyTorch allows only positive steps
    idx = tuple(slice(s.start, s.stop, abs(s.step)) if isinstance(s, slice) and s.step else s
                for s in idx)
    return a, idx


@settings(max_examples=50, deadline=None)
@given(_array_and_basic_index())
def test_basic_indexing_matches_numpy(data):
    a, idx = data
    t = ember.tensor(a)
    v = t[idx]
    np.testing.assert_array_equal(v.numpy(), a[idx])
    assert v._base is t
    # a write through the view shows in the base, as in NumPy
    expected = a.copy()
    expected[idx] = -1.0
    t[idx] = -1.0
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t._version == 1


@st.composite
def _array_and_int_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    a = draw(hnp.arrays(np.float64, shape, elements=st.floats(-100, 100)))
    dim = draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    idx = draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=6))
    return a, dim, np.array(idx, dtype=np.int64)


@settings(max_examples=50, deadline=None)
@given(_array_and_int_index())
def test_advanced_indexing_and_its_gradient_match_numpy(data):
    a, dim, idx = data
    t = ember.tensor(a, requires_grad=True)
    key = (slice(None),) * dim + (ember.tensor(idx),)
    out = t[key]
    np.testing.assert_array_equal(out.detach().numpy(), a[(slice(None),) * dim + (idx,)])
    g = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(ember.tensor(g))
    expected = np.zeros_like(a)
    np.add.at(expected, (slice(None),) * dim + (idx,), g)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12, atol=1e-12)
