"""The elementwise-style layers of ember.nn against torch.nn 2.13.

For every module: with identical parameters (a torch state_dict loaded into the ember
module with strict=True) and inputs, the output and the gradients of the input and of
every parameter match torch within float32 tolerance; the ember state_dict loads back
into torch with strict=True; repr strings are equal. The functional forms are compared
the same way with their options. Skipped as a whole when torch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402
import ember.nn.functional as EF  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return t.detach().numpy()


def _pair(a, requires_grad=False):
    """The same array as an ember and a torch tensor."""
    a = np.asarray(a)
    e = ember.tensor(a.copy(), requires_grad=requires_grad)
    t = torch.tensor(a.copy(), requires_grad=requires_grad)
    return e, t


def _close(a, b, rtol=RTOL, atol=ATOL, what=""):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=what)


def _inputs(shapes, seed, kind="float"):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if kind == "index":
            out.append(rng.integers(0, 10, s).astype(np.int64))
        else:
            x = rng.standard_normal(s).astype(np.float32)
            # keep away from the kinks of piecewise activations (0, +-3, +-0.5, ...)
            out.append(np.where(np.abs(x - np.round(x * 2) / 2) < 1e-2, x + 0.03, x)
                       .astype(np.float32))
    return out


def _load_torch_into_ember(tm, em):
    sd = {k: ember.tensor(_np(v).copy()) for k, v in tm.state_dict().items()}
    result = em.load_state_dict(sd, strict=True)
    assert not result.missing_keys and not result.unexpected_keys


def _check_module(name, args, kwargs, shapes, *, seed=0, kind="float", train=False,
                  extra=None, rtol=RTOL, atol=ATOL):
    torch.manual_seed(seed)
    tm = getattr(tnn, name)(*args, **kwargs)
    em = getattr(enn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    _load_torch_into_ember(tm, em)
    if not train:
        tm.eval()
        em.eval()
    arrays = _inputs(shapes, seed + 1, kind)
    grad_inputs = kind == "float"
    pairs = [_pair(a, grad_inputs) for a in arrays]
    extra = extra or []
    e_out = em(*[p[0] for p in pairs], *[x[0] for x in extra])
    t_out = tm(*[p[1] for p in pairs], *[x[1] for x in extra])
    _close(e_out, t_out, rtol, atol, f"{name} output")
    g = np.random.default_rng(seed + 2).standard_normal(tuple(t_out.shape)).astype(np.float32)
    if t_out.requires_grad:
        e_out.backward(ember.tensor(g))
        t_out.backward(torch.tensor(g))
        for i, (e, t) in enumerate(pairs):
            if t.grad is not None:
                _close(e.grad, t.grad, rtol, atol, f"{name} input {i} grad")
        tp = dict(tm.named_parameters())
        for k, p in em.named_parameters():
            if tp[k].grad is None:
                assert p.grad is None
            else:
                _close(p.grad, tp[k].grad, rtol, atol, f"{name} {k} grad")
    # and back: ember's state dict into a fresh torch module
    tm2 = getattr(tnn, name)(*args, **kwargs)
    tm2.load_state_dict({k: torch.tensor(_np(v).copy()) for k, v in em.state_dict().items()},
                        strict=True)
    for (k, a), b in zip(tm2.state_dict().items(), em.state_dict().values()):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=k)


X = [(4, 6)]
X4 = [(2, 4, 3, 5)]

MODULES = [
    ("Identity", (3,), {}, X),
    ("Linear", (6, 5), {}, X), ("Linear", (5, 3, False), {}, [(2, 4, 5)]),
    ("Linear", (5, 3), {}, [(5,)]),
    ("Bilinear", (6, 3, 5), {}, [(4, 6), (4, 3)]),
    ("Bilinear", (2, 3, 4, False), {}, [(2, 5, 2), (2, 5, 3)]),
    ("ReLU", (), {}, X), ("ReLU6", (), {}, [(4, 6)]), ("LeakyReLU", (0.2,), {}, X),
    ("PReLU", (), {}, X4), ("PReLU", (4, 0.1), {}, X4), ("RReLU", (0.1, 0.3), {}, X),
    ("ELU", (1.5,), {}, X), ("SELU", (), {}, X), ("CELU", (0.7,), {}, X),
    ("GELU", (), {}, X), ("GELU", ("tanh",), {}, X), ("SiLU", (), {}, X), ("Mish", (), {}, X),
    ("Hardswish", (), {}, [(4, 6)]), ("Hardsigmoid", (), {}, X),
    ("Hardtanh", (-0.5, 0.7), {}, X), ("Hardshrink", (0.3,), {}, X),
    ("Softshrink", (0.3,), {}, X), ("Tanhshrink", (), {}, X), ("Threshold", (0.1, -2.0), {}, X),
    ("Sigmoid", (), {}, X), ("LogSigmoid", (), {}, X), ("Tanh", (), {}, X),
    ("Softplus", (), {}, X), ("Softplus", (2.0, 1.0), {}, X), ("Softsign", (), {}, X),
    ("Softmax", (1,), {}, X4), ("Softmax", (-1,), {}, X), ("LogSoftmax", (1,), {}, X4),
    ("LogSoftmax", (0,), {}, X), ("Softmin", (2,), {}, X4), ("Softmax2d", (), {}, X4),
    ("GLU", (), {}, X), ("GLU", (1,), {}, X4),
    ("Dropout", (0.3,), {}, X), ("Dropout1d", (), {}, [(2, 3, 4)]), ("Dropout2d", (), {}, X4),
    ("Dropout3d", (), {}, [(2, 3, 2, 2, 2)]), ("AlphaDropout", (0.2,), {}, X),
    ("FeatureAlphaDropout", (0.2,), {}, X4),
    ("ZeroPad1d", (2,), {}, [(2, 3, 4)]), ("ZeroPad2d", ((1, 0, 2, 1),), {}, X4),
    ("ZeroPad3d", (1,), {}, [(1, 2, 2, 3, 3)]), ("ConstantPad1d", ((2, 1), 3.5), {}, [(3, 4)]),
    ("ConstantPad2d", (1, -1.0), {}, X4), ("ConstantPad3d", ((1, 0, 0, 1, 1, 1), 2.0), {},
                                           [(2, 2, 2, 3, 3)]),
    ("ReflectionPad1d", ((2, 1),), {}, [(2, 3, 4)]), ("ReflectionPad2d", (2,), {}, X4),
    ("ReflectionPad3d", (1,), {}, [(1, 2, 2, 3, 3)]),
    ("ReplicationPad1d", (3,), {}, [(3, 4)]), ("ReplicationPad2d", ((0, 1, 2, 3),), {}, X4),
    ("ReplicationPad3d", (2,), {}, [(1, 2, 2, 3, 3)]),
    ("CircularPad1d", ((2, 1),), {}, [(2, 3, 4)]), ("CircularPad2d", (1,), {}, X4),
    ("CircularPad3d", ((1, 2, 0, 1, 1, 0),), {}, [(1, 2, 2, 3, 3)]),
    ("CosineSimilarity", (), {}, [(4, 6), (4, 6)]),
    ("CosineSimilarity", (0, 1e-6), {}, [(4, 6), (1, 6)]),
    ("PairwiseDistance", (), {}, [(4, 6), (4, 6)]),
    ("PairwiseDistance", (1.0, 1e-5, True), {}, [(4, 6), (6,)]),
    ("PixelShuffle", (2,), {}, [(2, 8, 3, 3)]), ("PixelUnshuffle", (2,), {}, [(2, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, X4),
]


@pytest.mark.parametrize("name,args,kwargs,shapes", MODULES,
                         ids=[f"{m[0]}{m[1]}" for m in MODULES])
def test_module_matches_torch(name, args, kwargs, shapes):
    _check_module(name, args, kwargs, shapes)


@pytest.mark.parametrize("name,args", [
    ("ReLU", ()), ("ELU", (0.5,)), ("LeakyReLU", (0.1,)), ("Hardtanh", (-1.0, 2.0)),
    ("ReLU6", ()), ("SELU", ()), ("CELU", (1.2,)), ("SiLU", ()), ("Mish", ()),
    ("Hardswish", ()), ("Hardsigmoid", ()), ("Threshold", (0.2, 1.0)),
])
def test_inplace_modules_match_torch(name, args):
    x = _inputs([(4, 6)], 3)[0]
    e0, t0 = _pair(x, True)
    e = e0 * 2
    t = t0 * 2
    eo = getattr(enn, name)(*args, inplace=True)(e)
    to = getattr(tnn, name)(*args, inplace=True)(t)
    assert eo is e
    _close(eo, to)
    eo.sum().backward()
    to.sum().backward()
    _close(e0.grad, t0.grad)


@pytest.mark.parametrize("args,kwargs", [
    ((10, 3), {}), ((10, 3), dict(padding_idx=2)), ((10, 3), dict(padding_idx=-1)),
    ((10, 3), dict(scale_grad_by_freq=True)),
    ((10, 3), dict(padding_idx=0, scale_grad_by_freq=True)),
])
def test_embedding_matches_torch(args, kwargs):
    _check_module("Embedding", args, kwargs, [(3, 5)], kind="index")


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_matches_torch(norm_type):
    torch.manual_seed(0)
    tm = tnn.Embedding(10, 4, max_norm=1.0, norm_type=norm_type)
    em = enn.Embedding(10, 4, max_norm=1.0, norm_type=norm_type)
    _load_torch_into_ember(tm, em)
    idx = np.array([[1, 2, 2], [7, 1, 0]])
    eo = em(ember.tensor(idx))
    to = tm(torch.tensor(idx))
    _close(eo, to)
    _close(em.weight, tm.weight)  # the same rows renormalized in place
    eo.sum().backward()
    to.sum().backward()
    _close(em.weight.grad, tm.weight.grad)


BAG_CASES = [
    dict(mode="mean"), dict(mode="sum"), dict(mode="max"),
    dict(mode="sum", padding_idx=2), dict(mode="mean", padding_idx=2),
    dict(mode="max", padding_idx=2), dict(mode="sum", include_last_offset=True),
    dict(mode="mean", scale_grad_by_freq=True), dict(mode="sum", max_norm=1.0),
]


@pytest.mark.parametrize("kwargs", BAG_CASES, ids=[str(c) for c in BAG_CASES])
def test_embedding_bag_matches_torch(kwargs):
    torch.manual_seed(0)
    tm = tnn.EmbeddingBag(10, 4, **kwargs)
    em = enn.EmbeddingBag(10, 4, **kwargs)
    assert repr(em) == repr(tm)
    _load_torch_into_ember(tm, em)
    idx = np.array([1, 2, 2, 5, 7, 2, 9, 0, 3, 3])
    off = np.array([0, 3, 3, 6, 8])
    if kwargs.get("include_last_offset"):
        # the last offset ends the last bag; torch 2.13's backward leaves the rows of
        # indices past it uninitialized (garbage), so every index is inside a bag here
        off = np.array([0, 3, 3, 6, 10])
    eo = em(ember.tensor(idx), ember.tensor(off))
    to = tm(torch.tensor(idx), torch.tensor(off))
    _close(eo, to)
    g = np.random.default_rng(1).standard_normal(tuple(to.shape)).astype(np.float32)
    eo.backward(ember.tensor(g))
    if kwargs.get("scale_grad_by_freq"):
        # torch 2.13's CPU embedding_bag divides some rows by another index's count
        # (index 3, seen twice here, is divided by 3). The reference is the documented
        # rule, built from torch's own embedding (which gets it right) and a per-bag mean.
        rows = TF.embedding(torch.tensor(idx), tm.weight, scale_grad_by_freq=True)
        bounds = list(off) + [len(idx)]
        bags = [rows[a:b].mean(0) if b > a else rows.new_zeros(4)
                for a, b in zip(bounds[:-1], bounds[1:])]
        torch.stack(bags).backward(torch.tensor(g))
    else:
        to.backward(torch.tensor(g))
    _close(em.weight.grad, tm.weight.grad)
    # 2-d input (fixed-size bags)
    idx2 = idx.reshape(2, 5)
    _close(em(ember.tensor(idx2)), tm(torch.tensor(idx2)))


def test_embedding_bag_per_sample_weights_matches_torch():
    w = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
    idx = np.array([1, 2, 2, 5, 7, 2, 9])
    off = np.array([0, 3, 3, 5])
    psw = np.random.default_rng(1).standard_normal(7).astype(np.float32)
    ew, tw = _pair(w, True)
    ep, tp = _pair(psw, True)
    for pad in (None, 2):
        eo = EF.embedding_bag(ember.tensor(idx), ew, ember.tensor(off), mode="sum",
                              per_sample_weights=ep, padding_idx=pad)
        to = TF.embedding_bag(torch.tensor(idx), tw, torch.tensor(off), mode="sum",
                              per_sample_weights=tp, padding_idx=pad)
        _close(eo, to)
        eo.sum().backward()
        to.sum().backward()
        _close(ew.grad, tw.grad)
        _close(ep.grad, tp.grad)
        ew.grad = ep.grad = None
        tw.grad = tp.grad = None


def _check_functional(efn, tfn, arrays, kwargs=None, grad=True, rtol=RTOL, atol=ATOL):
    kwargs = kwargs or {}
    pairs = [_pair(a, grad and a.dtype.kind == "f") for a in arrays]
    eo = efn(*[p[0] for p in pairs], **kwargs)
    to = tfn(*[p[1] for p in pairs], **kwargs)
    assert tuple(eo.shape) == tuple(to.shape)
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    _close(eo, to, rtol, atol)
    if grad and to.requires_grad:
        g = np.random.default_rng(5).standard_normal(tuple(to.shape)).astype(_np(to).dtype)
        eo.backward(ember.tensor(g))
        to.backward(torch.tensor(g))
        for e, t in pairs:
            if t.grad is not None:
                _close(e.grad, t.grad, rtol, atol)


F32 = np.float32
A = _inputs([(3, 4, 5)], 11)[0]
B = _inputs([(3, 4, 5)], 12)[0]

FUNCTIONAL = [
    ("softmax dim0", "softmax", [A], dict(dim=0)),
    ("softmax dtype", "softmax", [A], dict(dim=2, dtype=torch.float64)),
    ("log_softmax dim1", "log_softmax", [A], dict(dim=1)),
    ("log_softmax dtype", "log_softmax", [A], dict(dim=-1, dtype=torch.float64)),
    ("softmin", "softmin", [A], dict(dim=1)),
    ("gelu tanh", "gelu", [A], dict(approximate="tanh")),
    ("glu dim0", "glu", [A[:2]], dict(dim=0)),
    ("rrelu eval", "rrelu", [A], dict(lower=0.2, upper=0.4)),
    ("hardtanh", "hardtanh", [A], dict(min_val=-0.3, max_val=0.2)),
    ("softplus thr", "softplus", [A * 10], dict(beta=0.5, threshold=3.0)),
    ("normalize", "normalize", [A], dict(p=1.0, dim=-1)),
    ("normalize 2", "normalize", [A], {}),
    ("linear 3d", "linear", [A, _inputs([(2, 5)], 3)[0], _inputs([(2,)], 4)[0]], {}),
    ("linear 1d weight", "linear", [A, _inputs([(5,)], 3)[0]], {}),
    ("bilinear", "bilinear", [A, B[..., :3], _inputs([(2, 5, 3)], 5)[0],
                              _inputs([(2,)], 6)[0]], {}),
    ("pad constant neg", "pad", [A], dict(pad=(-1, 2, 1, 0), value=1.5)),
    ("pad reflect", "pad", [A], dict(pad=(2, 1), mode="reflect")),
    ("pad replicate 2d", "pad", [A], dict(pad=(2, 1, 0, 3), mode="replicate")),
    ("pad circular 2d", "pad", [A], dict(pad=(2, 1, 3, 0), mode="circular")),
    ("pad circular neg", "pad", [A], dict(pad=(-1, 1), mode="circular")),
    ("pad reflect neg", "pad", [A], dict(pad=(-2, 3), mode="reflect")),
    ("pad reflect 3d", "pad", [A[None]], dict(pad=(1, 2, 2, 1, 1, 0), mode="reflect")),
    ("pairwise_distance p3", "pairwise_distance", [A, B], dict(p=3.0)),
    ("cosine_similarity", "cosine_similarity", [A, B], dict(dim=2, eps=1e-3)),
    ("pdist", "pdist", [A[0]], {}),
    ("pdist p1", "pdist", [A[0]], dict(p=1.0)),
    ("pixel_shuffle", "pixel_shuffle", [_inputs([(1, 2, 9, 2, 3)], 7)[0]],
     dict(upscale_factor=3)),
    ("pixel_unshuffle", "pixel_unshuffle", [_inputs([(2, 4, 6)], 7)[0]],
     dict(downscale_factor=2)),
    ("channel_shuffle", "channel_shuffle", [_inputs([(2, 6, 3)], 8)[0]], dict(groups=3)),
]


@pytest.mark.parametrize("case,name,arrays,kwargs", FUNCTIONAL, ids=[f[0] for f in FUNCTIONAL])
def test_functional_matches_torch(case, name, arrays, kwargs):
    ekw = {k: (ember.float64 if v is torch.float64 else v) for k, v in kwargs.items()}
    pairs_kw = (ekw, kwargs)
    efn = getattr(EF, name)
    tfn = getattr(TF, name)

    def e(*a):
        return efn(*a, **pairs_kw[0])

    def t(*a):
        return tfn(*a, **pairs_kw[1])

    _check_functional(e, t, arrays)


def test_one_hot_matches_torch():
    idx = np.array([[0, 3], [2, 1]])
    _check_functional(EF.one_hot, TF.one_hot, [idx], grad=False)
    _check_functional(lambda x: EF.one_hot(x, 6), lambda x: TF.one_hot(x, 6), [idx], grad=False)


def test_functional_embedding_matches_torch():
    w = _inputs([(6, 3)], 2)[0]
    idx = np.array([[0, 5, 5], [2, 2, 1]])
    for kw in (dict(padding_idx=5), dict(scale_grad_by_freq=True), {}):
        ew, tw = _pair(w, True)
        eo = EF.embedding(ember.tensor(idx), ew, **kw)
        to = TF.embedding(torch.tensor(idx), tw, **kw)
        _close(eo, to)
        (eo * eo).sum().backward()
        (to * to).sum().backward()
        _close(ew.grad, tw.grad)


def test_dropout_eval_and_extremes_match_torch():
    x = _inputs([(4, 6)], 1)[0]
    for p in (0.0, 1.0):
        _check_functional(lambda a, p=p: EF.dropout(a, p), lambda a, p=p: TF.dropout(a, p), [x])
        _check_functional(lambda a, p=p: EF.alpha_dropout(a, p, True),
                          lambda a, p=p: TF.alpha_dropout(a, p, True), [x])
    _check_functional(lambda a: EF.dropout2d(a, 0.5, False), lambda a: TF.dropout2d(a, 0.5, False),
                      [x[None, None]])


def test_softmax_implicit_dim_matches_torch():
    for shape in [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        x = _inputs([shape], 1)[0]
        with pytest.warns(UserWarning):
            eo = EF.softmax(ember.tensor(x))
        with pytest.warns(UserWarning):
            to = TF.softmax(torch.tensor(x))
        _close(eo, to)


def test_network_state_dict_round_trip():
    """A torch network of these layers loads into the ember network and back."""

    def build(nn):
        return nn.Sequential(nn.Linear(8, 16), nn.PReLU(16), nn.Dropout(0.1), nn.Linear(16, 4),
                             nn.GELU(), nn.Identity(), nn.Linear(4, 3), nn.LogSoftmax(dim=1))

    torch.manual_seed(0)
    tnet, enet = build(tnn), build(enn)
    tnet.eval()
    enet.eval()
    _load_torch_into_ember(tnet, enet)
    x = _inputs([(5, 8)], 3)[0]
    _close(enet(ember.tensor(x)), tnet(torch.tensor(x)))
    tnet2 = build(tnn)
    tnet2.load_state_dict({k: torch.tensor(_np(v).copy()) for k, v in enet.state_dict().items()},
                          strict=True)
    tnet2.eval()
    _close(enet(ember.tensor(x)), tnet2(torch.tensor(x)))
    assert repr(enet) == repr(tnet)
    emb_t = tnn.Embedding(7, 3, padding_idx=1)
    emb_e = enn.Embedding(7, 3, padding_idx=1)
    _load_torch_into_ember(emb_t, emb_e)
    _close(emb_e.weight, emb_t.weight)
