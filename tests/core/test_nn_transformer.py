"""Attention and the Transformer layers of ember.nn: scaled_dot_product_attention against a
NumPy reference, gradcheck in float64 (every mask kind, is_causal, GQA, MultiheadAttention's
options, encoder and decoder layers), PyTorch's error messages, reprs and state_dict keys."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def _t(a, grad=False):
    return ember.tensor(np.asarray(a), requires_grad=grad)


def _rand(rng, *shape, grad=True):
    return _t(rng.standard_normal(shape), grad)


def _ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """NumPy reference: softmax(q k^T * scale + bias) v, all -inf rows giving zeros."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(s - m)
    d = e.sum(-1, keepdims=True)
    p = e / np.where(d == 0, 1, d)
    return p @ v


# ---------------------------------------------------------------------------------------
# scaled_dot_product_attention

@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal", "scale"])
def test_sdpa_forward_matches_reference(kind):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)))
    kw, ref_kw = {}, {}
    if kind == "bool":
        m = rng.random((4, 5)) > 0.4
        m[2] = False  # a row with every key masked gives zeros
        kw["attn_mask"], ref_kw["mask"] = _t(m), m
    elif kind == "float":
        m = rng.standard_normal((3, 1, 5))
        kw["attn_mask"], ref_kw["mask"] = _t(m), m
    elif kind == "causal":
        kw["is_causal"] = ref_kw["causal"] = True
    elif kind == "scale":
        kw["scale"] = ref_kw["scale"] = 0.3
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), **kw)
    assert out.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(out.numpy(), _ref_sdpa(q, k, v, **ref_kw), rtol=1e-12,
                               atol=1e-12)
    if kind == "bool":
        assert (out.numpy()[:, :, 2] == 0).all()


@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal", "scale", "gqa",
                                  "broadcast", "causal_rect", "empty_keys"])
def test_sdpa_gradcheck(kind):
    rng = np.random.default_rng(1)
    qs, ks, vs = (2, 4, 3), (2, 5, 3), (2, 5, 2)
    kw = {}
    extra = []
    if kind == "gqa":
        qs, ks, vs = (1, 4, 3, 3), (1, 2, 5, 3), (1, 1, 5, 2)
        kw["enable_gqa"] = True
    elif kind == "broadcast":
        qs, ks, vs = (3, 4, 3), (5, 3), (5, 2)
    elif kind == "empty_keys":
        ks, vs = (2, 0, 3), (2, 0, 2)
    q, k, v = _rand(rng, *qs), _rand(rng, *ks), _rand(rng, *vs)
    if kind == "bool":
        m = rng.random((4, 5)) > 0.4
        m[1] = False
        kw["attn_mask"] = _t(m)
    elif kind == "float":
        extra = [_rand(rng, 4, 5)]
    elif kind in ("causal", "causal_rect"):
        kw["is_causal"] = True
        if kind == "causal_rect":
            k, v = _rand(rng, 2, 3, 3), _rand(rng, 2, 3, 2)
    elif kind == "scale":
        kw["scale"] = 0.7

    def fn(q, k, v, *mask):
        return F.scaled_dot_product_attention(q, k, v, *mask, **kw)

    assert gradcheck(fn, (q, k, v, *extra))


def test_sdpa_gradgradcheck():
    rng = np.random.default_rng(2)
    q, k, v = _rand(rng, 2, 3, 2), _rand(rng, 2, 4, 2), _rand(rng, 2, 4, 2)
    m = rng.random((3, 4)) > 0.3
    m[0] = False
    assert gradgradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, _t(m)),
                         (q, k, v))
    assert gradgradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c,
                                                                        is_causal=True),
                         (q, k, v))


