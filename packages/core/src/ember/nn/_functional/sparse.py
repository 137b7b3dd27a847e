"""``embedding`` and ``embedding_bag``: table lookups whose backward is a scatter-add.

The weight gradient is summed into a zero table by the backend's ``index_add_rows``
kernel (one compiled pass on the CPU; NumPy's ``np.add.at`` is several times slower).
Only dense gradients are produced (``sparse=False``).
"""

from __future__ import annotations

import numpy as np

from ember._backend import backend_of
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import apply, wrap, xp_of

__all__ = ["embedding", "embedding_bag"]


def _tensor_name(t) -> str:
    from ember._ops._util import type_name

    return f"torch.{type_name(t._data.dtype)}Tensor"


def _check_indices(input, fn):
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {_tensor_name(input)} instead (while checking "
            f"arguments for {fn})")


def _check_sparse(sparse):
    if sparse:
        raise NotImplementedError(
            "ember produces dense gradients only: sparse=True is not supported (use "
            "sparse=False)")


def _index_add_rows(out, index, src):
    """``out[index[i]] += src[i]`` on any backend (out is C-contiguous and 2-d)."""
    return backend_of(out).kernel("index_add_rows")(out, index, src)


def _counts(xp, idx, n):
    return xp.bincount(idx, minlength=n)


