"""The copying forms of the view ops (``t_copy``, ``diagonal_copy``, ...), the scatters that
write a tensor into such a view of a copy (``diagonal_scatter``, ``select_scatter``,
``slice_scatter``, ``as_strided_scatter``), and the other view-family odds and ends of
PyTorch's top-level namespace (``unsafe_split``, ``as_strided_``, ``nonzero_static``, ...).

NOTE [ View copies ]
PyTorch gives every view op ``v`` a ``v_copy`` with the same arguments that returns a
tensor with its own memory (contiguous, outside any view relation). They are derived here in
one table (``_VIEW_COPIES``) from ember's view ops: the view, then a clone, so the gradient
is the view's. A new view op gets its copy form by adding one line to the table.
"""

from __future__ import annotations

import inspect

import numpy as np

from ember import _dtype
from ember._C._core import Node, dispatched
from ember._ops import complex_ops, join, shape
from ember._ops._util import TensorBase, apply, wrap, wrap_dim, xp_of
from ember._ops.conversion import clone, fill_, zero_

__all__ = [
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "narrow_copy", "permute_copy", "select_copy", "slice_copy", "split_copy",
    "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
    "unfold_copy", "unsqueeze_copy", "view_as_complex_copy", "view_as_real_copy", "view_copy",
    "diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "nonzero_static",
    "fill", "fill_", "zero_", "detach", "detach_", "index_put_", "as_strided_",
    "slice_inverse",
]


# ---------------------------------------------------------------------------
# the view ops with PyTorch's argument lists for their copy forms

def _alias(input):
    return shape._alias(input)


def _detach(input):
    return input.detach()


def _expand(input, size, *, implicit=False):
    return shape.expand(input, size)


def _permute(input, dims):
    return shape.permute(input, dims)


