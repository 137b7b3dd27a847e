"""OpInfos for indexing: t[index], t[index] = v, gather/scatter, index_*, masked_*, take."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import OpInfo, SampleInput, arr

_FI = (np.float32, np.float64, np.int64)
_ALL = (np.float32, np.float64, np.int64, np.bool_)


def _i(*values):
    return np.array(values, dtype=np.int64)


def _distinct(rng, shape, dtype):
    """Distinct values (no ties), so that amax/amin are differentiable."""
    n = int(np.prod(shape)) if shape else 1
    return (rng.permutation(n).reshape(shape) * 0.5 - n / 4).astype(dtype)


def _unique_rows(rng, n_rows, size, cols):
    """An (n_rows, cols) index into a dim of ``size``: no repeat within a column."""
    return np.stack([rng.permutation(size)[:n_rows] for _ in range(cols)], 1).astype(np.int64)


# ---------------------------------------------------------------------------
# t[index]

def _getitem(x, idx):
    return x[idx]


def _basic_index_samples(dtype, rng):
    x = arr(rng, (3, 4, 5), dtype)
    for idx in [1, -1, slice(1, 3), (slice(None), 2), (Ellipsis, 1),
                (None, 1, slice(None, None, 2)), (1, Ellipsis, None), (slice(0, 0),),
                slice(10, 20), (2, 3, 4), (slice(None, -1), -2),
                (slice(-2, None, 2), slice(None), slice(1, 4, 2))]:
        yield SampleInput(x, (idx,), name=repr(idx))
    yield SampleInput(arr(rng, (), dtype), (None,), name="0-d[None]")
    yield SampleInput(arr(rng, (), dtype), (Ellipsis,), name="0-d[...]")


def _advanced_index_samples(dtype, rng):
    x = arr(rng, (3, 4, 5), dtype)
    for idx in [_i(0, 2, 0), _i(-1, 0), np.array([[0, 1], [2, 0]]), (slice(None), _i(1, 3)),
                (_i(0, 1), _i(2, 3)), (_i(0, 1), slice(None), _i(2, 3)), (1, _i(0, 2, 2)),
                (Ellipsis, _i(4, 0)), (None, _i(1, 1), slice(1, 3)), [0, 2],
                (_i(0, 2)[:, None], _i(1, 3, 3)), _i(), np.array(1),
                (_i(0, 2, 2), _i(-1, 3, 3), _i(4, 0, 4)), (_i(1), _i(0, 1)[:, None], 2)]:
        yield SampleInput(x, (idx,), name=repr(idx))


def _mask_index_samples(dtype, rng):
    x = arr(rng, (3, 4, 5), dtype)
    yield SampleInput(x, (arr(rng, (3, 4, 5), np.bool_),), name="full mask")
    yield SampleInput(x, (np.array([True, False, True]),), name="mask on dim 0")
    yield SampleInput(x, ((slice(None), np.array([False, True, True, False])),),
                      name="mask on dim 1")
    yield SampleInput(x, (arr(rng, (3, 4), np.bool_),), name="2-d mask")
    yield SampleInput(x, ((1, arr(rng, (4, 5), np.bool_)),), name="int and mask")
    yield SampleInput(x, (np.zeros((3,), np.bool_),), name="all False")
    yield SampleInput(x, ((np.array([True, False, True]), _i(1, 2)),), name="mask and ints")


# ---------------------------------------------------------------------------
# t[index] = v

def _setitem(x, idx, v):
    y = x.clone() if hasattr(x, "clone") else x.copy()
    y[idx] = v
    return y


def _setitem_samples(dtype, rng):
    def x():
        return arr(rng, (3, 4, 5), dtype)
    yield SampleInput(x(), (1, 2), name="int, number")
    yield SampleInput(x(), ((slice(None), 1), arr(rng, (5,), dtype)), name="broadcast value")
    yield SampleInput(x(), (1, arr(rng, (1, 4, 5), dtype)), name="leading 1 in value")
    yield SampleInput(x(), ((Ellipsis, slice(1, 3)), arr(rng, (4, 1), dtype)), name="ellipsis")
    yield SampleInput(x(), ((None, 0, slice(None, None, 2)), arr(rng, (2, 5), dtype)),
                      name="None and step")
    yield SampleInput(x(), (_i(2, 0), arr(rng, (2, 4, 5), dtype)), name="advanced")
    yield SampleInput(x(), ((slice(None), _i(3, 1)), arr(rng, (5,), dtype)),
                      name="advanced, broadcast value")
    yield SampleInput(x(), ((_i(0, 1), _i(2, 3), _i(4, 0)), arr(rng, (2,), dtype)),
                      name="advanced points")
    yield SampleInput(x(), (arr(rng, (3, 4, 5), np.bool_), 0), name="mask, number")
    yield SampleInput(x(), (np.array([True, False, True]), arr(rng, (4, 5), dtype)),
                      name="mask, broadcast value")
    yield SampleInput(x(), ((0, 1, 2), arr(rng, (), dtype)), name="0-d value")


# ---------------------------------------------------------------------------
# gather and scatter

def _along(index, dim):
    for pos in np.ndindex(index.shape):
        at = list(pos)
        at[dim] = index[pos]
        yield pos, tuple(at)


def _np_gather(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    out = np.empty(index.shape, x.dtype)
    for pos, at in _along(index, dim % x.ndim):
        out[pos] = x[at]
    return out


def _np_scatter(x, dim, index, src=None, value=None, reduce=None):
    src = value if src is None else src
    out = x.copy()
    for pos, at in _along(index, dim % x.ndim):
        v = src[pos] if isinstance(src, np.ndarray) else src
        if reduce == "add":
            out[at] += v
        elif reduce == "multiply":
            out[at] *= v
        else:
            out[at] = v
    return out


def _np_scatter_reduce(x, dim, index, src, reduce, include_self=True):
    lists = {}
    for pos, at in _along(index, dim % x.ndim):
        lists.setdefault(at, []).append(src[pos])
    out = x.copy()
    fns = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min, "mean": np.mean}
    for at, vals in lists.items():
        vals = vals + [x[at]] if include_self else vals
        r = fns[reduce](np.array(vals))
        if reduce == "mean" and x.dtype.kind in "iu":
            r = np.floor_divide(np.sum(vals), len(vals))
        out[at] = r
    return out


def _gather_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (0, rng.integers(0, 3, (2, 4))))
    yield SampleInput(x, (1, rng.integers(0, 4, (3, 6))))
    yield SampleInput(x, (-1, rng.integers(0, 4, (2, 2))), name="index smaller than input")
    yield SampleInput(arr(rng, (5,), dtype), (0, _i(4, 0, 0)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (1, rng.integers(0, 3, (2, 2, 4))))
    yield SampleInput(arr(rng, (), dtype), (0, np.array(0)), name="0-d")
    yield SampleInput(x, (0, np.zeros((0, 4), np.int64)), name="empty index")


def _scatter_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (0, _unique_rows(rng, 2, 3, 4), arr(rng, (2, 4), dtype)))
    yield SampleInput(x, (1, _unique_rows(rng, 2, 4, 3).T.copy(), arr(rng, (3, 2), dtype)))
    yield SampleInput(x, (0, _unique_rows(rng, 2, 3, 2), arr(rng, (2, 2), dtype)),
                      name="index smaller than input")
    yield SampleInput(arr(rng, (5,), dtype), (-1, _i(4, 0, 2), arr(rng, (3,), dtype)))


def _scatter_value_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (0, rng.integers(0, 3, (2, 4)), 2), name="positional value")
    yield SampleInput(x, (1, rng.integers(0, 4, (3, 2))), {"value": 3}, name="value=")


def _scatter_add_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (0, rng.integers(0, 3, (5, 4)), arr(rng, (5, 4), dtype)),
                      name="repeated positions add up")
    yield SampleInput(x, (1, rng.integers(0, 4, (2, 6)), arr(rng, (2, 6), dtype)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype),
                      (-1, rng.integers(0, 4, (2, 3, 3)), arr(rng, (2, 3, 3), dtype)))


def _scatter_reduce_samples(reduce):
    def samples(dtype, rng):
        floating = np.dtype(dtype).kind == "f"
        for include_self in (True, False):
            x = _distinct(rng, (3, 4), dtype) if floating else arr(rng, (3, 4), dtype)
            src = _distinct(rng, (5, 4), dtype) + 0.25 if floating else \
                arr(rng, (5, 4), dtype)
            if reduce == "prod" and floating:
                x, src = x / 4 + 2, src / 5 + 1.5
            idx = rng.integers(0, 3, (5, 4))
            idx[:, 0] = 0  # several sources into one position
            idx[:, 3] = 2
            yield SampleInput(x, (0, idx, src.astype(dtype), reduce),
                              {"include_self": include_self}, name=f"include_self={include_self}")
        if reduce == "prod" and floating:
            x = arr(rng, (2, 3), dtype, 0.5, 2)
            src = arr(rng, (3, 3), dtype, 0.5, 2)
            x[0, 0] = 0
            src[0, 1] = 0
            src[1, 2] = src[2, 2] = 0
            yield SampleInput(x, (0, _i(0, 0, 0)[:, None].repeat(3, 1), src, reduce),
                              name="zeros")
    return samples


# ---------------------------------------------------------------------------
# index_select and the index_* family

def _dim_idx(dim, index):
    return (slice(None),) * dim + (index,)


def _np_index_add(x, dim, index, src, alpha=1):
    out = x.copy()
    np.add.at(out, _dim_idx(dim % x.ndim, index), src * alpha)
    return out


def _np_index_copy(x, dim, index, src):
    out = x.copy()
    out[_dim_idx(dim % x.ndim, index)] = src
    return out


def _np_index_fill(x, dim, index, value):
    out = x.copy()
    out[_dim_idx(dim % x.ndim, index)] = value
    return out


def _np_index_select(x, dim, index):
    return np.take(x, index.reshape(-1), axis=dim)


def _index_select_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (0, _i(2, 0, 2)), name="repeated")
    yield SampleInput(x, (1, _i(3, 1)))
    yield SampleInput(x, (-1, _i()), name="empty index")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (1, _i(2, 2, 0, 1)))
    yield SampleInput(x, (0, np.array(1)), name="0-d index")


def _index_add_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (0, _i(2, 0, 2), arr(rng, (3, 4), dtype)))
    yield SampleInput(arr(rng, (3, 4), dtype), (1, _i(3, 1), arr(rng, (3, 2), dtype)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (-1, _i(0, 0, 3), arr(rng, (2, 3, 3), dtype)),
                      {"alpha": 2})


def _index_copy_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (0, _i(2, 0), arr(rng, (2, 4), dtype)))
    yield SampleInput(arr(rng, (3, 4), dtype), (1, _i(3, 1, 0), arr(rng, (3, 3), dtype)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (-2, _i(1), arr(rng, (2, 1, 4), dtype)))


def _index_fill_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (0, _i(2, 0), 1))
    yield SampleInput(arr(rng, (3, 4), dtype), (1, _i(3, 1, 3), arr(rng, (), dtype)),
                      name="0-d tensor value, repeated index")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (-1, _i(-1), -2), name="negative index")


def _np_index_put(x, indices, values, accumulate=False):
    out = x.copy()
    if accumulate:
        np.add.at(out, tuple(indices), values)
    else:
        out[tuple(indices)] = values
    return out


def _index_put_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, ((_i(2, 0),), arr(rng, (2, 4), dtype)))
    yield SampleInput(x, ((_i(2, 0, 1), _i(3, 3, 0)), arr(rng, (3,), dtype)), name="points")
    yield SampleInput(x, ((_i(2, 0),), arr(rng, (4,), dtype)), name="broadcast value")
    yield SampleInput(x, ((_i(2, 0, 2, 2), _i(1, 1, 1, 0)), arr(rng, (4,), dtype), True),
                      name="accumulate repeated")
    yield SampleInput(x, ((arr(rng, (3, 4), np.bool_),), arr(rng, (), dtype)), name="mask")


# ---------------------------------------------------------------------------
# masks

def _np_masked_scatter(x, mask, src):
    x, mask = np.broadcast_arrays(x, mask)
    out = x.copy()
    out[mask] = src.reshape(-1)[:int(mask.sum())]
    return out


def _np_masked_select(x, mask):
    x, mask = np.broadcast_arrays(x, mask)
    return x[mask]


def _masked_fill_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), np.bool_), 2))
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (4,), np.bool_), arr(rng, (), dtype)),
                      name="broadcast mask, 0-d tensor value")
    yield SampleInput(arr(rng, (), dtype), (np.array(True), -1), name="0-d")


def _masked_fill_broadcast_samples(dtype, rng):
    yield SampleInput(arr(rng, (4,), dtype), (arr(rng, (3, 4), np.bool_), 2),
                      name="mask larger than input")


def _masked_scatter_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), np.bool_),
                                                arr(rng, (3, 4), dtype)))
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (4,), np.bool_), arr(rng, (20,), dtype)),
                      name="broadcast mask, long source")
    yield SampleInput(arr(rng, (3, 4), dtype), (np.zeros((3, 4), np.bool_),
                                                arr(rng, (2,), dtype)), name="empty mask")


def _masked_scatter_inplace_samples(dtype, rng):
    yield from _masked_scatter_samples(dtype, rng)
    yield SampleInput(arr(rng, (2, 4), dtype), (arr(rng, (2, 1), np.bool_),
                                                arr(rng, (2, 4), dtype)), name="mask broadcast")


def _masked_select_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), np.bool_),))
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (2, 1, 4), np.bool_),), name="broadcast")
    yield SampleInput(arr(rng, (), dtype), (np.array(True),), name="0-d")


# ---------------------------------------------------------------------------
# nonzero, take, put

def _nonzero_samples(dtype, rng):
    for shape in [(3, 4), (5,), (2, 3, 2), (), (0, 3)]:
        yield SampleInput(arr(rng, shape, dtype, -1, 2))


def _take_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (_i(0, 11, 5, 5),), name="repeated")
    yield SampleInput(x, (np.array([[-1, 2], [3, -12]]),), name="2-d, negative")
    yield SampleInput(arr(rng, (), dtype), (_i(0, 0),), name="0-d input")


def _take_along_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (rng.integers(0, 3, (2, 4)), 0))
    yield SampleInput(x, (rng.integers(0, 4, (3, 2)), -1))
    yield SampleInput(x, (rng.integers(0, 4, (1, 2)), 1), name="broadcast indices")
    yield SampleInput(x, (rng.integers(0, 12, (5,)),), name="dim=None")


def _np_take_along(x, idx, dim=None):
    if dim is None:
        return np.take(x.reshape(-1), idx.reshape(-1))
    return np.take_along_axis(x, idx, dim)


def _np_put(x, index, src, accumulate=False):
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index.reshape(-1), src.reshape(-1))
    else:
        flat[index.reshape(-1)] = src.reshape(-1)
    return out


def _put_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (_i(0, 11, -2), arr(rng, (3,), dtype)))
    yield SampleInput(x, (np.array([[1, 2], [3, 4]]), arr(rng, (4,), dtype)), name="2-d index")
    yield SampleInput(x, (_i(5, 5, 0), arr(rng, (3,), dtype), True), name="accumulate")


def _t(name):
    return lambda torch: getattr(torch, name)


def _cl(method):
    """``input.clone().method(*args)``: the in-place form, tested out of place."""
    return lambda x, *a, **k: getattr(x.clone(), method)(*a, **k)


def _tcl(method):
    return lambda torch: _cl(method)


def _scatter_reduce_ops():
    ops = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        ops.append(OpInfo(f"scatter_reduce_{reduce}", ember.scatter_reduce,
                          _scatter_reduce_samples(reduce), ref=_np_scatter_reduce, dtypes=_FI,
                          torch_op=_t("scatter_reduce"), method="scatter_reduce"))
    ops.append(OpInfo("scatter_reduce_", _cl("scatter_reduce_"), _scatter_reduce_samples("amax"),
                      ref=_np_scatter_reduce, torch_op=_tcl("scatter_reduce_")))
    return ops


OPS = [
    OpInfo("getitem_basic", _getitem, _basic_index_samples, ref=_getitem, dtypes=_ALL,
           torch_op=lambda torch: _getitem),
    OpInfo("getitem_advanced", _getitem, _advanced_index_samples, ref=_getitem, dtypes=_ALL,
           torch_op=lambda torch: _getitem),
    OpInfo("getitem_mask", _getitem, _mask_index_samples, ref=_getitem, dtypes=_ALL,
           torch_op=lambda torch: _getitem),
    OpInfo("setitem", _setitem, _setitem_samples, ref=_setitem, dtypes=_FI,
           torch_op=lambda torch: _setitem),
    OpInfo("gather", ember.gather, _gather_samples, ref=_np_gather, dtypes=_ALL,
           torch_op=_t("gather"), method="gather"),
    OpInfo("scatter", ember.scatter, _scatter_samples, ref=_np_scatter, dtypes=_ALL,
           torch_op=_t("scatter"), method="scatter"),
    OpInfo("scatter_value", ember.scatter, _scatter_value_samples, ref=_np_scatter,
           dtypes=_FI, torch_op=_t("scatter"), method="scatter"),
    OpInfo("scatter_reduce_add", lambda x, *a: ember.scatter(x, *a, reduce="add"),
           _scatter_add_samples, ref=lambda x, *a: _np_scatter(x, *a, reduce="add"),
           dtypes=_FI, torch_op=lambda torch: lambda x, *a: torch.scatter(x, *a, reduce="add"),
           differentiable=False),  # PyTorch has no derivative for it: see test_indexing.py
    OpInfo("scatter_", _cl("scatter_"), _scatter_samples, ref=_np_scatter,
           torch_op=_tcl("scatter_")),
    OpInfo("scatter_add", ember.scatter_add, _scatter_add_samples,
           ref=lambda x, *a: _np_scatter(x, *a, reduce="add"), dtypes=_FI,
           torch_op=_t("scatter_add"), method="scatter_add"),
    OpInfo("scatter_add_", _cl("scatter_add_"), _scatter_add_samples,
           ref=lambda x, *a: _np_scatter(x, *a, reduce="add"), torch_op=_tcl("scatter_add_")),
    *_scatter_reduce_ops(),
    OpInfo("index_select", ember.index_select, _index_select_samples, ref=_np_index_select,
           dtypes=_ALL, torch_op=_t("index_select"), method="index_select"),
    OpInfo("index_add", ember.index_add, _index_add_samples, ref=_np_index_add, dtypes=_FI,
           torch_op=_t("index_add"), method="index_add"),
    OpInfo("index_add_", _cl("index_add_"), _index_add_samples, ref=_np_index_add,
           torch_op=_tcl("index_add_")),
    OpInfo("index_copy", ember.index_copy, _index_copy_samples, ref=_np_index_copy,
           dtypes=_ALL, torch_op=_t("index_copy"), method="index_copy"),
    OpInfo("index_copy_", _cl("index_copy_"), _index_copy_samples, ref=_np_index_copy,
           torch_op=_tcl("index_copy_")),
    OpInfo("index_fill", ember.index_fill, _index_fill_samples, ref=_np_index_fill,
           dtypes=_FI, torch_op=_t("index_fill"), method="index_fill"),
    OpInfo("index_fill_", _cl("index_fill_"), _index_fill_samples, ref=_np_index_fill,
           torch_op=_tcl("index_fill_")),
    OpInfo("index_put", ember.index_put, _index_put_samples, ref=_np_index_put, dtypes=_FI,
           torch_op=_t("index_put"), method="index_put"),
    OpInfo("index_put_", _cl("index_put_"), _index_put_samples, ref=_np_index_put,
           torch_op=_tcl("index_put_")),
    OpInfo("masked_fill", ember.masked_fill, _masked_fill_samples,
           ref=lambda x, m, v: np.where(m, v, x).astype(x.dtype), dtypes=_ALL[:3],
           torch_op=_t("masked_fill"), method="masked_fill"),
    OpInfo("masked_fill_broadcast", ember.masked_fill, _masked_fill_broadcast_samples,
           ref=lambda x, m, v: np.where(m, v, x).astype(x.dtype), torch_op=_t("masked_fill")),
    OpInfo("masked_fill_", _cl("masked_fill_"), _masked_fill_samples,
           ref=lambda x, m, v: np.where(m, v, x).astype(x.dtype), torch_op=_tcl("masked_fill_")),
    OpInfo("masked_scatter", ember.masked_scatter, _masked_scatter_samples,
           ref=_np_masked_scatter, dtypes=_ALL, torch_op=_t("masked_scatter"),
           method="masked_scatter"),
    OpInfo("masked_scatter_", _cl("masked_scatter_"), _masked_scatter_inplace_samples,
           ref=_np_masked_scatter, torch_op=_tcl("masked_scatter_")),
    OpInfo("masked_select", ember.masked_select, _masked_select_samples, ref=_np_masked_select,
           dtypes=_ALL, torch_op=_t("masked_select"), method="masked_select"),
    OpInfo("nonzero", ember.nonzero, _nonzero_samples, ref=np.argwhere, dtypes=_ALL,
           differentiable=False, torch_op=_t("nonzero"), method="nonzero"),
    OpInfo("nonzero_as_tuple", lambda x: ember.nonzero(x, as_tuple=True), _nonzero_samples,
           ref=lambda x: np.nonzero(x.reshape(1) if x.ndim == 0 else x), dtypes=_ALL,
           differentiable=False, torch_op=lambda torch: lambda x: torch.nonzero(x, as_tuple=True)),
    OpInfo("argwhere", ember.argwhere, _nonzero_samples, ref=np.argwhere, dtypes=_ALL,
           differentiable=False, torch_op=_t("argwhere"), method="argwhere"),
    OpInfo("take", ember.take, _take_samples, ref=lambda x, i: np.take(x.reshape(-1), i),
           dtypes=_ALL, torch_op=_t("take"), method="take"),
    OpInfo("take_along_dim", ember.take_along_dim, _take_along_samples, ref=_np_take_along,
           dtypes=_ALL, torch_op=_t("take_along_dim"), method="take_along_dim"),
    OpInfo("put", ember.put, _put_samples, ref=_np_put, dtypes=_FI, torch_op=_t("put"),
           method="put"),
    OpInfo("put_", _cl("put_"), _put_samples, ref=_np_put, torch_op=_tcl("put_")),
]