def test_sdpa_gqa_equals_repeated_heads():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s) for s in ((2, 6, 4, 8), (2, 3, 5, 8), (2, 2, 5, 4)))
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), enable_gqa=True)
    ref = _ref_sdpa(q, np.repeat(k, 2, axis=1), np.repeat(v, 3, axis=1))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_sdpa_dropout():
    rng = np.random.default_rng(4)
    q, k = _t(rng.standard_normal((2, 4, 8))), _t(rng.standard_normal((2, 50, 8)))
    v = _t(np.ones((2, 50, 3)))
    assert (F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0).all()
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ember.manual_seed(0)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    base = F.scaled_dot_product_attention(q, k, v).numpy()
    assert not np.allclose(a.numpy(), base)
    # the kept weights are scaled by 1 / (1 - p): the mean over many draws is unchanged
    ember.manual_seed(1)
    big_q, big_k = _t(np.zeros((400, 1, 8))), _t(np.zeros((400, 20, 8)))
    big = F.scaled_dot_product_attention(big_q, big_k, _t(np.ones((400, 20, 1))),
                                         dropout_p=0.3)
    assert abs(big.numpy().mean() - 1.0) < 0.05


def test_sdpa_dropout_gradient_uses_same_noise():
    rng = np.random.default_rng(5)
    q, k, v = _rand(rng, 3, 4), _rand(rng, 5, 4), _rand(rng, 5, 2)
    ember.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    out.sum().backward()
    # with the same seed the same mask is drawn: the gradient of v is the column sums of
    # the dropped-out weights, which the output reproduces with v = identity-like ones
    ember.manual_seed(3)
    w = F.scaled_dot_product_attention(q.detach(), k.detach(), _t(np.eye(5)), dropout_p=0.5)
    np.testing.assert_allclose(v.grad.numpy(), np.repeat(w.numpy().sum(0)[:, None], 2, 1),
                               rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 3), h=st.integers(1, 3), L=st.integers(1, 6), S=st.integers(1, 6),
       e=st.integers(1, 5), causal=st.booleans(), seed=st.integers(0, 1000))
