"""Joining and splitting: cat, stack and their variants; split, chunk, tensor_split,
unbind and their variants.

The joining ops copy (NumPy concatenates into a new array); the pieces of the
splitting ops are views of their input (see NOTE [ Views ] in shape.py).
"""

from __future__ import annotations

import numbers

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, promote_all, type_name, with_out, wrap_dim, xp_of
from ember._ops.shape import (
    BasicIndexBackward,
    _dim_slice,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    make_view_of,
    unsqueeze,
)

__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "unbind", "split", "split_with_sizes", "chunk", "tensor_split", "hsplit",
    "vsplit", "dsplit",
]


# ---------------------------------------------------------------------------
# joining

class Cat(Node):
    def forward(self, dim, *xs):
        # PyTorch's legacy rule: 1-d empty tensors are skipped whatever the other shapes.
        self.dim = dim
        self.skipped = [x.shape == (0,) for x in xs]
        if all(self.skipped):
            self.skipped = [False] * len(xs)
        kept = [x for x, s in zip(xs, self.skipped, strict=True) if not s]
        self.sizes = [x.shape[dim] for x in kept]
        return xp_of(xs[0]).concatenate(kept, axis=dim)

    def backward(self, g):
        grads, start = [None], 0
        sizes = iter(self.sizes)
        for skipped in self.skipped:
            if skipped:
                grads.append(g.new_zeros((0,)))
                continue
            n = next(sizes)
            grads.append(g.narrow(self.dim, start, n))
            start += n
        return tuple(grads)


def cat(tensors, dim=0, *, out=None):
    """The tensors joined along their existing dim ``dim`` (types promoted)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if not isinstance(x, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(x).__name__}")
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    tensors = promote_all(tensors)
    only_empty = all(x._data.shape == (0,) for x in tensors)
    ref = next(x for x in tensors if only_empty or x._data.shape != (0,))
    d = wrap_dim(dim, ref._data.ndim)
    for i, x in enumerate(tensors):
        if x._data.shape == (0,) and not only_empty:
            continue
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
    return with_out(apply(Cat, d, *tensors), out)


concat = concatenate = cat


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
    return with_out(cat([unsqueeze(x, d) for x in tensors], d), out)


def hstack(tensors, *, out=None):
    """The tensors joined column-wise: along dim 1, or dim 0 for 1-d tensors."""
    ts = atleast_1d(tuple(tensors))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """The tensors joined row-wise (along dim 0, 1-d tensors as rows)."""
    return cat(atleast_2d(tuple(tensors)), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """The tensors joined depth-wise (along dim 2, after :func:`atleast_3d`)."""
    return cat(atleast_3d(tuple(tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    """The tensors joined as columns: 0-d and 1-d tensors become columns ``(n, 1)``."""
    cols = [t.reshape(t.numel(), 1) if t._data.ndim <= 1 else t for t in tensors]
    return cat(cols, 1, out=out)


# ---------------------------------------------------------------------------
# splitting

class Unbind(Node):
    def forward(self, x, dim):
        self.dim, self.shape = dim, x.shape
        return tuple(x[_dim_slice(dim, i)] for i in range(x.shape[dim]))

    def backward(self, *grads):
        ref = next(g for g in grads if g is not None)
        shape = self.shape[:self.dim] + self.shape[self.dim + 1:]
        parts = [g if g is not None else ref.new_zeros(shape) for g in grads]
        return stack(parts, self.dim)


def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, as a tuple of views."""
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input._data.ndim)
    if input._data.shape[d] == 0:
        return ()
    outs = apply(Unbind, input, d)
    return tuple(make_view_of(o, input, _select_fn(d, i)) for i, o in enumerate(outs))


def _select_fn(d, i):
    return lambda x: x.select(d, i)


class Split(Node):
    """Pieces ``x[start:start + length]`` along ``dim`` (views)."""

    def forward(self, x, dim, starts, lengths):
        self.dim, self.shape = dim, x.shape
        self.starts, self.lengths = starts, lengths
        return tuple(x[_dim_slice(dim, slice(s, s + n))]
                     for s, n in zip(starts, lengths, strict=True))

    def backward(self, *grads):
        ref = next(g for g in grads if g is not None)
        d = self.dim

        def piece(i):
            if grads[i] is not None:
                return grads[i]
            shape = list(self.shape)
            shape[d] = self.lengths[i]
            return ref.new_zeros(shape)
        pos, tiled = 0, True
        for s, n in zip(self.starts, self.lengths, strict=True):
            tiled = tiled and s == pos
            pos = s + n
        if tiled and pos == self.shape[d]:
            return (cat([piece(i) for i in range(len(grads))], d),)
        total = None
        for i, g in enumerate(grads):
            if g is not None:
                idx = _dim_slice(d, slice(self.starts[i], self.starts[i] + self.lengths[i]))
                part = apply(BasicIndexBackward, g, self.shape, idx)
                total = part if total is None else total + part
        return (total,)


