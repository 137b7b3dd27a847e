"""Attention and the Transformer layers of ember.nn against torch 2.13.

With identical parameters (a torch state_dict loaded into the ember module with
strict=True, and back) and inputs, outputs, attention weights and every input and
parameter gradient match torch within float32 tolerance for every option of
scaled_dot_product_attention, MultiheadAttention, the encoder/decoder layers and stacks
and nn.Transformer. Skipped as a whole without torch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402
import ember.nn.functional as EF  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5

# bool padding masks next to float causal masks: deprecated in torch, and warned the same
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(a, b, what="", rtol=RTOL, atol=ATOL):
    a, b = _np(a), _np(b)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=what)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def _pair(a, grad=True):
    """The same array as an ember and a torch tensor."""
    a = np.asarray(a)
    e = ember.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f")
    t = torch.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f")
    return e, t


def _load(tm, em):
    """torch's state_dict into the ember module (strict), and ember's back into torch."""
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd, strict=True)
    back = {k: torch.tensor(v.detach().numpy().copy()) for k, v in em.state_dict().items()}
    tm.load_state_dict(back, strict=True)
    assert list(tm.state_dict()) == list(em.state_dict())


def _backward(oe, ot, seed=0):
    g = np.random.default_rng(seed).standard_normal(tuple(ot.shape)).astype(np.float32)
    oe.backward(ember.tensor(g))
    ot.backward(torch.tensor(g))


def _check_param_grads(em, tm, rtol=RTOL, atol=ATOL):
    tp = dict(tm.named_parameters())
    ep = dict(em.named_parameters())
    assert list(tp) == list(ep)
    for name, p in tp.items():
        if p.grad is None:
            assert ep[name].grad is None, name
        else:
            _close(ep[name].grad, p.grad, name, rtol, atol)


def _build(tcls, ecls, *args, **kwargs):
    """The torch and the ember module from the same arguments, torch's weights in both."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        tm = tcls(*args, **kwargs)
        em = ecls(*args, **{k: (_to_ember(v)) for k, v in kwargs.items()})
    _load(tm, em)
    return tm, em


def _to_ember(v):
    if v is TF.relu:
        return EF.relu
    if v is TF.gelu:
        return EF.gelu
    return v


# ---------------------------------------------------------------------------------------
# scaled_dot_product_attention

SDPA_CASES = {
    "plain": ({}, ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))),
    "bool_mask": ({"mask": "bool"}, ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))),
    "float_mask": ({"mask": "float"}, ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))),
    "causal": ({"is_causal": True}, ((2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 6))),
    "causal_rect": ({"is_causal": True}, ((2, 3, 6, 8), (2, 3, 4, 8), (2, 3, 4, 6))),
    "scale": ({"scale": 0.37}, ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))),
    "gqa": ({"enable_gqa": True}, ((2, 6, 4, 8), (2, 3, 5, 8), (2, 2, 5, 6))),
    "3d": ({}, ((3, 4, 8), (3, 5, 8), (3, 5, 6))),
    "broadcast": ({}, ((3, 4, 8), (5, 8), (5, 6))),
    "2d": ({"mask": "bool"}, ((4, 8), (5, 8), (5, 6))),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    opts, shapes = SDPA_CASES[case]
    rng = np.random.default_rng(0)
    (qe, qt), (ke, kt), (ve, vt) = (_pair(rng.standard_normal(s).astype(np.float32))
                                    for s in shapes)
    kw_e, kw_t = dict(opts), dict(opts)
    mask = kw_e.pop("mask", None)
    kw_t.pop("mask", None)
    me = mt = None
    L, S = shapes[0][-2], shapes[1][-2]
    if mask == "bool":
        m = rng.random((L, S)) > 0.4
        m[0] = False  # a fully masked row: zeros in both
        me, mt = _pair(m)
    elif mask == "float":
        me, mt = _pair(rng.standard_normal((shapes[0][-3], 1, S)).astype(np.float32))
    oe = EF.scaled_dot_product_attention(qe, ke, ve, me, **kw_e)
    ot = TF.scaled_dot_product_attention(qt, kt, vt, mt, **kw_t)
    _close(oe, ot, "output")
    _backward(oe, ot)
    for name, a, b in (("query", qe, qt), ("key", ke, kt), ("value", ve, vt)):
        _close(a.grad, b.grad, name)
    if mask == "float":
        _close(me.grad, mt.grad, "attn_mask")


