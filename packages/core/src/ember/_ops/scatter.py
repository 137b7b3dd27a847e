"""Gather and scatter by an index: gather, scatter, scatter_add, scatter_reduce, the
index_* ops (index_select, index_add, index_copy, index_fill, index_put), take, put and
take_along_dim.

They reuse the nodes of ``indexing`` (see NOTE [ Basic and advanced indexing ] there):
gather and scatter work on the flat positions they address, the index_* ops on an
index tuple with one integer array.
"""

from __future__ import annotations

import numpy as np

from ember._C._core import Node, apply_inplace
from ember._ops._util import TensorBase, apply, type_name, with_out, wrap, wrap_dim, xp_of
from ember._ops.indexing import (
    AdvancedIndex,
    FlatIndex,
    IndexOutOfBoundsError,
    IndexPut,
    _check_bounds,
    _fill_value,
    _int_index,
    accumulate_at,
    parse_index,
)
from ember._ops.shape import BasicIndexBackward, expand

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
    "index_copy", "index_fill", "index_put", "take", "take_along_dim", "put",
]


# ---------------------------------------------------------------------------
# gather and scatter

def _along(xp, index, dim, shape):
    """The flat positions, in a C-ordered array of ``shape``, of
    ``x[i, ..., index[i, ..., j, ...], ..., j]``: what gather reads and scatter writes."""
    n = index.ndim
    strides = [1] * n
    for k in range(n - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    lin = index.astype(np.int64) * strides[dim] if strides[dim] != 1 else \
        index.astype(np.int64, copy=True)
    for k in range(n):
        if k != dim and index.shape[k] > 1:
            lin += (xp.arange(index.shape[k], dtype=np.int64) * strides[k]).reshape(
                (-1,) + (1,) * (n - k - 1))
    return lin


def _check_gather_shapes(name, input, d, index, src=None):
    n = max(input._data.ndim, 1)
    what = "input" if name == "gather" else "self"
    if max(index.ndim, 1) != n:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {what} tensor")
    if src is not None and max(src._data.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape = index.shape if index.ndim else (1,)
    xshape = input._data.shape if input._data.ndim else (1,)
    sshape = None if src is None else (src._data.shape if src._data.ndim else (1,))
    for k in range(n):
        bad_self = k != d and ishape[k] > xshape[k]
        bad_src = sshape is not None and ishape[k] > sshape[k]
        if bad_self or bad_src:
            if name == "gather":
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(ishape)} to be "
                    f"no larger than self {list(xshape)} apart from dimension {d}")
            msg = (f"Expected index {list(ishape)} to be no larger than self {list(xshape)} "
                   f"apart from dimension {d}")
            if sshape is not None:
                msg += f" and to be no larger size than src {list(sshape)}"
            raise RuntimeError(msg)
    _check_bounds(index, xshape[d], d, allow_negative=False, exc=IndexOutOfBoundsError)


def _gather_setup(name, input, dim, index, src=None):
    """(dim, flat positions, index array) for gather and scatter; 0-d as 1-d."""
    idx = _int_index(name, index, what="int32/int64" if name == "gather" else "int64")
    d = wrap_dim(dim, input._data.ndim)
    _check_gather_shapes(name, input, d, idx, src)
    if idx.ndim == 0:
        idx = idx.reshape(1)
    shape = input._data.shape if input._data.ndim else (1,)
    return d, _along(xp_of(input._data), idx, d, shape), idx