def test_sdpa_hypothesis_against_numpy(b, h, L, S, e, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((b, h, L, e), (b, h, S, e), (b, h, S, e + 1)))
    mask = None if causal else rng.random((L, S)) > 0.3
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v),
                                         None if mask is None else _t(mask), is_causal=causal)
    assert out.dtype == ember.float32
    ref = _ref_sdpa(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64),
                    mask=mask, causal=causal)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_sdpa_errors():
    q, k, v = ember.randn(2, 3, 4, 8), ember.randn(2, 3, 5, 8), ember.randn(2, 3, 5, 6)
    sdpa = F.scaled_dot_product_attention
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        sdpa(q, k, v, attn_mask=ember.ones(4, 5, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[6, 8\] but got: \[6, 7\]\."):
        sdpa(q, ember.randn(2, 3, 5, 7), v)
    with pytest.raises(RuntimeError, match=r"to be: \[6, 5\] but got: \[6, 6\]\."):
        sdpa(q, k, ember.randn(2, 3, 6, 6))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 2"):
        sdpa(q, k, v, attn_mask=ember.ones(3, 5))
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3, 4, 5\] doesn't match "
                                           r"the broadcast shape \[7, 2, 3, 4, 5\]"):
        sdpa(q, k, v, attn_mask=ember.ones(7, 2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to "
                                           "match query dtype, but got attn_mask.dtype: long "
                                           "int and  query.dtype: float instead."):
        sdpa(q, k, v, attn_mask=ember.ones(4, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="to have the same dtype, but got query.dtype: float "
                                           "key.dtype: double and value.dtype: float"):
        sdpa(q, k.double(), v)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(6\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 1"):
        sdpa(ember.randn(2, 6, 4, 8), k, v)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        sdpa(ember.randn(2, 4, 4, 8), k, v, enable_gqa=True)
    with pytest.raises(RuntimeError, match="at least 2 dimensional, but got query.dim: 1 "
                                           "key.dim: 2 and value.dim: 2 instead."):
        sdpa(ember.randn(8), ember.randn(5, 8), ember.randn(5, 6))
    with pytest.raises(IndexError, match="Dimension out of range"):
        sdpa(ember.randn(4, 8), ember.randn(5, 8), ember.randn(5, 6), enable_gqa=True)
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, "
                                           "but got 1.5"):
        sdpa(q, k, v, dropout_p=1.5)
    with pytest.raises(TypeError, match="argument 'value' \\(position 3\\) must be Tensor, "
                                        "not list"):
        sdpa(q, k, [1])
    with pytest.raises(TypeError, match="argument 'attn_mask' must be Tensor, not float"):
        sdpa(q, k, v, attn_mask=1.0)


# ---------------------------------------------------------------------------------------
# MultiheadAttention

def _mha_inputs(rng, L, S, N, E, kdim, vdim, batch_first):
    def shape(T, D):
        return (N, T, D) if batch_first else (T, N, D)
    return (_rand(rng, *shape(L, E)), _rand(rng, *shape(S, kdim)),
            _rand(rng, *shape(S, vdim)))


@pytest.mark.parametrize("opts", [
    {}, {"batch_first": True}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True},
    {"add_zero_attn": True}, {"bias": False}, {"add_bias_kv": True, "add_zero_attn": True},
])
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_gradcheck(opts, need_weights):
    rng = np.random.default_rng(6)
    ember.manual_seed(0)
    E = 4
    m = nn.MultiheadAttention(E, 2, **opts).double()
    q, k, v = _mha_inputs(rng, 3, 4, 2, E, opts.get("kdim", E), opts.get("vdim", E),
                          opts.get("batch_first", False))
    kpm = np.zeros((2, 4), bool)
    kpm[1, 2:] = True
    params = [p for _, p in m.named_parameters()]
    names = [n for n, _ in m.named_parameters()]

    def fn(q, k, v, *ps):
        saved = {n: getattr_path(m, n) for n in names}
        for n, p in zip(names, ps, strict=True):
            setattr_path(m, n, p)
        try:
            out, w = m(q, k, v, key_padding_mask=_t(kpm), need_weights=need_weights,
                       average_attn_weights=False)
        finally:
            for n in names:
                setattr_path(m, n, saved[n])
        return (out, w) if need_weights else out

    assert gradcheck(fn, (q, k, v, *[p.detach().requires_grad_() for p in params]))


def getattr_path(m, name):
    *mods, last = name.split(".")
    for s in mods:
        m = getattr(m, s)
    return m._parameters[last]


def setattr_path(m, name, value):
    *mods, last = name.split(".")
    for s in mods:
        m = getattr(m, s)
    m._parameters[last] = value


def test_mha_self_attention_gradcheck_with_masks():
    rng = np.random.default_rng(7)
    ember.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, batch_first=True).double()
    am = _rand(rng, 3, 3)   # a float attn_mask gets a gradient too
    kpm = np.array([[0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]])

    def fn(x, am):
        return m(x, x, x, key_padding_mask=_t(kpm), attn_mask=am)[0]

    assert gradcheck(fn, (_rand(rng, 2, 3, 4), am))

    def causal(x):
        mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
        return m(x, x, x, attn_mask=mask, is_causal=True, need_weights=False)[0]

    assert gradcheck(causal, (_rand(rng, 2, 3, 4),))


def test_mha_unbatched_and_weights():
    rng = np.random.default_rng(8)
    ember.manual_seed(0)
    m = nn.MultiheadAttention(6, 3).double()
    x = _rand(rng, 5, 6, grad=False)
    with ember.no_grad():
        out, w = m(x, x, x)
        out2, w2 = m(x, x, x, average_attn_weights=False)
        outb, wb = m(x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1))
    assert out.shape == (5, 6) and w.shape == (5, 5)
    np.testing.assert_allclose(w.numpy().sum(-1), np.ones(5), rtol=1e-12)
    assert w2.shape == (3, 5, 5)
    np.testing.assert_allclose(w2.numpy().mean(0), w.numpy(), rtol=1e-12)
    # batched gives the same per sample
    np.testing.assert_allclose(outb.numpy()[:, 0], out.numpy(), rtol=1e-12)
    assert m(x, x, x, need_weights=False)[1] is None


