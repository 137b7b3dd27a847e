"""Converters of attention: ``F.scaled_dot_product_attention``, ``MultiheadAttention`` and
the Transformer layers and stacks (whose forwards inspect mask values, so they are
converted as a whole rather than traced through)."""

from __future__ import annotations

import math

import numpy as np

from ember.onnx import _ops_nn as N
from ember.onnx._builder import Value
from ember.onnx._context import converts, converts_module, lookup_function, lookup_module

__all__: list = []


def _call_submodule(ctx, parent_path, name, m, *args, **kwargs):
    fn = lookup_module(m)
    saved = ctx.path
    ctx.path = f"{parent_path}.{name}" if parent_path else name
    try:
        if fn is None:
            raise ctx.unsupported(type(m).__qualname__)
        return fn(ctx, m, *args, **kwargs)
    finally:
        ctx.path = saved


def _neg_inf_mask(ctx, mask, dtype, true_masks=True):
    """A boolean mask as an additive float mask (True: masked, or with ``true_masks``
    False, as in scaled_dot_product_attention, True: attended); a float mask as it is."""
    m = ctx.tensor(mask)
    if m.dtype.kind == "b":
        zero = ctx.tensor(np.asarray(0.0, dtype=dtype))
        ninf = ctx.tensor(np.asarray(-np.inf, dtype=dtype))
        pair = [ninf, zero] if true_masks else [zero, ninf]
        return ctx.b.op("Where", [m] + pair, dtype=dtype, shape=m.shape)
    return ctx.b.cast(m, dtype)


def _causal_mask(ctx, L, S, dtype):
    """(L, S) additive mask: -inf above the diagonal."""
    import onnx

    target = ctx.shape_vector((L, S))
    t = onnx.helper.make_tensor("value", onnx.TensorProto.BOOL, [1], [True])
    keep = ctx.b.op("ConstantOfShape", [target], value=t, dtype=np.bool_, shape=(None, None))
    keep = ctx.b.op("Trilu", [keep, ctx.b.constant(np.int64(0))], upper=0, dtype=np.bool_)
    zero = ctx.tensor(np.asarray(0.0, dtype=dtype))
    ninf = ctx.tensor(np.asarray(-np.inf, dtype=dtype))
    return ctx.b.op("Where", [keep, zero, ninf], dtype=dtype, shape=(None, None))


def _attend(ctx, q, k, v, mask, scale, is_causal, L, S):
    """softmax(q k^T * scale + mask) v for (..., L, D) q and (..., S, D) k, v; returns
    (output, weights)."""
    dtype = q.dtype
    kt = ctx.b.op("Transpose", [k], perm=list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2])
    scores = ctx.b.op("MatMul", [q, kt], dtype=dtype)
    scores = ctx.b.op("Mul", [scores, ctx.tensor(np.asarray(scale, dtype=dtype))])
    if is_causal:
        scores = ctx.b.op("Add", [scores, _causal_mask(ctx, L, S, dtype)])
    if mask is not None:
        scores = ctx.b.op("Add", [scores, mask])
    weights = ctx.b.op("Softmax", [scores], axis=-1)
    return ctx.b.op("MatMul", [weights, v], dtype=dtype), weights


