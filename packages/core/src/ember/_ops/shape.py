"""Shape ops and views: view, reshape, permute, expand, narrow, flip, diagonal, tril, ...

Joining and splitting (cat, stack, split, chunk, unbind, ...) are in ``join``.

NOTE [ Views ]
A view shares storage with its input: the output array is a NumPy/CuPy view of the
input's array and the output tensor is registered with :func:`make_view_of`, which
gives it the input's version counter and a ``view_fn`` that re-creates the same view
from a tensor shaped like the input. In-place changes are then seen through both, and
autograd can replay the view after an in-place op on it (``CopySlices`` in the core).
Ops that NumPy answers with a copy (``reshape`` of a non-contiguous tensor, ``flip``,
``repeat``, ``cat`` in ``join``, ...) return ordinary tensors. ``flip`` copies on purpose: NumPy's
reversed views have negative strides, which PyTorch tensors never have.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ember import _dtype
from ember._C._core import Node, apply_inplace, apply_view, make_view
from ember._ops._util import (
    TensorBase,
    apply,
    type_name,
    varargs_or_keyword,
    with_out,
    wrap_dim,
    xp_of,
)

__all__ = [
    "reshape", "view_as", "reshape_as", "flatten", "unflatten", "ravel", "squeeze",
    "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "t", "movedim", "moveaxis",
    "expand", "expand_as", "broadcast_to", "broadcast_tensors", "broadcast_shapes", "repeat",
    "tile", "narrow", "select", "flip", "fliplr", "flipud", "roll",
    "diagonal", "diag", "diag_embed", "tril", "triu", "atleast_1d", "atleast_2d", "atleast_3d",
    "as_strided",
]

NOT_OPS = ("broadcast_shapes",)  # public, but not an op: shapes in, a shape out


# ---------------------------------------------------------------------------
# helpers

def make_view_of(out, input, view_fn):
    """``out`` (whose array is a view of ``input``'s) as a view tensor of ``input``.

    The result shares ``input``'s version counter and keeps ``out``'s history;
    ``view_fn(t)`` re-creates the view from a tensor ``t`` shaped like ``input``.
    """
    v = make_view(input, out._data, view_fn)
    v._grad_fn = out._grad_fn
    v._output_nr = out._output_nr
    return v


def _view_op(op_cls, input, view_fn, *args):
    return apply_view(op_cls, input, view_fn, *args)


def _shape_args(shape, name="shape"):
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` as the tuple ``(2, 3)``."""
    if len(shape) == 1 and (isinstance(shape[0], (tuple, list)) or _is_size_tensor(shape[0])):
        shape = tuple(shape[0])
    for s in shape:
        if type(s) is not int:
            break
    else:
        return tuple(shape)
    out = []
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (numbers.Integral, TensorBase)):
            raise TypeError(f"{name} must be a sequence of ints, got {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _is_size_tensor(x):
    return isinstance(x, TensorBase) and x._data.ndim == 1


def _dims_tuple(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


def _unique_dims(dims, ndim):
    """``dims`` wrapped to non-negative; PyTorch's error for a repeated dim."""
    out = tuple(wrap_dim(d, ndim) for d in dims)
    seen = set()
    for d in out:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return out


def _zeros(xp, shape, dtype):
    return xp.zeros(shape, dtype=dtype)


# ---------------------------------------------------------------------------
# view, reshape and friends

def _infer_shape(shape, numel):
    """``shape`` with its -1 (if any) resolved for ``numel`` elements."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return shape
    shape = list(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
        else:
            known *= s
    if infer is not None:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[infer] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def _view_array(x, shape):
    """A view of array ``x`` with ``shape``, or None when its strides do not allow one."""
    try:
        return x.reshape(shape, copy=False)
    except ValueError:
        return None
    except TypeError:  # an array library without reshape(copy=)
        v = x.view()
        try:
            v.shape = shape
        except (AttributeError, ValueError):
            return None
        return v


class View(Node):
    def forward(self, x, shape):
        self.in_shape = x.shape
        out = _view_array(x, shape)
        if out is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.")
        return out

    def backward(self, g):
        return g.reshape(self.in_shape)


class Reshape(Node):
    """A reshape that had to copy (the view case is :class:`View`)."""

    def forward(self, x, shape):
        self.in_shape = x.shape
        return x.reshape(shape)

    def backward(self, g):
        return g.reshape(self.in_shape)


def _alias(input):
    """A view of ``input`` with its own shape (PyTorch's ``alias``)."""
    shape = tuple(input._data.shape)
    return _view_op(View, input, lambda x: x.view(shape), shape)


def view(input, *shape, size=None):
    """A view of ``input`` with the given shape (-1 infers one dim); an error when the
    strides do not allow a view. ``view(dtype)`` reinterprets the bits as ``dtype``."""
    shape = varargs_or_keyword("view", shape, size, "size")
    if len(shape) == 1 and _is_dtype(shape[0]):
        return _view_dtype(input, _dtype.as_dtype(shape[0]))
    shape = _infer_shape(_shape_args(shape), input._data.size)
    return _view_op(View, input, lambda x: x.view(shape), shape)


def _is_dtype(x):
    return isinstance(x, (_dtype.dtype, np.dtype)) or (isinstance(x, type) and
                                                         issubclass(x, np.generic))


class ViewDtype(Node):
    differentiable = False

    def forward(self, x, np_dtype):
        return x.view(np_dtype)


def _view_dtype(input, d):
    np_dt = d.numpy
    x = input._data
    if np_dt == x.dtype:
        return _alias(input)
    src, dst = x.dtype.itemsize, np_dt.itemsize
    names = (type_name(x.dtype), type_name(np_dt))
    if src != dst:
        if x.ndim == 0:
            raise RuntimeError(
                f"self.dim() cannot be 0 to view {names[0]} as {names[1]} (different element "
                "sizes)")
        stride = x.strides[-1] // src if x.shape[-1] > 1 else 1
        if stride != 1:
            raise RuntimeError(
                f"self.stride(-1) must be 1 to view {names[0]} as {names[1]} (different "
                f"element sizes), but got {stride}")
        if dst > src and (x.shape[-1] * src) % dst:
            raise RuntimeError(
                f"self.size(-1) must be divisible by {dst // src} to view {names[0]} as "
                f"{names[1]} (different element sizes), but got {x.shape[-1]}")
    return _view_op(ViewDtype, input, lambda t: t.view(d), np_dt)


def reshape(input, *args, shape=None):
    """``input`` with a new shape: a view when the strides allow one, else a copy."""
    shape = varargs_or_keyword("reshape", args, shape, "shape")
    shape = _infer_shape(_shape_args(shape), input._data.size)
    if _view_array(input._data, shape) is not None:
        return _view_op(View, input, lambda x: x.view(shape), shape)
    return apply(Reshape, input, shape)


def view_as(input, other):
    """``input.view(other.shape)``."""
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    """``input.reshape(other.shape)``."""
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """``input`` with dims ``start_dim`` to ``end_dim`` merged into one (a view when
    possible)."""
    n = input._data.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    """``input`` with dim ``dim`` split into ``sizes`` (one entry may be -1)."""
    sizes = _shape_args((sizes,))
    n = input._data.ndim
    d = wrap_dim(dim, n)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input._data.shape[d]
    if -1 in sizes:
        try:
            sizes = _infer_shape(sizes, size)
        except RuntimeError:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                f"{dim} ({size}) in the input tensor") from None
    elif math.prod(sizes) != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({size}) in the input tensor")
    shape = input._data.shape
    return view(input, shape[:d] + sizes + shape[d + 1:])


def ravel(input):
    """``input`` flattened to 1-d (a view when possible)."""
    return reshape(input, (-1,))


def squeeze(input, dim=None):
    """A view of ``input`` without its size-1 dims (only those in ``dim`` if given)."""
    shape = input._data.shape
    n = len(shape)
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {wrap_dim(d, n) for d in ((dim,) if isinstance(dim, numbers.Integral)
                                         else dim)}
        dims = {d for d in dims if n and shape[d] == 1}
    return view(input, tuple(s for i, s in enumerate(shape) if i not in dims))


def unsqueeze(input, dim):
    """A view of ``input`` with a size-1 dim inserted at ``dim``."""
    shape = input._data.shape
    d = wrap_dim(dim, len(shape) + 1)
    shape = shape[:d] + (1,) + shape[d:]
    return _view_op(View, input, lambda x: x.view(shape), shape)


def atleast_1d(*tensors):
    """Each input with at least one dim (0-d tensors become shape ``(1,)``)."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """Each input with at least two dims (a 1-d ``(n,)`` becomes ``(1, n)``)."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """Each input with at least three dims (``(n,)`` becomes ``(1, n, 1)`` and
    ``(m, n)`` becomes ``(m, n, 1)``)."""
    return _atleast(tensors, 3)


def _atleast(tensors, k):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast_one(t, k) for t in tensors[0])
    if len(tensors) == 1:
        return _atleast_one(tensors[0], k)
    return tuple(_atleast_one(t, k) for t in tensors)


def _atleast_one(t, k):
    shape = tuple(t._data.shape)
    n = len(shape)
    if n >= k:
        return t
    if k == 1 or n == 0:
        new = (1,) * k
    elif k == 2:
        new = (1,) + shape
    else:
        new = (1,) + shape + (1,) if n == 1 else shape + (1,)
    return view(t, new)


# ---------------------------------------------------------------------------
# permutations

class Permute(Node):
    def forward(self, x, dims):
        self.dims = dims
        return x.transpose(dims)

    def backward(self, g):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return g.permute(*inv)


def permute(input, *args, dims=None):
    """A view of ``input`` with its dims reordered."""
    dims = varargs_or_keyword("permute", args, dims, "dims")
    dims = _dims_tuple(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match "
            f"the length of the desired ordering of dimensions i.e. input.dim() = {n} is not "
            f"equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_op(Permute, input, lambda x: x.permute(*dims), dims)


def transpose(input, dim0, dim1):
    """A view of ``input`` with dims ``dim0`` and ``dim1`` swapped."""
    n = input._data.ndim
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    if n == 0 or d0 == d1:
        return _alias(input)
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    dims = tuple(dims)
    return _view_op(Permute, input, lambda x: x.permute(*dims), dims)


def swapaxes(input, axis0, axis1):
    """Alias for :func:`transpose`."""
    return transpose(input, axis0, axis1)


def swapdims(input, dim0, dim1):
    """Alias for :func:`transpose`."""
    return transpose(input, dim0, dim1)


def t(input):
    """The transpose of a tensor of at most 2 dims (``input`` itself for 0-d and 1-d)."""
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return transpose(input, 0, 1) if n == 2 else _alias(input)


def movedim(input, source, destination):
    """A view of ``input`` with the dims ``source`` moved to positions ``destination``."""
    n = input._data.ndim
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)")
    src = tuple(wrap_dim(d, n) for d in src)
    dst = tuple(wrap_dim(d, n) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if n == 0:
        return _alias(input)
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


# ---------------------------------------------------------------------------
# broadcasting

class Expand(Node):
    def forward(self, x, shape):
        self.in_shape = x.shape
        return xp_of(x).broadcast_to(x, shape)

    def backward(self, g):
        from ember._ops.reduction import sum_to

        return sum_to(g, self.in_shape)


def expand(input, *sizes, size=None):
    """A broadcast view of ``input`` with ``sizes`` (-1 keeps a dim's size).

    The expanded dims have stride 0: the view reads, it is not meant to be written.
    """
    sizes = _shape_args(varargs_or_keyword("expand", sizes, size, "size"), "size")
    shape = expanded_shape(tuple(input._data.shape), sizes, input.type())
    if shape == tuple(input._data.shape):
        return _alias(input)
    return _view_op(Expand, input, lambda x: x.expand(shape), shape)


def expanded_shape(shape, sizes, type_name="Tensor"):
    """The shape ``expand(*sizes)`` gives a tensor of ``shape``; PyTorch's errors."""
    n = len(shape)
    if len(sizes) < n:
        raise RuntimeError(
            f"expand({type_name}{{{list(shape)}}}, size={list(sizes)}): the number "
            f"of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({n})")
    lead = len(sizes) - n
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            out.append(cur)
        elif cur == 1 and s >= 0 or cur == s:
            out.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shape)}")
    return tuple(out)


def expand_as(input, other):
    """``input.expand(other.shape)``."""
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    """``input`` broadcast to ``shape`` (a view, as :meth:`Tensor.expand`)."""
    return expand(input, tuple(shape))


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (ints count as 1-d shapes)."""
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s):
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            j = ndim - len(s) + i
            if out[j] == 1 or out[j] == size:
                out[j] = size if out[j] == 1 else out[j]
            elif size != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at "
                    f"{i - len(s)}! Mismatching argument at index {shapes.index(s)} had "
                    f"{tuple(s)}; but expected shape should be broadcastable to {out}")
    from ember._tensor import Size

    return Size(out)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    ndim = max((t._data.ndim for t in tensors), default=0)
    shape = [1] * ndim
    for t in tensors:
        s = t._data.shape
        for i, size in enumerate(s):
            j = ndim - len(s) + i
            if shape[j] == 1:
                shape[j] = size
            elif size != 1 and size != shape[j]:
                raise RuntimeError(
                    f"The size of tensor a ({shape[j]}) must match the size of tensor b "
                    f"({size}) at non-singleton dimension {j}")
    return tuple(expand(t, tuple(shape)) for t in tensors)


class Repeat(Node):
    def forward(self, x, reps):
        self.in_shape, self.reps = x.shape, reps
        return xp_of(x).tile(x, reps)

    def backward(self, g):
        reps = self.reps
        in_full = (1,) * (len(reps) - len(self.in_shape)) + tuple(self.in_shape)
        if 0 in reps or 0 in in_full:
            return g.new_zeros(self.in_shape)
        inter = []
        for r, s in zip(reps, in_full, strict=True):
            inter += [r, s]
        return g.reshape(inter).sum(tuple(range(0, 2 * len(reps), 2))).reshape(self.in_shape)


def repeat(input, *sizes, repeats=None):
    """``input`` repeated ``sizes[i]`` times along each dim (a copy; ``sizes`` may add
    leading dims)."""
    sizes = _shape_args(varargs_or_keyword("repeat", sizes, repeats, "repeats"), "repeats")
    if len(sizes) < input._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    return apply(Repeat, input, sizes)


def tile(input, dims):
    """``input`` repeated along each dim; ``dims`` shorter than ``input.dim()`` is
    padded with leading ones."""
    dims = _shape_args((dims,), "dims")
    n = input._data.ndim
    if len(dims) < n:
        dims = (1,) * (n - len(dims)) + dims
    return repeat(input, dims)


# ---------------------------------------------------------------------------
# slicing: narrow, select

class BasicIndex(Node):
    """``x[idx]`` for an index of ints, slices, None and Ellipsis (a view)."""

    def forward(self, x, idx):
        self.in_shape, self.idx = x.shape, idx
        return x[idx]

    def backward(self, g):
        return apply(BasicIndexBackward, g, self.in_shape, self.idx)


class BasicIndexBackward(Node):
    """Zeros of ``shape`` with ``g`` written at ``idx``."""

    def forward(self, g, shape, idx):
        self.idx = idx
        out = _zeros(xp_of(g), shape, g.dtype)
        out[idx] = g
        return out

    def backward(self, gg):
        return apply(BasicIndex, gg, self.idx)


def _dim_slice(d, s):
    return (slice(None),) * d + (s, Ellipsis)


def narrow(input, dim, start, length):
    """A view of ``length`` entries of ``input`` along ``dim`` from ``start``."""
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    start, length = int(start), int(length)
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got "
            f"{start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _view_op(BasicIndex, input, lambda x: x.narrow(d, start, length),
                    _dim_slice(d, slice(start, start + length)))


def select(input, dim, index):
    """A view of ``input`` at ``index`` along ``dim``, without that dim."""
    n = input._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
            f"dimension {d}")
    if index < 0:
        index += size
    return _view_op(BasicIndex, input, lambda x: x.select(d, index), _dim_slice(d, index))


# ---------------------------------------------------------------------------
# reordering copies: flip, roll

class Flip(Node):
    def forward(self, x, dims):
        self.dims = dims
        return xp_of(x).flip(x, axis=dims).copy() if dims else x.copy()

    def backward(self, g):
        return g.flip(self.dims)


def flip(input, *args, dims=None):
    """``input`` with the order of entries reversed along ``dims`` (a copy)."""
    dims = _unique_dims(_dims_tuple(varargs_or_keyword("flip", args, dims, "dims")),
                        input._data.ndim)
    return apply(Flip, input, dims if input._data.ndim else ())


def fliplr(input):
    """``input`` flipped left-right (dim 1); at least 2-d."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    """``input`` flipped up-down (dim 0); at least 1-d."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


class Roll(Node):
    def forward(self, x, shifts, dims):
        self.shifts, self.dims = shifts, dims
        return xp_of(x).roll(x, shifts, axis=dims)

    def backward(self, g):
        neg = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return apply(Roll, g, neg, self.dims)


def roll(input, shifts, dims=None):
    """``input`` rolled by ``shifts`` along ``dims`` (flattened and restored if None)."""
    shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return apply(Roll, input, shifts[0], None)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    n = input._data.ndim
    if n == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(wrap_dim(d, n) for d in dims)
    return apply(Roll, input, shifts, dims)


# ---------------------------------------------------------------------------
# diagonals and triangles

def _writable(a):
    """``a`` (a fresh view) made writable where the array library marks it read-only."""
    try:
        if not a.flags.writeable:
            a.flags.writeable = True
    except (AttributeError, ValueError, TypeError):
        pass
    return a


class Diagonal(Node):
    def forward(self, x, offset, d1, d2):
        self.in_shape, self.args = x.shape, (offset, d1, d2)
        return _writable(x.diagonal(offset, d1, d2))

    def backward(self, g):
        return apply(DiagEmbed, g, self.in_shape, *self.args)


class DiagEmbed(Node):
    """Zeros of ``shape`` with the last dim of ``g`` on the (offset, d1, d2) diagonal."""

    def forward(self, g, shape, offset, d1, d2):
        self.args = (offset, d1, d2)
        out = _zeros(xp_of(g), shape, g.dtype)
        _writable(out.diagonal(offset, d1, d2))[...] = g
        return out

    def backward(self, gg):
        return apply(Diagonal, gg, *self.args)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``input`` in the plane of ``dim1`` and ``dim2`` (moved
    to the last dim); ``offset`` > 0 is above the main diagonal."""
    n = input._data.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    return _view_op(Diagonal, input, lambda x: x.diagonal(offset, d1, d2), offset, d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (``dim1``, ``dim2``) diagonals at ``offset`` hold the last dim of
    ``input``, zeros elsewhere."""
    n = input._data.ndim + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(input._data.shape)
    m = (shape.pop() if shape else 1) + abs(int(offset))
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    x = input if input._data.ndim else input.reshape(1)
    return apply(DiagEmbed, x, tuple(shape), int(offset), d1, d2)


def diag(input, diagonal=0, *, out=None):
    """For a 1-d ``input`` the 2-d matrix with it on the ``diagonal``-th diagonal; for a
    2-d ``input`` a copy of that diagonal."""
    n = input._data.ndim
    if n == 1:
        m = input._data.shape[0] + abs(int(diagonal))
        return with_out(apply(DiagEmbed, input, (m, m), int(diagonal), 0, 1), out)
    if n == 2:
        return with_out(apply(Diagonal, input, int(diagonal), 0, 1).clone(), out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


class Tri(Node):
    def forward(self, x, upper, k):
        self.upper, self.k = upper, k
        xp = xp_of(x)
        return xp.triu(x, k) if upper else xp.tril(x, k)

    def backward(self, g):
        return apply(Tri, g, self.upper, self.k)


def _tri(name, input, diagonal, upper):
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(Tri, input, upper, int(diagonal))


def tril(input, diagonal=0, *, out=None):
    """The lower triangle of ``input`` (last two dims): entries above the
    ``diagonal``-th diagonal set to zero."""
    return with_out(_tri("tril", input, diagonal, False), out)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle of ``input`` (last two dims): entries below the
    ``diagonal``-th diagonal set to zero."""
    return with_out(_tri("triu", input, diagonal, True), out)


def _tril_(self, diagonal=0):
    """In-place version of :func:`tril`."""
    _tri("tril", self, diagonal, False)  # checks only
    return apply_inplace(Tri, self, False, int(diagonal))


def _triu_(self, diagonal=0):
    """In-place version of :func:`triu`."""
    _tri("triu", self, diagonal, True)
    return apply_inplace(Tri, self, True, int(diagonal))


# ---------------------------------------------------------------------------
# strided views: unfold, as_strided

class Unfold(Node):
    def forward(self, x, dim, size, step):
        self.in_shape, self.args = x.shape, (dim, size, step)
        nwin = (x.shape[dim] - size) // step + 1
        shape = x.shape[:dim] + (nwin,) + x.shape[dim + 1:] + (size,)
        st = x.strides
        strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
        return strided_view(x, shape, strides)

    def backward(self, g):
        return apply(UnfoldBackward, g, self.in_shape, *self.args)


class UnfoldBackward(Node):
    """The windows' gradients summed back into the input's shape."""

    def forward(self, g, shape, dim, size, step):
        self.args = (dim, size, step)
        out = _zeros(xp_of(g), shape, g.dtype)
        nwin = g.shape[dim]
        for k in range(size):  # one vectorized add per position in the window
            out[_dim_slice(dim, slice(k, k + (nwin - 1) * step + 1, step))] += g[..., k]
        return out

    def backward(self, gg):
        return apply(Unfold, gg, *self.args)


def unfold(input, dimension, size, step):
    """A view of all windows of ``size`` entries along ``dimension`` every ``step``
    entries; the windows' entries make a new last dim."""
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    x = input
    n = x._data.ndim
    d = wrap_dim(dimension, n)
    if n == 0:
        x = view(input, (1,))
    length = x._data.shape[d]
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    out = apply(Unfold, x, d, int(size), int(step))
    if n == 0:
        out = out.reshape(out._data.shape[1:])
        return make_view_of(out, input, lambda t: t.unfold(dimension, size, step))
    return make_view_of(out, input, lambda t: t.unfold(d, size, step))


def _storage_root(a):
    """The array owning ``a``'s memory and ``a``'s element offset into it."""
    root = a
    while _is_array_like(getattr(root, "base", None)):
        root = root.base
    return root, (_ptr(a) - _ptr(root)) // a.itemsize


def _is_array_like(x):
    return hasattr(x, "__array_interface__") or hasattr(x, "__cuda_array_interface__")


def _ptr(a):
    iface = getattr(a, "__array_interface__", None) or a.__cuda_array_interface__
    return iface["data"][0]


def strided_view(x, shape, strides, offset=None):
    """A view of the memory of array ``x`` with ``shape`` and ``strides`` (in bytes),
    starting at element ``offset`` of its storage (``x``'s own start if None).

    The view's ``base`` chain leads to the array that owns the memory, so that
    ``Tensor.storage_offset`` and later strided views still find it.
    """
    root, own = _storage_root(x)
    offset = own if offset is None else offset
    try:  # host memory: a view whose base is the owner itself
        return np.ndarray(shape, x.dtype, buffer=root, offset=offset * x.itemsize,
                          strides=strides)
    except (TypeError, ValueError):  # device memory or no buffer protocol
        flat = root.reshape(-1)
        start = flat[offset:] if offset < flat.size else flat[:0]
        return xp_of(x).lib.stride_tricks.as_strided(start, shape, strides)


def _positions(xp, shape, strides, offset):
    """The storage position of every element of a strided layout, as an int64 array."""
    pos = xp.full(shape, offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        pos += (xp.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


class AsStrided(Node):
    def forward(self, x, size, stride, offset):
        xp = xp_of(x)
        x_off = _storage_root(x)[1]
        item = x.itemsize
        self.in_pos = _positions(xp, x.shape, [s // item for s in x.strides], x_off)
        self.out_pos = _positions(xp, size, stride, offset)
        return strided_view(x, size, [s * item for s in stride], offset)

    def backward(self, g):
        return apply(Remap, g, self.out_pos, self.in_pos)


class Remap(Node):
    """``g`` scattered (summed) to storage positions ``src``, then read at ``dst``."""

    def forward(self, g, src, dst):
        self.src, self.dst = src, dst
        xp = xp_of(g)
        n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        buf = xp.zeros(n, dtype=g.dtype)
        xp.add.at(buf, src.reshape(-1), g.reshape(-1))
        return buf[dst]

    def backward(self, gg):
        return apply(Remap, gg, self.dst, self.src)


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements)
    and ``storage_offset`` (``input``'s own offset if None)."""
    size, stride = _shape_args((size,), "size"), _shape_args((stride,), "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    root, own = _storage_root(input._data)
    offset = own if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else \
        offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    item = input._data.itemsize
    if need > root.size or not root.flags.c_contiguous:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {need * item} are out of "
            f"bounds for storage of size {root.size * item}")
    return _view_op(AsStrided, input, lambda x: x.as_strided(size, stride, offset),
                    size, stride, offset)


METHODS = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "flatten": flatten, "unflatten": unflatten, "ravel": ravel, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "permute": permute, "transpose": transpose, "swapaxes": swapaxes,
    "swapdims": swapdims, "t": t, "movedim": movedim, "moveaxis": movedim,
    "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to,
    "repeat": repeat, "tile": tile, "narrow": narrow, "select": select, "flip": flip,
    "fliplr": fliplr, "flipud": flipud, "roll": roll,
    "diagonal": diagonal, "diag": diag, "diag_embed": diag_embed, "tril": tril,
    "triu": triu, "tril_": _tril_, "triu_": _triu_, "unfold": unfold, "as_strided": as_strided,
}