def test_mha_fully_masked_rows():
    ember.manual_seed(0)
    m = nn.MultiheadAttention(4, 2)
    x = ember.randn(3, 1, 4)
    kpm = ember.ones(1, 3, dtype=ember.bool)
    with ember.no_grad():
        out, w = m(x, x, x, key_padding_mask=kpm)  # the weights path: NaN, as PyTorch
        assert np.isnan(out.numpy()).all() and np.isnan(w.numpy()).all()
        out, _ = m(x, x, x, key_padding_mask=kpm, need_weights=False)  # sdpa: zeros + bias
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(m.out_proj.bias.detach().numpy(),
                                                            (3, 1, 4)))


def test_mha_parameters_repr_and_state_dict():
    m = nn.MultiheadAttention(8, 2)
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                       "in_features=8, out_features=8, bias=True)\n)")
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                    "out_proj.bias"]
    assert m.in_proj_weight.shape == (24, 8) and m.in_proj_bias.shape == (24,)
    assert (m.in_proj_bias.detach().numpy() == 0).all()
    assert (m.out_proj.bias.detach().numpy() == 0).all()
    bound = math.sqrt(6 / (24 + 8))  # xavier_uniform_
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= bound
    assert m.q_proj_weight is None and m.bias_k is None
    m2 = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    assert list(m2.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                     "bias_k", "bias_v", "out_proj.weight"]
    assert m2.k_proj_weight.shape == (8, 3) and m2.v_proj_weight.shape == (8, 5)
    assert m2.bias_k.shape == (1, 1, 8) and m2.in_proj_weight is None
    assert m2.in_proj_bias is None and m2.out_proj.bias is None
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, nn.Linear)


def test_mha_errors():
    m = nn.MultiheadAttention(4, 2)
    x = ember.randn(3, 2, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got "
                                         "embed_dim=0 and num_heads=2 instead"):
        nn.MultiheadAttention(0, 2)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor "
                                             "but received 4-D query tensor"):
        m(x.unsqueeze(0), x, x)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D but found "
                                             "2-D and 3-D tensors respectively"):
        m(x, x[0], x)
    with pytest.raises(AssertionError, match="expected `key_padding_mask` to be `None` or 2-D"):
        m(x, x, x, key_padding_mask=ember.zeros(2, 3, 1, dtype=ember.bool))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[3, 4\].*, "
                                           r"but should be \(3, 3\)\."):
        m(x, x, x, attn_mask=ember.zeros(3, 4, dtype=ember.bool))
    with pytest.raises(RuntimeError, match=r"should be \(4, 3, 3\)\."):
        m(x, x, x, attn_mask=ember.zeros(2, 3, 3, dtype=ember.bool))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 6"):
        m(ember.randn(3, 2, 6), x, x)
    with pytest.raises(AssertionError, match="Expected key_padded_mask.shape\\[1\\] to be 3, "
                                             "but got 5"):
        m(x, x, x, key_padding_mask=ember.zeros(2, 5, dtype=ember.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask "
                                             "are supported"):
        m(x, x, x, key_padding_mask=ember.zeros(2, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="does not match value shape"):
        m(x, x, ember.randn(4, 2, 4))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=ember.zeros(2, 3, dtype=ember.bool),
          attn_mask=ember.zeros(3, 3))


def test_functional_mha_matches_module():
    rng = np.random.default_rng(9)
    ember.manual_seed(0)
    m = nn.MultiheadAttention(4, 2).double()
    q, k, v = _mha_inputs(rng, 3, 5, 2, 4, 4, 4, False)
    out, w = F.multi_head_attention_forward(
        q, k, v, 4, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
        m.out_proj.weight, m.out_proj.bias, training=False)
    out2, w2 = m(q, k, v)
    np.testing.assert_allclose(out.detach().numpy(), out2.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), w2.detach().numpy(), rtol=1e-12)
    # static_k / static_v replace the projected keys and values: (N * H, S, hd)
    sk, sv = _rand(rng, 4, 6, 2, grad=False), _rand(rng, 4, 6, 2, grad=False)
    out3, w3 = F.multi_head_attention_forward(
        q, k, v, 4, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
        m.out_proj.weight, m.out_proj.bias, static_k=sk, static_v=sv)
    assert out3.shape == (3, 2, 4) and w3.shape == (2, 3, 6)