def test_sdpa_float64_and_float_mask_on_double():
    rng = np.random.default_rng(1)
    (qe, qt), (ke, kt), (ve, vt) = (_pair(rng.standard_normal(s))
                                    for s in ((2, 4, 3), (2, 5, 3), (2, 5, 2)))
    me, mt = _pair(rng.standard_normal((4, 5)).astype(np.float32), grad=False)
    oe = EF.scaled_dot_product_attention(qe, ke, ve, me)
    ot = TF.scaled_dot_product_attention(qt, kt, vt, mt)
    assert oe.dtype == ember.float64
    _close(oe, ot, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------
# MultiheadAttention

MHA_OPTS = [
    {}, {"batch_first": True}, {"kdim": 5, "vdim": 3}, {"kdim": 5, "vdim": 3, "batch_first": True},
    {"add_bias_kv": True}, {"add_zero_attn": True}, {"add_bias_kv": True, "add_zero_attn": True},
    {"bias": False}, {"bias": False, "add_bias_kv": True},
]


def _mha_data(rng, opts, L=4, S=5, N=3, E=8):
    bf = opts.get("batch_first", False)

    def shape(T, D):
        return (N, T, D) if bf else (T, N, D)

    return (rng.standard_normal(shape(L, E)).astype(np.float32),
            rng.standard_normal(shape(S, opts.get("kdim", E))).astype(np.float32),
            rng.standard_normal(shape(S, opts.get("vdim", E))).astype(np.float32))


def _masks(rng, kind, L, S, N, H):
    kpm = np.zeros((N, S), bool)
    kpm[1, 3:] = True
    if kind == "none":
        return {}
    if kind == "kpm_bool":
        return {"key_padding_mask": kpm}
    if kind == "kpm_float":
        return {"key_padding_mask": np.where(kpm, -np.inf, 0.0).astype(np.float32)}
    if kind == "attn_bool":
        return {"attn_mask": rng.random((L, S)) > 0.8}
    if kind == "attn_float_3d":
        return {"attn_mask": rng.standard_normal((N * H, L, S)).astype(np.float32)}
    if kind == "both_bool":
        return {"attn_mask": rng.random((L, S)) > 0.8, "key_padding_mask": kpm}
    if kind == "both_float":
        return {"attn_mask": rng.standard_normal((L, S)).astype(np.float32),
                "key_padding_mask": np.where(kpm, -np.inf, 0.0).astype(np.float32)}
    raise AssertionError(kind)


@pytest.mark.parametrize("opts", MHA_OPTS, ids=lambda o: "-".join(o) or "default")
@pytest.mark.parametrize("masks", ["none", "kpm_bool", "both_bool", "attn_float_3d"])
def test_mha_matches_torch(opts, masks):
    rng = np.random.default_rng(2)
    tm, em = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 2, **opts)
    assert repr(tm) == repr(em)
    q, k, v = _mha_data(rng, opts)
    mk = _masks(rng, masks, 4, 5, 3, 2)
    for need_weights, avg in ((False, True), (True, True), (True, False)):
        (qe, qt), (ke, kt), (ve, vt) = _pair(q), _pair(k), _pair(v)
        me = {n: _pair(a, grad=False)[0] for n, a in mk.items()}
        mt = {n: _pair(a, grad=False)[1] for n, a in mk.items()}
        oe, we = em(qe, ke, ve, need_weights=need_weights, average_attn_weights=avg, **me)
        ot, wt = tm(qt, kt, vt, need_weights=need_weights, average_attn_weights=avg, **mt)
        _close(oe, ot, "output")
        if need_weights:
            _close(we, wt, "weights")
            loss_e = (oe * 1.5).sum() + (we * we).sum()
            loss_t = (ot * 1.5).sum() + (wt * wt).sum()
            loss_e.backward()
            loss_t.backward()
        else:
            assert we is None and wt is None
            _backward(oe, ot)
        for name, a, b in (("query", qe, qt), ("key", ke, kt), ("value", ve, vt)):
            _close(a.grad, b.grad, name)
        _check_param_grads(em, tm)
        em.zero_grad()
        tm.zero_grad()


