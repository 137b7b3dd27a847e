"""OpInfos for sorting, order statistics and counting: sort, topk, median, quantile, ..."""

from __future__ import annotations

import itertools

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, XFail, arr
from ember.testing._opinfo.reduction import quiet

_INTS = (np.int32, np.int64)
_REALS = FLOATING + _INTS


def _t(name):
    return lambda torch: getattr(torch, name)


def _distinct(rng, shape, dtype):
    """Distinct values: no ties, so sorts and order statistics are differentiable."""
    n = int(np.prod(shape)) if shape else 1
    scale = 0.5 if np.dtype(dtype).kind == "f" else 1
    return np.asarray((rng.permutation(n).reshape(shape) - n // 2) * scale).astype(dtype)


def _ties(rng, shape, dtype):
    return rng.integers(0, 3, size=shape).astype(dtype)


def _with_nans(rng, shape, dtype, every=3):
    a = _distinct(rng, shape, dtype)
    a.reshape(-1)[1::every] = np.nan
    return a


def _stable_argsort(x, axis, descending=False):
    """NumPy's stable argsort; descending by sorting the negated values (no NaN)."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    return np.argsort(-x if descending else x, axis=axis, kind="stable")


def _take(x, idx, axis):
    if x.ndim == 0:
        return x.copy()
    return np.take_along_axis(x, idx, axis=axis)


# ---------------------------------------------------------------------------
# sort, argsort, msort, topk, kthvalue

def _sort_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 4), dtype))
    yield SampleInput(_distinct(rng, (3, 4), dtype), (0, True))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), kwargs={"dim": -2, "stable": True})
    yield SampleInput(_distinct(rng, (), dtype), (0,))
    yield SampleInput(np.zeros((2, 0), dtype), (1,))
    yield SampleInput(_ties(rng, (3, 6), dtype), (1,), grad=False, name="ties keep order")
    yield SampleInput(_ties(rng, (3, 6), dtype), (1, True), grad=False,
                      name="ties keep order, descending")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(_with_nans(rng, (2, 5), dtype), (1,), grad=False,
                          name="nan sorts last")


def _sort_ref(x, dim=-1, descending=False, stable=False):
    idx = _stable_argsort(x, dim, descending)
    return _take(x, idx, dim), idx


def _topk_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 5), dtype), (2,))
    yield SampleInput(_distinct(rng, (3, 5), dtype), (3, 0, False))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), (4,), {"dim": -1, "largest": True})
    yield SampleInput(_distinct(rng, (3, 5), dtype), (0,), name="k = 0")
    yield SampleInput(_distinct(rng, (3, 5), dtype), (5, 1), name="k = size")
    yield SampleInput(_distinct(rng, (), dtype), (1,))


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(_stable_argsort(x, dim, largest), np.arange(k), axis=dim)
    return _take(x, idx, dim), idx


def _kth_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 5), dtype), (2,))
    yield SampleInput(_distinct(rng, (3, 5), dtype), (3, 0, True))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), (4,), {"dim": -1})
    yield SampleInput(_distinct(rng, (), dtype), (1,))


def _kth_ref(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(_stable_argsort(x, dim), [k - 1], axis=dim)
    values = _take(x, idx, dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx


# ---------------------------------------------------------------------------
# median, nanmedian, mode

def _median_all_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 5), dtype))
    yield SampleInput(_distinct(rng, (4,), dtype), name="even count: lower median")
    yield SampleInput(_distinct(rng, (), dtype))
    yield SampleInput(np.array([1, 2, 2, 3], dtype), name="ties share the gradient")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(_with_nans(rng, (2, 3), dtype), grad=False, name="nan")


def _median_all_ref(x):
    flat = np.sort(x.reshape(-1))
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, x.dtype)
    return np.asarray(flat[(flat.size - 1) // 2])


def _median_dim_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 5), dtype), (1,))
    yield SampleInput(_distinct(rng, (4, 3), dtype), (0, True))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), (-1,))
    yield SampleInput(_distinct(rng, (), dtype), (0,))
    yield SampleInput(np.zeros((0, 3), dtype), (1,), name="empty, nonempty dim")
    yield SampleInput(_ties(rng, (3, 8), dtype), (1,), grad=False, name="ties")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(_with_nans(rng, (3, 4), dtype, 5), (1,), grad=False,
                          name="nan: the first nan")


def _median_dim_ref(ignore_nan):
    def ref(x, dim, keepdim=False):
        x1 = x.reshape(1) if x.ndim == 0 else x
        dim = dim % x1.ndim
        order = np.argsort(x1, axis=dim, kind="stable")
        n = x1.shape[dim]
        nans = np.isnan(x1).sum(axis=dim, keepdims=True) if x1.dtype.kind == "f" else \
            np.zeros([1 if i == dim else s for i, s in enumerate(x1.shape)], np.int64)
        if ignore_nan:
            pos = np.maximum((n - nans - 1) // 2, 0)
        else:
            pos = np.where(nans > 0, n - nans, (n - 1) // 2)
        idx = np.take_along_axis(order, pos, axis=dim) if x1.size else pos
        values = np.take_along_axis(x1, idx, axis=dim) if x1.size else np.zeros(pos.shape,
                                                                                 x.dtype)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values.reshape(values.shape if x.ndim else ()), \
            idx.reshape(idx.shape if x.ndim else ())
    return ref


def _nanmedian_samples(dtype, rng):
    yield SampleInput(_with_nans(rng, (3, 5), dtype), (1,))
    yield SampleInput(_with_nans(rng, (4, 3), dtype, 5), (0, True))
    yield SampleInput(np.array([[np.nan, np.nan], [1.0, np.nan]], dtype), (1,), grad=False,
                      name="all nan: nan")
    yield SampleInput(_distinct(rng, (3, 4), dtype), (-1,))


def _nanmedian_all_ref(x):
    flat = np.sort(x[~np.isnan(x)])
    if flat.size == 0:
        return np.asarray(np.nan, x.dtype)
    return np.asarray(flat[(flat.size - 1) // 2])


def _mode_samples(dtype, rng):
    yield SampleInput(_ties(rng, (3, 8), dtype), grad=False)
    yield SampleInput(_ties(rng, (6, 3), dtype), (0, True), grad=False)
    yield SampleInput(np.array([2, 1, 2, 1, 5, 2, 1], dtype), (0,), grad=False,
                      name="equally frequent: the smaller, at its last position")
    yield SampleInput(_distinct(rng, (3, 4), dtype), (1,), name="no repeats: the smallest")
    yield SampleInput(_distinct(rng, (), dtype))


def _mode_ref(x, dim=-1, keepdim=False):
    x1 = x.reshape(1) if x.ndim == 0 else x
    moved = np.moveaxis(x1, dim, -1)
    values = np.empty(moved.shape[:-1], x.dtype)
    idx = np.empty(moved.shape[:-1], np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]  # the smallest among the most frequent
        values[pos] = best
        idx[pos] = np.nonzero(row == best)[0][-1]
    if keepdim and x.ndim:
        values, idx = np.expand_dims(values, dim), np.expand_dims(idx, dim)
    return values, idx


# ---------------------------------------------------------------------------
# quantile, nanquantile

def _quantile_samples(dtype, rng):
    yield SampleInput(_distinct(rng, (3, 5), dtype), (0.25,))
    yield SampleInput(_distinct(rng, (3, 5), dtype), (0.4, 1))
    yield SampleInput(_distinct(rng, (3, 5), dtype), (0.75, 0, True))
    yield SampleInput(_distinct(rng, (3, 5), dtype), (0.5, None, True))
    yield SampleInput(_distinct(rng, (2, 3, 4), dtype), (0.5, -2))
    yield SampleInput(_distinct(rng, (), dtype), (0.3,))
    for mode in ("lower", "higher", "midpoint", "nearest", "linear"):
        yield SampleInput(_distinct(rng, (3, 5), dtype), (0.25, 1),
                          {"interpolation": mode}, name=mode)
        yield SampleInput(_distinct(rng, (3, 7), dtype), (np.array([0.0, 0.25, 0.5, 1.0], dtype),
                                                          1, True), {"interpolation": mode},
                          grad=False, name=f"q tensor, {mode}")
    yield SampleInput(_distinct(rng, (3, 5), dtype), (np.array(0.5, dtype),), grad=False,
                      name="0-d q tensor")
    yield SampleInput(_with_nans(rng, (3, 5), dtype, 7), (0.5, 1), grad=False,
                      name="nan in a slice")


def _quantile_ref(fn):
    @quiet
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        return np.asarray(fn(x, q, axis=dim if x.ndim else None, keepdims=keepdim,
                             method=interpolation)).astype(x.dtype)
    return ref


def _nanquantile_samples(dtype, rng):
    yield SampleInput(_with_nans(rng, (3, 7), dtype), (0.25,))
    yield SampleInput(_with_nans(rng, (3, 7), dtype), (0.5, 1, True))
    yield SampleInput(_with_nans(rng, (3, 7), dtype), (np.array([0.25, 0.75], dtype), 1),
                      grad=False)
    yield SampleInput(np.array([[np.nan, np.nan], [1.0, np.nan]], dtype), (0.5, 1),
                      grad=False, name="all nan")


# ---------------------------------------------------------------------------
# unique, unique_consecutive, bincount, histc

def _unique_samples(dtype, rng):
    yield SampleInput(_ties(rng, (3, 5), dtype))
    yield SampleInput(_ties(rng, (3, 5), dtype), (True, True, True))
    yield SampleInput(_ties(rng, (6,), dtype), kwargs={"return_counts": True})
    yield SampleInput(np.array([[1, 2], [1, 2], [0, 5]], dtype), (True, True, True, 0))
    yield SampleInput(np.array([[3, 1, 3], [2, 0, 2]], dtype),
                      kwargs={"dim": 1, "return_inverse": True})
    yield SampleInput(np.array(2, dtype), (True, True, True))
    yield SampleInput(np.zeros(0, dtype), (True, True, True))


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        vals, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        vals, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    out = [vals] + ([inv] if return_inverse else []) + ([cnt] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive_samples(dtype, rng):
    yield SampleInput(np.array([1, 1, 2, 2, 3, 1, 1, 2], dtype))
    yield SampleInput(np.array([1, 1, 2, 2, 3, 1, 1, 2], dtype), (True, True))
    yield SampleInput(_ties(rng, (2, 6), dtype), kwargs={"return_inverse": True})
    yield SampleInput(np.array([[1, 1], [1, 1], [2, 3], [1, 1]], dtype), (True, True, 0))
    yield SampleInput(np.array([[1, 1, 2], [1, 1, 3]], dtype),
                      kwargs={"dim": -1, "return_counts": True})


def _unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        items = list(x.reshape(-1))
    else:
        items = list(np.moveaxis(x, dim, 0))
    keys = [np.asarray(v).tobytes() for v in items]
    vals, inv, cnt = [], [], []
    for k, (_, group) in enumerate(itertools.groupby(range(len(items)), key=lambda i: keys[i])):
        group = list(group)
        vals.append(items[group[0]])
        inv.extend([k] * len(group))
        cnt.append(len(group))
    vals = np.array(vals, x.dtype)
    if dim is not None:
        vals = np.moveaxis(vals, 0, dim)
    inv = np.array(inv, np.int64).reshape(x.shape if dim is None else (-1,))
    out = [vals] + ([inv] if return_inverse else []) + \
        ([np.array(cnt, np.int64)] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def _bincount_samples(dtype, rng):
    x = rng.integers(0, 6, size=10).astype(dtype)
    yield SampleInput(x)
    yield SampleInput(x, kwargs={"minlength": 9})
    yield SampleInput(x, (arr(rng, (10,), np.float32),), name="float32 weights")
    yield SampleInput(x, (arr(rng, (10,), np.float64), 8), name="float64 weights")
    yield SampleInput(x, (rng.integers(0, 5, size=10),), name="int weights: float64")
    yield SampleInput(np.zeros(0, dtype))


def _bincount_ref(x, weights=None, minlength=0):
    r = np.bincount(x, weights=weights, minlength=minlength)
    if weights is not None and weights.dtype == np.float32:
        r = r.astype(np.float32)
    return r


def _histc_samples(dtype, rng):
    yield SampleInput(arr(rng, (20,), dtype))
    yield SampleInput(arr(rng, (4, 5), dtype), (7,))
    yield SampleInput(arr(rng, (20,), dtype), (4, -1, 1), name="values outside are ignored")
    yield SampleInput(np.array([1.0, 1.0], dtype), (4,), name="one value: +-1 around it")
    yield SampleInput(np.array([0.0, 1.0, 2.0], dtype), (2, 0, 2), name="max in the last bin")


def _histc_ref(x, bins=100, min=0, max=0):  # noqa: A002
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(x, bins=bins, range=(lo, hi))[0].astype(x.dtype)


# ---------------------------------------------------------------------------
# searchsorted, bucketize

def _searchsorted_samples(dtype, rng):
    seq = np.sort(_ties(rng, (8,), dtype) * 2)
    vals = rng.integers(-1, 6, size=(3, 4)).astype(dtype)
    yield SampleInput(seq, (vals,))
    yield SampleInput(seq, (vals,), {"right": True})
    yield SampleInput(seq, (vals,), {"side": "right"})
    yield SampleInput(seq, (vals,), {"out_int32": True})
    yield SampleInput(seq, (3,), name="scalar value")
    batched = np.sort(rng.integers(0, 9, size=(2, 3, 6)).astype(dtype), axis=-1)
    yield SampleInput(batched, (rng.integers(-1, 10, size=(2, 3, 4)).astype(dtype),),
                      name="batched")
    yield SampleInput(batched, (rng.integers(-1, 10, size=(2, 3, 4)).astype(dtype),),
                      {"right": True}, name="batched, right")
    unsorted = rng.permutation(8).astype(dtype)
    yield SampleInput(unsorted, (vals,), {"sorter": np.argsort(unsorted, kind="stable")},
                      name="sorter")
    yield SampleInput(np.zeros(0, dtype), (vals,), name="empty sequence")


def _searchsorted_ref(seq, values, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = seq[sorter]
    if seq.ndim <= 1:
        return np.asarray(np.searchsorted(seq, values, side=side))
    out = np.empty(values.shape, np.int64)
    for pos in np.ndindex(*seq.shape[:-1]):
        out[pos] = np.searchsorted(seq[pos], values[pos], side=side)
    return out


def _bucketize_samples(dtype, rng):
    bounds = np.array([1, 3, 5, 7], dtype)
    vals = rng.integers(0, 9, size=(3, 4)).astype(dtype)
    yield SampleInput(vals, (bounds,))
    yield SampleInput(vals, (bounds,), {"right": True})
    yield SampleInput(vals, (bounds,), {"out_int32": True})


def _bucketize_ref(x, boundaries, out_int32=False, right=False):
    return np.searchsorted(boundaries, x, side="right" if right else "left")


# ---------------------------------------------------------------------------
# repeat_interleave

def _repeat_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3), dtype), (2,))
    yield SampleInput(arr(rng, (2, 3), dtype), (3, 1))
    yield SampleInput(arr(rng, (2, 3), dtype), (np.array([1, 0, 2]), -1))
    yield SampleInput(arr(rng, (2, 3), dtype), (np.array([2, 1]), 0), {"output_size": 3})
    yield SampleInput(arr(rng, (2, 3), dtype), (np.array([2]), 0), name="one repeat count")
    yield SampleInput(arr(rng, (2, 3), dtype), (0, 1), name="zero repeats")
    yield SampleInput(arr(rng, (), dtype), (3,))


def _repeat_ref(x, repeats, dim=None, output_size=None):
    if isinstance(repeats, np.ndarray) and repeats.size == 1:
        repeats = int(repeats.reshape(-1)[0])
    if dim is None:
        return np.repeat(x.reshape(-1), repeats)
    return np.repeat(x, repeats, axis=dim)


OPS = [
    OpInfo("sort", ember.sort, _sort_samples, ref=_sort_ref, dtypes=_REALS,
           torch_op=_t("sort"), method="sort", gradgrad=True),
    OpInfo("argsort", ember.argsort, _sort_samples,
           ref=lambda x, *a, **k: _sort_ref(x, *a, **k)[1], dtypes=_REALS,
           differentiable=False, torch_op=_t("argsort"), method="argsort"),
    OpInfo("msort", ember.msort, lambda dt, rng: (SampleInput(_distinct(rng, (4, 3), dt)),
                                                  SampleInput(_ties(rng, (6, 2), dt), grad=False)),
           ref=lambda x: np.sort(x, axis=0), dtypes=_REALS, torch_op=_t("msort"),
           method="msort"),
    OpInfo("topk", ember.topk, _topk_samples, ref=_topk_ref, dtypes=_REALS,
           torch_op=_t("topk"), method="topk", gradgrad=True),
    OpInfo("kthvalue", ember.kthvalue, _kth_samples, ref=_kth_ref, dtypes=_REALS,
           torch_op=_t("kthvalue"), method="kthvalue"),
    OpInfo("median", ember.median, _median_all_samples, ref=_median_all_ref, dtypes=_REALS,
           torch_op=_t("median"), method="median"),
    OpInfo("median_dim", ember.median, _median_dim_samples, ref=_median_dim_ref(False),
           dtypes=_REALS, torch_op=_t("median"), method="median"),
    OpInfo("nanmedian", ember.nanmedian,
           lambda dt, rng: (SampleInput(_with_nans(rng, (3, 5), dt)),
                            SampleInput(np.full(3, np.nan, dt), grad=False, name="all nan")),
           ref=_nanmedian_all_ref, torch_op=_t("nanmedian"), method="nanmedian",
           xfails=(XFail("test_subgradients_match_torch",
                         "ember differs: the gradient of nanmedian over an all-NaN tensor goes "
                         "to its first element; torch spreads it evenly (1/3 each of 3)"),)),
    OpInfo("nanmedian_dim", ember.nanmedian, _nanmedian_samples, ref=_median_dim_ref(True),
           torch_op=_t("nanmedian"), method="nanmedian"),
    OpInfo("mode", ember.mode, _mode_samples, ref=_mode_ref, dtypes=_REALS,
           torch_op=_t("mode"), method="mode"),
    OpInfo("quantile", ember.quantile, _quantile_samples, ref=_quantile_ref(np.quantile),
           torch_op=_t("quantile"), method="quantile", gradgrad=True,
           xfails=(XFail("test_subgradients_match_torch",
                         "ember bug: quantile gives no gradient with respect to a tensor q "
                         "(torch does)"),)),
    OpInfo("nanquantile", ember.nanquantile, _nanquantile_samples,
           ref=_quantile_ref(np.nanquantile), torch_op=_t("nanquantile"),
           method="nanquantile",
           xfails=(XFail("test_subgradients_match_torch",
                         "ember bug: nanquantile with a tensor q gives q no gradient, and with "
                         "a NaN in a slice the input gradient keeps one q's share only (row "
                         "[4, nan, 0], q [0.25, 0.6]: ember [0.6, 0, 0.4], torch "
                         "[0.85, 0, 1.15])"),)),
    OpInfo("unique", ember.unique, _unique_samples, ref=_unique_ref,
           dtypes=_REALS + (np.bool_,), differentiable=False, torch_op=_t("unique"),
           method="unique"),
    OpInfo("unique_consecutive", ember.unique_consecutive, _unique_consecutive_samples,
           ref=_unique_consecutive_ref, dtypes=_REALS, differentiable=False,
           torch_op=_t("unique_consecutive"), method="unique_consecutive"),
    OpInfo("bincount", ember.bincount, _bincount_samples, ref=_bincount_ref,
           dtypes=(np.int64, np.uint8), differentiable=False, torch_op=_t("bincount"),
           method="bincount"),
    OpInfo("histc", ember.histc, _histc_samples, ref=_histc_ref, differentiable=False,
           torch_op=_t("histc"), method="histc"),
    OpInfo("searchsorted", ember.searchsorted, _searchsorted_samples, ref=_searchsorted_ref,
           dtypes=_REALS, differentiable=False, torch_op=_t("searchsorted")),
    OpInfo("bucketize", ember.bucketize, _bucketize_samples, ref=_bucketize_ref,
           dtypes=_REALS, differentiable=False, torch_op=_t("bucketize")),
    OpInfo("repeat_interleave", ember.repeat_interleave, _repeat_samples, ref=_repeat_ref,
           dtypes=_REALS, torch_op=_t("repeat_interleave"), method="repeat_interleave",
           gradgrad=True),
    OpInfo("repeat_interleave_counts", ember.repeat_interleave,
           lambda dt, rng: (SampleInput(np.array([2, 0, 3], dt)), SampleInput(np.zeros(0, dt))),
           ref=lambda r: np.repeat(np.arange(r.shape[0]), r), dtypes=_INTS,
           differentiable=False, torch_op=_t("repeat_interleave")),
]
