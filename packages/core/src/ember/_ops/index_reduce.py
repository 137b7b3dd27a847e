"""``index_reduce``: the ``index_*`` form of ``scatter_reduce``.

``index_reduce(input, dim, index, source, reduce)`` reduces the slices of ``source``
along ``dim`` into the slices of ``input`` that the 1-D ``index`` names. It is
``scatter_reduce`` with ``index`` expanded to ``source``'s shape, so it shares that op's
node (``ScatterReduce`` in ``scatter``) and its backward; this module adds PyTorch's
argument checks and messages for the ``index_*`` spelling.
"""

from __future__ import annotations

import warnings

from ember._ops._util import TensorBase, type_name, wrap_dim

__all__ = ["index_reduce"]

_REDUCES = ("prod", "mean", "amax", "amin")
_warned = False


def _index_reduce_args(input, dim, index, source, reduce):
    global _warned
    if not _warned:  # PyTorch warns once per process
        _warned = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    for arg, t in (("index", index), ("source", source)):
        if not isinstance(t, TensorBase):
            raise TypeError(f"index_reduce(): argument '{arg}' must be Tensor, not "
                            f"{type(t).__name__}")
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    nd = max(input._data.ndim, 1)
    d = wrap_dim(dim, nd)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{idx.ndim} with type: {type_name(idx.dtype)} and size: "
                         f"{list(idx.shape)}")
    if idx.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{type_name(idx.dtype)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({type_name(input._data.dtype)}) and source "
                           f"({type_name(source._data.dtype)}) must have the same scalar type")
    sshape = source._data.shape if source._data.ndim else (1,)
    xshape = input._data.shape if input._data.ndim else (1,)
    n_src = sshape[d] if d < len(sshape) else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal "
                           f"to source.size(dim): ({n_src}), for dim: {d}")
    if len(sshape) != len(xshape) or any(a != b for k, (a, b) in enumerate(zip(sshape, xshape))
                                         if k != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(xshape)} source.shape = {list(sshape)}")
    if idx.size and (bool((idx < 0).any()) or bool((idx >= xshape[d]).any())):
        raise IndexError("index out of range in self")
    # the index of every element of source: index along d, broadcast over the other dims
    view = [1] * len(sshape)
    view[d] = -1
    full = index.reshape(-1).to(_int64()).reshape(view).expand(*sshape)
    src = source.reshape(sshape)
    return d, full, src


def _int64():
    from ember import _dtype

    return _dtype.int64


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None) -> Tensor

    ``input`` with the slices ``source.select(dim, i)`` reduced into the slices
    ``input.select(dim, index[i])`` by ``reduce``: ``'prod'``, ``'mean'``, ``'amax'`` or
    ``'amin'``. ``include_self=False`` leaves input's own values out of the reduction where
    any slice lands. ``index`` is a 1-D int32 or int64 tensor with one entry per slice of
    ``source``.

    Examples::

        >>> x = ember.ones(3, 2)
        >>> ember.index_reduce(x, 0, ember.tensor([0, 0, 2]), ember.tensor(
        ...     [[2., 3.], [4., 5.], [6., 7.]]), 'prod')
        tensor([[ 8., 15.],
                [ 1.,  1.],
                [ 6.,  7.]])
    """
    from ember._ops._util import with_out
    from ember._ops.scatter import scatter_reduce

    d, full, src = _index_reduce_args(input, dim, index, source, reduce)
    x = input.reshape(1) if input._data.ndim == 0 else input
    res = scatter_reduce(x, d, full, src, reduce, include_self=include_self)
    if input._data.ndim == 0:
        res = res.reshape(())
    return with_out(res, out)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    d, full, src = _index_reduce_args(self, dim, index, source, reduce)
    if self._data.ndim == 0:
        return self.copy_(index_reduce(self, dim, index, source, reduce,
                                       include_self=include_self))
    return self.scatter_reduce_(d, full, src, reduce, include_self=include_self)


METHODS = {"index_reduce": index_reduce, "index_reduce_": _index_reduce_}
