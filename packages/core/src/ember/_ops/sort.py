"""Sorting, order statistics and counting: sort, topk, median, quantile, unique, ...

Sorts are always stable (PyTorch's CPU sort is stable in practice, ``stable=False``
included), so tied elements keep their order and indices are reproducible. Values
are taken from the input with ``reduction.take_along_dim``, whose backward puts the
gradient back at the chosen indices (see NOTE [ Value-selecting ops ] in
reduction.py).
"""

from __future__ import annotations

import math

import numpy as np

from ember._C._core import Node, dispatched
from ember._ops._util import TensorBase, apply, with_out, wrap, wrap_dim, xp_of
from ember._ops.reduction import (
    Extremum,
    NoGrad,
    accumulate,
    check_nonempty_dims,
    int_dim,
    not_implemented_for,
    reduced_shape,
    return_type,
    take_along_dim,
)

__all__ = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
    "unique_consecutive", "bincount", "histc", "quantile", "nanquantile", "searchsorted",
    "bucketize", "repeat_interleave",
]

_SortResult = return_type("sort")
_TopkResult = return_type("topk")
_KthvalueResult = return_type("kthvalue")
_MedianResult = return_type("median")
_NanmedianResult = return_type("nanmedian")
_ModeResult = return_type("mode")


def stable_argsort(xp, a, axis, descending=False):
    """Indices that sort ``a`` along ``axis``, stably in both directions (NaN largest)."""
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # sort the reversed array ascending, then reverse: ties keep their original order
    n = a.shape[axis]
    r = xp.argsort(xp.flip(a, axis), axis=axis, kind="stable")
    return xp.ascontiguousarray(xp.flip(n - 1 - r, axis))


def _as_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


def _check_sortable(x, fn="Sort"):
    if x.dtype.kind == "c":
        raise RuntimeError(f" {fn} does not support complex dtypes on CPU")  # sic


# ---------------------------------------------------------------------------
# sort, argsort, msort, topk, kthvalue

def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """sort(input, dim=-1, descending=False, *, stable=False) -> (values, indices)

    ``input`` sorted along ``dim`` and the positions the values came from. The sort is
    always stable; NaN sorts as the largest value.
    """
    x = input._data
    _check_sortable(x)
    d = wrap_dim(int_dim(dim, "sort"), x.ndim)
    index = stable_argsort(xp_of(x), _as_1d(x), d, descending)
    values = take_along_dim(input, index, d, x.shape)
    return _SortResult((values, wrap(index.reshape(x.shape))))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """argsort(input, dim=-1, descending=False, *, stable=False) -> LongTensor

    The indices that sort ``input`` along ``dim`` (stable).
    """
    x = input._data
    _check_sortable(x)
    d = wrap_dim(int_dim(dim, "argsort"), x.ndim)
    return apply(NoGrad, lambda a: stable_argsort(xp_of(a), _as_1d(a), d, descending)
                 .reshape(a.shape), input)


def msort(input, *, out=None):
    """``input`` sorted along its first dim (the values of ``sort(input, 0)``)."""
    return with_out(sort(input, 0)[0], out)