@pytest.mark.parametrize("masks", ["kpm_float", "both_float", "attn_bool"])
def test_mha_self_attention_masks_match_torch(masks):
    rng = np.random.default_rng(3)
    tm, em = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 4, batch_first=True)
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    mk = _masks(rng, masks, 5, 5, 3, 4)
    xe, xt = _pair(x)
    me = {n: _pair(a, grad=False)[0] for n, a in mk.items()}
    mt = {n: _pair(a, grad=False)[1] for n, a in mk.items()}
    oe, we = em(xe, xe, xe, **me)
    ot, wt = tm(xt, xt, xt, **mt)
    _close(oe, ot)
    _close(we, wt)
    _backward(oe, ot)
    _close(xe.grad, xt.grad)
    _check_param_grads(em, tm)


def test_mha_causal_unbatched_and_eval_match_torch():
    rng = np.random.default_rng(4)
    tm, em = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 2, dropout=0.3)
    tm.eval()
    em.eval()
    x = rng.standard_normal((5, 2, 8)).astype(np.float32)
    mask_t = tnn.Transformer.generate_square_subsequent_mask(5)
    mask_e = enn.Transformer.generate_square_subsequent_mask(5)
    for need_weights in (False, True):
        xe, xt = _pair(x)
        oe, _ = em(xe, xe, xe, attn_mask=mask_e, is_causal=True, need_weights=need_weights)
        ot, _ = tm(xt, xt, xt, attn_mask=mask_t, is_causal=True, need_weights=need_weights)
        _close(oe, ot)
        _backward(oe, ot)
        _close(xe.grad, xt.grad)
    # unbatched (L, E) with a 3-D (H, L, S) mask
    xu = rng.standard_normal((5, 8)).astype(np.float32)
    m3 = rng.standard_normal((2, 5, 5)).astype(np.float32)
    (xe, xt), (me, mt) = _pair(xu), _pair(m3, grad=False)
    oe, we = em(xe, xe, xe, attn_mask=me, average_attn_weights=False)
    ot, wt = tm(xt, xt, xt, attn_mask=mt, average_attn_weights=False)
    _close(oe, ot)
    _close(we, wt)
    # evaluation without grad (torch's fast path)
    xb = rng.standard_normal((2, 5, 8)).astype(np.float32)
    tmb, emb = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 2, batch_first=True)
    tmb.eval()
    emb.eval()
    kpm = np.zeros((2, 5), bool)
    kpm[0, 4] = True
    with torch.no_grad(), ember.no_grad():
        (xe, xt), (ke, kt) = _pair(xb, grad=False), _pair(kpm, grad=False)
        oe, we = emb(xe, xe, xe, key_padding_mask=ke)
        ot, wt = tmb(xt, xt, xt, key_padding_mask=kt)
        _close(oe, ot)
        _close(we, wt)


def test_functional_mha_matches_torch():
    rng = np.random.default_rng(5)
    tm, em = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 2, kdim=4, vdim=6,
                    add_bias_kv=True)
    q, k, v = _mha_data(rng, {"kdim": 4, "vdim": 6})
    (qe, qt), (ke, kt), (ve, vt) = _pair(q), _pair(k), _pair(v)
    args_e = (8, 2, em.in_proj_weight, em.in_proj_bias, em.bias_k, em.bias_v, True, 0.0,
              em.out_proj.weight, em.out_proj.bias)
    args_t = (8, 2, tm.in_proj_weight, tm.in_proj_bias, tm.bias_k, tm.bias_v, True, 0.0,
              tm.out_proj.weight, tm.out_proj.bias)
    kw_e = dict(use_separate_proj_weight=True, q_proj_weight=em.q_proj_weight,
                k_proj_weight=em.k_proj_weight, v_proj_weight=em.v_proj_weight,
                average_attn_weights=False)
    kw_t = dict(use_separate_proj_weight=True, q_proj_weight=tm.q_proj_weight,
                k_proj_weight=tm.k_proj_weight, v_proj_weight=tm.v_proj_weight,
                average_attn_weights=False)
    oe, we = EF.multi_head_attention_forward(qe, ke, ve, *args_e, **kw_e)
    ot, wt = TF.multi_head_attention_forward(qt, kt, vt, *args_t, **kw_t)
    _close(oe, ot)
    _close(we, wt)
    _backward(oe, ot)
    for a, b in ((qe, qt), (ke, kt), (ve, vt)):
        _close(a.grad, b.grad)
    _check_param_grads(em, tm)


