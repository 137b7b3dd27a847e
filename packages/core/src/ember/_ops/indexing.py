"""Indexing: ``t[index]``, ``t[index] = v``, gather/scatter, index_*, masked_*, take.

NOTE [ Basic and advanced indexing ]
An index made of ints, slices, None and Ellipsis is *basic*: ``t[index]`` is a view
(:class:`~ember._ops.shape.BasicIndex`) and ``t[index] = v`` writes through that view,
so autograd sees an in-place op on a view (``CopySlices`` in the core). Integer
tensors, lists and arrays and bool masks make an index *advanced*: ``t[index]`` is a
copy (:class:`AdvancedIndex`) whose gradient is scattered back, summing repeated
indices, and ``t[index] = v`` is :class:`IndexPut`. Bool masks become integer indices
(their ``nonzero``) once, when the index is parsed, so every later step - forward,
backward and the scatter-add - sees integer arrays only. gather, scatter and the
index_* ops reuse these nodes; gather and scatter work on flat positions.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ember._backend import backend_of
from ember._C._core import Node, apply_inplace, is_grad_enabled
from ember._ops._util import TensorBase, apply, wrap, wrap_dim, xp_of
from ember._ops.shape import (
    BasicIndex,
    BasicIndexBackward,
    broadcast_tensors,
    expand,
    expanded_shape,
    make_view_of,
    scalar_type_name,
)

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
    "index_copy", "index_fill", "index_put", "masked_fill", "masked_scatter",
    "masked_select", "nonzero", "argwhere", "take", "take_along_dim", "put",
]


class IndexOutOfBoundsError(IndexError, RuntimeError):
    """An index outside its dim. Both an IndexError and, as PyTorch raises for gather,
    scatter and index_add, a RuntimeError."""


def _check_bounds(idx, size, dim, allow_negative=True, exc=IndexError, prefix=""):
    """Raise ``exc`` naming the first bad entry of integer array ``idx`` and the size."""
    if idx.size == 0:
        return
    lo, hi = int(idx.min()), int(idx.max())
    if hi >= size or lo < (-size if allow_negative else 0):
        bad = hi if hi >= size else lo
        raise exc(f"{prefix}index {bad} is out of bounds for dimension {dim} with size {size}")


_C_TYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "float32": "float", "float64": "double",
                 "float16": "c10::Half", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def _type_name(t):
    return scalar_type_name(t._data.dtype)


def _int_index(name, index, kinds="iu", what="int32 or int64"):
    if not isinstance(index, TensorBase):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.kind not in kinds:
        raise RuntimeError(f"{name}(): Expected dtype {what} for index")
    return index._data


# ---------------------------------------------------------------------------
# parsing an index

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")


def _index_array(xp, item):
    """A tensor, array or (nested) list index as an integer or bool array on ``xp``."""
    if isinstance(item, TensorBase):
        arr = item._data
    else:
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
    kind = arr.dtype.kind
    if kind == "u" and arr.dtype.itemsize == 1:
        arr = arr.astype(bool)  # PyTorch's legacy byte masks
    elif kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return xp.asarray(arr)


def parse_index(x, index):
    """``index`` (anything ``Tensor.__getitem__`` takes) for the array ``x``.

    Returns ``(idx, advanced)``: the index tuple for the array library, with bool masks
    replaced by their nonzero indices and, for basic indexes, a trailing Ellipsis (so
    that the result is always an array, never a scalar); and whether it is advanced.
    Bounds and mask shapes are checked here, with PyTorch's messages.
    """
    if type(index) is not tuple:
        index = (index,)
    shape = x.shape
    ndim = len(shape)
    items = []
    advanced = ellipsis = False
    consumed = 0
    xp = None
    for it in index:
        t = type(it)
        if t is int:
            items.append(it)
            consumed += 1
        elif t is slice:
            if it.step is not None and operator.index(it.step) <= 0:
                raise ValueError("step must be greater than zero")
            items.append(it)
            consumed += 1
        elif it is None:
            items.append(None)
        elif it is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            items.append(it)
        elif t is bool or isinstance(it, np.bool_):
            items.append(bool(it))
            advanced = True
        elif isinstance(it, numbers.Integral):
            items.append(int(it))
            consumed += 1
        elif isinstance(it, TensorBase) and it._data.ndim == 0 and it._data.dtype.kind in "iu":
            items.append(int(it.item()))  # a 0-d integer tensor acts as an int (a view)
            consumed += 1
        elif isinstance(it, (TensorBase, np.ndarray, list, tuple)) or hasattr(it, "__array__"):
            if xp is None:
                xp = xp_of(x)
            arr = _index_array(xp, it)
            items.append(arr)
            advanced = True
            consumed += arr.ndim if arr.dtype == bool else 1
        elif isinstance(it, (str, bytes)):
            raise TypeError(f"invalid data type '{type(it).__name__}' in an index")
        else:
            raise IndexError(_BAD_INDEX.format(type(it).__name__))
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = []
    d = 0
    for it in items:
        t = type(it)
        if it is None or t is bool:
            out.append(it)
            continue
        if it is Ellipsis:
            d += ndim - consumed
        elif t is int:
            size = shape[d]
            if not -size <= it < size:
                raise IndexError(f"index {it} is out of bounds for dimension {d} with size {size}")
            d += 1
        elif t is slice:
            d += 1
        elif it.dtype == bool:
            k = it.ndim
            for j in range(k):
                if it.shape[j] != shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {list(it.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {d + j}")
            if k:
                out.extend(xp.nonzero(it))
                d += k
                continue
        else:
            _check_bounds(it, shape[d], d)
            d += 1
        out.append(it)
    if not advanced and not ellipsis:
        out.append(Ellipsis)
    return tuple(out), advanced


# ---------------------------------------------------------------------------
# the nodes: gather by an index tuple, scatter-add back, put values at an index

def _dim_pattern(idx):
    """``d`` if ``idx`` is ``(:, ..., :, array, [...])`` with a 1-d array at dim d."""
    d = 0
    for it in idx:
        if type(it) is slice and it == slice(None):
            d += 1
            continue
        break
    else:
        return None
    rest = idx[d + 1:]
    arr = idx[d]
    if hasattr(arr, "dtype") and arr.ndim == 1 and all(r is Ellipsis for r in rest):
        return d
    return None


def accumulate_at(out, idx, src):
    """``out[idx] += src`` in place, summing repeated indices."""
    d = _dim_pattern(idx)
    if d is not None and idx[d].size == 0:
        return out
    if d == 0 and out.ndim and out.size and getattr(src, "shape", None) == \
            (idx[0].shape[0],) + out.shape[1:] and out.flags.c_contiguous:
        kernel = backend_of(out).kernel("index_add_rows")
        kernel(out.reshape(out.shape[0], -1), idx[0], src.reshape(src.shape[0], -1))
        return out
    xp_of(out).add.at(out, idx, src)
    return out


def _linear_index(xp, idx, shape):
    """For an index of one integer array per dim (gather's kind), the flat positions
    it picks in a C-ordered array of ``shape``; None for any other index."""
    if len(idx) != len(shape) or len(idx) < 2 or \
            not all(hasattr(a, "dtype") and a.dtype.kind in "iu" for a in idx):
        return None
    return xp.ravel_multi_index(idx, shape, mode="wrap")  # bounds were checked: wraps negatives


class AdvancedIndex(Node):
    """``x[idx]`` for an advanced index tuple (a copy)."""

    def forward(self, x, idx):
        self.in_shape, self.idx = x.shape, idx
        d = _dim_pattern(idx)
        xp = xp_of(x)
        self.lin = None
        if d is not None:
            return xp.take(x, idx[d], axis=d)
        self.lin = _linear_index(xp, idx, x.shape)
        if self.lin is not None:
            return xp.take(x.reshape(-1), self.lin)
        return x[idx]

    def backward(self, g):
        if self.lin is not None:
            return apply(FlatAccumulate, g, self.in_shape, self.lin)
        return apply(IndexAccumulate, g, self.in_shape, self.idx)


class IndexAccumulate(Node):
    """Zeros of ``shape`` with ``g`` summed in at ``idx`` (repeated indices add up)."""

    def forward(self, g, shape, idx):
        self.idx = idx
        xp = xp_of(g)
        d = _dim_pattern(idx)
        if d:
            # Accumulate with the indexed dim first (the row kernel's layout), then move
            # it back: the result is a transposed view, which tensors allow.
            moved = (shape[d],) + shape[:d] + shape[d + 1:]
            out = xp.zeros(moved, dtype=g.dtype)
            accumulate_at(out, (idx[d],), xp.moveaxis(g, d, 0))
            return xp.moveaxis(out, 0, d)
        out = xp.zeros(shape, dtype=g.dtype)
        return accumulate_at(out, idx, g)

    def backward(self, gg):
        return apply(AdvancedIndex, gg, self.idx)


class FlatIndex(Node):
    """``x.reshape(-1)[lin]``: the entries at flat (C-order) positions ``lin``."""

    def forward(self, x, lin):
        self.in_shape, self.lin = x.shape, lin
        return xp_of(x).take(x.reshape(-1), lin)

    def backward(self, g):
        return apply(FlatAccumulate, g, self.in_shape, self.lin)


class FlatAccumulate(Node):
    """Zeros of ``shape`` with ``g`` summed in at flat positions ``lin``."""

    def forward(self, g, shape, lin):
        self.lin = lin
        out = xp_of(g).zeros(shape, dtype=g.dtype)
        accumulate_at(out.reshape(-1), (lin.reshape(-1),), g.reshape(-1))
        return out

    def backward(self, gg):
        return apply(FlatIndex, gg, self.lin)


def _squeeze_leading(a):
    """``a`` without its leading size-1 dims (they never change how it broadcasts)."""
    k = 0
    while k < a.ndim and a.shape[k] == 1:
        k += 1
    return a.reshape(a.shape[k:]) if k else a


def _strip_leading_ones(shape, ndim):
    k = 0
    while len(shape) - k > ndim and shape[k] == 1:
        k += 1
    return shape[k:]


def sum_to_value(g, shape):
    """The gradient ``g`` of a broadcast value summed back to the value's ``shape``
    (which may have more leading size-1 dims than ``g``)."""
    from ember._ops.reduction import sum_to

    core = _strip_leading_ones(tuple(shape), g._data.ndim)
    r = sum_to(g, core)
    return r.reshape(shape) if core != tuple(shape) else r


class IndexPut(Node):
    """``x`` with ``v`` written (or, with ``accumulate``, ``alpha * v`` added) at ``idx``."""

    def forward(self, x, idx, v, accumulate, alpha=1):
        self.idx, self.accumulate, self.alpha = idx, accumulate, alpha
        is_array = hasattr(v, "shape")
        self.v_shape = v.shape if is_array else None
        out = x.copy()
        if is_array:
            v = _squeeze_leading(v)
        if accumulate:
            accumulate_at(out, idx, v * alpha if alpha != 1 else v)
        else:
            out[idx] = v
        return out

    def backward(self, g):
        need = self.needs_input_grad
        gx = gv = None
        if need[0]:
            gx = g if self.accumulate else apply(IndexPut, g, self.idx, 0, False)
        if len(need) > 2 and need[2]:
            gv = apply(AdvancedIndex, g, self.idx)
            if self.alpha != 1:
                gv = gv * self.alpha
            gv = sum_to_value(gv, self.v_shape)
        return gx, None, gv


class Fill(Node):
    """An array shaped like ``dst`` holding ``src`` (a number or a broadcast array):
    what ``view[...] = src`` writes, for the in-place machinery."""

    def forward(self, dst, src):
        xp = xp_of(dst)
        if hasattr(src, "shape"):
            self.src_shape = src.shape
            return xp.broadcast_to(_squeeze_leading(src).astype(dst.dtype, copy=False),
                                   dst.shape)
        self.src_shape = None
        return xp.full(dst.shape, src, dtype=dst.dtype)

    def backward(self, g):
        if self.src_shape is None or not self.needs_input_grad[1]:
            return None, None
        return None, sum_to_value(g, self.src_shape)


# ---------------------------------------------------------------------------
# t[index] and t[index] = value

def _basic_view(t, idx):
    return make_view_of(apply(BasicIndex, t, idx), t, lambda b: _basic_view(b, idx))


def getitem(self, index):
    """``self[index]``: a view for basic indexes, a copy for advanced ones."""
    if type(index) is int:  # the common t[i]
        size = self._data.shape[0] if self._data.ndim else 0
        if self._data.ndim and -size <= index < size:
            return _basic_view(self, (index, Ellipsis))
    idx, advanced = parse_index(self._data, index)
    if advanced:
        return apply(AdvancedIndex, self, idx)
    return _basic_view(self, idx)


def _value_for(self, value):
    """A setitem value as a number or a tensor of ``self``'s dtype and device."""
    if isinstance(value, TensorBase):
        if type(value._data) is not type(self._data):
            if value._data.ndim == 0:
                return value.item()
            raise RuntimeError(
                f"expected all tensors to be on the same device, but got value on "
                f"{value.device} and self on {self.device}")
        if value._data.dtype != self._data.dtype:
            value = value.to(self._data.dtype)
        return value
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    from ember._ops.creation import tensor

    return tensor(value, dtype=self.dtype, device=self.device)


def _check_writable(arr):
    if not getattr(arr.flags, "writeable", True):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the "
            "operation.")


