"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

NOTE [ Attention as one node ]
The core ``softmax(q @ k^T * scale + mask) @ v`` (with dropout on the probabilities) is one
graph node, ``_Attention``: its forward is two batched matrix products over all heads at
once and one softmax pass, and it keeps the probabilities for backward, which is four
batched matrix products and one softmax-gradient pass (run on the arrays, unless
``create_graph=True`` asks for a recorded backward, which recomputes the forward with
ember ops). Masks reach it as one additive float array (a bool mask becomes 0/-inf, as in
PyTorch) and ``is_causal`` as a flag, so no mask of the full score size is built for it.
``multi_head_attention_forward`` splits the packed q/k/v projection into heads with one
node (``_SplitHeads``: views forward, one strided copy backward) and runs the attention
node on a ``(batch, heads, seq, head_dim)`` layout in both batch-first and sequence-first
order, so no per-head Python loop and no ``contiguous`` copies of q, k, v are made.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember._backend import bulk_kernel
from ember._backend._blas import matmul, serial_blas_below
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import (
    TensorBase,
    apply,
    cpp_type_name,
    type_name,
    wrap,
    wrap_dim,
    xp_of,
)

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


# ---------------------------------------------------------------------------------------
# BLAS threads: the per-head products are small (64 calls of 128x64x128 in the benchmark),
# so they run under serial_blas (NOTE [ Serial BLAS ] in ember/_backend/_blas.py). Measured
# on the benchmark's shapes (16 x 4 heads, 128 x 64): forward + backward of the node took
# 50-60 ms against 190-310 ms for torch's CPU sdpa on the same loaded machine.

# From SERIAL_MAX_WORK multiply-adds per matrix OpenBLAS keeps its threads: a GEMM that
# large amortizes the hand-off (long sequences on a many-core machine).

def _serial_blas(xp, q, k, v):
    """serial_blas for small per-head GEMMs."""
    return serial_blas_below(xp, q.shape[-2] * k.shape[-2] * max(q.shape[-1], v.shape[-1]))


# ---------------------------------------------------------------------------------------
# the attention node

def _softmax_(xp, s, safe, bias=None):
    """Softmax over the last axis of the float array ``s``, in place (or, when ``s`` is
    large, into a new array by the device's ``softmax_lastdim`` kernel). With ``safe`` a
    row that is all ``-inf`` gives zeros (PyTorch's sdpa); otherwise NaN
    (``torch.softmax``). Such a row can only come from ``-inf`` in the ``bias`` (a causal
    mask keeps every row's first key), so the kernel is used when the bias has none."""
    if s.size == 0:
        return s
    kernel = bulk_kernel("softmax_lastdim", s) if s.flags.c_contiguous else None
    if kernel is not None and not (safe and bias is not None and xp.isneginf(bias).any()):
        return kernel(s, False)
    m = s.max(axis=-1, keepdims=True)
    if safe:
        inf_rows = xp.isneginf(m)
        if inf_rows.any():
            m[inf_rows] = 0
    if safe:
        s -= m
        xp.exp(s, out=s)
        d = s.sum(axis=-1, keepdims=True)
        d[d == 0] = 1
        s /= d
        return s
    with np.errstate(invalid="ignore"):  # an all -inf row: NaN, as torch.softmax gives
        s -= m
        xp.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
    return s


def _causal_keep(xp, L, S):
    """The (L, S) bool array of the positions an upper-left causal mask keeps."""
    return xp.tri(L, S, 0, dtype=bool)


