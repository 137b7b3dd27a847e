"""Shape ops and views: view, reshape, permute, transpose, expand, squeeze, ...

Views share storage with their input: the output array is a NumPy/CuPy view and the
output tensor is registered as a view of the input (``make_view``), sharing its
version counter, so in-place changes are seen through both and autograd can replay
the view for in-place ops on it.
"""

from __future__ import annotations

import numpy as np

from ember._C._core import Node, make_view
from ember._ops._util import TensorBase, apply, wrap_dim

__all__ = ["reshape", "permute", "transpose", "swapaxes", "swapdims", "unsqueeze", "squeeze",
           "t", "unbind", "flatten", "narrow", "cat", "concat", "concatenate", "stack",
           "broadcast_to"]


def _record_view(out, input, view_fn):
    """``out`` as a view tensor of ``input`` if its array is a view of input's."""
    if out._data.base is None:
        return out
    return make_view_of(out, input, view_fn)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


class Reshape(Node):
    def forward(self, x, shape):
        self.in_shape = x.shape
        return x.reshape(shape)

    def backward(self, g):
        return g.reshape(self.in_shape)


class View(Reshape):
    def forward(self, x, shape):
        self.in_shape = x.shape
        out = x.view()
        try:
            out.shape = shape  # raises instead of copying when a view is impossible
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.") from None
        return out


def reshape(input, *shape):
    """``input`` with a new shape: a view when possible, else a copy."""
    shape = _infer_shape(_shape_args(shape), input._data.size)
    out = apply(Reshape, input, shape)
    return _record_view(out, input, lambda x: x.reshape(shape))


def view(input, *shape):
    """A view of ``input`` with a new shape (error if the strides do not allow one)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return input.to(shape[0])  # view(dtype) - only same-size dtypes in PyTorch
    shape = _infer_shape(_shape_args(shape), input._data.size)
    out = apply(View, input, shape)
    return make_view_of(out, input, lambda x: x.view(shape))


def make_view_of(out, input, view_fn):
    v = make_view(input, out._data, view_fn)
    v._grad_fn = out._grad_fn
    v._output_nr = out._output_nr
    return v


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


class Permute(Node):
    def forward(self, x, dims):
        self.dims = dims
        return x.transpose(dims)

    def backward(self, g):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return g.permute(*inv)


def permute(input, *dims):
    """A view of ``input`` with its dims reordered."""
    dims = _shape_args(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match "
            f"the length of the desired ordering of dimensions i.e. input.dim() = {n} is not "
            f"equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = apply(Permute, input, dims)
    return make_view_of(out, input, lambda x: x.permute(*dims))


def transpose(input, dim0, dim1):
    """A view of ``input`` with dims ``dim0`` and ``dim1`` swapped."""
    n = input._data.ndim
    if n == 0:
        return input.view(())
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(input, *dims)


swapaxes = swapdims = transpose


def t(input):
    """Transpose of a tensor of at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return transpose(input, 0, 1) if input._data.ndim == 2 else view(input, input.shape)


class Expand(Node):
    def forward(self, x, shape):
        self.in_shape = x.shape
        return np.broadcast_to(x, shape) if type(x) is np.ndarray else \
            __import__("cupy").broadcast_to(x, shape)

    def backward(self, g):
        from ember._ops.reduction import sum_to

        return sum_to(g, self.in_shape)


def expand(input, *sizes):
    """A broadcast view of ``input`` with ``sizes`` (-1 keeps a dim's size)."""
    sizes = _shape_args(sizes)
    n = input._data.ndim
    if len(sizes) < n:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={list(sizes)}): the number "
            f"of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({n})")
    lead = len(sizes) - n
    shape = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            shape.append(s)
            continue
        cur = input._data.shape[i - lead]
        if s == -1:
            shape.append(cur)
        elif cur == 1 or cur == s:
            shape.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(input.shape)}")
    shape = tuple(shape)
    if shape == tuple(input._data.shape):
        return make_view_of(apply(View, input, shape), input, lambda x: x.view(shape))
    out = apply(Expand, input, shape)
    return make_view_of(out, input, lambda x: x.expand(shape))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def unsqueeze(input, dim):
    """A view of ``input`` with a size-1 dim inserted at ``dim``."""
    n = input._data.ndim + 1
    d = wrap_dim(dim, n)
    shape = list(input._data.shape)
    shape.insert(d, 1)
    return view(input, tuple(shape))


def squeeze(input, dim=None):
    """A view of ``input`` without size-1 dims (only those in ``dim`` if given)."""
    shape = input._data.shape
    n = len(shape)
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if shape[d] == 1}
    return view(input, tuple(s for i, s in enumerate(shape) if i not in dims))