def _as_1d(t):
    return t.reshape(1) if t._data.ndim == 0 else t


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` (for ``dim=0``; likewise for other dims)."""
    d, lin, idx = _gather_setup("gather", input, dim, index)
    res = apply(FlatIndex, _as_1d(input), lin)
    if index._data.ndim == 0:
        res = res.reshape(())
    return with_out(res, out)


class Scatter(Node):
    """``x`` with ``src`` (the part of it shaped like the index, or a number) written,
    added or multiplied in at the flat gather positions ``lin``."""

    def forward(self, x, lin, src, reduce, sub):
        self.lin, self.reduce, self.sub = lin, reduce, sub
        self.src_shape = getattr(src, "shape", None)
        s = src[sub].reshape(-1) if self.src_shape is not None else src
        out = x.copy()
        flat, pos = out.reshape(-1), lin.reshape(-1)
        if reduce is None:
            flat[pos] = s
        elif reduce == "add" and self.src_shape is not None:
            accumulate_at(flat, (pos,), s)
        elif reduce == "add":
            xp_of(x).add.at(flat, pos, s)
        else:
            xp_of(x).multiply.at(flat, pos, s)
        return out

    def backward(self, g):
        need = self.needs_input_grad
        if self.reduce == "multiply":
            raise RuntimeError("scatter(): the gradient of reduce='multiply' is not implemented; "
                               "use scatter_reduce(reduce='prod')")
        gx = gsrc = None
        if need[0]:
            gx = g if self.reduce == "add" else apply(Scatter, g, self.lin, 0, None, None)
        if len(need) > 2 and need[2]:
            gsrc = _pad_to(apply(FlatIndex, g, self.lin), self.src_shape, self.sub)
        return gx, None, gsrc


def _pad_to(g, shape, sub):
    """``g`` (shaped like ``x[sub]``) placed in zeros of ``shape``."""
    if tuple(g._data.shape) == tuple(shape):
        return g
    return apply(BasicIndexBackward, g, tuple(shape), sub)


def _scatter_args(name, input, dim, index, src, value, reduce, reduces=(None, "add",
                                                                          "multiply")):
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{name}() missing required argument 'src' or 'value'")
    is_t = isinstance(src, TensorBase)
    if reduce not in reduces:
        raise RuntimeError("reduce argument must be either add or multiply.")
    d, lin, idx = _gather_setup(name.rstrip("_"), input, dim, index, src if is_t else None)
    if is_t:
        if src._data.dtype != input._data.dtype:
            raise RuntimeError(f"{name.rstrip('_')}(): Expected self.dtype to be equal to "
                               "src.dtype")
        src = _as_1d(src)
    sub = tuple(slice(0, n) for n in idx.shape) + (Ellipsis,)
    return lin, src, sub


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src`` (or ``value``) written at the positions ``index`` names
    along ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``; ``reduce='add'``
    or ``'multiply'`` combines instead of overwriting."""
    lin, src, sub = _scatter_args("scatter", input, dim, index, src, value, reduce)
    return _back_to(apply(Scatter, _as_1d(input), lin, src, reduce, sub), input)


def _scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In-place version of :func:`scatter`."""
    lin, src, sub = _scatter_args("scatter_", self, dim, index, src, value, reduce)
    return _inplace_1d(Scatter, self, lin, src, reduce, sub)


def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at the positions ``index`` names along ``dim``
    (repeated positions add up)."""
    lin, src, sub = _scatter_args("scatter_add", input, dim, index, src, None, "add")
    return _back_to(apply(Scatter, _as_1d(input), lin, src, "add", sub), input)


def _scatter_add_(self, dim, index, src):
    """In-place version of :func:`scatter_add`."""
    lin, src, sub = _scatter_args("scatter_add_", self, dim, index, src, None, "add")
    return _inplace_1d(Scatter, self, lin, src, "add", sub)


def _back_to(res, like):
    return res.reshape(()) if like._data.ndim == 0 else res


def _inplace_1d(op, self, *args):
    if self._data.ndim == 0:
        raise RuntimeError(f"{op.__name__.lower()}_ on a 0-dim tensor is not supported")
    return apply_inplace(op, self, *args)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduce(Node):
    """``x`` with ``src`` reduced into the flat positions ``lin`` (sum, prod, mean, amax,
    amin)."""

    saves_inputs = (0, 2)
    saves_output = True

    def forward(self, x, lin, src, reduce, include_self, sub):
        self.lin, self.reduce, self.include_self, self.sub = lin, reduce, include_self, sub
        self.src_shape = src.shape
        xp = xp_of(x)
        pos = lin.reshape(-1)
        s = src[sub].reshape(-1)
        out = x.copy()
        flat = out.reshape(-1)
        cnt = xp.zeros(x.shape, dtype=np.int64)
        xp.add.at(cnt.reshape(-1), pos, 1)
        self.cnt = cnt
        if not include_self:
            out[cnt > 0] = _identity(reduce, x.dtype)
        ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum,
                 "amin": xp.minimum}[reduce]
        ufunc.at(flat, pos, s)
        if reduce == "mean":
            n = xp.maximum(cnt + (1 if include_self else 0), 1)
            if out.dtype.kind in "fc":
                out /= n.astype(out.dtype)
            else:
                out //= n.astype(out.dtype)
        return out

    def backward(self, g):
        x, src, out = self.saved_tensors
        lin, sub = self.lin, self.sub
        touched = self.cnt > 0
        inc = self.include_self

        def gather_(t):
            return apply(FlatIndex, t, lin)
        r = self.reduce
        if r == "sum":
            gx = g if inc else g.masked_fill(wrap(touched), 0)
            gs = gather_(g)
        elif r == "mean":
            n = wrap(xp_of(self.cnt).maximum(self.cnt + int(inc), 1).astype(g._data.dtype))
            gx = g / n if inc else g.masked_fill(wrap(touched), 0)
            gs = gather_(g / n)
        elif r == "prod":
            gx, gs = self._prod_grads(g, x, src, out)
        else:
            xd, sd, od = x._data, src._data[sub], out._data
            xp = xp_of(xd)
            x_eq = xd == od
            if not inc:
                x_eq &= ~touched
            s_eq = sd == xp.take(od.reshape(-1), lin)
            num = xp.ascontiguousarray(x_eq, dtype=g._data.dtype)  # written through a flat view
            xp.add.at(num.reshape(-1), lin.reshape(-1), s_eq.astype(num.dtype).reshape(-1))
            num = wrap(xp.maximum(num, 1))
            gx = g * wrap(x_eq.astype(g._data.dtype)) / num
            gs = gather_(g / num) * wrap(s_eq.astype(g._data.dtype))
        return gx, None, _pad_to(gs, self.src_shape, sub)

    def _prod_grads(self, g, x, src, out):
        lin, sub, inc = self.lin, self.sub, self.include_self
        pos = lin.reshape(-1)
        xd, sd = x._data, src._data[sub]
        xp = xp_of(xd)
        x_zero, s_zero = xd == 0, sd == 0
        # (arrays written through flat views are made C-contiguous)
        zeros = xp.ascontiguousarray(x_zero, dtype=np.int64) if inc else \
            xp.zeros(xd.shape, dtype=np.int64)
        xp.add.at(zeros.reshape(-1), pos, s_zero.astype(np.int64).reshape(-1))
        # the product of the non-zero entries, for positions holding a single zero
        prod_nz = xp.ascontiguousarray(xp.where(x_zero, 1, xd) if inc else
                                       xp.where(self.cnt > 0, 1, xd))
        xp.multiply.at(prod_nz.reshape(-1), pos, xp.where(s_zero, 1, sd).reshape(-1))
        one_zero = zeros == 1
        g_out = g * out
        if inc:
            gx = (g_out / wrap(xp.where(x_zero, 1, xd))).masked_fill(wrap(x_zero), 0) + \
                (g * wrap(prod_nz)).masked_fill(wrap(~(x_zero & one_zero)), 0)
        else:
            gx = g.masked_fill(wrap(self.cnt > 0), 0)
        g_nz = apply(FlatIndex, g_out, lin) / wrap(xp.where(s_zero, 1, sd))
        g_z = apply(FlatIndex, g * wrap(prod_nz), lin)
        one_zero_at = xp.take(one_zero.reshape(-1), lin)
        gs = g_nz.masked_fill(wrap(s_zero), 0) + g_z.masked_fill(wrap(~(s_zero & one_zero_at)), 0)
        return gx, gs


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max if dtype.kind in "iu" else True
    return -big if reduce == "amax" and dtype.kind != "b" else (big if reduce == "amin" else
                                                                 False)


def _scatter_reduce_args(name, input, dim, index, src, reduce):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch accepts both
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter_args(name, input, dim, index, src, None, None) + (reduce,)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with the entries of ``src`` reduced into the positions ``index`` names
    along ``dim``; ``reduce`` is 'sum', 'prod', 'mean', 'amax' or 'amin', and
    ``include_self=False`` leaves ``input``'s own values out where anything lands."""
    lin, src, sub, reduce = _scatter_reduce_args("scatter_reduce", input, dim, index, src,
                                                 reduce)
    return _back_to(apply(ScatterReduce, _as_1d(input), lin, src, reduce, include_self, sub),
                    input)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place version of :func:`scatter_reduce`."""
    lin, src, sub, reduce = _scatter_reduce_args("scatter_reduce_", self, dim, index, src,
                                                 reduce)
    return _inplace_1d(ScatterReduce, self, lin, src, reduce, include_self, sub)


# ---------------------------------------------------------------------------
# index_select and the index_* family

def _dim_index(name, input, dim, index, kinds="iu", what="int32 or int64"):
    """(dim, 1-d index array, index tuple for input) for the index_* ops."""
    idx = _int_index(name, index, kinds, what)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    d = wrap_dim(dim, input._data.ndim)
    return d, idx, (slice(None),) * d + (idx, Ellipsis)


def _size(input, d):
    return input._data.shape[d] if input._data.ndim else 1


def index_select(input, dim, index, *, out=None):
    """The entries of ``input`` at ``index`` (a 1-d integer tensor) along ``dim``."""
    d, idx, tup = _dim_index("index_select", input, dim, index)
    # no negative indices here, as in PyTorch (unlike t[index], take and index_fill)
    _check_bounds(idx, _size(input, d), d, allow_negative=False, prefix="index_select(): ")
    res = apply(AdvancedIndex, _as_1d(input), tup)
    if input._data.ndim == 0:
        res = res.reshape(())
    return with_out(res, out)


def _check_source(name, input, d, idx, source):
    if not isinstance(source, TensorBase):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}(): self ({type_name(input._data.dtype)}) and source "
                           f"({type_name(source._data.dtype)}) must have the same scalar type")
    n = max(input._data.ndim, 1)
    sshape = source._data.shape if source._data.ndim else (1,)
    xshape = input._data.shape if input._data.ndim else (1,)
    if idx.shape[0] != (sshape[d] if len(sshape) > d else 1):
        exc = IndexError if name == "index_copy_" else RuntimeError
        raise exc(f"{name}(): Number of indices ({idx.shape[0]}) should be equal to "
                  f"source.size(dim) ({sshape[d] if len(sshape) > d else 1})")
    if len(sshape) != n or any(sshape[k] != xshape[k] for k in range(n) if k != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(xshape)} source.shape = {list(sshape)}")


def _index_add_args(name, input, dim, index, source):
    d, idx, tup = _dim_index(name, input, dim, index)
    _check_source(name, input, d, idx, source)
    _check_bounds(idx, _size(input, d), d, allow_negative=False, exc=IndexOutOfBoundsError)
    return tup, _as_1d(source)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated
    indices add up)."""
    tup, source = _index_add_args("index_add_", input, dim, index, source)
    res = _back_to(apply(IndexPut, _as_1d(input), tup, source, True, alpha), input)
    return with_out(res, out)


def _index_add_(self, dim, index, source, *, alpha=1):
    """In-place version of :func:`index_add`."""
    tup, source = _index_add_args("index_add_", self, dim, index, source)
    return _inplace_1d(IndexPut, self, tup, source, True, alpha)


def _index_copy_args(input, dim, index, source):
    d, idx, tup = _dim_index("index_copy_", input, dim, index, "i", "int64")
    _check_source("index_copy_", input, d, idx, source)
    _check_bounds(idx, _size(input, d), d, allow_negative=False, prefix="index_copy_(): ")
    return tup, _as_1d(source)


def index_copy(input, dim, index, source, *, out=None):
    """``input`` with the slices of ``source`` copied to ``index`` along ``dim``."""
    tup, source = _index_copy_args(input, dim, index, source)
    return with_out(_back_to(apply(IndexPut, _as_1d(input), tup, source, False), input), out)


def _index_copy_(self, dim, index, source):
    """In-place version of :func:`index_copy`."""
    tup, source = _index_copy_args(self, dim, index, source)
    return _inplace_1d(IndexPut, self, tup, source, False)


def _index_fill_args(input, dim, index, value):
    if isinstance(index, TensorBase) and index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d, idx, _ = _dim_index("index_fill_", input, dim, index)
    _check_bounds(idx, _size(input, d), d)
    # each position once: a value's gradient counts a repeated index once
    idx = xp_of(idx).unique(idx)
    return (slice(None),) * d + (idx, Ellipsis), _fill_value("index_fill_", input, value)


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value``."""
    tup, value = _index_fill_args(input, dim, index, value)
    return _back_to(apply(IndexPut, _as_1d(input), tup, value, False), input)


def _index_fill_(self, dim, index, value):
    """In-place version of :func:`index_fill`."""
    tup, value = _index_fill_args(self, dim, index, value)
    return _inplace_1d(IndexPut, self, tup, value, False)


def _index_put_args(input, indices, values):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    for i, t in enumerate(indices):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not isinstance(values, TensorBase):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{type_name(input._data.dtype)} for the destination and "
            f"{type_name(values._data.dtype)} for the source.")
    idx, _ = parse_index(input._data, tuple(indices) or (Ellipsis,))
    # 0-d integer tensors parse as ints; index_put treats every index as advanced
    idx = tuple(xp_of(input._data).asarray(i) if type(i) is int else i for i in idx)
    return idx


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` put at ``input[indices]`` (added up with
    ``accumulate=True``)."""
    idx = _index_put_args(input, indices, values)
    return apply(IndexPut, input, idx, values, bool(accumulate))


def _index_put_(self, indices, values, accumulate=False):
    """In-place version of :func:`index_put`."""
    idx = _index_put_args(self, indices, values)
    return apply_inplace(IndexPut, self, idx, values, bool(accumulate))


# ---------------------------------------------------------------------------
# take, put, take_along_dim

def _flat_index(name, input, index):
    idx = _int_index(name, index, "i", "int64")
    n = input._data.size
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if hi >= n or lo < -n:
            raise IndexError(f"out of range: tried to access index {hi if hi >= n else lo} on "
                             f"a tensor of {n} elements.")
    return idx


def take(input, index):
    """The entries of ``input`` (read as 1-d) at ``index``; the result has index's shape."""
    idx = _flat_index("take", input, index)
    return apply(AdvancedIndex, input.reshape(-1), (idx,))