class _Attention(Node):
    """``softmax(q @ k^T * scale + bias [causal]) * noise @ v``; outputs that, and the
    (dropped-out) probabilities when ``want_weights``."""

    saves_inputs = (0, 1, 2, 3)

    def forward(self, q, k, v, bias, scale, causal, noise, safe, want_weights):
        xp = xp_of(q)
        with _serial_blas(xp, q, k, v):
            return self._forward(xp, q, k, v, bias, scale, causal, noise, safe, want_weights)

    def _forward(self, xp, q, k, v, bias, scale, causal, noise, safe, want_weights):
        s = matmul(q, xp.swapaxes(k, -1, -2))
        s *= scale
        if bias is not None:
            s += bias
        L, S = s.shape[-2], s.shape[-1]
        if causal:
            s[..., ~_causal_keep(xp, L, S)] = -math.inf
        p = _softmax_(xp, s, safe, bias)
        self.p = p
        self.noise = noise
        self.scale = scale
        self.causal = causal
        self.safe = safe
        pd = p if noise is None else p * noise
        out = matmul(pd, v)
        if want_weights:
            return out, pd
        return out

    def backward(self, g_out, g_w=None):
        q, k, v, bias = self.saved_tensors
        need = self.needs_input_grad
        if is_grad_enabled():
            return self._backward_graph(q, k, v, bias, g_out, g_w, need)
        xp = xp_of(self.p)
        with _serial_blas(xp, q._data, k._data, v._data):
            return self._backward_arrays(xp, q, k, v, g_out, g_w, need)

    def _backward_arrays(self, xp, q, k, v, g_out, g_w, need):
        p, noise, scale = self.p, self.noise, self.scale
        qa, ka, va = q._data, k._data, v._data
        gq = gk = gv = gb = None
        pd = p if noise is None else p * noise
        if g_out is not None:
            go = g_out._data
            if need[2]:
                gv = wrap(matmul(xp.swapaxes(pd, -1, -2), go))
            dp = matmul(go, xp.swapaxes(va, -1, -2))
            if g_w is not None:
                dp += g_w._data
        else:
            dp = g_w._data.copy()
        if noise is not None:
            dp *= noise
        # dS = P * (dP - sum(dP * P))
        dp *= p
        dp -= p * dp.sum(axis=-1, keepdims=True)
        ds = dp
        if need[3]:
            gb = wrap(ds)
        if need[0]:
            t = matmul(ds, ka)
            t *= scale
            gq = wrap(t)
        if need[1]:
            t = matmul(xp.swapaxes(ds, -1, -2), qa)
            t *= scale
            gk = wrap(t)
        return gq, gk, gv, gb

    def _backward_graph(self, q, k, v, bias, g_out, g_w, need):
        """The same backward recorded with ember ops (``create_graph=True``): the forward is
        recomputed as a graph so that the gradients are differentiable."""
        from ember.nn._functional.activation import softmax

        s = (q @ k.mT) * self.scale
        if bias is not None:
            s = s + bias
        L, S = s.shape[-2], s.shape[-1]
        if self.causal:
            keep = wrap(_causal_keep(xp_of(q._data), L, S))
            s = s.masked_fill(keep.logical_not(), -math.inf)
        dead = None
        if self.safe:  # the rows that are all -inf: a constant row, zeroed after softmax
            dead_a = (self.p.sum(axis=-1, keepdims=True) == 0)
            if dead_a.any():
                dead = wrap(dead_a)
                s = s.masked_fill(dead, 0.0)
        p = softmax(s, -1)
        if dead is not None:
            p = p.masked_fill(dead, 0.0)
        noise = None if self.noise is None else wrap(self.noise)
        pd = p if noise is None else p * noise
        gq = gk = gv = gb = None
        dp = None
        if g_out is not None:
            if need[2]:
                gv = pd.mT @ g_out
            dp = g_out @ v.mT
        if g_w is not None:
            dp = g_w if dp is None else dp + g_w
        if noise is not None:
            dp = dp * noise
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        if need[3]:
            gb = ds
        if need[0]:
            gq = (ds @ k) * self.scale
        if need[1]:
            gk = (ds.mT @ q) * self.scale
        return gq, gk, gv, gb


def _attention(q, k, v, bias, scale, causal, dropout_p, safe=True, want_weights=False):
    """Run the attention node (q, k, v, bias already checked); draw the dropout noise."""
    noise = None
    if dropout_p > 0:
        xp = xp_of(q._data)
        shape = tuple(np.broadcast_shapes(q.shape[:-2], k.shape[:-2])) + (q.shape[-2],
                                                                           k.shape[-2])
        dt = q._data.dtype
        if dropout_p >= 1:
            noise = xp.zeros(shape, dt)
        else:
            from ember._ops.random import _generator

            rng = _generator(None, q.device)._rng
            keep = rng.random(shape, dtype=np.float32) < (1 - dropout_p)
            noise = keep.astype(dt)
            noise *= 1.0 / (1 - dropout_p)
            if xp is not np:
                noise = xp.asarray(noise)
    return apply(_Attention, q, k, v, bias, scale, causal, noise, safe, want_weights)


# ---------------------------------------------------------------------------------------
# scaled_dot_product_attention