# ---------------------------------------------------------------------------------------
# Transformer layers

def test_encoder_layer_gradcheck():
    rng = np.random.default_rng(10)
    ember.manual_seed(0)
    for opts in ({}, {"norm_first": True, "activation": "gelu"}, {"batch_first": True}):
        layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, **opts)
        layer = layer.double()
        kpm = _t(np.array([[False, False, True], [False, False, False]]))
        x = _rand(rng, *((2, 3, 4) if opts.get("batch_first") else (3, 2, 4)))
        mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
        assert gradcheck(lambda x, layer=layer, kpm=kpm: layer(x, src_key_padding_mask=kpm),
                         (x,))
        assert gradcheck(lambda x, layer=layer, mask=mask: layer(x, src_mask=mask,
                                                                 is_causal=True), (x,))


def test_decoder_layer_gradcheck():
    rng = np.random.default_rng(11)
    ember.manual_seed(0)
    for opts in ({}, {"norm_first": True, "batch_first": True, "bias": False}):
        layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, **opts)
        layer = layer.double()
        bf = opts.get("batch_first", False)
        tgt = _rand(rng, *((2, 3, 4) if bf else (3, 2, 4)))
        mem = _rand(rng, *((2, 5, 4) if bf else (5, 2, 4)))
        mpm = _t(np.array([[False] * 4 + [True], [False] * 5]))
        mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
        def fn(t, m, layer=layer, mask=mask, mpm=mpm):
            return layer(t, m, tgt_mask=mask, tgt_is_causal=True, memory_key_padding_mask=mpm)

        assert gradcheck(fn, (tgt, mem))


