"""Sorting, order statistics and counting: tie-breaking, NaN, named results, return
structures, errors, gradients, and hypothesis tests against NumPy.

The op database (ember.testing._opinfo.sort) covers forward values, gradients and method
forms; this file covers what a table does not express.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.testing import assert_close

nan = float("nan")


def t(data, **kwargs):
    return ember.tensor(data, **kwargs)


# ---------------------------------------------------------------------------
# sort, argsort, topk, kthvalue

def test_sort_is_stable_both_ways():
    x = t([3.0, 1.0, 2.0, 1.0, 3.0, 2.0])
    values, indices = ember.sort(x)
    assert values.tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert indices.tolist() == [1, 3, 2, 5, 0, 4]
    r = x.sort(descending=True)
    assert r.values.tolist() == [3.0, 3.0, 2.0, 2.0, 1.0, 1.0]
    assert r.indices.tolist() == [0, 4, 2, 5, 1, 3]
    assert ember.argsort(x, 0, True).tolist() == [0, 4, 2, 5, 1, 3]
    assert ember.argsort(x, stable=True).tolist() == [1, 3, 2, 5, 0, 4]
    assert type(r) is ember.return_types.sort and r.indices.dtype == ember.int64


def test_sort_puts_nan_last_ascending_and_first_descending():
    x = t([3.0, 1.0, nan, 2.0, nan])
    r = x.sort()
    assert r.indices.tolist() == [1, 3, 0, 2, 4]
    r = x.sort(descending=True)
    assert r.indices.tolist() == [2, 4, 0, 3, 1]
    assert np.isnan(r.values.numpy()[:2]).all()


def test_sort_bool_and_zero_dim():
    assert ember.sort(t([True, False])).indices.tolist() == [1, 0]
    r = t(3.0).sort()
    assert r.values.item() == 3.0 and r.indices.item() == 0 and r.indices.shape == ()


def test_sort_gradient_goes_back_through_the_permutation():
    x = t([[3.0, 1.0, 2.0]], requires_grad=True)
    values, _ = x.sort(1, descending=True)
    (values * t([[1.0, 10.0, 100.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 100.0, 10.0]]


def test_msort():
    assert ember.msort(t([[2.0, 1.0], [1.0, 3.0]])).tolist() == [[1.0, 1.0], [2.0, 3.0]]


def test_topk():
    x = t([[1.0, 5.0, 3.0, 4.0], [8.0, 6.0, 7.0, 0.0]])
    r = x.topk(2)
    assert type(r) is ember.return_types.topk
    assert r.values.tolist() == [[5.0, 4.0], [8.0, 7.0]]
    assert r.indices.tolist() == [[1, 3], [0, 2]]
    r = ember.topk(x, 1, dim=0, largest=False)
    assert r.values.tolist() == [[1.0, 5.0, 3.0, 0.0]] and r.indices.tolist() == [[0, 0, 0, 1]]
    assert x.topk(0).values.shape == (2, 0)


def test_topk_ties_take_the_earlier_position():
    # NOTE: PyTorch leaves the order of tied elements unspecified (its CPU kernel may
    # return [4, 0] here); ember's stable sort always gives the earlier position first.
    assert t([3.0, 1.0, 2.0, 1.0, 3.0]).topk(2).indices.tolist() == [0, 4]


@pytest.mark.parametrize("k", [-1, 5])
def test_topk_k_out_of_range(k):
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        ember.ones(4).topk(k)


def test_kthvalue():
    x = t([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = x.kthvalue(2)
    assert type(r) is ember.return_types.kthvalue
    assert r.values.tolist() == [2.0, 4.0] and r.indices.tolist() == [2, 2]
    r = ember.kthvalue(x, 1, 0, True)
    assert r.values.tolist() == [[0.0, 1.0, 2.0]] and r.indices.shape == (1, 3)
    for k in (0, 4):
        with pytest.raises(RuntimeError, match=re.escape(
                "kthvalue(): selected number k out of range for dimension 1")):
            x.kthvalue(k)


def test_kthvalue_gradient():
    x = t([2.0, 0.5, 3.0, 0.25, 4.0], requires_grad=True)
    x.kthvalue(2).values.backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]


# ---------------------------------------------------------------------------
# median, nanmedian, mode

def test_median_is_the_lower_median():
    assert t([1.0, 2.0, 3.0, 4.0]).median().item() == 2.0
    assert t([[1, 2], [3, 4]]).median().item() == 2
    assert np.isnan(t([3.0, 1.0, nan, 2.0]).median().item())
    assert np.isnan(ember.zeros(0, 3).median().item())


def test_median_with_dim_index_is_that_of_a_stable_sort():
    # PyTorch's CPU kernel gives the same positions on ties
    r = t([2, 1, 1, 2, 2, 1, 2, 1]).median(0)
    assert type(r) is ember.return_types.median
    assert r.values.item() == 1 and r.indices.item() == 7
    r = t([[3.0, 1.0, nan, 2.0]]).median(1, keepdim=True)
    assert np.isnan(r.values.item()) and r.indices.tolist() == [[2]]


def test_median_gradients():
    x = t([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]  # shared among ties, as PyTorch
    x = t([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    x.median(0).values.backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_nanmedian():
    x = t([[3.0, 1.0, nan, 2.0], [nan, nan, nan, nan]])
    r = x.nanmedian(1)
    assert type(r) is ember.return_types.nanmedian
    assert r.values.tolist()[0] == 2.0 and r.indices.tolist() == [3, 0]
    assert np.isnan(r.values.tolist()[1])
    assert t([2.0, 0.0, nan, 0.0, 4.0]).nanmedian().item() == 0.0
    y = t([2.0, 0.0, nan, 0.0, 4.0], requires_grad=True)
    y.nanmedian().backward()
    assert y.grad.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]  # one position, as PyTorch


def test_mode_smallest_of_the_most_frequent_at_its_last_position():
    r = t([2, 1, 2, 1, 5, 2, 1]).mode()
    assert type(r) is ember.return_types.mode
    assert r.values.item() == 1 and r.indices.item() == 6
    r = t([[3.0, 1.0, 1.0, 2.0, 2.0, 5.0], [0.0, 0.0, 4.0, 4.0, 4.0, 1.0]]).mode(1, True)
    assert r.values.tolist() == [[1.0], [4.0]] and r.indices.tolist() == [[2], [4]]


@pytest.mark.parametrize("fn", ["median", "mode", "nanmedian"])
def test_order_statistics_of_an_empty_dim(fn):
    with pytest.raises(IndexError, match=re.escape(
            f"{fn}(): Expected reduction dim 0 to have non-zero size.")):
        getattr(ember.zeros(0, 3), fn)(0)
    assert getattr(ember.zeros(0, 3), fn)(1).values.shape == (0,)


# ---------------------------------------------------------------------------
# quantile

def test_quantile_shapes():
    x = ember.arange(6.0).reshape(2, 3)
    assert x.quantile(0.5).shape == ()
    assert x.quantile(0.5, keepdim=True).shape == (1, 1)
    assert x.quantile(t([0.25, 0.75]), dim=1, keepdim=True).shape == (2, 2, 1)
    assert x.quantile(t([0.25, 0.75]), dim=0).shape == (2, 3)
    assert x.quantile(t(0.5), dim=0).shape == (3,)


def test_quantile_interpolations():
    x = t([3.0, 1.0, 2.0, 1.0, 3.0, 2.0])
    q = t([0.1, 0.3, 0.5, 0.7])
    expect = {"lower": [1.0, 1.0, 2.0, 2.0], "higher": [1.0, 2.0, 2.0, 3.0],
              "nearest": [1.0, 2.0, 2.0, 3.0], "midpoint": [1.0, 1.5, 2.0, 2.5],
              "linear": [1.0, 1.5, 2.0, 2.5]}
    for mode, values in expect.items():
        assert_close(x.quantile(q, interpolation=mode), t(values))


def test_quantile_nan():
    assert np.isnan(t([1.0, nan]).quantile(0.5).item())
    assert t([1.0, nan, 2.0]).nanquantile(0.5).item() == 1.5
    assert np.isnan(t([nan, nan]).nanquantile(0.5).item())


def test_quantile_gradient_is_shared_by_the_two_neighbours():
    x = t([2.0, 0.0, 3.0, 1.0, 4.0], requires_grad=True)
    x.quantile(0.3).backward()
    assert_close(x.grad, t([0.0, 0.0, 0.0, 0.8, 0.0]) + t([0.2, 0.0, 0.0, 0.0, 0.0]))


@pytest.mark.parametrize("call,msg", [
    (lambda: t([1, 2]).quantile(0.5),
     "quantile() input tensor must be either float or double dtype"),
    (lambda: ember.zeros(0).quantile(0.5), "quantile() input tensor must be non-empty"),
    (lambda: ember.ones(3).quantile(1.5), "quantile() q must be in the range [0, 1] but got 1.5"),
    (lambda: ember.ones(3).quantile(t([0.5, 2.0])), "quantile() q values must be in the range"),
    (lambda: ember.ones(3).quantile(t([[0.5]])), "quantile() q must be a scalar or 1D tensor"),
    (lambda: ember.ones(3).quantile(t([0.5], dtype=ember.float64)),
     "quantile() q tensor must be same dtype as the input tensor"),
    (lambda: ember.ones(3).quantile(0.5, interpolation="foo"),
     "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
     "but got foo"),
    (lambda: ember.ones(3).nanquantile(2.0), "quantile() q must be in the range [0, 1] but got 2"),
])
def test_quantile_errors(call, msg):
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        call()


# ---------------------------------------------------------------------------
# unique, unique_consecutive, bincount, histc

def test_unique_return_structures():
    x = t([3, 1, 2, 1, 3, 2])
    assert ember.unique(x).tolist() == [1, 2, 3]
    values, inverse = ember.unique(x, return_inverse=True)
    assert inverse.tolist() == [2, 0, 1, 0, 2, 1] and inverse.dtype == ember.int64
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [2, 2, 2]
    values, inverse, counts = x.unique(True, True, True)
    assert inverse.shape == x.shape


def test_unique_along_a_dim():
    values, inverse, counts = ember.unique(t([[1, 2], [1, 2], [0, 5]]), dim=0,
                                           return_inverse=True, return_counts=True)
    assert values.tolist() == [[0, 5], [1, 2]]
    assert inverse.tolist() == [1, 1, 0] and counts.tolist() == [1, 2]


def test_unique_keeps_nans_apart():
    assert t([nan, 1.0, nan]).unique().shape == (3,)


def test_unique_consecutive():
    x = t([1, 1, 2, 2, 3, 1, 1, 2])
    values, inverse, counts = ember.unique_consecutive(x, return_inverse=True,
                                                       return_counts=True)
    assert values.tolist() == [1, 2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert counts.tolist() == [2, 2, 1, 2, 1]
    values, counts = t([[1, 1], [1, 1], [2, 3]]).unique_consecutive(return_counts=True, dim=0)
    assert values.tolist() == [[1, 1], [2, 3]] and counts.tolist() == [2, 1]


def test_bincount():
    x = t([1, 1, 3])
    assert ember.bincount(x).tolist() == [0, 2, 0, 1]
    assert x.bincount(minlength=6).tolist() == [0, 2, 0, 1, 0, 0]
    w = ember.bincount(x, t([0.5, 1.0, 2.0]))
    assert w.tolist() == [0.0, 1.5, 0.0, 2.0] and w.dtype == ember.float32
    assert ember.bincount(x, t([1, 2, 3])).dtype == ember.float64
    assert ember.bincount(t([], dtype=ember.int64)).tolist() == []


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: ember.bincount(t([1, -1])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda: ember.bincount(t([[1]])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda: ember.bincount(t([1.0])), NotImplementedError, "not implemented for 'Float'"),
    (lambda: ember.bincount(t([1]), t([1.0, 2.0])), RuntimeError,
     "weights should be 1-d and have the same length as input"),
])
def test_bincount_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


def test_histc():
    x = t([3.0, 1.0, 2.0, 1.0, 3.0, 2.0])
    assert x.histc(4).tolist() == [2.0, 0.0, 2.0, 2.0]
    assert ember.histc(x, bins=4, min=1, max=2).tolist() == [2.0, 0.0, 0.0, 2.0]
    assert ember.histc(t([1.0, 1.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert ember.histc(x.double(), 3).dtype == ember.float64
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        ember.histc(x, 4, min=3, max=1)
    with pytest.raises(RuntimeError, match="bins must be > 0, but got 0"):
        ember.histc(x, 0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.histc(t([1, 2]))


# ---------------------------------------------------------------------------
# searchsorted, bucketize, repeat_interleave

def test_searchsorted():
    seq = t([1, 3, 5, 7])
    v = t([3, 6, 9])
    assert ember.searchsorted(seq, v).tolist() == [1, 3, 4]
    assert ember.searchsorted(seq, v, right=True).tolist() == [2, 3, 4]
    assert ember.searchsorted(seq, v, side="right").tolist() == [2, 3, 4]
    assert ember.searchsorted(seq, v, out_int32=True).dtype == ember.int32
    r = ember.searchsorted(seq, 3)
    assert r.shape == () and r.item() == 1
    batched = ember.searchsorted(t([[1, 3, 5, 7], [2, 4, 6, 8]]), t([[3, 6], [3, 6]]))
    assert batched.tolist() == [[1, 3], [1, 2]]
    unsorted = t([7, 3, 1, 5])
    assert ember.searchsorted(unsorted, t([3, 6]), sorter=t([2, 1, 3, 0])).tolist() == [1, 3]


def test_searchsorted_errors():
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        ember.searchsorted(t([1, 2]), t([1]), side="left", right=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "boundaries tensor [2, 4] and input value tensor [2]")):
        ember.searchsorted(t([[1, 3, 5, 7], [2, 4, 6, 8]]), t([3, 6]))


def test_bucketize():
    b = t([1, 3, 5, 7])
    assert ember.bucketize(t([3, 6, 9]), b).tolist() == [1, 3, 4]
    assert ember.bucketize(t([3, 6, 9]), b, right=True).tolist() == [2, 3, 4]
    assert ember.bucketize(3, b, right=True).item() == 2
    with pytest.raises(RuntimeError, match=re.escape(
            "boundaries tensor must be 1 dimension, but got dim(2)")):
        ember.bucketize(t([3]), t([[1, 3]]))


def test_repeat_interleave_forms():
    x = t([[1, 2], [3, 4]])
    assert ember.repeat_interleave(x, 2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert x.repeat_interleave(t([1, 2]), dim=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert x.repeat_interleave(t([2]), dim=1).tolist() == [[1, 1, 2, 2], [3, 3, 4, 4]]
    assert ember.repeat_interleave(x, t([1, 2]), 0, output_size=3).shape == (3, 2)
    r = ember.repeat_interleave(t([2, 0, 1]))
    assert r.tolist() == [0, 0, 2] and r.dtype == ember.int64


@pytest.mark.parametrize("call,msg", [
    (lambda x: ember.repeat_interleave(x, t([1, 2, 3]), dim=0),
     "repeats must have the same size as input along dim, but got repeats.size(0) = 3 and "
     "input.size(0) = 2"),
    (lambda x: ember.repeat_interleave(x, t([1, 2]), 0, output_size=4),
     "allocated size does not match required size"),
    (lambda x: ember.repeat_interleave(x, t([-1, 2]), dim=0), "repeats can not be negative"),
    (lambda x: ember.repeat_interleave(x, -1, dim=0), "Repeats must be non-negative"),
    (lambda x: ember.repeat_interleave(t([[2, 0, 1]])),
     "repeat_interleave only accept 1D vector as repeat"),
])
def test_repeat_interleave_errors(call, msg):
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        call(t([[1, 2], [3, 4]]))


def test_repeat_interleave_gradient_sums_the_copies():
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.repeat_interleave(t([3, 1]), dim=0)
    y.sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [1.0, 1.0]]


# ---------------------------------------------------------------------------
# hypothesis

@st.composite
def array_and_dim(draw, dtype=np.float64, min_side=0):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=min_side, max_side=6))
    elements = st.integers(-5, 5) if np.dtype(dtype).kind == "i" else \
        st.floats(-10, 10, width=64) | st.sampled_from([0.5, 1.0])
    a = draw(hnp.arrays(dtype, shape, elements=elements))
    return a, draw(st.integers(-len(shape), len(shape) - 1))


@settings(max_examples=40, deadline=None)
@given(array_and_dim(dtype=np.int64), st.booleans())
def test_sort_matches_a_stable_numpy_sort(data, descending):
    a, dim = data
    values, indices = t(a).sort(dim, descending)
    expect = np.argsort(-a if descending else a, axis=dim, kind="stable")
    assert indices.numpy().tolist() == expect.tolist()
    assert values.numpy().tolist() == np.take_along_axis(a, expect, axis=dim).tolist()


@settings(max_examples=40, deadline=None)
@given(array_and_dim(min_side=1), st.floats(0, 1))
def test_quantile_and_median_match_numpy(data, q):
    a, dim = data
    x = t(a)
    assert_close(x.quantile(q, dim), t(np.quantile(a, q, axis=dim)), rtol=1e-9, atol=1e-9)
    lower = np.take(np.sort(a, axis=dim), [(a.shape[dim] - 1) // 2], axis=dim).squeeze(dim)
    assert_close(x.median(dim).values, t(lower))
    kth = np.take(np.sort(a, axis=dim), [0], axis=dim).squeeze(dim)
    assert_close(x.kthvalue(1, dim).values, t(kth))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=8),
                  elements=st.integers(-4, 4)))
def test_unique_and_searchsorted_match_numpy(a):
    values, inverse, counts = t(a).unique(return_inverse=True, return_counts=True)
    ev, ei, ec = np.unique(a, return_inverse=True, return_counts=True)
    assert values.tolist() == ev.tolist() and counts.tolist() == ec.tolist()
    assert inverse.numpy().reshape(-1).tolist() == ei.reshape(-1).tolist()
    seq = np.sort(a.reshape(-1))
    for side in ("left", "right"):
        got = ember.searchsorted(t(seq), t(a), side=side)
        assert got.tolist() == np.searchsorted(seq, a, side=side).tolist()
    if a.ndim == 2 and a.shape[1]:
        rows = np.sort(a, axis=1)
        got = ember.searchsorted(t(rows), t(a), right=True)
        expect = [np.searchsorted(r, v, side="right") for r, v in zip(rows, a, strict=True)]
        assert got.tolist() == [e.tolist() for e in expect]


# ---------------------------------------------------------------------------
# dtypes PyTorch's kernels reject

@pytest.mark.parametrize("call,exc,msg", [
    (lambda: t([1j]).sort(), RuntimeError, "Sort does not support complex dtypes on CPU"),
    (lambda: t([1j]).argsort(), RuntimeError, "Sort does not support complex dtypes on CPU"),
    (lambda: t([1j]).topk(1), RuntimeError, "topk does not support complex dtypes on CPU"),
    (lambda: t([True]).topk(1), RuntimeError, "topk does not support bool dtypes on CPU"),
    (lambda: t([True]).kthvalue(1), NotImplementedError,
     "\"kthvalue_cpu\" not implemented for 'Bool'"),
    (lambda: t([True]).median(), NotImplementedError, "\"median_cpu\" not implemented for 'Bool'"),
    (lambda: t([1j]).median(0), NotImplementedError,
     "\"median_out\" not implemented for 'ComplexFloat'"),
    (lambda: t([1j]).mode(), NotImplementedError,
     "\"mode_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: t([1j]).unique(), NotImplementedError,
     "\"unique\" not implemented for 'ComplexFloat'"),
    (lambda: t([True]).bincount(), NotImplementedError,
     "\"bincount_cpu\" not implemented for 'Bool'"),
    (lambda: ember.repeat_interleave(t([1.0]), t([1.0])), NotImplementedError,
     "\"repeat_interleave_cpu\" not implemented for 'Float'"),
])
def test_unsupported_dtypes(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


def test_zero_dim_edge_cases():
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        t(1).unique(dim=0)
    with pytest.raises(RuntimeError, match="boundaries tensor should have positive dimension"):
        ember.searchsorted(t(1.0), t([1.0]))
    with pytest.raises(RuntimeError, match="input value can be a scalar only when"):
        ember.searchsorted(t([[1.0, 2.0]]), 1.0)
    with pytest.raises(IndexError, match=re.escape("[-1, 0], but got 1")):
        t(2.0).repeat_interleave(3, 0)
    assert t(2.0).repeat_interleave(3).tolist() == [2.0, 2.0, 2.0]
    r = t(1.0).topk(0)  # PyTorch returns the element even for k = 0
    assert r.values.item() == 1.0 and r.indices.item() == 0


@settings(max_examples=50, deadline=None)
@given(array_and_dim(dtype=np.float64, min_side=1), st.data())
def test_selections_index_like_a_stable_sort(data, draw):
    """kthvalue, median and topk find their positions without a full sort (partition,
    then the right occurrence among equal values): the same positions as a stable sort,
    ties and NaN (sorted last) included."""
    a, dim = data
    a = np.round(a / 4)  # many ties
    if draw.draw(st.booleans()):
        a.reshape(-1)[:: draw.draw(st.integers(2, 5))] = np.nan
    n = a.shape[dim]
    order = np.argsort(a, axis=dim, kind="stable")
    k = draw.draw(st.integers(1, n))
    kth = t(a).kthvalue(k, dim).indices.numpy()
    assert kth.tolist() == np.take(order, k - 1, axis=dim).tolist()
    top = t(a).topk(k, dim, largest=False).indices.numpy()
    assert top.tolist() == np.take(order, np.arange(k), axis=dim).tolist()
    big = t(np.tile(a, [1] * (a.ndim - 1) + [20]) if dim in (-1, a.ndim - 1) else a)
    d = dim % a.ndim
    if big.shape[d] >= 16:  # the partition path of topk (k much smaller than the dim)
        big_a = big.numpy()
        desc = np.argsort(-np.nan_to_num(big_a, nan=np.inf), axis=d, kind="stable")
        got = big.topk(2, d).indices.numpy()
        assert got.tolist() == np.take(desc, [0, 1], axis=d).tolist()
        asc = np.argsort(big_a, axis=d, kind="stable")
        got = big.topk(2, d, largest=False).indices.numpy()
        assert got.tolist() == np.take(asc, [0, 1], axis=d).tolist()
    med = t(a).median(dim).indices.numpy()
    nan_rows = np.isnan(a).any(axis=dim)
    first_nan = np.argmax(np.isnan(a), axis=dim)
    expect = np.where(nan_rows, first_nan, np.take(order, (n - 1) // 2, axis=dim))
    assert med.tolist() == expect.tolist()