def flatten(input, start_dim=0, end_dim=-1):
    """``input`` with dims ``start_dim`` to ``end_dim`` merged into one."""
    n = input._data.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._data.shape
    mid = 1
    for d in shape[s:e + 1]:
        mid *= d
    return reshape(input, shape[:s] + (mid,) + shape[e + 1:])


concat = concatenate = None  # set below, after cat


class Unbind(Node):
    def forward(self, x, dim):
        self.dim, self.shape = dim, x.shape
        xp_take = [x[(slice(None),) * dim + (i,)] for i in range(x.shape[dim])]
        return tuple(xp_take)

    def backward(self, *grads):
        from ember._ops.creation import zeros

        parts = [g if g is not None else zeros(self.shape[:self.dim] + self.shape[self.dim + 1:],
                                                 dtype=_first(grads).dtype,
                                                 device=_first(grads).device)
                 for g in grads]
        return stack(parts, self.dim)


def _first(grads):
    return next(g for g in grads if g is not None)


def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, as a tuple of views."""
    d = wrap_dim(dim, input._data.ndim)
    outs = apply(Unbind, input, d)
    return tuple(make_view_of(o, input, (lambda i: lambda x: x.select(d, i))(i))
                 for i, o in enumerate(outs))


class Cat(Node):
    def forward(self, dim, *xs):
        self.dim = dim
        self.sizes = [x.shape[dim] for x in xs]
        xp = __import__("numpy") if type(xs[0]) is np.ndarray else __import__("cupy")
        return xp.concatenate(xs, axis=dim)

    def backward(self, g):
        grads, start = [None], 0
        for n in self.sizes:
            grads.append(g.narrow(self.dim, start, n))
            start += n
        return tuple(grads)


def _narrow(input, dim, start, length):
    """A view of ``length`` entries of ``input`` along ``dim`` from ``start``."""
    n = input._data.ndim
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    if start < 0:
        start += size
    if start < 0 or start + length > size or length < 0:
        raise IndexError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return apply(Narrow, input, idx, d, start, length)


class Narrow(Node):
    def forward(self, x, idx, d, start, length):
        self.shape, self.idx = x.shape, idx
        return x[idx]

    def backward(self, g):
        from ember._ops.creation import zeros

        out = zeros(self.shape, dtype=g.dtype, device=g.device)
        return _pad_into(out, self.idx, g)


def _pad_into(zeros_t, idx, g):
    """``zeros_t`` with ``g`` placed at ``idx`` (differentiable in ``g``)."""
    return apply(PlaceInto, g, zeros_t._data.shape, idx)


class PlaceInto(Node):
    def forward(self, g, shape, idx):
        self.idx = idx
        xp = __import__("numpy") if type(g) is np.ndarray else __import__("cupy")
        out = xp.zeros(shape, dtype=g.dtype)
        out[idx] = g
        return out

    def backward(self, gg):
        return apply(Narrow, gg, self.idx, 0, 0, 0)


def narrow(input, dim, start, length):
    out = _narrow(input, dim, start, length)
    d = wrap_dim(dim, input._data.ndim)
    return make_view_of(out, input, lambda x: x.narrow(d, start, length))


def cat(tensors, dim=0, *, out=None):
    """The tensors joined along an existing dim ``dim``."""
    tensors = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)] or \
        list(tensors)[:1]
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    from ember._ops._util import promote_all

    tensors = promote_all(tensors)
    ref = tensors[0]
    d = wrap_dim(dim, ref._data.ndim)
    for i, x in enumerate(tensors):
        if x._data.ndim != ref._data.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref._data.ndim} and "
                f"{x._data.ndim}")
        for k in range(ref._data.ndim):
            if k != d and x._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._data.shape[k]} but got size {x._data.shape[k]} for tensor number "
                    f"{i} in the list.")
    return apply(Cat, d, *tensors)


def stack(tensors, dim=0, *, out=None):
    """The tensors (all of one shape) joined along a new dim ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(x._data.shape)} at entry {i}")
    d = wrap_dim(dim, len(shape) + 1)
    return cat([unsqueeze(x, d) for x in tensors], d)


METHODS = {"narrow": narrow,
    "reshape": reshape, "view": view, "view_as": view_as, "reshape_as": reshape_as,
    "permute": permute, "transpose": transpose, "swapaxes": transpose, "swapdims": transpose,
    "t": t, "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to,
    "unsqueeze": unsqueeze, "squeeze": squeeze, "flatten": flatten, "unbind": unbind,
}
concat = concatenate = cat
_ = TensorBase