def topk(input, k, dim=None, largest=True, sorted=True, *, out=None):
    """topk(input, k, dim=-1, largest=True, sorted=True) -> (values, indices)

    The ``k`` largest (``largest=False``: smallest) elements of ``input`` along ``dim``,
    in sorted order; among ties the earlier position comes first.
    """
    x = input._data
    _check_sortable(x, "topk")
    if x.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = wrap_dim(-1 if dim is None else int_dim(dim, "topk"), x.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    xp = xp_of(x)
    if x.ndim == 0:  # PyTorch gives the element for k = 0 too
        return _TopkResult((take_along_dim(input, xp.zeros(1, np.int64), 0, ()),
                            wrap(xp.zeros((), np.int64))))
    index = _topk_index(xp, x, d, k, largest)
    shape = x.shape[:d] + (k,) + x.shape[d + 1:]
    values = take_along_dim(input, index, d, shape)
    return _TopkResult((values, wrap(index)))


def _topk_index(xp, x, d, k, largest):
    """The positions of the first ``k`` elements of a stable sort along ``d``.

    For k much smaller than the dim, a partition finds the k-th value; the chosen are
    the elements beyond it and the earliest ones equal to it, then only those k are
    sorted. With NaN (which sorts as the largest), or a large k, a full sort.
    """
    n = x.shape[d]
    if k == 0 or 8 * k > n or (x.dtype.kind == "f" and bool(xp.isnan(x).any())):
        index = stable_argsort(xp, x, d, descending=largest)
        return xp.ascontiguousarray(xp.take(index, xp.arange(k), axis=d))
    p = n - k if largest else k - 1
    kth = xp.take(xp.partition(x, p, axis=d), [p], axis=d)
    beyond = x > kth if largest else x < kth
    equal = x == kth
    need = k - beyond.sum(axis=d, keepdims=True)
    if bool((equal.sum(axis=d, keepdims=True) <= need).all()):  # no tie at the k-th value
        chosen = beyond | equal
    else:
        chosen = beyond | (equal & (xp.cumsum(equal, axis=d) <= need))
    moved = xp.moveaxis(chosen, d, -1)
    cols = xp.nonzero(moved.reshape(-1, n))[1]  # row-major: k per slice, in index order
    index = xp.moveaxis(cols.reshape(moved.shape[:-1] + (k,)), -1, d)
    order = stable_argsort(xp, xp.take_along_axis(x, index, axis=d), d, descending=largest)
    return xp.ascontiguousarray(xp.take_along_axis(index, order, axis=d))


def stable_select(xp, x, dim, p):
    """The position (keepdims) of the element a stable sort along ``dim`` (NaN last)
    puts at place ``p``, in linear time: a partition gives its value v; it is the
    (p - #{x < v} + 1)-th occurrence of v along the dim."""
    n = x.shape[dim]
    v = xp.take(xp.partition(x, p, axis=dim), [p], axis=dim)
    equal = x == v
    less = (x < v).sum(axis=dim, keepdims=True)
    if x.dtype.kind == "f":
        isnan, v_nan = xp.isnan(x), xp.isnan(v)
        equal |= isnan & v_nan
        less = xp.where(v_nan, n - isnan.sum(axis=dim, keepdims=True), less)
    rank = p - less + 1
    if bool((rank == 1).all()):  # the first occurrence everywhere: no cumsum needed
        return xp.argmax(equal, axis=dim, keepdims=True)
    return xp.argmax(equal & (xp.cumsum(equal, axis=dim) == rank), axis=dim, keepdims=True)


def _select_kth(input, dim, keepdim, index_fn, result_cls):
    """The values and indices at the positions ``index_fn(xp, x)`` (keepdims) along dim."""
    x = input._data
    xp = xp_of(x)
    index = index_fn(xp, _as_1d(x)).astype(np.int64, copy=False)
    shape = reduced_shape(x.shape, (dim,) if x.ndim else (), keepdim)
    values = take_along_dim(input, index, dim, shape)
    return result_cls((values, wrap(index.reshape(shape))))


def _sorted_position(position_fn, dim):
    """An index_fn for :func:`_select_kth` from a full stable sort: the element at the
    sorted place ``position_fn(xp, sorted, x)``."""
    def index_fn(xp, x):
        order = stable_argsort(xp, x, dim)
        pos = position_fn(xp, xp.take_along_axis(x, order, axis=dim), x)
        return xp.take_along_axis(order, pos, axis=dim)
    return index_fn


def kthvalue(input, k, dim=None, keepdim=False, *, out=None):
    """kthvalue(input, k, dim=-1, keepdim=False) -> (values, indices)

    The ``k``-th smallest element (1-based) of ``input`` along ``dim`` and its position.
    """
    x = input._data
    not_implemented_for(x, "kthvalue_cpu", "bc")
    d = wrap_dim(-1 if dim is None else int_dim(dim, "kthvalue"), x.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _select_kth(input, d, keepdim, lambda xp, a: stable_select(xp, a, d, k - 1),
                       _KthvalueResult)


# ---------------------------------------------------------------------------
# median, nanmedian, mode

def _median_all(xp, x, dims, keepdim):
    flat = x.reshape(-1)
    if flat.size == 0:  # NaN, or PyTorch's NaN cast to an integer: its smallest value
        return xp.asarray(np.nan if x.dtype.kind == "f" else np.iinfo(x.dtype).min, x.dtype)
    k = (flat.size - 1) // 2
    if flat.dtype.kind == "f" and bool(xp.isnan(flat).any()):
        return xp.asarray(np.nan, dtype=x.dtype)
    return xp.partition(flat, k)[k]


def _median_index(dim, ignore_nan):
    """An index_fn for the lower median along ``dim``.

    With NaN in a slice the median is NaN, found at the first NaN; with ``ignore_nan``
    the NaNs are left out (all NaN: the first NaN), which needs a full sort.
    """
    def index_fn(xp, x):
        n = x.shape[dim]
        if x.dtype.kind != "f" or not bool(xp.isnan(x).any()):
            return stable_select(xp, x, dim, (n - 1) // 2)
        if ignore_nan:
            def positions(xp, s, a):
                valid = n - xp.isnan(s).sum(axis=dim, keepdims=True)
                return xp.where(valid > 0, (valid - 1) // 2, 0)
            return _sorted_position(positions, dim)(xp, x)
        isnan = xp.isnan(x)
        first_nan = xp.argmax(isnan, axis=dim, keepdims=True)
        return xp.where(isnan.any(axis=dim, keepdims=True), first_nan,
                        stable_select(xp, x, dim, (n - 1) // 2))
    return index_fn


def median(input, dim=None, keepdim=False, *, out=None):
    """median(input) -> Tensor; median(input, dim=-1, keepdim=False) -> (values, indices)

    The lower median of ``input``'s values (NaN if there is a NaN); with ``dim``, the
    medians along that dim and their positions.
    """
    x = input._data
    not_implemented_for(x, "median_cpu" if dim is None else "median_out", "bc")
    if dim is None:
        return with_out(apply(Extremum, input, None, False, _median_all), out)
    d = wrap_dim(int_dim(dim, "median"), x.ndim)
    if x.ndim:
        check_nonempty_dims(x, (d,), "median")
    return _select_kth(input, d, keepdim, _median_index(d, False), _MedianResult)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """nanmedian(input) -> Tensor; nanmedian(input, dim=-1, keepdim=False) -> (values, indices)

    The lower median of ``input``'s values ignoring NaN (NaN if all are NaN).
    """
    x = input._data
    not_implemented_for(x, "median_cpu" if dim is None else "median_out", "bc")
    if dim is None:
        if x.size == 0:
            return with_out(median(input), out)
        return with_out(nanmedian(input.reshape(-1), 0)[0], out)
    d = wrap_dim(int_dim(dim, "nanmedian"), x.ndim)
    if x.ndim:
        check_nonempty_dims(x, (d,), "nanmedian")
    return _select_kth(input, d, keepdim, _median_index(d, True), _NanmedianResult)


def _mode_positions(xp, s, x, dim):
    """Sorted position of the last element of the longest run of equal values (the
    first such run, so the smallest value, among runs of equal length)."""
    n = s.shape[dim]
    shape = [1] * s.ndim
    shape[dim] = n
    pos = xp.arange(n, dtype=np.int64).reshape(shape)
    head = [slice(None)] * s.ndim
    tail = [slice(None)] * s.ndim
    head[dim], tail[dim] = slice(1, None), slice(None, -1)
    new_run = xp.ones(s.shape, dtype=bool)
    new_run[tuple(head)] = s[tuple(head)] != s[tuple(tail)]
    start = accumulate(xp, "maximum", xp.where(new_run, pos, 0), dim)
    run_end = xp.ones(s.shape, dtype=bool)
    run_end[tuple(tail)] = new_run[tuple(head)]
    length = xp.where(run_end, pos - start + 1, 0)
    return xp.argmax(length, axis=dim, keepdims=True)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """mode(input, dim=-1, keepdim=False) -> (values, indices)

    The most frequent value of ``input`` along ``dim`` (the smallest among equally
    frequent ones) and the position of its last occurrence.
    """
    x = input._data
    not_implemented_for(x, "mode_cpu")
    d = wrap_dim(int_dim(dim, "mode"), x.ndim)
    if x.ndim:
        check_nonempty_dims(x, (d,), "mode")
    return _select_kth(input, d, keepdim,
                       _sorted_position(lambda xp, s, a: _mode_positions(xp, s, a, d), d),
                       _ModeResult)


# ---------------------------------------------------------------------------
# quantile, nanquantile

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    fn = "quantile()"  # also for nanquantile, as PyTorch
    x = input._data
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{fn} input tensor must be either float or double dtype")
    if x.size == 0:
        raise RuntimeError(f"{fn} input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fn} interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    xp = xp_of(x)
    if isinstance(q, TensorBase):
        qa = q._data
        if qa.ndim > 1:
            raise RuntimeError(f"{fn} q must be a scalar or 1D tensor")
        if qa.dtype != x.dtype:
            raise RuntimeError(f"{fn} q tensor must be same dtype as the input tensor")
        if qa.size and not bool(((qa >= 0) & (qa <= 1)).all()):
            raise RuntimeError(f"{fn} q values must be in the range [0, 1]")
        scalar_q = qa.ndim == 0
        qa = qa.reshape(-1)
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{fn} q must be in the range [0, 1] but got {q:g}")
        scalar_q = True
        qa = xp.asarray([q], dtype=np.float64)
    if dim is None:
        src, d, out_shape = input.reshape(-1), 0, ((1,) * x.ndim if keepdim else ())
    else:
        d = wrap_dim(int_dim(dim, "quantile"), x.ndim)
        src = input.reshape(1) if x.ndim == 0 else input
        out_shape = reduced_shape(x.shape, (d,) if x.ndim else (), keepdim)
    a = src._data
    n = a.shape[d]
    order = stable_argsort(xp, a, d)
    kept = list(a.shape)
    kept[d] = 1
    if a.dtype.kind == "f":
        nans = xp.isnan(a).sum(axis=d, keepdims=True)
    else:
        nans = xp.zeros(kept, dtype=np.int64)
    # ranks per q (in the input's dtype, as PyTorch), stacked along dim: len(q) at d
    qs = qa.astype(x.dtype).reshape([-1 if i == d else 1 for i in range(a.ndim)])
    if ignore_nan:
        # all NaN: rank 0, where the sorted slice holds a NaN
        ranks = xp.maximum(qs * (n - nans - 1).astype(x.dtype), 0)
    else:
        # a slice with NaN: the last rank, where the sorted slice holds a NaN
        ranks = xp.where(nans > 0, x.dtype.type(n - 1), qs * x.dtype.type(n - 1))
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = ranks.astype(np.int64)
    gathered_shape = below.shape
    values = take_along_dim(src, xp.take_along_axis(order, below, axis=d), d, gathered_shape)
    if interpolation in ("linear", "midpoint"):
        above = xp.ceil(ranks).astype(np.int64)
        weight = xp.full(ranks.shape, 0.5, dtype=x.dtype) if interpolation == "midpoint" \
            else (ranks - below).astype(x.dtype)
        upper = take_along_dim(src, xp.take_along_axis(order, above, axis=d), d, gathered_shape)
        values = values + (upper - values) * wrap(weight)
    # move the q axis (at d) to the front, then give the reduced shape
    nq = qa.shape[0]
    perm = (d,) + tuple(i for i in range(a.ndim) if i != d)
    values = values.permute(*perm).reshape((nq,) + out_shape)
    return values.reshape(out_shape) if scalar_q else values


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile(input, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor

    The ``q``-quantiles of ``input`` along ``dim`` (of all elements when None). ``q``
    is a number or a 1-D tensor in [0, 1]; for a tensor the result has one row per q
    first. ``interpolation`` ('linear', 'lower', 'higher', 'midpoint', 'nearest') says
    how to pick between the two closest values. NaN in a slice gives NaN.
    """
    return with_out(_quantile(input, q, dim, keepdim, interpolation, False), out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """As :func:`quantile`, ignoring NaN values (NaN only where a slice is all NaN)."""
    return with_out(_quantile(input, q, dim, keepdim, interpolation, True), out)


# ---------------------------------------------------------------------------
# unique, unique_consecutive, bincount, histc

def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = [wrap(values)]
    if return_inverse:
        out.append(wrap(inverse.astype(np.int64, copy=False)))
    if return_counts:
        out.append(wrap(counts.astype(np.int64, copy=False)))
    return out[0] if len(out) == 1 else tuple(out)


@dispatched
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)

    The unique elements of ``input`` (the unique slices along ``dim`` if given), sorted;
    with ``return_inverse`` also where each input element went, with ``return_counts``
    how often each unique value occurs. NaNs are not merged.
    """
    x = input._data
    xp = xp_of(x)
    not_implemented_for(x, "unique")
    if dim is None:
        flat = x.reshape(-1)
        vals, inv, cnt = xp.unique(flat, return_inverse=True, return_counts=True,
                                   equal_nan=False)
        return _unique_result(vals, inv.reshape(x.shape), cnt, return_inverse, return_counts)
    d = _dim_of_nonscalar(x, dim, "unique")
    vals, inv, cnt = xp.unique(x, return_inverse=True, return_counts=True, axis=d,
                               equal_nan=False)
    return _unique_result(vals, inv.reshape(-1), cnt, return_inverse, return_counts)


def _dim_of_nonscalar(x, dim, fn):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(int_dim(dim, fn), x.ndim)


@dispatched
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)

    ``input`` with every run of equal consecutive elements (slices along ``dim``)
    reduced to one; optionally the inverse indices and the run lengths.
    """
    x = input._data
    xp = xp_of(x)
    not_implemented_for(x, "unique")
    if dim is None:
        a = x.reshape(-1)
        rows = a.reshape(-1, 1)
    else:
        d = _dim_of_nonscalar(x, dim, "unique_consecutive")
        a = xp.moveaxis(x, d, 0)
        rows = a.reshape(a.shape[0], -1)
    n = rows.shape[0]
    change = xp.ones(n, dtype=bool)
    if n > 1:
        change[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = xp.nonzero(change)[0]
    values = a[starts]
    if dim is not None:
        values = xp.ascontiguousarray(xp.moveaxis(values, 0, d))
    inverse = xp.cumsum(change) - 1
    if dim is None:
        inverse = inverse.reshape(x.shape)
    counts = xp.diff(xp.concatenate([starts, xp.asarray([n], dtype=starts.dtype)]))
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def bincount(input, weights=None, minlength=0):
    """bincount(input, weights=None, minlength=0) -> Tensor

    How often each value occurs in the 1-D non-negative integer tensor ``input`` (the
    sum of ``weights`` at those positions if given), with at least ``minlength`` bins.
    """
    x = input._data
    not_implemented_for(x, "bincount_cpu", "bfc")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    xp = xp_of(x)
    if x.ndim != 1 or (x.size and int(x.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        w = weights._data
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        out_dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.float64
        return apply(NoGrad, lambda a, wa: xp.bincount(a, weights=wa, minlength=minlength)
                     .astype(out_dtype), input, weights)
    return apply(NoGrad, lambda a: xp.bincount(a, minlength=minlength).astype(np.int64), input)


def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002
    """histc(input, bins=100, min=0, max=0) -> Tensor

    A histogram of ``input`` with ``bins`` equal bins between ``min`` and ``max`` (the
    data's own range when both are 0); values outside are ignored.
    """
    x = input._data
    not_implemented_for(x, "histogram_cpu", "biuc")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    xp = xp_of(x)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")

    def fn(a):
        counts, _ = xp.histogram(a.reshape(-1), bins=bins, range=(lo, hi))
        return counts.astype(a.dtype)
    return with_out(apply(NoGrad, fn, input), out)


# ---------------------------------------------------------------------------
# searchsorted, bucketize

def _batched_searchsorted(xp, seq, values, right):
    """searchsorted along the last dim of ``seq`` for rows of ``values``: a binary search
    run on all rows at once (log2(n) vectorized steps)."""
    n = seq.shape[-1]
    lo = xp.zeros(values.shape, dtype=np.int64)
    hi = xp.full(values.shape, n, dtype=np.int64)
    for _ in range(int(n).bit_length()):
        active = lo < hi
        mid = (lo + hi) // 2
        at = xp.take_along_axis(seq, xp.minimum(mid, n - 1), axis=-1)
        go_right = (at <= values) if right else (at < values)
        lo = xp.where(active & go_right, mid + 1, lo)
        hi = xp.where(active & ~go_right, mid, hi)
    return lo


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 out=None, sorter=None):
    """searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
    sorter=None) -> Tensor

    The indices where ``values`` would be inserted into ``sorted_sequence`` (along its
    last dim) to keep it sorted: before equal values, or after them with ``right=True``
    / ``side='right'``. ``sorter`` gives the order of an unsorted sequence.
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites,"
                               " got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    xp = xp_of(seq)
    not_implemented_for(seq, "searchsorted_out_cpu")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    scalar = not isinstance(input, TensorBase)
    vals = xp.asarray(input) if scalar else input._data
    if scalar and seq.ndim > 1:
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
            "dim(0) numel(1)")
    if sorter is not None:
        s = sorter._data
        if s.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(s.shape)}")
        seq = xp.take_along_axis(seq, s, axis=-1)
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    out_dtype = np.int32 if out_int32 else np.int64

    def fn(seq, vals):
        if seq.ndim <= 1:
            r = xp.searchsorted(seq.reshape(-1), vals, side="right" if right else "left")
        else:
            r = _batched_searchsorted(xp, seq, vals, right)
        return xp.asarray(r).astype(out_dtype)
    return with_out(apply(NoGrad, fn, seq, vals), out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """bucketize(input, boundaries, *, out_int32=False, right=False) -> Tensor

    The index of the bucket of each element of ``input`` given the sorted 1-D
    ``boundaries``: ``boundaries[i-1] < x <= boundaries[i]`` (``<=``/``<`` with
    ``right=True``).
    """
    if boundaries._data.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ---------------------------------------------------------------------------
# repeat_interleave

class RepeatInterleave(Node):
    def forward(self, x, repeats, dim):
        self.repeats, self.dim, self.n = repeats, dim, x.shape[dim]
        return xp_of(x).repeat(x, repeats, axis=dim)

    def backward(self, g):
        return apply(SumRepeats, g, self.repeats, self.dim, self.n)


class SumRepeats(Node):
    """The sums of the groups of ``repeats`` consecutive slices along ``dim``: the
    adjoint of repeat_interleave."""

    def forward(self, g, repeats, dim, n):
        self.repeats, self.dim = repeats, dim
        xp = xp_of(g)
        if isinstance(repeats, int):
            shape = g.shape[:dim] + (n, repeats) + g.shape[dim + 1:]
            return g.reshape(shape).sum(axis=dim + 1)
        group = xp.repeat(xp.arange(n), repeats)
        moved = xp.moveaxis(g, dim, 0)
        out = xp.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        xp.add.at(out, group, moved)
        return xp.ascontiguousarray(xp.moveaxis(out, 0, dim))

    def backward(self, gg):
        return apply(RepeatInterleave, gg, self.repeats, self.dim)


def _repeats_array(repeats):
    r = repeats._data
    if r.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    not_implemented_for(r, "repeat_interleave_cpu", "bfc")
    if r.size and int(r.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    return r.reshape(-1)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor

    Each element (each slice along ``dim``) of ``input`` repeated ``repeats`` times in
    place: ``repeats`` is an int or a tensor with one count per slice. Without ``dim``
    the input is flattened. ``repeat_interleave(repeats)`` alone repeats
    ``arange(len(repeats))``.
    """
    if repeats is None:  # repeat_interleave(repeats): the tensor-only form
        r = _repeats_array(input)
        idx = apply(NoGrad, lambda a: xp_of(a).repeat(xp_of(a).arange(a.shape[0], dtype=a.dtype),
                                                      a.tolist()), r)
        _check_output_size(idx._data.shape[0], output_size)
        return idx
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        if input._data.ndim == 0:  # PyTorch's errors for a 0-d input with a dim
            if isinstance(repeats, TensorBase):
                raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        d = wrap_dim(int_dim(dim, "repeat_interleave"), input._data.ndim)
    n = input._data.shape[d]
    if isinstance(repeats, TensorBase):
        r = _repeats_array(repeats)
        if r.size == 1:
            repeats = int(r[0])
        elif r.shape[0] != n:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) "
                f"= {r.shape[0]} and input.size({d}) = {n}")
        else:
            repeats = [int(v) for v in r.tolist()]  # a host list: what CuPy's repeat takes
    if isinstance(repeats, (int, np.integer)):
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        total = n * repeats
    else:
        total = sum(repeats)
    _check_output_size(total, output_size)
    return apply(RepeatInterleave, input, repeats, d)


def _check_output_size(total, output_size):
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")


METHODS = {
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
    "median": median, "nanmedian": nanmedian, "mode": mode, "quantile": quantile,
    "nanquantile": nanquantile, "unique": unique, "unique_consecutive": unique_consecutive,
    "bincount": bincount, "histc": histc, "repeat_interleave": repeat_interleave,
}