def _check_value_shape(vshape, target, type_name):
    expanded_shape(_strip_leading_ones(tuple(vshape), len(target)), tuple(target), type_name)


def setitem(self, index, value):
    """``self[index] = value``, broadcasting ``value``; recorded for autograd."""
    idx, advanced = parse_index(self._data, index)
    value = _value_for(self, value)
    is_t = isinstance(value, TensorBase)
    _check_writable(self._data)
    if not advanced:
        target = self._data[idx].shape
        if is_t:
            _check_value_shape(value._data.shape, target, value.type())
    if not (is_grad_enabled() and (self.requires_grad or is_t and value.requires_grad)):
        v = value._data if is_t else value
        try:
            self._data[idx] = _squeeze_leading(v) if is_t else v
        except ValueError:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast "
                f"to indexing result of shape {list(self._data[idx].shape)}") from None
        self._bump_version()
        return
    if advanced:
        if is_t:
            target = self._data[idx].shape
            try:
                np.broadcast_shapes(_strip_leading_ones(value._data.shape, len(target)), target)
            except ValueError:
                raise RuntimeError(
                    f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                    f"broadcast to indexing result of shape {list(target)}") from None
        apply_inplace(IndexPut, self, idx, value, False)
    else:
        apply_inplace(Fill, _basic_view(self, idx), value)


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
    from ember._ops.shape import _write_out

    d, lin, idx = _gather_setup("gather", input, dim, index)
    res = apply(FlatIndex, _as_1d(input), lin)
    if index._data.ndim == 0:
        res = res.reshape(())
    return _write_out(res, out)


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
    from ember._ops.shape import _write_out

    d, idx, tup = _dim_index("index_select", input, dim, index)
    _check_bounds(idx, _size(input, d), d, prefix="index_select(): ")
    res = apply(AdvancedIndex, _as_1d(input), tup)
    if input._data.ndim == 0:
        res = res.reshape(())
    return _write_out(res, out)