def _check_tensor(fn, name, pos, x):
    if not isinstance(x, TensorBase):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Tensor, not "
                        f"{type(x).__name__}")


def _broadcast_error(a, b):
    """PyTorch's message for shapes ``a`` and ``b`` that do not broadcast, or None."""
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    for i in range(n - 1, -1, -1):
        if a2[i] != b2[i] and a2[i] != 1 and b2[i] != 1:
            return RuntimeError(f"The size of tensor a ({a2[i]}) must match the size of "
                                f"tensor b ({b2[i]}) at non-singleton dimension {i}")
    return None


def _batch_shape(a, b):
    err = _broadcast_error(a, b)
    if err is not None:
        raise err
    return tuple(np.broadcast_shapes(tuple(a), tuple(b)))


def _bool_to_bias(mask, dtype):
    """A bool mask (True = take part) as an additive 0 / -inf float tensor."""
    m = mask._data
    xp = xp_of(m)
    return wrap(xp.where(m, xp.zeros((), dtype), xp.full((), -math.inf, dtype)))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value``, with dropout on the probabilities.

    Args:
        query: ``(N, ..., Hq, L, E)``.
        key: ``(N, ..., H, S, E)``.
        value: ``(N, ..., H, S, Ev)``.
        attn_mask: broadcastable to ``(N, ..., Hq, L, S)``: a bool mask (True = the
            position takes part in attention) or a float mask added to the scores.
        dropout_p: dropout probability on the attention weights (always applied when > 0).
        is_causal: use a lower-triangular (upper-left aligned) causal mask; an error if
            ``attn_mask`` is also given.
        scale: the factor on the scores; default ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: ``Hq`` may be a multiple of ``H``, each key
            and value head then serves ``Hq / H`` query heads.

    Returns:
        ``(N, ..., Hq, L, Ev)``. A query row whose keys are all masked gives zeros.
    """
    fn = "scaled_dot_product_attention"
    _check_tensor(fn, "query", 1, query)
    _check_tensor(fn, "key", 2, key)
    _check_tensor(fn, "value", 3, value)
    if attn_mask is not None:
        _check_tensor(fn, "attn_mask", 0, attn_mask)
    qd, kd, vd = query._data, key._data, value._data
    if qd.ndim < 2 or kd.ndim < 2 or vd.ndim < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {qd.ndim} key.dim: {kd.ndim} and value.dim: "
                           f"{vd.ndim} instead.")
    if not (qd.dtype == kd.dtype == vd.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {cpp_type_name(qd.dtype)} key.dtype: "
                           f"{cpp_type_name(kd.dtype)} and value.dtype: "
                           f"{cpp_type_name(vd.dtype)} instead.")
    if qd.dtype.kind != "f":
        raise RuntimeError(f"expected scalar type Float but found {type_name(qd.dtype)}")
    if attn_mask is not None:
        md = attn_mask._data.dtype
        if not (md.kind == "b" or md == np.float32 or md == qd.dtype):
            raise RuntimeError(
                f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {cpp_type_name(md)} and  query.dtype: "
                f"{cpp_type_name(qd.dtype)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")
    if enable_gqa:
        wrap_dim(-3, qd.ndim)
        hq, hk, hv = qd.shape[-3], kd.shape[-3], vd.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        if hk != hq:
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)
        kd, vd = key._data, value._data
    batch = _batch_shape(qd.shape[:-2], kd.shape[:-2])
    nb = math.prod(batch)
    if qd.shape[-1] != kd.shape[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nb}, {qd.shape[-1]}] but got: [{nb}, {kd.shape[-1]}].")
    batch_v = _batch_shape(batch, vd.shape[:-2])
    nbv = math.prod(batch_v)
    if vd.shape[-2] != kd.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nbv}, {kd.shape[-2]}] but got: [{nbv}, {vd.shape[-2]}].")
    bias = None
    if attn_mask is not None:
        score_shape = batch + (qd.shape[-2], kd.shape[-2])
        ms = attn_mask._data.shape
        err = _broadcast_error(score_shape, ms)
        if err is not None:
            raise err
        full = tuple(np.broadcast_shapes(score_shape, ms))
        if full != score_shape:
            raise RuntimeError(f"output with shape {list(score_shape)} doesn't match the "
                               f"broadcast shape {list(full)}")
        if attn_mask._data.dtype.kind == "b":
            bias = _bool_to_bias(attn_mask, qd.dtype)
        else:
            bias = attn_mask if attn_mask._data.dtype == qd.dtype else attn_mask.to(qd.dtype)
    sc = 1.0 / math.sqrt(qd.shape[-1]) if scale is None else float(scale)
    return _attention(query, key, value, bias, sc, bool(is_causal), dropout_p)


# ---------------------------------------------------------------------------------------
# multi_head_attention_forward

class _SplitHeads(Node):
    """``(..., n * E)`` packed projections -> ``n`` tensors ``(B, H, T, hd)`` (views);
    ``batch_first`` says whether the leading dims are ``(B, T)`` or ``(T, B)``."""

    def forward(self, x, n, heads, batch_first):
        a, b, e = x.shape
        hd = e // (n * heads)
        self.shape = x.shape
        self.n, self.heads, self.batch_first = n, heads, batch_first
        v = x.reshape(a, b, n, heads, hd)
        v = v.transpose(2, 0, 3, 1, 4) if batch_first else v.transpose(2, 1, 3, 0, 4)
        return tuple(v[i] for i in range(n))

    def backward(self, *grads):
        a, b, e = self.shape
        n, heads = self.n, self.heads
        hd = e // (n * heads)
        if is_grad_enabled():
            from ember._ops.creation import zeros
            from ember._ops.join import stack

            like = next(g for g in grads if g is not None)
            parts = [g if g is not None else zeros(like.shape, dtype=like.dtype,
                                                   device=like.device) for g in grads]
            st = stack(parts, 0)  # (n, B, H, T, hd)
            st = st.permute(1, 3, 0, 2, 4) if self.batch_first else st.permute(3, 1, 0, 2, 4)
            return st.reshape(a, b, e)
        like = next(g for g in grads if g is not None)._data
        xp = xp_of(like)
        out = xp.empty((a, b, n, heads, hd), like.dtype)
        view = out.transpose(2, 0, 3, 1, 4) if self.batch_first else out.transpose(2, 1, 3, 0, 4)
        for i, g in enumerate(grads):
            if g is None:
                view[i] = 0
            else:
                view[i] = g._data
        return wrap(out.reshape(a, b, e))


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        is_batched = True
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead")
    elif query.dim() == 2:
        is_batched = False
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} "
                                         f"but got {attn_mask.shape}")
    else:
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    return is_batched


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True,
                    stacklevel=3):
    """A bool mask (True = masked out) as a float 0 / -inf mask; a float mask as is."""
    if mask is None:
        return None
    md = mask._data.dtype
    is_float = md.kind == "f"
    if md.kind != "b" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and md != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=stacklevel)
    if not is_float:
        m = mask._data
        xp = xp_of(m)
        dt = target_type.numpy if hasattr(target_type, "numpy") else np.dtype(target_type)
        return wrap(xp.where(m, xp.full((), -math.inf, dt), xp.zeros((), dt)))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, TensorBase):
        return input._data.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _pad_last(mask):
    """``F.pad(mask, (0, 1))``: one more (zero) column."""
    from ember.nn._functional.padding import pad

    return pad(mask, (0, 1))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on ``(L, N, E)`` (or unbatched ``(L, E)``) inputs.

    See :class:`~ember.nn.MultiheadAttention` for the arguments.

    Returns:
        ``(attn_output, attn_output_weights)``: ``(L, N, E)``, and ``(N, L, S)`` (averaged
        over heads) or ``(N, num_heads, L, S)`` weights when ``need_weights``, else None.
    """
    return _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                        in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                        out_proj_weight, out_proj_bias, training, key_padding_mask,
                        need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
                        k_proj_weight, v_proj_weight, static_k, static_v,
                        average_attn_weights, is_causal, batch_first=False)


