"""Reductions: named results, result dtypes, errors, empty tensors, gradients at zeros and
ties, and hypothesis tests over shapes and dims against NumPy.

The op database (ember.testing._opinfo.reduction) covers forward values, gradients and
method forms; this file covers what a table does not express.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.testing import assert_close


def t(data, **kwargs):
    return ember.tensor(data, **kwargs)


# ---------------------------------------------------------------------------
# named results

def test_max_with_dim_is_a_named_tuple():
    x = t([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    r = x.max(1)
    values, indices = r
    assert isinstance(r, tuple) and len(r) == 2
    assert r.values is values and r.indices is indices
    assert r[0] is values
    assert values.tolist() == [5.0, 6.0]
    assert indices.tolist() == [1, 2] and indices.dtype == ember.int64
    assert type(r) is ember.return_types.max
    assert repr(r).startswith("ember.return_types.max(\nvalues=tensor(")


def test_named_tuple_types_take_a_sequence_and_pickle():
    r = ember.return_types.max([t([1.0]), t([0])])
    assert r.values.tolist() == [1.0]
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is ember.return_types.max
    assert back.indices.tolist() == [0]
    with pytest.raises(TypeError, match="length 2"):
        ember.return_types.max([t([1.0])])


@pytest.mark.parametrize("name,fields", [
    ("min", ("values", "indices")), ("cummax", ("values", "indices")),
    ("cummin", ("values", "indices")), ("aminmax", ("min", "max")),
])
def test_other_named_results(name, fields):
    x = t([[3.0, 1.0], [2.0, 4.0]])
    r = {"min": lambda: x.min(0), "cummax": lambda: x.cummax(1),
         "cummin": lambda: x.cummin(1), "aminmax": lambda: x.aminmax(dim=0)}[name]()
    assert type(r).__name__ == name and type(r)._fields == fields
    assert getattr(r, fields[0]) is r[0] and getattr(r, fields[1]) is r[1]


def test_aminmax_values():
    mn, mx = ember.aminmax(t([[3.0, 1.0], [2.0, 4.0]]), dim=1, keepdim=True)
    assert mn.tolist() == [[1.0], [2.0]] and mx.tolist() == [[3.0], [4.0]]


def test_var_mean_is_a_plain_pair():
    v, m = ember.var_mean(t([1.0, 2.0, 3.0, 4.0]))
    assert_close(v, t(5.0 / 3.0))
    assert_close(m, t(2.5))


# ---------------------------------------------------------------------------
# result dtypes

@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int8, ember.int32])
def test_integer_sums_and_products_are_int64(dtype):
    x = t([1, 0, 1], dtype=dtype)
    assert x.sum().dtype == ember.int64
    assert x.prod().dtype == ember.int64
    assert x.cumsum(0).dtype == ember.int64
    assert x.cumprod(0).dtype == ember.int64
    assert ember.nansum(x).dtype == ember.int64


def test_dtype_arguments():
    x = t([1, 2, 3], dtype=ember.int32)
    assert ember.sum(x, dtype=ember.int32).dtype == ember.int32
    assert ember.sum(x, dtype=ember.float64).dtype == ember.float64
    assert ember.mean(x, dtype=ember.float64).item() == 2.0
    assert ember.cumsum(x, 0, dtype=ember.int32).dtype == ember.int32
    assert ember.prod(x, 0, dtype=ember.float32).dtype == ember.float32


def test_sum_with_dtype_gives_the_input_dtype_gradient():
    x = t([1.0, 2.0], requires_grad=True)
    ember.sum(x, dtype=ember.float64).backward()
    assert x.grad.dtype == ember.float32
    assert x.grad.tolist() == [1.0, 1.0]


def test_index_and_bool_results():
    x = t([[1.0, 0.0], [3.0, 2.0]])
    assert x.argmax().dtype == ember.int64
    assert x.max(0).indices.dtype == ember.int64
    assert x.cummax(0).indices.dtype == ember.int64
    assert x.count_nonzero().dtype == ember.int64
    assert x.all().dtype == ember.bool and x.any(1).dtype == ember.bool
    u = t([1, 2], dtype=ember.uint8)
    assert ember.all(u).dtype == ember.uint8 and ember.all(u).item() == 1


def test_float_results():
    assert ember.logsumexp(t([1, 2]), 0).dtype == ember.float32
    assert t([3.0, 4.0], dtype=ember.complex64).norm().dtype == ember.float32
    assert_close(t([3.0, 4.0], dtype=ember.complex64).norm(), t(5.0))
    assert ember.var(t([1.0, 2.0], dtype=ember.float64)).dtype == ember.float64


def test_float16_accumulates_in_float32():
    x = ember.ones(4096, dtype=ember.float16)
    assert x.sum().item() == 4096.0
    assert x.cumsum(0).numpy()[-1] == 4096.0


@pytest.mark.parametrize("fn,msg", [
    (lambda x: x.mean(), "mean(): could not infer output dtype. Input dtype must be either a "
                         "floating point or complex dtype. Got: Long"),
    (lambda x: x.nanmean(), "nanmean(): expected input to have floating point or complex "
                            "dtype but got Long"),
    (lambda x: x.var(), "std and var only support floating point and complex dtypes"),
    (lambda x: x.std(0), "std and var only support floating point and complex dtypes"),
    (lambda x: x.norm(), "linalg.vector_norm: Expected a floating point or complex tensor as "
                         "input. Got Long"),
])
def test_float_only_reductions_reject_integers(fn, msg):
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        fn(t([1, 2]))


def test_logcumsumexp_rejects_integers():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        t([1, 2]).logcumsumexp(0)


# ---------------------------------------------------------------------------
# dims and errors

def test_dim_out_of_range():
    x = ember.zeros(2, 3)
    msg = re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 5)")
    for fn in (lambda: x.sum(5), lambda: x.max(5), lambda: x.amax((0, 5)),
               lambda: x.argmax(5), lambda: x.cumsum(5), lambda: x.var(5),
               lambda: x.logsumexp(5), lambda: x.norm(2, 5), lambda: x.cummax(5)):
        with pytest.raises(IndexError, match=msg):
            fn()


def test_repeated_dims():
    with pytest.raises(RuntimeError, match="appears multiple times"):
        ember.zeros(2, 3).sum((0, 0))


def test_dims_as_int_tuple_negative_and_keepdim():
    x = ember.ones(2, 3, 4)
    assert x.sum((0, -1)).shape == (3,)
    assert x.sum([0, 2], keepdim=True).shape == (1, 3, 1)
    assert x.amax(-2).shape == (2, 4)
    assert x.mean(None, True).shape == (1, 1, 1)
    assert x.argmax(None, True).shape == (1, 1, 1)
    assert x.std(dim=1, keepdim=True).shape == (2, 1, 4)
    assert x.max(1, keepdim=True).indices.shape == (2, 1, 4)


def test_zero_dim_tensors_accept_dim_0_and_minus_1():
    s = t(3.0)
    assert s.sum(0).item() == 3.0 and s.sum(-1, keepdim=True).shape == ()
    assert s.max(0).indices.item() == 0
    assert s.cumsum(0).item() == 3.0
    assert s.argmax(0).item() == 0
    with pytest.raises(IndexError, match=re.escape("[-1, 0], but got 1")):
        s.sum(1)


def test_all_any_with_empty_dim_tuple_reduce_nothing():
    x = t([[0.0, 1.0], [2.0, 0.0]])
    assert ember.all(x, dim=()).tolist() == [[False, True], [True, False]]
    assert ember.count_nonzero(x, dim=()).item() == 2  # PyTorch: () means all dims here


def test_var_signatures():
    x = t([[1.0, 2.0, 4.0], [0.0, 3.0, 3.0]])
    expect = np.var(x.numpy(), axis=1, ddof=0)
    assert_close(x.var(1, False), t(expect))
    assert_close(x.var(1, unbiased=False), t(expect))
    assert_close(x.var(1, correction=0), t(expect))
    assert_close(x.var(False), t(np.var(x.numpy())))
    assert_close(x.std(1, True, True), t(np.std(x.numpy(), axis=1, ddof=1, keepdims=True)))
    with pytest.raises(RuntimeError, match="can't specify both"):
        x.var(1, unbiased=True, correction=0)


def test_prod_takes_one_int_dim():
    with pytest.raises(TypeError, match="must be int"):
        ember.prod(ember.ones(2, 3), (0, 1))


def test_max_binary_form_and_bad_second_argument():
    a, b = t([1.0, 5.0]), t([3.0, 2.0])
    if not hasattr(ember, "maximum"):
        pytest.skip("ember.maximum is not there yet (elementwise family)")
    assert ember.max(a, b).tolist() == [3.0, 5.0]
    assert ember.min(a, b).tolist() == [1.0, 2.0]
    assert a.max(b).tolist() == [3.0, 5.0]


def test_max_with_a_float_dim_is_a_type_error():
    with pytest.raises(TypeError):
        ember.max(t([1.0, 2.0]), 2.0)


def test_complex_extrema_are_rejected():
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        t([1.0, 2.0], dtype=ember.complex64).max()


def test_norm_orders_and_errors():
    x = t([[3.0, -4.0], [0.0, 1.0]])
    assert_close(x.norm(), t(26.0 ** 0.5))
    assert_close(x.norm("fro", dim=(0, 1)), t(26.0 ** 0.5))
    assert_close(x.norm(float("inf")), t(4.0))
    assert_close(x.norm(-float("inf"), 1), t([3.0, 0.0]))
    assert_close(x.norm(0, 1), t([2.0, 1.0]))
    assert_close(x.norm(1, 0, keepdim=True), t([[3.0, 5.0]]))
    assert_close(x.norm(3, 1), t([(27 + 64) ** (1 / 3), 1.0]))
    assert_close(x.norm(dtype=ember.float64), t(26.0 ** 0.5, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        x.norm("abc")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        ember.ones(1, 2, 2).norm("fro", dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        ember.zeros(0).norm(float("inf"))


# ---------------------------------------------------------------------------
# empty tensors

def test_reductions_with_an_identity_work_on_empty_tensors():
    e = ember.zeros(0, 3)
    assert e.sum().item() == 0.0
    assert e.prod(0).tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(e.mean().item())
    assert e.sum(0).tolist() == [0.0, 0.0, 0.0]
    assert e.all().item() is True and e.any().item() is False
    assert e.norm().item() == 0.0
    assert ember.logsumexp(e, 0).tolist() == [-np.inf] * 3
    assert e.cumsum(0).shape == (0, 3)
    assert e.max(1).values.shape == (0,)
    assert e.cummax(0).indices.shape == (0, 3)


def test_reductions_without_identity_raise_on_empty_tensors():
    e = ember.zeros(0, 3)
    with pytest.raises(RuntimeError, match=re.escape(
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument.")):
        ember.zeros(0).max()
    with pytest.raises(IndexError, match=re.escape(
            "max(): Expected reduction dim 0 to have non-zero size.")):
        e.max(0)
    with pytest.raises(IndexError, match=re.escape(
            "amin(): Expected reduction dim 0 to have non-zero size.")):
        e.amin(0)
    with pytest.raises(IndexError, match=re.escape(
            "argmax(): Expected reduction dim 0 to have non-zero size.")):
        e.argmax(0)
    with pytest.raises(RuntimeError, match=re.escape(
            "argmin(): Expected reduction dim to be specified for input.numel() == 0.")):
        e.argmin()
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        e.aminmax()
    with pytest.raises(IndexError, match=re.escape(
            "aminmax: Expected reduction dim 0 to have non-zero size.")):
        e.aminmax(dim=0)


# ---------------------------------------------------------------------------
# values and gradients at zeros, ties and NaN

def grad_of(fn, data):
    x = t(data, dtype=ember.float64, requires_grad=True)
    y = fn(x)
    if isinstance(y, tuple):
        y = y[0]
    y.backward(ember.ones_like(y))
    return x.grad.tolist()


def test_prod_gradient_with_zeros():
    assert grad_of(lambda x: x.prod(), [0.0, 2.0, 3.0]) == [6.0, 0.0, 0.0]
    assert grad_of(lambda x: x.prod(), [0.0, 2.0, 0.0]) == [0.0, 0.0, 0.0]
    assert grad_of(lambda x: x.prod(1), [[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]]) == \
        [[0.0, 6.0, 0.0], [8.0, 4.0, 2.0]]


def test_prod_and_cumprod_second_derivatives_with_zeros():
    x = t([[1.2, 0.0, 0.7], [0.5, 1.5, 2.0]], dtype=ember.float64, requires_grad=True)
    for fn in (lambda a: a.prod(), lambda a: a.prod(1), lambda a: a.cumprod(1),
               lambda a: a.cumprod(0)):
        assert ember.autograd.gradgradcheck(fn, (x,))


def test_cumprod_gradient_with_zeros():
    # torch.tensor([2., 0, 3, 0, 4]).cumprod(0) backward with ones: [1, 8, 0, 0, 0]
    assert grad_of(lambda x: x.cumprod(0), [2.0, 0.0, 3.0, 0.0, 4.0]) == \
        [1.0, 8.0, 0.0, 0.0, 0.0]


def test_extremum_gradients_on_ties():
    data = [1.0, 3.0, 3.0, 2.0]
    assert grad_of(lambda x: x.max(), data) == [0.0, 0.5, 0.5, 0.0]
    assert grad_of(lambda x: x.amax(), data) == [0.0, 0.5, 0.5, 0.0]
    assert grad_of(lambda x: x.max(0), data) == [0.0, 1.0, 0.0, 0.0]  # the first index
    assert grad_of(lambda x: x.aminmax().max, data) == [0.0, 0.5, 0.5, 0.0]
    assert grad_of(lambda x: x.norm(float("inf")), [1.0, -3.0, 3.0]) == [0.0, -0.5, 0.5]


def test_cummax_indices_and_gradient():
    r = t([1.0, 3.0, 3.0, 2.0, 5.0]).cummax(0)
    assert r.values.tolist() == [1.0, 3.0, 3.0, 3.0, 5.0]
    assert r.indices.tolist() == [0, 1, 2, 2, 4]  # the latest among ties, as PyTorch
    assert grad_of(lambda x: x.cummax(0), [2.0, 0.0, 3.0, 3.0, 4.0]) == \
        [2.0, 0.0, 1.0, 1.0, 1.0]
    nan = float("nan")
    r = t([1.0, nan, 3.0, nan, 5.0]).cummin(0)
    assert r.indices.tolist() == [0, 1, 1, 3, 3]
    assert np.isnan(r.values.numpy()[1:]).all()


def test_max_propagates_nan_and_points_at_it():
    r = t([3.0, 1.0, float("nan"), 2.0]).max(0)
    assert np.isnan(r.values.item()) and r.indices.item() == 2
    assert t([3.0, float("nan"), 1.0, float("nan")]).argmax().item() == 1
    assert np.isnan(t([3.0, float("nan")]).amin().item())


def test_norm_and_std_gradients_at_zero_are_zero():
    assert grad_of(lambda x: x.norm(), [0.0, 0.0]) == [0.0, 0.0]
    assert grad_of(lambda x: x.norm(3), [0.0, 0.0]) == [0.0, 0.0]
    assert grad_of(lambda x: x.norm(0.5), [0.0, 1.0]) == [0.0, 1.0]
    assert grad_of(lambda x: x.std(), [1.0, 1.0]) == [0.0, 0.0]


def test_nansum_and_nanmean_ignore_nan():
    nan = float("nan")
    x = t([[1.0, nan], [nan, nan]])
    assert x.nansum().item() == 1.0
    assert x.nanmean(1).tolist()[0] == 1.0 and np.isnan(x.nanmean(1).tolist()[1])
    assert grad_of(lambda a: a.nanmean(), [2.0, nan, 4.0]) == [0.5, 0.0, 0.5]


def test_logsumexp_is_stable():
    x = t([1000.0, 1000.0])
    assert_close(x.logsumexp(0), t(1000.0 + float(np.log(2.0))))
    assert t([-np.inf, -np.inf]).logsumexp(0).item() == -np.inf
    assert t([np.inf, 1.0]).logsumexp(0).item() == np.inf


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_cumsum_and_cumprod_accumulate_in_double_precision(dtype):
    # PyTorch's CPU kernels accumulate float32 (complex64) in double and round each output
    # once: a float32 running sum drifts away from those numbers over a long dim
    rng = np.random.default_rng(0)
    x = rng.uniform(90, 100, (3, 5000)).astype(dtype)
    expected = np.cumsum(x.astype(np.complex128 if dtype == "complex64" else np.float64),
                         1).astype(dtype)
    np.testing.assert_array_equal(ember.from_numpy(x).cumsum(1).numpy(), expected)
    assert ember.from_numpy(x).cumsum(1).dtype == getattr(ember, dtype)
    y = rng.uniform(0.999, 1.001, (2, 4000)).astype(np.float32)
    np.testing.assert_array_equal(ember.from_numpy(y).cumprod(1).numpy(),
                                  np.cumprod(y.astype(np.float64), 1).astype(np.float32))
    half = ember.from_numpy(rng.standard_normal(300).astype(np.float16))
    assert half.cumsum(0).dtype == ember.float16
    np.testing.assert_array_equal(half.cumsum(0).numpy(), np.cumsum(
        half.numpy().astype(np.float64)).astype(np.float16))
    leaf = ember.from_numpy(x[:, :10].real.copy()).requires_grad_()  # backward: reversed sums
    leaf.cumsum(1).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy()[0], np.arange(10, 0, -1))


def test_inplace_cumsum_and_cumprod():
    x = t([1.0, 2.0, 3.0])
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0]
    x.cumprod_(0)
    assert x.tolist() == [1.0, 3.0, 18.0]
    leaf = t([1.0, 2.0], requires_grad=True)
    y = leaf * 2
    y.cumsum_(0)
    y.sum().backward()
    assert leaf.grad.tolist() == [4.0, 2.0]


def test_out_argument():
    out = ember.empty(3)
    r = ember.sum(ember.ones(2, 3), 0, out=out)
    assert r is out and out.tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------------------
# hypothesis: shapes, dims and values against NumPy

@st.composite
def array_and_dims(draw, min_side=0, dtype=np.float64):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=4))
    a = draw(hnp.arrays(dtype, shape, elements=st.floats(-100, 100, width=64)
                        if np.dtype(dtype).kind == "f" else st.integers(-50, 50)))
    ndim = len(shape)
    if ndim == 0:
        return a, None
    dims = draw(st.none() | st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                                     unique_by=lambda d: d % ndim).map(tuple))
    return a, dims


@settings(max_examples=40, deadline=None)
@given(array_and_dims(), st.booleans())
def test_sum_mean_amax_match_numpy(data, keepdim):
    a, dims = data
    x = t(a)
    assert_close(x.sum(dims, keepdim), t(np.sum(a, axis=dims, keepdims=keepdim)),
                 rtol=1e-12, atol=1e-9)
    if a.size:
        assert_close(x.mean(dims, keepdim), t(np.mean(a, axis=dims, keepdims=keepdim)),
                     rtol=1e-12, atol=1e-9)
    if all(a.shape[d] for d in (dims if dims is not None else range(a.ndim))) and a.size:
        assert_close(x.amax(dims, keepdim), t(np.amax(a, axis=dims, keepdims=keepdim)))
        assert_close(x.var(dims, keepdim=keepdim, correction=0),
                     t(np.var(a, axis=dims, keepdims=keepdim)), rtol=1e-9, atol=1e-9)
        assert_close(ember.logsumexp(x, dims if dims is not None else tuple(range(a.ndim)),
                                     keepdim),
                     t(np.log(np.sum(np.exp(a - a.max()), axis=dims, keepdims=keepdim))
                       + a.max()), rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(array_and_dims(min_side=1, dtype=np.int64), st.booleans())
def test_integer_reductions_and_indices_match_numpy(data, keepdim):
    a, dims = data
    x = t(a)
    assert x.sum(dims, keepdim).dtype == ember.int64
    assert_close(x.sum(dims, keepdim), t(np.sum(a, axis=dims, keepdims=keepdim)))
    assert_close(x.count_nonzero(dims), t(np.count_nonzero(a, axis=dims)))
    if a.ndim:
        d = dims[0] if dims else 0
        values, indices = x.max(d, keepdim)
        assert_close(indices, t(np.argmax(a, axis=d, keepdims=keepdim)))
        assert_close(values, t(np.max(a, axis=d, keepdims=keepdim)))
        assert_close(x.cumsum(d), t(np.cumsum(a, axis=d)))
        assert_close(x.cummin(d).values, t(np.minimum.accumulate(a, axis=d)))
    assert_close(x.argmin(), t(np.argmin(a)))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda x: x.max(), NotImplementedError, "\"max_all\" not implemented for 'ComplexFloat'"),
    (lambda x: x.amin(), NotImplementedError,
     "\"min_values_cpu\" not implemented for 'ComplexFloat'"),
    (lambda x: x.max(0), RuntimeError, "max(): does not support complex input"),
    (lambda x: x.argmin(), RuntimeError, "argmin(): does not support complex input"),
    (lambda x: x.aminmax(), NotImplementedError,
     "\"aminmax_cpu\" not implemented for 'ComplexFloat'"),
    (lambda x: x.cummax(0), NotImplementedError,
     "\"cummax_cpu\" not implemented for 'ComplexFloat'"),
    (lambda x: x.nansum(), RuntimeError, "nansum on CPU does not support complex inputs"),
])
def test_complex_inputs_where_pytorch_has_no_kernel(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call(t([1j, 2.0]))


def test_complex_reductions():
    x = t([1j, 2.0])
    assert_close(x.sum(), t(2.0 + 1j))
    assert_close(x.prod(), t(2j))
    assert_close(x.norm(), t(5.0 ** 0.5))
    assert_close(x.var(), t(2.5))


def test_inplace_cumsum_dtype_must_match():
    with pytest.raises(RuntimeError, match="Bad in-place call: input tensor dtype float and "
                                           "output tensor dtype int should match"):
        t([1.0, 2.0]).cumsum_(0, dtype=ember.int32)


def test_var_of_float32_is_accumulated_in_float64():
    # PyTorch's CPU kernel accumulates float32 in float64: the correctly rounded result
    x = t([1.0, 2.0, 4.0])
    assert x.std(unbiased=False).item() == float(np.float32(np.std([1.0, 2.0, 4.0])))


# ---------------------------------------------------------------------------
# the scan used where the array library has no ufunc.accumulate (CuPy)

class _NoAccumulate:
    """A ufunc whose accumulate is missing, as CuPy's maximum/minimum/logaddexp."""

    def __init__(self, ufunc):
        self.ufunc = ufunc

    def __call__(self, *args):
        return self.ufunc(*args)

    def accumulate(self, *args, **kwargs):
        raise NotImplementedError("`maximum.accumulate` is not supported yet")


class _FakeXp:
    maximum = _NoAccumulate(np.maximum)
    logaddexp = _NoAccumulate(np.logaddexp)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=9),
                  elements=st.floats(-5, 5) | st.just(np.nan)),
       st.sampled_from(["maximum", "minimum", "logaddexp"]), st.integers(0, 2))
def test_scan_matches_ufunc_accumulate(a, name, axis):
    from ember._ops.reduction import scan

    axis = axis % a.ndim
    ufunc = getattr(np, name)
    with np.errstate(invalid="ignore"):  # logaddexp of NaN
        assert_close(scan(ufunc, a, axis), ufunc.accumulate(a, axis=axis), equal_nan=True,
                     rtol=1e-12, atol=1e-12)


def test_accumulate_falls_back_to_the_scan():
    from ember._ops.reduction import accumulate

    a = np.array([[1.0, 3.0, 2.0, 5.0, 4.0], [0.0, -1.0, 2.0, 2.0, 1.0]])
    assert_close(accumulate(_FakeXp, "maximum", a, 1), np.maximum.accumulate(a, axis=1))
    assert_close(accumulate(_FakeXp, "logaddexp", a, 0), np.logaddexp.accumulate(a, axis=0))