def _check_source(name, input, d, idx, source):
    if not isinstance(source, TensorBase):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}(): self ({_type_name(input)}) and source "
                           f"({_type_name(source)}) must have the same scalar type")
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
    from ember._ops.shape import _write_out

    tup, source = _index_add_args("index_add_", input, dim, index, source)
    res = _back_to(apply(IndexPut, _as_1d(input), tup, source, True, alpha), input)
    return _write_out(res, out)


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
    from ember._ops.shape import _write_out

    tup, source = _index_copy_args(input, dim, index, source)
    return _write_out(_back_to(apply(IndexPut, _as_1d(input), tup, source, False), input), out)


def _index_copy_(self, dim, index, source):
    """In-place version of :func:`index_copy`."""
    tup, source = _index_copy_args(self, dim, index, source)
    return _inplace_1d(IndexPut, self, tup, source, False)


def _fill_value(name, input, value):
    if isinstance(value, TensorBase):
        if value._data.ndim:
            raise RuntimeError(
                f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s).")
        return value.to(input._data.dtype) if value._data.dtype != input._data.dtype else value
    if isinstance(value, np.generic):
        return value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{name}(): argument 'value' must be Number or Tensor, not "
                        f"{type(value).__name__}")
    return value


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
            f"{_type_name(input)} for the destination and {_type_name(values)} for the source.")
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
# masks