def _in_projection_check(Eq, Ek, Ev, w_q, w_k, w_v, b_q, b_k, b_v):
    if tuple(w_q.shape) != (Eq, Eq):
        raise AssertionError(f"expecting query weights shape of {(Eq, Eq)}, but got "
                             f"{w_q.shape}")
    if tuple(w_k.shape) != (Eq, Ek):
        raise AssertionError(f"expecting key weights shape of {(Eq, Ek)}, but got {w_k.shape}")
    if tuple(w_v.shape) != (Eq, Ev):
        raise AssertionError(f"expecting value weights shape of {(Eq, Ev)}, but got "
                             f"{w_v.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")


def _heads(x, bsz, num_heads, head_dim, batch_first):
    """``(T, B, E)`` / ``(B, T, E)`` -> ``(B, H, T, hd)`` (a view where possible)."""
    if batch_first:
        return x.view(bsz, -1, num_heads, head_dim).transpose(1, 2)
    return x.view(-1, bsz, num_heads, head_dim).permute(1, 2, 0, 3)


def _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                 out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                 use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                 static_k, static_v, average_attn_weights, is_causal, batch_first):
    """``multi_head_attention_forward`` for either layout: ``batch_first`` says whether
    batched inputs are ``(N, L, E)`` (else ``(L, N, E)``); the output has the same one."""
    from ember._ops.creation import zeros
    from ember._ops.join import cat
    from ember.nn._functional.linear import linear

    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        batch_first = False
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    if batch_first:
        bsz, tgt_len, embed_dim = query.shape
        src_len = key.shape[1]
    else:
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
    qdtype = query._data.dtype

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", qdtype,
                                       stacklevel=4)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", qdtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # in-projection, straight into the (B, H, T, hd) layout
    E = embed_dim
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key is value and query is key:
            proj = linear(query, in_proj_weight, in_proj_bias)
            q, k, v = apply(_SplitHeads, proj, 3, num_heads, batch_first)
        elif key is value:
            w_q, w_kv = in_proj_weight.split([E, E * 2])
            b_q, b_kv = (None, None) if in_proj_bias is None else in_proj_bias.split([E, E * 2])
            q = _heads(linear(query, w_q, b_q), bsz, num_heads, head_dim, batch_first)
            kv = linear(key, w_kv, b_kv)
            k, v = apply(_SplitHeads, kv, 2, num_heads, batch_first)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias.chunk(3)
            q = _heads(linear(query, w_q, b_q), bsz, num_heads, head_dim, batch_first)
            k = _heads(linear(key, w_k, b_k), bsz, num_heads, head_dim, batch_first)
            v = _heads(linear(value, w_v, b_v), bsz, num_heads, head_dim, batch_first)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        _in_projection_check(query.shape[-1], key.shape[-1], value.shape[-1], q_proj_weight,
                             k_proj_weight, v_proj_weight, b_q, b_k, b_v)
        q = _heads(linear(query, q_proj_weight, b_q), bsz, num_heads, head_dim, batch_first)
        k = _heads(linear(key, k_proj_weight, b_k), bsz, num_heads, head_dim, batch_first)
        v = _heads(linear(value, v_proj_weight, b_v), bsz, num_heads, head_dim, batch_first)

    # the attention mask as (1 | B*H, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        bk = bias_k.reshape(1, num_heads, 1, head_dim).expand(bsz, num_heads, 1, head_dim)
        bv = bias_v.reshape(1, num_heads, 1, head_dim).expand(bsz, num_heads, 1, head_dim)
        k = cat([k, bk], 2)
        v = cat([v, bv], 2)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")

    if static_k is not None:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got "
                                 f"{static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got "
                                 f"{static_k.size(2)}")
        k = static_k.view(bsz, num_heads, static_k.size(1), head_dim)
    if static_v is not None:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got "
                                 f"{static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got "
                                 f"{static_v.size(2)}")
        v = static_v.view(bsz, num_heads, static_v.size(1), head_dim)

    if add_zero_attn:
        k = cat([k, zeros((bsz, num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 2)
        v = cat([v, zeros((bsz, num_heads, 1, v.shape[-1]), dtype=v.dtype, device=v.device)],
                2)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[2]
    # merge the masks into one additive (1 | B, 1 | H, L, S) float mask
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                     else attn_mask.view(bsz, num_heads, tgt_len, src_len))
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if attn_mask is not None and attn_mask._data.dtype != qdtype:
        attn_mask = attn_mask.to(qdtype)

    if not training:
        dropout_p = 0.0
    scale = 1.0 / math.sqrt(head_dim)
    causal = bool(is_causal) and attn_mask is None and not need_weights
    res = _attention(q, k, v, attn_mask, scale, causal, dropout_p, safe=not need_weights,
                     want_weights=need_weights)
    out, weights = res if need_weights else (res, None)
    # (B, H, L, hd) -> (L, B, E) or (B, L, E), then the out-projection
    if batch_first:
        out = out.transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
    else:
        out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights
