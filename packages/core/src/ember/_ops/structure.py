"""Tensors arranged from others, and index sets: ``block_diag``, ``diagflat``,
``cartesian_prod``, ``combinations``, ``rot90``, ``tril_indices``, ``triu_indices`` and
``unravel_index``.

``block_diag`` is an op of its own (one copy in, slices out in backward); the others are
compositions of recorded ops (reshape, expand, index_select, flip, transpose), so their
gradients come from autograd, or build integer index tensors that need none.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from ember import _dtype
from ember._C._core import Node
from ember._ops._util import TensorBase, apply, not_implemented, wrap, wrap_dim, xp_of

__all__ = ["block_diag", "diagflat", "cartesian_prod", "combinations", "rot90",
           "tril_indices", "triu_indices", "unravel_index"]


def _check_tensors(tensors, arg=0):
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument {arg}, but got "
                            f"{type(t).__name__}")


# ---------------------------------------------------------------------------
# block_diag, diagflat

class BlockDiag(Node):
    """The 2-D blocks on the diagonal of a zero matrix; backward slices them out."""

    def forward(self, *blocks):
        xp = xp_of(blocks[0]) if blocks else np
        rows = sum(b.shape[0] for b in blocks)
        cols = sum(b.shape[1] for b in blocks)
        out = xp.zeros((rows, cols), dtype=blocks[0].dtype)
        self.spans = []
        r = c = 0
        for b in blocks:
            out[r:r + b.shape[0], c:c + b.shape[1]] = b
            self.spans.append((r, c, b.shape[0], b.shape[1]))
            r, c = r + b.shape[0], c + b.shape[1]
        return out

    def backward(self, g):
        return tuple(g[r:r + h, c:c + w] for r, c, h, w in self.spans)


def block_diag(*tensors):
    """block_diag(*tensors) -> Tensor

    A block diagonal matrix of the tensors (0-D: a 1x1 block; 1-D: a row; 2-D), types
    promoted.

    Examples::

        >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    from ember._ops._util import promote_all
    from ember._ops.creation import zeros

    _check_tensors(tensors)
    if not tensors:
        return zeros(1, 0)
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    blocks = [t.reshape(1, 1) if t._data.ndim == 0 else t.reshape(1, -1) if t._data.ndim == 1
              else t for t in promote_all(tensors)]
    return apply(BlockDiag, *blocks)


def diagflat(input, offset=0):
    """diagflat(input, offset=0) -> Tensor

    A 2-D tensor with the elements of ``input`` (flattened) on its ``offset``-th diagonal.

    Examples::

        >>> ember.diagflat(ember.tensor([[1, 2], [3, 4]]))
        tensor([[1, 0, 0, 0],
                [0, 2, 0, 0],
                [0, 0, 3, 0],
                [0, 0, 0, 4]])
    """
    from ember._ops.shape import diag

    return diag(input.reshape(-1), offset)


# ---------------------------------------------------------------------------
# cartesian_prod, combinations

def _check_vector(t):
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


def cartesian_prod(*tensors):
    """cartesian_prod(*tensors) -> Tensor

    The cartesian product of 1-D tensors of one dtype, as the rows of a 2-D tensor (like
    ``itertools.product``); one tensor is returned as it is.

    Examples::

        >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    from ember._ops.join import stack

    _check_tensors(tensors)
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = [t._data.shape[0] for t in tensors]
    cols = []
    for k, t in enumerate(tensors):
        shape = [1] * len(sizes)
        shape[k] = -1
        cols.append(t.reshape(shape).expand(*sizes).reshape(-1))
    return stack(cols, 1)


def combinations(input, r=2, with_replacement=False):
    """combinations(input, r=2, with_replacement=False) -> Tensor

    The length-``r`` combinations of the elements of a 1-D tensor, as the rows of a 2-D
    tensor, in ``itertools.combinations`` order (``combinations_with_replacement`` with
    ``with_replacement=True``); ``r == 0`` gives an empty 1-D tensor.

    Examples::

        >>> ember.combinations(ember.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    from ember._ops.creation import empty

    _check_tensors((input,))
    _check_vector(input)
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    n = input._data.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), dtype=np.int64)
    idx = wrap(xp_of(input._data).asarray(idx))
    return input.index_select(0, idx).reshape(-1, r)


# ---------------------------------------------------------------------------
# rot90

def rot90(input, k=1, dims=(0, 1)):
    """rot90(input, k=1, dims=(0, 1)) -> Tensor

    ``input`` rotated by 90 degrees ``k`` times in the plane of ``dims``, from the first
    towards the second axis (the other way for negative ``k``).

    Examples::

        >>> ember.rot90(ember.tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    dims = list(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    w0, w1 = wrap_dim(dims[0], nd), wrap_dim(dims[1], nd)
    if w0 == w1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    d0, d1 = w0, w1
    k = k % 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


# ---------------------------------------------------------------------------
# tril_indices, triu_indices, unravel_index

def _triangle_indices(name, row, col, offset, dtype, device, upper):
    from ember._ops.creation import tensor

    for arg, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{arg} must be non-negative, got{v}")
    dt = _dtype.int64 if dtype is None else dtype
    if dt.numpy.kind not in "iu":
        raise not_implemented(name, dt.numpy)
    rows = np.arange(row)[:, None]
    cols = np.arange(col)[None, :]
    mask = (cols - rows >= offset) if upper else (cols - rows <= offset)
    i, j = np.nonzero(mask)
    return tensor(np.stack([i, j]).astype(dt.numpy), device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """tril_indices(row, col, offset=0, *, dtype=ember.long, device='cpu') -> Tensor

    The indices of the lower triangle (on and below the ``offset``-th diagonal) of a
    ``row`` x ``col`` matrix, as a 2 x N tensor (row indices, then column indices) in
    row-major order.

    Examples::

        >>> ember.tril_indices(3, 3)
        tensor([[0, 1, 1, 2, 2, 2],
                [0, 0, 1, 0, 1, 2]])
    """
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, upper=False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """triu_indices(row, col, offset=0, *, dtype=ember.long, device='cpu') -> Tensor

    The indices of the upper triangle (on and above the ``offset``-th diagonal) of a
    ``row`` x ``col`` matrix, as a 2 x N tensor in row-major order.

    Examples::

        >>> ember.triu_indices(3, 3, 1)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, upper=True)


def unravel_index(indices, shape):
    """unravel_index(indices, shape) -> tuple of Tensors

    The coordinates, in a tensor of ``shape``, of the flat (row-major) ``indices``: one
    int64 tensor of ``indices``' shape per dim. Negative indices count from the end, and
    indices wrap around modulo ``shape``'s size, as in PyTorch.

    Examples::

        >>> ember.unravel_index(ember.tensor([5, 11]), (3, 4))
        (tensor([1, 2]), tensor([1, 3]))
    """
    from ember._ops.creation import tensor

    kind = indices._data.dtype.kind if isinstance(indices, TensorBase) else None
    if kind not in ("i", "u"):
        got = indices.dtype if isinstance(indices, TensorBase) else type(indices).__name__
        raise TypeError(f"expected 'indices' to be integer dtype, but got {got}")
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    elif isinstance(shape, (list, tuple, str)):
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(d)}")
        shape = tuple(int(d) for d in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    coefs = list(itertools.accumulate(reversed(shape[1:] + (1,)), lambda a, b: a * b))[::-1]
    flat = indices.to(_dtype.int64).unsqueeze(-1)
    res = flat.floor_divide(tensor(coefs, dtype=_dtype.int64, device=indices.device)) % \
        tensor(shape, dtype=_dtype.int64, device=indices.device)
    return res.unbind(-1)


METHODS = {"diagflat": diagflat, "rot90": rot90}