def _check_mask(name, mask):
    if not isinstance(mask, TensorBase):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        if name == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(
            f"{name} only supports boolean masks, but got mask with dtype "
            f"{_C_TYPE_NAMES.get(mask._data.dtype.name, mask._data.dtype.name)}")


class MaskedFill(Node):
    def forward(self, x, mask, value):
        xp = xp_of(x)
        self.mask = mask
        if hasattr(value, "shape"):
            value = value.astype(x.dtype, copy=False)
        else:
            value = xp.asarray(value).astype(x.dtype)
        return xp.where(mask, value, x)

    def backward(self, g):
        need = self.needs_input_grad
        gx = apply(MaskedFill, g, self.mask, 0) if need[0] else None
        gv = None
        if len(need) > 2 and need[2]:
            gv = apply(MaskedFill, g, ~self.mask, 0).sum()
        return gx, None, gv


def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or 0-d tensor) where ``mask`` is True."""
    _check_mask("masked_fill_", mask)
    value = _fill_value("masked_fill_", input, value)
    return apply(MaskedFill, input, mask, value)


def _masked_fill_(self, mask, value):
    """In-place version of :func:`masked_fill`."""
    _check_mask("masked_fill_", mask)
    value = _fill_value("masked_fill_", self, value)
    return apply_inplace(MaskedFill, self, mask, value)


class MaskedScatter(Node):
    def forward(self, x, mask, src):
        xp = xp_of(x)
        shape = np.broadcast_shapes(x.shape, mask.shape)
        m = xp.broadcast_to(mask, shape)
        count = int(m.sum())
        if src.size < count:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        self.mask, self.src_shape, self.count = m, src.shape, count
        out = xp.broadcast_to(x, shape).copy()
        out[m] = src.reshape(-1)[:count]
        return out

    def backward(self, g):
        need = self.needs_input_grad
        gx = apply(MaskedFill, g, self.mask, 0) if need[0] else None
        gs = None
        if len(need) > 2 and need[2]:
            picked = apply(AdvancedIndex, g, xp_of(self.mask).nonzero(self.mask))
            n = int(np.prod(self.src_shape))
            gs = apply(BasicIndexBackward, picked, (n,), (slice(0, self.count),))
            gs = gs.reshape(self.src_shape)
        return gx, None, gs


def masked_scatter(input, mask, source):
    """``input`` with the entries of ``source``, in order, where ``mask`` is True."""
    _check_mask("masked_scatter_", mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"masked_scatter_: expected self and source to have same dtypes but got "
            f"{_type_name(input)} and {_type_name(source)}")
    return apply(MaskedScatter, input, mask, source)


def _masked_scatter_(self, mask, source):
    """In-place version of :func:`masked_scatter`."""
    _check_mask("masked_scatter_", mask)
    return apply_inplace(MaskedScatter, self, mask, source)


def masked_select(input, mask, *, out=None):
    """The entries of ``input`` where ``mask`` is True (both broadcast), as a 1-d tensor."""
    from ember._ops.shape import _write_out

    _check_mask("masked_select", mask)
    x, m = broadcast_tensors(input, mask)
    if m._data.ndim == 0:
        x, m = x.reshape(1), m.reshape(1)
    idx = xp_of(m._data).nonzero(m._data)
    return _write_out(apply(AdvancedIndex, x, idx), out)


# ---------------------------------------------------------------------------
# nonzero, take, put

def nonzero(input, *, out=None, as_tuple=False):
    """The indices of the non-zero entries of ``input``: an ``(n, input.dim())`` int64
    tensor, or with ``as_tuple=True`` one 1-d tensor per dim."""
    x = input._data
    xp = xp_of(x)
    if as_tuple:
        return tuple(wrap(i.astype(np.int64, copy=False))
                     for i in xp.nonzero(x.reshape(1) if x.ndim == 0 else x))
    res = wrap(xp.argwhere(x).astype(np.int64, copy=False))
    if out is not None:
        from ember._ops.shape import _write_out

        return _write_out(res, out)
    return res


def argwhere(input):
    """The indices of the non-zero entries of ``input``, one row per entry."""
    return nonzero(input)


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
            f"self.dtype = {_type_name(input)} and source.dtype = {_type_name(source)}")
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
    from ember._ops.shape import _write_out

    _int_index("take_along_dim", indices, "i", "int64")
    if dim is None:
        return _write_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    n, k = input._data.ndim, indices._data.ndim
    if n != k:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {n} dimensions for input, and {k} dimensions for indices")
    d = wrap_dim(dim, n)
    xs, ishape = list(input._data.shape), list(indices._data.shape)
    bx, bi = xs[:], ishape[:]
    bx[d] = bi[d] = 1
    common = list(np.broadcast_shapes(tuple(bx), tuple(bi)))
    x_shape, i_shape = common[:], common[:]
    x_shape[d], i_shape[d] = xs[d], ishape[d]
    return _write_out(gather(expand(input, x_shape), d, expand(indices, i_shape)), out)


METHODS = {
    "__getitem__": getitem, "__setitem__": setitem,
    "gather": gather, "scatter": scatter, "scatter_": _scatter_, "scatter_add": scatter_add,
    "scatter_add_": _scatter_add_, "scatter_reduce": scatter_reduce,
    "scatter_reduce_": _scatter_reduce_, "index_select": index_select, "index_add": index_add,
    "index_add_": _index_add_, "index_copy": index_copy, "index_copy_": _index_copy_,
    "index_fill": index_fill, "index_fill_": _index_fill_, "index_put": index_put,
    "index_put_": _index_put_, "masked_fill": masked_fill, "masked_fill_": _masked_fill_,
    "masked_scatter": masked_scatter, "masked_scatter_": _masked_scatter_,
    "masked_select": masked_select, "nonzero": nonzero, "argwhere": argwhere, "take": take,
    "take_along_dim": take_along_dim, "put": put, "put_": _put_,
}