def test_mha_dropout_in_training():
    """Dropout noise differs from torch's (other generator); its statistics match."""
    tm, em = _build(tnn.MultiheadAttention, enn.MultiheadAttention, 8, 2, dropout=0.5)
    x = ember.randn(6, 2, 8)
    ember.manual_seed(0)
    _, w = em(x, x, x, average_attn_weights=False)
    frac_zero = float((w.detach().numpy() == 0).mean())
    assert 0.35 < frac_zero < 0.65
    em.eval()
    _, w = em(x, x, x)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# encoder and decoder layers and stacks

LAYER_OPTS = [
    {}, {"batch_first": True}, {"norm_first": True}, {"norm_first": True, "batch_first": True},
    {"activation": "gelu"}, {"activation": TF.gelu}, {"bias": False, "layer_norm_eps": 1e-3},
]


def _layer_opts_ember(opts):
    return {k: _to_ember(v) for k, v in opts.items()}


def _ids(o):
    return "-".join(f"{k}={getattr(v, '__name__', v)}" for k, v in o.items()) or "default"


@pytest.mark.parametrize("opts", LAYER_OPTS, ids=_ids)
def test_encoder_layer_matches_torch(opts):
    rng = np.random.default_rng(6)
    tm, em = _build(tnn.TransformerEncoderLayer, enn.TransformerEncoderLayer, 16, 4,
                    dim_feedforward=24, dropout=0.0, **opts)
    assert repr(tm) == repr(em)
    bf = opts.get("batch_first", False)
    x = rng.standard_normal((3, 6, 16) if bf else (6, 3, 16)).astype(np.float32)
    kpm = np.zeros((3, 6), bool)
    kpm[2, 4:] = True
    mask_t = tnn.Transformer.generate_square_subsequent_mask(6)
    mask_e = enn.Transformer.generate_square_subsequent_mask(6)
    for kw in ({}, {"kpm": True}, {"causal": True}, {"kpm": True, "causal": True}):
        (xe, xt), (ke, kt) = _pair(x), _pair(kpm, grad=False)
        ae = {"src_key_padding_mask": ke} if kw.get("kpm") else {}
        at = {"src_key_padding_mask": kt} if kw.get("kpm") else {}
        if kw.get("causal"):
            ae.update(src_mask=mask_e, is_causal=True)
            at.update(src_mask=mask_t, is_causal=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            oe, ot = em(xe, **ae), tm(xt, **at)
        _close(oe, ot, str(kw))
        _backward(oe, ot)
        _close(xe.grad, xt.grad, str(kw))
        _check_param_grads(em, tm, atol=1e-4)
        em.zero_grad()
        tm.zero_grad()


@pytest.mark.parametrize("opts", LAYER_OPTS, ids=_ids)
def test_decoder_layer_matches_torch(opts):
    rng = np.random.default_rng(7)
    tm, em = _build(tnn.TransformerDecoderLayer, enn.TransformerDecoderLayer, 16, 4,
                    dim_feedforward=24, dropout=0.0, **opts)
    assert repr(tm) == repr(em)
    bf = opts.get("batch_first", False)
    tgt = rng.standard_normal((3, 5, 16) if bf else (5, 3, 16)).astype(np.float32)
    mem = rng.standard_normal((3, 6, 16) if bf else (6, 3, 16)).astype(np.float32)
    tpm = np.zeros((3, 5), bool)
    tpm[1, 3:] = True
    mpm = np.zeros((3, 6), bool)
    mpm[0, 5:] = True
    (te, tt), (me, mt) = _pair(tgt), _pair(mem)
    (tpe, tpt), (mpe, mpt) = _pair(tpm, grad=False), _pair(mpm, grad=False)
    oe = em(te, me, tgt_mask=enn.Transformer.generate_square_subsequent_mask(5),
            tgt_key_padding_mask=tpe, memory_key_padding_mask=mpe, tgt_is_causal=True)
    ot = tm(tt, mt, tgt_mask=tnn.Transformer.generate_square_subsequent_mask(5),
            tgt_key_padding_mask=tpt, memory_key_padding_mask=mpt, tgt_is_causal=True)
    _close(oe, ot)
    _backward(oe, ot)
    _close(te.grad, tt.grad)
    _close(me.grad, mt.grad)
    _check_param_grads(em, tm, atol=1e-4)


def test_callable_activation_module_matches_torch():
    rng = np.random.default_rng(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        tm = tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=tnn.GELU("tanh"))
        em = enn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=enn.GELU("tanh"))
    _load(tm, em)
    assert repr(tm) == repr(em)
    xe, xt = _pair(rng.standard_normal((4, 2, 8)).astype(np.float32))
    oe, ot = em(xe), tm(xt)
    _close(oe, ot)
    _backward(oe, ot)
    _close(xe.grad, xt.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first):
    rng = np.random.default_rng(9)
    tm, em = _build(tnn.Transformer, enn.Transformer, d_model=16, nhead=4,
                    num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=32,
                    dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    assert repr(tm) == repr(em)
    N, S, T = 3, 7, 5
    src = rng.standard_normal((N, S, 16) if batch_first else (S, N, 16)).astype(np.float32)
    tgt = rng.standard_normal((N, T, 16) if batch_first else (T, N, 16)).astype(np.float32)
    spm = np.zeros((N, S), bool)
    spm[1, 5:] = True
    spm[2, 6:] = True
    tpm = np.zeros((N, T), bool)
    tpm[0, 4:] = True
    for train in (True, False):
        tm.train(train)
        em.train(train)
        (se, st), (te, tt) = _pair(src), _pair(tgt)
        (spe, spt), (tpe, tpt) = _pair(spm, grad=False), _pair(tpm, grad=False)
        oe = em(se, te, tgt_mask=em.generate_square_subsequent_mask(T),
                src_key_padding_mask=spe, tgt_key_padding_mask=tpe,
                memory_key_padding_mask=spe)
        ot = tm(st, tt, tgt_mask=tm.generate_square_subsequent_mask(T),
                src_key_padding_mask=spt, tgt_key_padding_mask=tpt,
                memory_key_padding_mask=spt)
        _close(oe, ot, f"train={train}")
        _backward(oe, ot)
        _close(se.grad, st.grad, rtol=1e-3, atol=1e-4)
        _close(te.grad, tt.grad, rtol=1e-3, atol=1e-4)
        _check_param_grads(em, tm, rtol=1e-3, atol=1e-4)
        em.zero_grad()
        tm.zero_grad()


def test_transformer_causal_src_and_bool_masks_match_torch():
    rng = np.random.default_rng(10)
    tm, em = _build(tnn.Transformer, enn.Transformer, d_model=8, nhead=2,
                    num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                    dropout=0.0)
    src = rng.standard_normal((6, 2, 8)).astype(np.float32)
    tgt = rng.standard_normal((4, 2, 8)).astype(np.float32)
    smask = np.triu(np.ones((6, 6), bool), 1)  # a bool causal mask is detected as causal
    tmask = np.triu(np.ones((4, 4), bool), 1)
    mmask = rng.random((4, 6)) > 0.7
    (se, st), (te, tt) = _pair(src), _pair(tgt)
    (sme, smt), (tme, tmt), (mme, mmt) = (_pair(a, grad=False) for a in (smask, tmask, mmask))
    oe = em(se, te, src_mask=sme, tgt_mask=tme, memory_mask=mme)
    ot = tm(st, tt, src_mask=smt, tgt_mask=tmt, memory_mask=mmt)
    _close(oe, ot)
    _backward(oe, ot)
    _close(se.grad, st.grad, atol=1e-4)
    _close(te.grad, tt.grad, atol=1e-4)
    _check_param_grads(em, tm, atol=1e-4)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_matches_torch(batch_first):
    rng = np.random.default_rng(11)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        torch.manual_seed(0)
        tl = tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=batch_first)
        tm = tnn.TransformerEncoder(tl, 2, norm=tnn.LayerNorm(16))
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        el = enn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=batch_first)
        em = enn.TransformerEncoder(el, 2, norm=enn.LayerNorm(16))
    assert [str(w.message) for w in wt] == [str(w.message) for w in we]
    _load(tm, em)
    assert repr(tm) == repr(em)
    x = rng.standard_normal((2, 6, 16) if batch_first else (6, 2, 16)).astype(np.float32)
    kpm = np.zeros((2, 6), bool)
    kpm[1, 4:] = True
    mask_t = tnn.Transformer.generate_square_subsequent_mask(6)
    mask_e = enn.Transformer.generate_square_subsequent_mask(6)
    (xe, xt), (ke, kt) = _pair(x), _pair(kpm, grad=False)
    oe = em(xe, mask=mask_e, src_key_padding_mask=ke)
    ot = tm(xt, mask=mask_t, src_key_padding_mask=kt)
    _close(oe, ot)
    _backward(oe, ot)
    _close(xe.grad, xt.grad, atol=1e-4)
    _check_param_grads(em, tm, atol=1e-4)
    # evaluation without grad: torch's nested-tensor path for batch_first (zeros at padding)
    tm.eval()
    em.eval()
    with torch.no_grad(), ember.no_grad():
        _close(em(_pair(x, False)[0], src_key_padding_mask=ke),
               tm(_pair(x, False)[1], src_key_padding_mask=kt))
        _close(em(_pair(x, False)[0], mask=mask_e, is_causal=True),
               tm(_pair(x, False)[1], mask=mask_t, is_causal=True))