def _slice_index(input, dim, start, end, step):
    """The basic index of ``input[..., start:end:step, ...]`` along ``dim``; PyTorch's
    checks (a step must be positive)."""
    if input._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._data.ndim)
    step = int(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    s = slice(None if start is None else int(start), None if end is None else int(end), step)
    return d, shape._dim_slice(d, s)


def _slice(input, dim=0, start=None, end=None, step=1):
    d, idx = _slice_index(input, dim, start, end, step)
    return shape._view_op(shape.BasicIndex, input, lambda x: x[idx], idx)


def _split(input, split_size, dim=0):
    return join.split(input, int(split_size), dim)


def _squeeze(input, dim=None):
    return shape.squeeze(input, dim)


def _view(input, size):
    if shape._is_dtype(size):
        return shape.view(input, size)
    return shape.view(input, tuple(size) if isinstance(size, (tuple, list)) else (size,))


# name -> the view op it copies (NOTE [ View copies ])
_VIEW_COPIES = {
    "alias_copy": _alias,
    "as_strided_copy": shape.as_strided,
    "detach_copy": _detach,
    "diagonal_copy": shape.diagonal,
    "expand_copy": _expand,
    "narrow_copy": shape.narrow,
    "permute_copy": _permute,
    "select_copy": shape.select,
    "slice_copy": _slice,
    "split_copy": _split,
    "split_with_sizes_copy": join.split_with_sizes,
    "squeeze_copy": _squeeze,
    "t_copy": shape.t,
    "transpose_copy": shape.transpose,
    "unbind_copy": join.unbind,
    "unfold_copy": shape.unfold,
    "unsqueeze_copy": shape.unsqueeze,
    "view_as_complex_copy": complex_ops.view_as_complex,
    "view_as_real_copy": complex_ops.view_as_real,
    "view_copy": _view,
}


def _copy_into(results, out):
    """``results`` copied into the tensors of ``out`` (resized to their shapes)."""
    from ember._ops._util import with_out

    if isinstance(results, tuple):
        if not isinstance(out, (list, tuple)) or len(out) != len(results):
            raise RuntimeError(
                f"expected out to be a list of {len(results)} tensors, got "
                f"{type(out).__name__}")
        for r, o in zip(results, out, strict=True):
            with_out(r, o)
        return None
    return with_out(results, out)


def _make_copy(name, view_fn):
    base = view_fn.__name__.lstrip("_")

    def copy_form(*args, out=None, **kwargs):
        r = view_fn(*args, **kwargs)
        r = tuple(clone(p) for p in r) if isinstance(r, tuple) else clone(r)
        return r if out is None else _copy_into(r, out)

    params = list(inspect.signature(view_fn).parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    copy_form.__signature__ = inspect.Signature(params)
    copy_form.__name__ = copy_form.__qualname__ = name
    copy_form.__doc__ = (
        f"{name}(...) -> Tensor\n\n"
        f"Performs the same operation as :func:`ember.{base}` but returns a copy: a tensor "
        "with its own (contiguous) memory rather than a view of ``input``. Gradients flow "
        f"as through ``{base}``.\n")
    return copy_form


_COPIES = {name: _make_copy(name, fn) for name, fn in _VIEW_COPIES.items()}
alias_copy = _COPIES["alias_copy"]
as_strided_copy = _COPIES["as_strided_copy"]
detach_copy = _COPIES["detach_copy"]
diagonal_copy = _COPIES["diagonal_copy"]
expand_copy = _COPIES["expand_copy"]
narrow_copy = _COPIES["narrow_copy"]
permute_copy = _COPIES["permute_copy"]
select_copy = _COPIES["select_copy"]
slice_copy = _COPIES["slice_copy"]
split_copy = _COPIES["split_copy"]
split_with_sizes_copy = _COPIES["split_with_sizes_copy"]
squeeze_copy = _COPIES["squeeze_copy"]
t_copy = _COPIES["t_copy"]
transpose_copy = _COPIES["transpose_copy"]
unbind_copy = _COPIES["unbind_copy"]
unfold_copy = _COPIES["unfold_copy"]
unsqueeze_copy = _COPIES["unsqueeze_copy"]
view_as_complex_copy = _COPIES["view_as_complex_copy"]
view_as_real_copy = _COPIES["view_as_real_copy"]
view_copy = _COPIES["view_copy"]


# ---------------------------------------------------------------------------
# scatters: a copy of ``input`` with ``src`` written into one of its views

def _region_shape_error(src_shape, region_shape):
    return RuntimeError(
        "expected src to have a size equal to the slice of self. src size = "
        f"{list(src_shape)}, slice size = {list(region_shape)}")


class _Scatter(Node):
    """``x`` copied, with ``src`` written into ``region(copy)``; the shared node of the
    four scatters (each subclass names its view)."""

    def forward(self, x, src, *view_args):
        self.view_args = view_args
        self.src_dtype = src.dtype
        out = x.copy()
        self.region(out, *view_args)[...] = src.astype(x.dtype, copy=False)
        return out

    def backward(self, g):
        need = self.needs_input_grad
        gx = gs = None
        if need[0]:
            zeros = self.view_of(g, *self.view_args).detach() * 0
            gx = apply(type(self), g, zeros, *self.view_args)
        if need[1]:
            gs = self.view_of(g, *self.view_args)
            if gs._data.dtype != self.src_dtype:
                gs = gs.to(_dtype.from_numpy(self.src_dtype))
        return gx, gs


class DiagonalScatter(_Scatter):
    @staticmethod
    def region(a, offset, d1, d2):
        return shape._writable(a.diagonal(offset, d1, d2))

    @staticmethod
    def view_of(t, offset, d1, d2):
        return shape.diagonal(t, offset, d1, d2)


class SelectScatter(_Scatter):
    @staticmethod
    def region(a, d, index):
        return a[shape._dim_slice(d, index)]

    @staticmethod
    def view_of(t, d, index):
        return shape.select(t, d, index)


class SliceScatter(_Scatter):
    @staticmethod
    def region(a, idx):
        return a[idx]

    @staticmethod
    def view_of(t, idx):
        return shape._view_op(shape.BasicIndex, t, lambda x: x[idx], idx)


class AsStridedScatter(_Scatter):
    @staticmethod
    def region(a, size, stride, offset):
        return shape.strided_view(a, size, [s * a.itemsize for s in stride], offset)

    @staticmethod
    def view_of(t, size, stride, offset):
        # positions count in a fresh contiguous layout (as the forward's copy), whatever
        # the memory of the gradient ``t`` is (a broadcast, a slice of a larger buffer)
        return shape.as_strided(clone(t), size, stride, offset)


def _scatter(node, input, src, region):
    """Check ``src`` against ``region`` (the view of ``input`` it fills) and apply."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"{node.op_name}(): argument 'src' (position 2) must be Tensor, not "
                        f"{type(src).__name__}")
    if tuple(src._data.shape) != tuple(region._data.shape):
        raise _region_shape_error(src._data.shape, region._data.shape)
    return region


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor

    A copy of ``input`` with the values of ``src`` written into its diagonal (the one
    :func:`ember.diagonal` with the same ``offset``, ``dim1`` and ``dim2`` returns).

    Args:
        input (Tensor): the input tensor, at least 2-D.
        src (Tensor): the values, shaped like ``ember.diagonal(input, offset, dim1, dim2)``.
        offset (int, optional): which diagonal (0: the main one, > 0 above it).
        dim1, dim2 (int, optional): the plane of the diagonal.

    Examples::

        >>> ember.diagonal_scatter(ember.zeros(3, 3), ember.ones(3))
        tensor([[1., 0., 0.],
                [0., 1., 0.],
                [0., 0., 1.]])
    """
    region = shape.diagonal(input, offset, dim1, dim2)
    _scatter(DiagonalScatter, input, src, region)
    n = input._data.ndim
    return apply(DiagonalScatter, input, src, int(offset), wrap_dim(dim1, n), wrap_dim(dim2, n))


def select_scatter(input, src, dim, index):
    """select_scatter(input, src, dim, index) -> Tensor

    A copy of ``input`` with ``src`` written at ``index`` along ``dim`` (where
    :func:`ember.select` reads).

    Examples::

        >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 0)
        tensor([[1., 1.],
                [0., 0.]])
    """
    region = shape.select(input, dim, index)
    _scatter(SelectScatter, input, src, region)
    d = wrap_dim(dim, input._data.ndim)
    index = int(index)
    return apply(SelectScatter, input, src, d, index + input._data.shape[d] if index < 0
                 else index)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    A copy of ``input`` with ``src`` written into the slice ``start:end:step`` of ``dim``.

    Examples::

        >>> ember.slice_scatter(ember.zeros(4), ember.ones(2), start=2)
        tensor([0., 0., 1., 1.])
    """
    d, idx = _slice_index(input, dim, start, end, step)
    _scatter(SliceScatter, input, src, input[idx])
    return apply(SliceScatter, input, src, idx)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor

    A copy of ``input`` (contiguous, storage offset 0) with ``src`` written into its
    :func:`ember.as_strided` view of ``size``, ``stride`` and ``storage_offset``.

    Examples::

        >>> ember.as_strided_scatter(ember.zeros(4), ember.ones(2, 2), (2, 2), (1, 1))
        tensor([1., 1., 1., 0.])
    """
    size = shape._shape_args((size,), "size")
    stride = shape._shape_args((stride,), "stride")
    offset = 0 if storage_offset is None else int(storage_offset)
    region = shape.as_strided(input.detach().contiguous().clone(), size, stride, offset)
    _scatter(AsStridedScatter, input, src, region)
    return apply(AsStridedScatter, input, src, size, stride, offset)


# ---------------------------------------------------------------------------
# splits without view tracking, and other odds and ends

def unsafe_split(input, split_size, dim=0):
    """unsafe_split(input, split_size, dim=0) -> tuple of Tensors

    :func:`ember.split` with an int ``split_size``; PyTorch's "unsafe" forms skip the
    checks of in-place changes to the pieces, which ember's views never need to skip.
    """
    return join.split(input, int(split_size), dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """unsafe_split_with_sizes(input, split_sizes, dim=0) -> tuple of Tensors

    :func:`ember.split_with_sizes` (see :func:`unsafe_split`)."""
    return join.split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    """unsafe_chunk(input, chunks, dim=0) -> tuple of Tensors

    :func:`ember.chunk` (see :func:`unsafe_split`)."""
    return join.chunk(input, chunks, dim)


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero_static(input, *, size, fill_value=-1) -> Tensor

    The indices of the non-zero entries of ``input`` as :func:`ember.nonzero` gives them,
    in a tensor of exactly ``size`` rows: cut to the first ``size``, or padded with rows of
    ``fill_value``.

    Examples::

        >>> ember.nonzero_static(ember.tensor([0, 1, 0, 2]), size=3)
        tensor([[ 1],
                [ 3],
                [-1]])
    """
    size = int(size)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"size: {size}")
    x = input._data
    xp = xp_of(x)
    idx = xp.argwhere(x).astype(np.int64, copy=False)
    ndim = x.ndim
    out = xp.full((size, ndim), int(fill_value), dtype=np.int64)
    n = min(size, idx.shape[0])
    out[:n] = idx[:n]
    return wrap(out)


def fill(input, value):
    """fill(input, value) -> Tensor

    A new tensor shaped like ``input`` (same dtype and device) filled with ``value`` (a
    number or a 0-dim tensor, through which gradients flow).
    """
    return fill_(clone(input), value)


@dispatched
def detach(input):
    """detach(input) -> Tensor

    A tensor sharing ``input``'s data, outside the autograd graph (``input.detach()``)."""
    return input.detach()


@dispatched
def detach_(input):
    """detach_(input) -> Tensor

    Detach ``input`` from the graph that made it, in place (``input.detach_()``)."""
    return input.detach_()


def index_put_(input, indices, values, accumulate=False):
    """index_put_(input, indices, values, accumulate=False) -> Tensor

    ``input.index_put_(indices, values, accumulate)``: ``values`` written (summed with
    ``accumulate=True``) into ``input`` at ``input[indices]``; returns ``input``."""
    return input.index_put_(indices, values, accumulate)


def as_strided_(input, size, stride, storage_offset=None):
    """as_strided_(input, size, stride, storage_offset=None) -> Tensor

    Make ``input`` itself the :func:`ember.as_strided` view of its storage with ``size``,
    ``stride`` and ``storage_offset`` (its own offset if None); returns ``input``.

    ember records no autograd history for this change of metadata: a tensor that requires
    grad is refused (use the out-of-place :func:`ember.as_strided`).
    """
    from ember._C._core import is_grad_enabled

    if input.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "as_strided_(): ember does not record in-place changes of a tensor's strides in "
            "the autograd graph; use as_strided() or call it under ember.no_grad()")
    view = shape.as_strided(input.detach(), size, stride, storage_offset)
    input._data = view._data
    return input


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """slice_inverse(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    The inverse of ``src.slice(dim, start, end, step)`` for ``input`` such a slice: a view
    of ``input``'s storage with ``src``'s sizes and strides, starting where ``src`` would
    (functionalization's view replay). ``end`` and ``step`` only describe the slice."""
    d = dim + src.dim() if dim < 0 else dim
    first = 0 if start is None else (start + src.shape[d] if start < 0 else start)
    offset = input.storage_offset() - first * src.stride(d)
    if offset < 0:
        raise RuntimeError(
            f"slice_inverse: the slice starting at {first} of dim {dim} does not lie inside "
            "input's storage")
    return input.as_strided(tuple(src.shape), src.stride(), offset)


METHODS = {
    "narrow_copy": narrow_copy, "diagonal_scatter": diagonal_scatter,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "as_strided_scatter": as_strided_scatter, "as_strided_": as_strided_,
    "unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "nonzero_static": nonzero_static,
    "slice_inverse": slice_inverse,
}