class PutFlat(Node):
    """``x`` (read as 1-d) with ``src`` written or added at ``index``."""

    def forward(self, x, index, src, accumulate):
        self.index, self.accumulate = index, accumulate
        self.src_shape = getattr(src, "shape", None)
        out = x.copy()
        flat = out.reshape(-1)
        s = src.reshape(-1) if self.src_shape is not None else src
        if accumulate:
            xp_of(x).add.at(flat, index.reshape(-1), s)
        else:
            flat[index.reshape(-1)] = s
        return out

    def backward(self, g):
        need = self.needs_input_grad
        gx = gs = None
        if need[0]:
            gx = g if self.accumulate else apply(PutFlat, g, self.index, 0, False)
        if len(need) > 2 and need[2]:
            gs = apply(AdvancedIndex, g.reshape(-1), (self.index.reshape(-1),))
            gs = gs.reshape(self.src_shape)
        return gx, None, gs


def _put_args(input, index, source):
    idx = _flat_index("put_", input, index)
    if source._data.size != idx.size:
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source._data.size}, index.numel() = {idx.size}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {type_name(input._data.dtype)} and source.dtype = "
            f"{type_name(source._data.dtype)}")
    return idx


def put(input, index, source, accumulate=False):
    """``input`` (read as 1-d) with ``source`` written (or added) at ``index``."""
    return apply(PutFlat, input, _put_args(input, index, source), source, bool(accumulate))