def test_decoder_stack_matches_torch():
    rng = np.random.default_rng(12)
    torch.manual_seed(0)
    tm = tnn.TransformerDecoder(tnn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2,
                                norm=tnn.LayerNorm(8))
    em = enn.TransformerDecoder(enn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2,
                                norm=enn.LayerNorm(8))
    _load(tm, em)
    assert repr(tm) == repr(em)
    (te, tt), (me, mt) = (_pair(rng.standard_normal(s).astype(np.float32))
                          for s in ((4, 2, 8), (6, 2, 8)))
    oe = em(te, me, tgt_mask=enn.Transformer.generate_square_subsequent_mask(4))
    ot = tm(tt, mt, tgt_mask=tnn.Transformer.generate_square_subsequent_mask(4))
    _close(oe, ot)
    _backward(oe, ot)
    _close(te.grad, tt.grad, atol=1e-4)
    _close(me.grad, mt.grad, atol=1e-4)
    _check_param_grads(em, tm, atol=1e-4)


def test_default_init_statistics_match_torch():
    torch.manual_seed(0)
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = tnn.Transformer(32, 4, 1, 1, 64)
        em = enn.Transformer(32, 4, 1, 1, 64)
    for (name, pt), (_, pe) in zip(tm.named_parameters(), em.named_parameters(),
                                   strict=True):
        a, b = pt.detach().numpy(), pe.detach().numpy()
        assert a.shape == b.shape, name
        if a.ndim > 1:  # xavier_uniform_: the same bound
            bound = np.sqrt(6 / (a.shape[0] + a.shape[1]))
            assert np.abs(b).max() <= bound and np.abs(b).max() > 0.8 * bound, name
        elif "norm" in name or "proj" in name:  # LayerNorm ones/zeros, attention zeros
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:  # Linear biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            fan_in = dict(em.named_parameters())[name.replace("bias", "weight")].shape[1]
            assert np.abs(b).max() <= 1 / np.sqrt(fan_in), name
    tmha, emha = tnn.MultiheadAttention(16, 2), enn.MultiheadAttention(16, 2)
    # out_proj keeps Linear's kaiming-uniform init; its bias is zero
    bound = 1 / np.sqrt(16)
    assert np.abs(emha.out_proj.weight.detach().numpy()).max() <= bound
    assert np.abs(tmha.out_proj.weight.detach().numpy()).max() <= bound
    assert (emha.out_proj.bias.detach().numpy() == 0).all()
