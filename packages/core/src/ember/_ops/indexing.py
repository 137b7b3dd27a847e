"""Indexing: ``t[index]``, ``t[index] = v``, masked_*, nonzero; the nodes that
gather and scatter by an index (gather, scatter, index_*, take and put are in ``scatter``).

NOTE [ Basic and advanced indexing ]
An index made of ints, slices, None and Ellipsis is *basic*: ``t[index]`` is a view
(:class:`~ember._ops.shape.BasicIndex`) and ``t[index] = v`` writes through that view,
so autograd sees an in-place op on a view (``CopySlices`` in the core). Integer
tensors, lists and arrays and bool masks make an index *advanced*: ``t[index]`` is a
copy (:class:`AdvancedIndex`) whose gradient is scattered back, summing repeated
indices, and ``t[index] = v`` is :class:`IndexPut`. Bool masks become integer indices
(their ``nonzero``) once, when the index is parsed, so every later step - forward,
backward and the scatter-add - sees integer arrays only. gather, scatter and the
index_* ops (scatter.py) reuse these nodes; gather and scatter work on flat positions.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ember._backend import backend_of
from ember._C._core import Node, apply_inplace, check_inplace_overlap, dispatched, is_grad_enabled
from ember._ops._util import TensorBase, apply, cpp_type_name, type_name, with_out, wrap, xp_of
from ember._ops.shape import (
    BasicIndex,
    BasicIndexBackward,
    broadcast_tensors,
    expanded_shape,
    make_view_of,
)

__all__ = ["masked_fill", "masked_scatter", "masked_select", "nonzero", "argwhere"]


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
        elif (isinstance(it, (TensorBase, np.ndarray, list, tuple, range))
              or hasattr(it, "__array__")):  # a range indexes as the list of its ints
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


def _torch_order(idx, ndim):
    """Where PyTorch's advanced-index dims differ from NumPy's, for an advanced ``idx``.

    NumPy counts an integer as one of the advanced indices, so that ``x[0, :, i]`` has
    them separated by a slice and their dims go first; PyTorch applies integers first
    (each removes its dim) and places the dims of the index arrays alone: in place if
    nothing but integers lies between them, first otherwise. Returns None where both agree,
    else ``(numpy_pos, torch_pos, basic)``: where each puts the block of advanced dims, and
    the number of dims the basic entries (slices, None, Ellipsis) give the result.
    """
    if not any(type(it) is int for it in idx):
        return None
    kinds = []
    consumed = 0
    for it in idx:
        t = type(it)
        if t is int:
            kinds.append("i")
            consumed += 1
        elif t is slice:
            kinds.append("s")
            consumed += 1
        elif it is None:
            kinds.append("s")
        elif it is Ellipsis:
            kinds.append("e")
        elif t is bool or it.dtype == bool:
            kinds.append("a")
        else:
            kinds.append("a")
            consumed += 1
    width = {"s": 1, "e": ndim - consumed, "i": 0, "a": 0}

    def place(adv):
        pos = [k for k, kind in enumerate(kinds) if kind in adv]
        if any(kinds[k] not in "ia" for k in range(pos[0], pos[-1] + 1)):
            return 0  # separated: the advanced dims go first
        return sum(width[kind] for kind in kinds[:pos[0]])

    n_pos, t_pos = place("ia"), place("a")
    if n_pos == t_pos:
        return None
    trailing = 0 if "e" in kinds else ndim - consumed  # dims no entry names
    return n_pos, t_pos, sum(width[kind] for kind in kinds) + trailing


def _reorder(a, order, to_torch=True):
    """``a``, indexed in NumPy's order, with its advanced dims moved to PyTorch's place
    (or back, with ``to_torch=False``); ``order`` is what :func:`_torch_order` gave."""
    n_pos, t_pos, basic = order
    nb = a.ndim - basic
    src, dst = list(range(n_pos, n_pos + nb)), list(range(t_pos, t_pos + nb))
    return xp_of(a).moveaxis(a, src, dst) if to_torch else xp_of(a).moveaxis(a, dst, src)


def _torch_target(xp, x, idx, v):
    """The value ``v`` of ``x[idx] = v`` (an advanced ``idx``) as an array NumPy's
    assignment puts where PyTorch's does: broadcast to PyTorch's result shape, then put
    in NumPy's order. ``v`` unchanged where both orders agree."""
    order = _torch_order(idx, x.ndim)
    if order is None or not hasattr(v, "shape"):
        return v
    target = _result_shape(x, idx)
    return _reorder(xp.broadcast_to(_squeeze_leading(v), target), order, to_torch=False)


def _result_shape(x, idx):
    """The shape of ``x[idx]`` in PyTorch's order."""
    order = _torch_order(idx, x.ndim)
    shape = x[idx].shape
    if order is None:
        return shape
    n_pos, t_pos, basic = order
    nb = len(shape) - basic
    rest = shape[:n_pos] + shape[n_pos + nb:]
    return rest[:t_pos] + shape[n_pos:n_pos + nb] + rest[t_pos:]


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
        order = _torch_order(idx, x.ndim)
        return x[idx] if order is None else _reorder(x[idx], order)

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
        order = _torch_order(idx, len(shape))
        return accumulate_at(out, idx, g if order is None else _reorder(g, order, False))

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
            v = _torch_target(xp_of(x), x, idx, _squeeze_leading(v))
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
            check_inplace_overlap(self._data[idx], (value,))
    if not (is_grad_enabled() and (self.requires_grad or is_t and value.requires_grad)):
        v = value._data if is_t else value
        try:
            if is_t and advanced:
                self._data[idx] = _torch_target(xp_of(self._data), self._data, idx,
                                                _squeeze_leading(v))
            else:
                self._data[idx] = _squeeze_leading(v) if is_t else v
        except ValueError:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast "
                f"to indexing result of shape {list(_result_shape(self._data, idx))}") from None
        self._bump_version()
        return
    if advanced:
        if is_t:
            target = _result_shape(self._data, idx)
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
# masks

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


def _check_mask(name, mask):
    if not isinstance(mask, TensorBase):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        if name == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(
            f"{name} only supports boolean masks, but got mask with dtype "
            f"{cpp_type_name(mask._data.dtype)}")


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
            f"{type_name(input._data.dtype)} and {type_name(source._data.dtype)}")
    return apply(MaskedScatter, input, mask, source)


def _masked_scatter_(self, mask, source):
    """In-place version of :func:`masked_scatter`."""
    _check_mask("masked_scatter_", mask)
    return apply_inplace(MaskedScatter, self, mask, source)


def masked_select(input, mask, *, out=None):
    """The entries of ``input`` where ``mask`` is True (both broadcast), as a 1-d tensor."""
    _check_mask("masked_select", mask)
    x, m = broadcast_tensors(input, mask)
    if m._data.ndim == 0:
        x, m = x.reshape(1), m.reshape(1)
    idx = xp_of(m._data).nonzero(m._data)
    return with_out(apply(AdvancedIndex, x, idx), out)


# ---------------------------------------------------------------------------
# nonzero

@dispatched
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
        return with_out(res, out)
    return res


def argwhere(input):
    """The indices of the non-zero entries of ``input``, one row per entry."""
    return nonzero(input)


METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "masked_fill": masked_fill,
    "masked_fill_": _masked_fill_, "masked_scatter": masked_scatter,
    "masked_scatter_": _masked_scatter_, "masked_select": masked_select, "nonzero": nonzero,
    "argwhere": argwhere,
}