def _put_(self, index, source, accumulate=False):
    """In-place version of :func:`put`."""
    return apply_inplace(PutFlat, self, _put_args(self, index, source), source,
                         bool(accumulate))


def take_along_dim(input, indices, dim=None, *, out=None):
    """The entries of ``input`` at ``indices`` along ``dim`` (both broadcast apart from
    ``dim``); with ``dim=None`` both are read as 1-d."""
    _int_index("take_along_dim", indices, "i", "int64")
    if dim is None:
        return with_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    n, k = input._data.ndim, indices._data.ndim
    if n != k:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {n} dimensions for input, and {k} dimensions for indices")
    d = wrap_dim(dim, n)
    # along a dim PyTorch counts a negative index from the end (gather does not)
    _check_bounds(indices._data, input._data.shape[d] if n else 1, d,
                  exc=IndexOutOfBoundsError)
    if indices._data.size and int(indices._data.min()) < 0:
        indices = indices.remainder(input._data.shape[d] if n else 1)
    xs, ishape = list(input._data.shape), list(indices._data.shape)
    bx, bi = xs[:], ishape[:]
    bx[d] = bi[d] = 1
    common = list(np.broadcast_shapes(tuple(bx), tuple(bi)))
    x_shape, i_shape = common[:], common[:]
    x_shape[d], i_shape[d] = xs[d], ishape[d]
    return with_out(gather(expand(input, x_shape), d, expand(indices, i_shape)), out)


METHODS = {
    "gather": gather, "scatter": scatter, "scatter_": _scatter_, "scatter_add": scatter_add,
    "scatter_add_": _scatter_add_, "scatter_reduce": scatter_reduce,
    "scatter_reduce_": _scatter_reduce_, "index_select": index_select, "index_add": index_add,
    "index_add_": _index_add_, "index_copy": index_copy, "index_copy_": _index_copy_,
    "index_fill": index_fill, "index_fill_": _index_fill_, "index_put": index_put,
    "index_put_": _index_put_, "take": take, "take_along_dim": take_along_dim, "put": put,
    "put_": _put_,
}