@converts("ember.nn.functional.scaled_dot_product_attention")
def scaled_dot_product_attention(ctx, query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    if dropout_p:
        raise ctx.unsupported("scaled_dot_product_attention with dropout_p > 0")
    q, k, v = (N._float(ctx, t) for t in (query, key, value))
    if enable_gqa and q.shape[-3] != k.shape[-3]:
        raise ctx.unsupported("scaled_dot_product_attention(enable_gqa=True) with fewer "
                              "key/value heads")
    d = ctx.dim(q, -1)
    if isinstance(d, Value):
        raise ctx.fail("scaled_dot_product_attention needs a fixed head size")
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    mask = None if attn_mask is None else _neg_inf_mask(ctx, attn_mask, q.dtype, False)
    out, _ = _attend(ctx, q, k, v, mask, scale, is_causal, ctx.dim(q, -2), ctx.dim(k, -2))
    out.shape = q.shape[:-1] + (v.shape[-1],)
    return out


def _project(ctx, x, w, b):
    y = ctx.b.op("MatMul", [x, ctx.b.op("Transpose", [w], perm=[1, 0])], dtype=x.dtype)
    return ctx.b.op("Add", [y, b]) if b is not None else y


def _rows(ctx, t, start, stop):
    return ctx.b.op("Slice", [t, ctx.b.ints([start]), ctx.b.ints([stop]), ctx.b.ints([0])])


@converts_module("ember.nn.MultiheadAttention")
def multihead_attention(ctx, m, query, key, value, key_padding_mask=None, need_weights=True,
                        attn_mask=None, average_attn_weights=True, is_causal=False):
    if m.bias_k is not None or m.add_zero_attn:
        raise ctx.unsupported("MultiheadAttention with add_bias_kv or add_zero_attn")
    if m.training and m.dropout > 0:
        raise ctx.unsupported("MultiheadAttention in training mode (export in eval mode)")
    q, k, v = (N._float(ctx, t) for t in (query, key, value))
    dtype = q.dtype
    unbatched = q.rank == 2
    if unbatched:
        q, k, v = (ctx.b.unsqueeze(t, [0], shape=(1,) + t.shape) for t in (q, k, v))
    elif not m.batch_first:
        q, k, v = (ctx.b.op("Transpose", [t], perm=[1, 0, 2],
                            shape=(t.shape[1], t.shape[0], t.shape[2])) for t in (q, k, v))
    E, H = m.embed_dim, m.num_heads
    D = E // H
    L, S = ctx.dim(q, 1), ctx.dim(k, 1)
    bias = m.in_proj_bias
    bq = bk = bv = None
    if bias is not None:
        b = ctx.tensor(bias, dtype)
        bq, bk, bv = _rows(ctx, b, 0, E), _rows(ctx, b, E, 2 * E), _rows(ctx, b, 2 * E, 3 * E)
    if m._qkv_same_embed_dim:
        w = ctx.tensor(m.in_proj_weight, dtype)
        wq, wk, wv = _rows(ctx, w, 0, E), _rows(ctx, w, E, 2 * E), _rows(ctx, w, 2 * E, 3 * E)
    else:
        wq, wk, wv = (ctx.tensor(t, dtype) for t in (m.q_proj_weight, m.k_proj_weight,
                                                    m.v_proj_weight))
    heads = ctx.b.ints([0, 0, H, D])
    split = []
    for x, w, b in ((q, wq, bq), (k, wk, bk), (v, wv, bv)):
        y = ctx.b.op("Reshape", [_project(ctx, x, w, b), heads])
        split.append(ctx.b.op("Transpose", [y], perm=[0, 2, 1, 3],
                              shape=(None, H, None, D)))  # (N, H, len, D)
    qh, kh, vh = split

    mask = None
    if attn_mask is not None:
        am = _neg_inf_mask(ctx, attn_mask, dtype)
        if am.rank == 3:  # (N * H, L, S) -> (N, H, L, S)
            am = ctx.b.op("Reshape", [am, ctx.shape_vector((-1, H, ctx.dim(am, 1),
                                                            ctx.dim(am, 2)))])
        mask = am
    if key_padding_mask is not None:
        kp = _neg_inf_mask(ctx, key_padding_mask, dtype)
        if kp.rank == 1:
            kp = ctx.b.unsqueeze(kp, [0])
        kp = ctx.b.op("Unsqueeze", [kp, ctx.b.ints([1, 2])])  # (N, 1, 1, S)
        mask = kp if mask is None else ctx.b.op("Add", [mask, kp])
    causal = bool(is_causal) and attn_mask is None
    out, weights = _attend(ctx, qh, kh, vh, mask, 1.0 / math.sqrt(D), causal, L, S)
    out = ctx.b.op("Transpose", [out], perm=[0, 2, 1, 3])
    out = ctx.b.op("Reshape", [out, ctx.b.ints([0, 0, E])])
    ow = ctx.tensor(m.out_proj.weight, dtype)
    ob = ctx.tensor(m.out_proj.bias, dtype) if m.out_proj.bias is not None else None
    out = _project(ctx, out, ow, ob)
    out.shape = (q.shape[0], q.shape[1], E)
    if unbatched:
        out = ctx.b.squeeze(out, [0], shape=out.shape[1:])
    elif not m.batch_first:
        out = ctx.b.op("Transpose", [out], perm=[1, 0, 2],
                       shape=(out.shape[1], out.shape[0], E))
    if not need_weights:
        return (out, None)
    if average_attn_weights:
        weights = ctx.b.reduce("ReduceMean", weights, [1], False, dtype=dtype)
    if unbatched:
        weights = ctx.b.squeeze(weights, [0])
    return (out, weights)


def _activation(ctx, path, layer, x):
    act = layer.activation
    from ember.nn import Module

    if isinstance(act, Module):
        return _call_submodule(ctx, path, "activation", act, x)
    fn = lookup_function(act)
    if fn is None:
        raise ctx.unsupported(getattr(act, "__qualname__", repr(act)))
    return fn(ctx, x)


def _keep_shape(v, like):
    v.shape = like.shape
    return v


def _encoder_layer(ctx, m, path, src, src_mask=None, src_key_padding_mask=None,
                   is_causal=False):
    x = ctx.tensor(src)

    def sa(y):
        out = _call_submodule(ctx, path, "self_attn", m.self_attn, y, y, y,
                              key_padding_mask=src_key_padding_mask, need_weights=False,
                              attn_mask=src_mask, is_causal=is_causal)[0]
        return _keep_shape(out, x)

    def ff(y):
        h = _call_submodule(ctx, path, "linear1", m.linear1, y)
        h = _activation(ctx, path, m, h)
        return _keep_shape(_call_submodule(ctx, path, "linear2", m.linear2, h), x)

    def norm(name, y):
        return _keep_shape(_call_submodule(ctx, path, name, getattr(m, name), y), x)

    def add(a, b):
        return _keep_shape(ctx.b.op("Add", [a, b]), x)

    if m.training and (m.dropout.p > 0):
        raise ctx.unsupported("TransformerEncoderLayer in training mode (export in eval mode)")
    if m.norm_first:
        x = add(x, sa(norm("norm1", x)))
        x = add(x, ff(norm("norm2", x)))
    else:
        x = norm("norm1", add(x, sa(x)))
        x = norm("norm2", add(x, ff(x)))
    return x


@converts_module("ember.nn.TransformerEncoderLayer")
def transformer_encoder_layer(ctx, m, src, src_mask=None, src_key_padding_mask=None,
                              is_causal=False):
    return _encoder_layer(ctx, m, ctx.path, src, src_mask, src_key_padding_mask, is_causal)


@converts_module("ember.nn.TransformerEncoder")
def transformer_encoder(ctx, m, src, mask=None, src_key_padding_mask=None, is_causal=None):
    path = ctx.path
    x = ctx.tensor(src)
    out = x
    for i, layer in enumerate(m.layers):
        lp = f"{path}.layers.{i}" if path else f"layers.{i}"
        saved = ctx.path
        ctx.path = lp
        try:
            if type(layer).forward is not _encoder_layer_forward():
                fn = lookup_module(layer)
                if fn is None:
                    raise ctx.unsupported(type(layer).__qualname__)
                out = fn(ctx, layer, out, src_mask=mask,
                         src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
            else:
                out = _encoder_layer(ctx, layer, lp, out, mask, src_key_padding_mask,
                                     bool(is_causal))
        finally:
            ctx.path = saved
    first = m.layers[0]
    if src_key_padding_mask is not None and mask is None and x.rank == 3 and \
            getattr(m, "use_nested_tensor", False) and not first.training:
        # PyTorch's nested-tensor path (evaluation with a padding mask) returns zeros at
        # the padded positions
        pad = ctx.tensor(src_key_padding_mask)
        if pad.dtype.kind != "b":
            pad = ctx.b.op("Equal", [pad, ctx.tensor(np.asarray(-np.inf, pad.dtype))],
                           dtype=np.bool_)
        if not first.self_attn.batch_first:
            pad = ctx.b.op("Transpose", [pad], perm=[1, 0])
        pad = ctx.b.unsqueeze(pad, [2])
        out = _keep_shape(ctx.b.op("Where", [pad, ctx.tensor(np.asarray(0.0, x.dtype)), out]),
                          x)
    if m.norm is not None:
        out = _keep_shape(_call_submodule(ctx, path, "norm", m.norm, out), x)
    return out


def _encoder_layer_forward():
    from ember.nn import TransformerEncoderLayer

    return TransformerEncoderLayer.forward


def _decoder_layer(ctx, m, path, tgt, memory, tgt_mask=None, memory_mask=None,
                   tgt_key_padding_mask=None, memory_key_padding_mask=None,
                   tgt_is_causal=False, memory_is_causal=False):
    x = ctx.tensor(tgt)
    mem = ctx.tensor(memory)

    def attn(name, y, kv, mask, kpm, causal):
        out = _call_submodule(ctx, path, name, getattr(m, name), y, kv, kv,
                              key_padding_mask=kpm, need_weights=False, attn_mask=mask,
                              is_causal=causal)[0]
        return _keep_shape(out, x)

    def ff(y):
        h = _call_submodule(ctx, path, "linear1", m.linear1, y)
        h = _activation(ctx, path, m, h)
        return _keep_shape(_call_submodule(ctx, path, "linear2", m.linear2, h), x)

    def norm(name, y):
        return _keep_shape(_call_submodule(ctx, path, name, getattr(m, name), y), x)

    def add(a, b):
        return _keep_shape(ctx.b.op("Add", [a, b]), x)

    if m.training and m.dropout.p > 0:
        raise ctx.unsupported("TransformerDecoderLayer in training mode (export in eval mode)")
    if m.norm_first:
        x = add(x, _self(attn, norm("norm1", x), tgt_mask, tgt_key_padding_mask,
                         tgt_is_causal))
        x = add(x, attn("multihead_attn", norm("norm2", x), mem, memory_mask,
                        memory_key_padding_mask, memory_is_causal))
        x = add(x, ff(norm("norm3", x)))
    else:
        x = norm("norm1", add(x, _self(attn, x, tgt_mask, tgt_key_padding_mask,
                                       tgt_is_causal)))
        x = norm("norm2", add(x, attn("multihead_attn", x, mem, memory_mask,
                                      memory_key_padding_mask, memory_is_causal)))
        x = norm("norm3", add(x, ff(x)))
    return x


def _self(attn, y, mask, kpm, causal):
    return attn("self_attn", y, y, mask, kpm, causal)


@converts_module("ember.nn.TransformerDecoderLayer")
def transformer_decoder_layer(ctx, m, tgt, memory, tgt_mask=None, memory_mask=None,
                              tgt_key_padding_mask=None, memory_key_padding_mask=None,
                              tgt_is_causal=False, memory_is_causal=False):
    return _decoder_layer(ctx, m, ctx.path, tgt, memory, tgt_mask, memory_mask,
                          tgt_key_padding_mask, memory_key_padding_mask, bool(tgt_is_causal),
                          bool(memory_is_causal))


@converts_module("ember.nn.TransformerDecoder")
def transformer_decoder(ctx, m, tgt, memory, tgt_mask=None, memory_mask=None,
                        tgt_key_padding_mask=None, memory_key_padding_mask=None,
                        tgt_is_causal=None, memory_is_causal=False):
    path = ctx.path
    x = ctx.tensor(tgt)
    out = x
    for i, layer in enumerate(m.layers):
        lp = f"{path}.layers.{i}" if path else f"layers.{i}"
        out = _decoder_layer(ctx, layer, lp, out, memory, tgt_mask, memory_mask,
                             tgt_key_padding_mask, memory_key_padding_mask,
                             bool(tgt_is_causal), bool(memory_is_causal))
    if m.norm is not None:
        out = _keep_shape(_call_submodule(ctx, path, "norm", m.norm, out), x)
    return out