def _renorm_(weight, idx, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows of ``weight`` used by ``idx`` whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled to it, in place, without autograd."""
    w = weight._data
    xp = xp_of(w)
    rows = xp.unique(idx.reshape(-1))
    if rows.size == 0:
        return
    sel = w[rows]
    a = xp.abs(sel)
    if norm_type == float("inf"):
        norms = a.max(axis=1)
    elif norm_type == 0:
        norms = (a != 0).sum(axis=1).astype(w.dtype)
    else:
        norms = (a ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    big = norms > max_norm
    if bool(big.any()):
        if not getattr(w.flags, "writeable", True):  # an expanded weight: rows share memory
            raise RuntimeError(
                "embedding with max_norm renormalizes the weight in place: unsupported "
                "operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the weight before performing the operation.")
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] = sel[big] * scale[:, None]
        weight._bump_version()


class Embedding(Node):
    """``weight[indices]``; the weight gradient is a scatter-add of the output's."""

    def forward(self, weight, idx, padding_idx, scale_grad_by_freq):
        self.idx = idx
        self.num, self.dim = weight.shape
        self.padding_idx = padding_idx
        self.scale_grad_by_freq = scale_grad_by_freq
        self.dtype = weight.dtype
        return weight[idx]

    def _prepare(self, xp):
        """(flat indices, per-row scale or None) of the rows that receive gradient."""
        idx = self.idx.reshape(-1).astype(np.int64, copy=False)
        scale = None
        if self.scale_grad_by_freq:
            scale = 1.0 / _counts(xp, idx, self.num)[idx]
        if self.padding_idx >= 0:
            keep = idx != self.padding_idx
            scale = keep if scale is None else scale * keep
        return idx, scale

    def backward(self, g):
        xp = xp_of(g._data)
        idx, scale = self._prepare(xp)
        if is_grad_enabled():  # create_graph: a recorded scatter-add
            from ember._ops.creation import zeros

            src = g.reshape(len(idx), self.dim)  # not -1: dim may be 0
            if scale is not None:
                src = src * wrap(scale.astype(self.dtype)[:, None])
            out = zeros((self.num, self.dim), dtype=g.dtype, device=g.device)
            return out.index_add(0, wrap(idx), src)
        src = g._data.reshape(len(idx), self.dim)
        if scale is not None:
            src = src * scale.astype(self.dtype)[:, None]
        out = xp.zeros((self.num, self.dim), dtype=self.dtype)
        return wrap(_index_add_rows(out, idx, src))


def _padding_index(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        if padding_idx >= num:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num + padding_idx
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` (the embedding table) at the indices ``input``.

    Args:
        input: integer tensor of indices, any shape.
        weight: ``(num_embeddings, embedding_dim)``.
        padding_idx: the entries equal to it get no gradient.
        max_norm: rows used whose norm exceeds it are renormalized in place first.
        norm_type: the p of that norm. Default: 2.
        scale_grad_by_freq: divide the gradients by the indices' frequency in ``input``.
        sparse: must be False (ember has no sparse gradients).

    Returns:
        ``input.shape + (embedding_dim,)``.

    See :class:`~ember.nn.Embedding`.
    """
    _check_sparse(sparse)
    _check_indices(input, "embedding")
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight._data.shape[0]
    padding_idx = _padding_index(padding_idx, num)
    idx = input._data
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    return apply(Embedding, weight, input, padding_idx, scale_grad_by_freq)


# ---------------------------------------------------------------------------
# embedding_bag

_MODES = {"sum": 0, "mean": 1, "max": 2}


class EmbeddingBag(Node):
    """Sums, means or maxes of bags of rows of ``weight`` (with optional per-sample
    weights in ``sum`` mode).

    ``idx`` are the int64 indices, ``seg`` the bag of each of the first ``len(seg)``
    (the entries after the last bag's end belong to no bag).
    """

    saves_inputs = (0, 1)

    def forward(self, weight, psw, idx, seg, nbags, mode, padding_idx, scale_grad_by_freq):
        xp = xp_of(weight)
        num, dim = weight.shape
        self.num, self.dim, self.mode = num, dim, mode
        n_all = idx.shape[0]
        n = seg.shape[0]
        idx = idx[:n]
        if padding_idx >= 0:
            where = xp.nonzero(idx != padding_idx)[0]
            idx, seg = idx[where], seg[where]
        else:
            where = None
        # positions in the (flat) input of the entries that take part, for psw's gradient
        self.entry_pos = xp.arange(n) if where is None else where
        self.n_all = n_all
        self.idx, self.seg = idx, seg
        rows = weight[idx]
        out = xp.zeros((nbags, dim), dtype=weight.dtype)
        self.freq_scale = self.inv_count = None
        if scale_grad_by_freq:
            self.freq_scale = (1.0 / _counts(xp, idx, num)[idx]).astype(weight.dtype)
        if mode == 2:
            self.bags = None
            if idx.shape[0]:
                bags, first = xp.unique(seg, return_index=True)
                maxv = xp.maximum.reduceat(rows, first, axis=0)
                rank = xp.searchsorted(bags, seg)
                pos = xp.where(rows == maxv[rank], xp.arange(idx.shape[0])[:, None],
                               idx.shape[0])
                arg = xp.minimum.reduceat(pos, first, axis=0)
                out[bags] = maxv
                self.bags, self.argrow = bags, idx[arg]   # the weight row of each max
            return out
        if psw is not None:
            rows *= psw[self.entry_pos][:, None]
        _index_add_rows(out, seg, rows)
        if mode == 1:
            counts = _counts(xp, seg, nbags).astype(weight.dtype)
            inv = xp.where(counts > 0, 1 / xp.maximum(counts, 1), 0).astype(weight.dtype)
            out *= inv[:, None]
            self.inv_count = inv
        return out

    def _coef(self):
        """Per-entry factor of the weight gradient (mean's 1/count, frequencies), or None."""
        coef = None
        if self.inv_count is not None:
            coef = self.inv_count[self.seg]
        if self.freq_scale is not None:
            coef = self.freq_scale if coef is None else coef * self.freq_scale
        return coef

    def backward(self, g):
        weight, psw = self.saved_tensors
        need = self.needs_input_grad
        if self.mode == 2:
            return self._backward_max(g), None
        coef = self._coef()
        gw = gpsw = None
        if is_grad_enabled():  # create_graph: a recorded backward
            from ember._ops.creation import zeros

            seg_t, idx_t, pos_t = wrap(self.seg), wrap(self.idx), wrap(self.entry_pos)
            gs = g.index_select(0, seg_t)
            if need[0]:
                src = gs
                if psw is not None:
                    src = src * psw.reshape(-1).index_select(0, pos_t).unsqueeze(1)
                if coef is not None:
                    src = src * wrap(coef[:, None])
                gw = zeros((self.num, self.dim), dtype=g.dtype, device=g.device)
                gw = gw.index_add(0, idx_t, src)
            if need[1]:
                part = (gs * weight.index_select(0, idx_t)).sum(1)
                gpsw = zeros(self.n_all, dtype=g.dtype, device=g.device)
                gpsw = gpsw.index_add(0, pos_t, part).reshape(tuple(psw.shape))
            return gw, gpsw
        ga = g._data
        xp = xp_of(ga)
        gs = ga[self.seg]
        if need[0]:
            src = gs
            if psw is not None:
                src = src * psw._data.reshape(-1)[self.entry_pos][:, None]
            if coef is not None:
                src = src * coef[:, None]
            out = xp.zeros((self.num, self.dim), dtype=ga.dtype)
            gw = wrap(_index_add_rows(out, self.idx, src))
        if need[1]:
            part = (gs * weight._data[self.idx]).sum(1)
            out = xp.zeros(self.n_all, dtype=ga.dtype)
            out[self.entry_pos] = part
            gpsw = wrap(out.reshape(psw._data.shape))
        return gw, gpsw

    def _backward_max(self, g):
        from ember._ops.creation import zeros

        if not self.needs_input_grad[0]:
            return None
        dim = self.dim
        if self.bags is None:
            return zeros((self.num, dim), dtype=g.dtype, device=g.device)
        xp = xp_of(g._data)
        flat = (self.argrow * dim + xp.arange(dim)).reshape(-1)
        if is_grad_enabled():
            src = g.index_select(0, wrap(self.bags)).reshape(-1)
            out = zeros(self.num * dim, dtype=g.dtype, device=g.device)
            return out.index_add(0, wrap(flat), src).reshape(self.num, dim)
        src = g._data[self.bags].reshape(-1, 1)
        out = xp.zeros((self.num * dim, 1), dtype=g._data.dtype)
        return wrap(_index_add_rows(out, flat, src).reshape(self.num, dim))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embeddings, without materializing the lookups.

    Args:
        input: a 2-d ``(B, N)`` tensor of indices (B bags of N), or a 1-d tensor of
            indices cut into bags by ``offsets``.
        weight: ``(num_embeddings, embedding_dim)``.
        offsets: for a 1-d ``input``, the start of each bag in it.
        max_norm, norm_type: as in :func:`embedding`.
        scale_grad_by_freq: divide the gradients by the indices' frequency in ``input``.
        mode: ``'sum'``, ``'mean'`` or ``'max'``. Default: ``'mean'``.
        sparse: must be False.
        per_sample_weights: weights of the entries (``mode='sum'`` only), input's shape.
        include_last_offset: ``offsets`` has one more entry, the end of the last bag.
        padding_idx: entries equal to it are left out of their bags (and of the means).

    Returns:
        ``(number of bags, embedding_dim)``; an empty bag gives zeros.

    See :class:`~ember.nn.EmbeddingBag`.
    """
    _check_sparse(sparse)
    if weight._data.dtype.kind in "iu" and input._data.dtype.kind == "f":
        import warnings

        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    _check_indices(input, "embedding_bag")
    idx = input._data
    xp = xp_of(idx)
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        off = xp.arange(0, idx.size, max(idx.shape[1], 1), dtype=np.int64)[:idx.shape[0]]
        include_last_offset = False
        idx = idx.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        _check_indices(offsets, "embedding_bag")
        off = offsets._data.astype(np.int64, copy=False)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    num = weight._data.shape[0]
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
            "on GitHub.")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type {_tensor_name(weight)} does not "
            f"equal {_tensor_name(per_sample_weights)} (while checking arguments for "
            "embedding_bag)")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx = padding_idx % num
    else:
        padding_idx = -1
    n = idx.shape[0]
    # the bags: [starts[b], ends[b]) of idx
    nbags = off.shape[0] - 1 if include_last_offset else off.shape[0]
    nbags = max(nbags, 0)
    if off.shape[0]:
        if int(off[0]) != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {int(off[0])}")
        if int(off[-1]) > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                               f"got offsets[-1] of {int(off[-1])}")
        if off.shape[0] > 1 and bool((off[1:] < off[:-1]).any()):
            raise RuntimeError("offsets has to be a non-decreasing sequence of positions "
                               "in input")
    starts = off[:nbags]
    ends = off[1:nbags + 1] if include_last_offset else xp.concatenate(
        [off[1:nbags], xp.asarray([n], dtype=np.int64)])
    seg = xp.repeat(xp.arange(nbags, dtype=np.int64), ends - starts)
    used = idx[:seg.shape[0]]
    if used.size:
        bad = xp.nonzero((used < 0) | (used >= num))[0]
        if bad.size:
            i = int(bad[0])
            raise RuntimeError(f"Index {i} of input takes value {int(used[i])} which is not in "
                               f"the valid range [0, {num})")
    return apply(EmbeddingBag, weight, per_sample_weights, idx.astype(np.int64, copy=False),
                 seg, nbags, _MODES[mode], padding_idx, scale_grad_by_freq)