def test_transformer_forward_and_backward():
    rng = np.random.default_rng(12)
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=True).double()
    src, tgt = _rand(rng, 2, 5, 8), _rand(rng, 2, 4, 8)
    mask = model.generate_square_subsequent_mask(4, dtype=ember.float64)
    spm = _t(np.array([[False] * 5, [False] * 3 + [True] * 2]))
    out = model(src, tgt, tgt_mask=mask, src_key_padding_mask=spm,
                memory_key_padding_mask=spm)
    assert out.shape == (2, 4, 8)
    out.sum().backward()
    assert src.grad is not None and tgt.grad is not None
    assert all(p.grad is not None for p in model.parameters())
    # the causal mask: a later target position does not change an earlier output
    tgt2 = tgt.detach().clone()
    tgt2.data[:, -1] += 1.0
    out2 = model(src, tgt2, tgt_mask=mask, src_key_padding_mask=spm,
                 memory_key_padding_mask=spm)
    np.testing.assert_allclose(out2.detach().numpy()[:, :-1], out.detach().numpy()[:, :-1],
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(src, _rand(rng, 3, 4, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal "
                                           "to d_model"):
        model(_rand(rng, 2, 5, 6), _rand(rng, 2, 4, 6))


def test_generate_square_subsequent_mask_and_causal_detection():
    from ember.nn.modules.transformer import _detect_is_causal_mask

    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == ember.float32
    np.testing.assert_array_equal(m.numpy(), np.array([[0, -np.inf, -np.inf],
                                                       [0, 0, -np.inf], [0, 0, 0]]))
    assert _detect_is_causal_mask(m) is True
    assert _detect_is_causal_mask(m, size=4) is False
    assert _detect_is_causal_mask(ember.zeros(3, 3)) is False
    assert _detect_is_causal_mask(ember.zeros(3, 3), is_causal=True) is True
    boolean = ember.tensor(np.triu(np.ones((3, 3), bool), 1))
    assert _detect_is_causal_mask(boolean) is True


def test_layer_options_and_repr():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    assert layer.activation is F.relu and layer.activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    g = nn.TransformerEncoderLayer(8, 2, activation=nn.GELU())
    assert g.activation_relu_or_gelu == 2 and "(activation): GELU" in repr(g)
    assert nn.TransformerEncoderLayer(8, 2, activation=ember.tanh).activation_relu_or_gelu == 0
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    assert repr(layer) == (
        "TransformerEncoderLayer(\n"
        "  (self_attn): MultiheadAttention(\n"
        "    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
        "bias=True)\n  )\n"
        "  (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
        "  (dropout): Dropout(p=0.1, inplace=False)\n"
        "  (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
        "  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        "  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        "  (dropout1): Dropout(p=0.1, inplace=False)\n"
        "  (dropout2): Dropout(p=0.1, inplace=False)\n)")
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
        "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
        "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    dec = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, bias=False, layer_norm_eps=1e-3)
    assert list(dec.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.out_proj.weight",
        "multihead_attn.in_proj_weight", "multihead_attn.out_proj.weight", "linear1.weight",
        "linear2.weight", "norm1.weight", "norm2.weight", "norm3.weight"]
    assert dec.norm3.eps == 1e-3


def test_encoder_clones_and_nested_tensor_warning():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but "
                                         "self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 3)
    assert not enc.use_nested_tensor
    assert len(enc.layers) == 3 and enc.num_layers == 3
    w0 = enc.layers[0].linear1.weight
    assert w0 is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(w0.detach().numpy(),
                                  enc.layers[1].linear1.weight.detach().numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        bf = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        assert nn.TransformerEncoder(bf, 2).use_nested_tensor
    copy.deepcopy(enc)


def test_encoder_eval_padding_gives_zeros_like_torch_nested_path():
    rng = np.random.default_rng(13)
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2).eval()
    x = _rand(rng, 2, 4, 8, grad=False).float()
    kpm = _t(np.array([[False, False, False, True], [False] * 4]))
    with ember.no_grad():
        out = enc(x, src_key_padding_mask=kpm)
    assert (out.numpy()[0, 3] == 0).all() and (out.numpy()[1, 3] != 0).all()
    out_grad = enc(x, src_key_padding_mask=kpm)  # parameters need grad: the regular path
    assert (out_grad.detach().numpy()[0, 3] != 0).all()
    np.testing.assert_allclose(out.numpy()[:, :3], out_grad.detach().numpy()[:, :3],
                               rtol=1e-5, atol=1e-6)


def test_custom_encoder_decoder():
    class Enc(nn.Module):
        def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
            return src * 2

    class Dec(nn.Module):
        def forward(self, tgt, memory, **kwargs):
            return tgt + memory.sum(0)

    model = nn.Transformer(4, 2, custom_encoder=Enc(), custom_decoder=Dec())
    src, tgt = ember.ones(3, 2, 4), ember.ones(5, 2, 4)
    np.testing.assert_allclose(model(src, tgt).numpy(), np.full((5, 2, 4), 7.0))
    assert list(model.state_dict()) == []


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_gradgradcheck(batch_first):
    rng = np.random.default_rng(14)
    ember.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, batch_first=batch_first).double()
    x, y = _rand(rng, 2, 3, 4), _rand(rng, 2, 3, 4)
    assert gradgradcheck(lambda x: m(x, x, x, need_weights=False)[0], (x,))
    assert gradgradcheck(lambda x, y: m(x, y, y)[0], (x, y))