def _split_at(input, d, starts, lengths):
    outs = apply(Split, input, d, tuple(starts), tuple(lengths))
    return tuple(make_view_of(o, input, _narrow_fn(d, s, n))
                 for o, s, n in zip(outs, starts, lengths, strict=True))


def _narrow_fn(d, start, length):
    return lambda x: x.narrow(d, start, length)


def split(tensor, split_size_or_sections, dim=0):
    """``tensor`` cut along ``dim`` into pieces of ``split_size_or_sections`` entries
    (an int: the last piece may be shorter) or of the listed sizes; views."""
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    if tensor._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor._data.ndim)
    size = tensor._data.shape[d]
    step = int(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0:
        if size != 0:
            raise RuntimeError(
                "split_size can only be 0 if dimension size is 0, but got dimension size of "
                f"{size}")
        return _split_at(tensor, d, [0], [0])
    starts = list(range(0, size, step)) or [0]
    return _split_at(tensor, d, starts, [min(step, size - s) for s in starts])


def split_with_sizes(input, split_sizes, dim=0):
    """``input`` cut along ``dim`` into pieces of the given sizes (views)."""
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sizes}")
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
            f"size at dimension {d}), but got split_sizes={sizes}")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return _split_at(input, d, starts, sizes)


def chunk(input, chunks, dim=0):
    """``input`` cut along ``dim`` into at most ``chunks`` pieces of equal size (the last
    may be smaller); views."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    step = -(-size // chunks)
    if step == 0:
        return _split_at(input, d, [0] * chunks, [0] * chunks)
    return split(input, step, d)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None):
    """``input`` cut along ``dim``: into ``sections`` pieces of near-equal size (the
    first ones one larger), or at the given ``indices``; views."""
    if sections is not None:
        indices_or_sections = sections
    elif indices is not None:
        indices_or_sections = indices
    if input._data.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 "
            "dims")
    arg = indices_or_sections
    if isinstance(arg, TensorBase):
        if arg._data.dtype != np.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                f"got {type_name(arg._data.dtype)}")
        if arg._data.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {arg._data.ndim} dims")
        arg = arg.item() if arg._data.ndim == 0 else arg.tolist()
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if isinstance(arg, numbers.Integral):
        n = int(arg)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        small, extra = divmod(size, n)
        lengths = [small + 1] * extra + [small] * (n - extra)
        starts = [sum(lengths[:i]) for i in range(n)]
        return _split_at(input, d, starts, lengths)
    bounds = [0] + [int(i) for i in arg] + [size]
    starts, lengths = [], []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        r = range(size)[slice(a, b)]
        start = r.start if len(r) else min(max(a if a >= 0 else a + size, 0), size)
        starts.append(start)
        lengths.append(len(r))
    return _split_at(input, d, starts, lengths)


def _split_dims(name, input, arg, d, min_dims):
    n = input._data.ndim
    if n < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
            f"tensor with {n} dimensions!")
    if isinstance(arg, numbers.Integral) and arg != 0 and input._data.shape[d] % arg:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {d}, but the size of the "
            f"dimension {input._data.shape[d]} is not divisible by the split_size {arg}!")
    return tensor_split(input, arg, d)


def hsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 1 (dim 0 for 1-d tensors)."""
    return _split_dims("hsplit", input, indices_or_sections,
                       1 if input._data.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 0 of a tensor of at least 2 dims."""
    return _split_dims("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 2 of a tensor of at least 3 dims."""
    return _split_dims("dsplit", input, indices_or_sections, 2, 3)


def _split_method(self, split_size, dim=0):
    """Tensor.split(split_size, dim=0): :func:`ember.split` (PyTorch's method names its
    argument ``split_size``)."""
    return split(self, split_size, dim)


_split_method.__op__ = "split"

METHODS = {
    "unbind": unbind, "split": _split_method, "split_with_sizes": split_with_sizes, "chunk": chunk,
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
}
