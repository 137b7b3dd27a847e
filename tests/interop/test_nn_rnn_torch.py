"""ember's recurrent layers and nn.utils.rnn against torch 2.13.

With identical weights (a torch state_dict loaded with strict=True) and inputs, the output,
h_n / c_n and the gradients of the input, the initial states and every parameter match
torch within float32 tolerance, for every option (tanh/relu, LSTM with proj_size, GRU,
bias, batch_first, bidirectional multi-layer, initial states, unbatched input, packed
input with enforce_sorted=False). The padding/packing utilities give torch's results;
the ember state_dict loads back into torch with strict=True and repr strings are equal.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402
from torch.nn.utils import rnn as tu  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402
from ember.nn.utils import rnn as eu  # noqa: E402

RTOL, ATOL = 2e-5, 2e-5


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(a, b, what=""):
    a, b = _np(a), _np(b)
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL * scale, err_msg=what)


def _pair(a, grad=True):
    a = np.asarray(a, dtype=np.float32)
    return (ember.tensor(a.copy(), requires_grad=grad),
            torch.tensor(a.copy(), requires_grad=grad))


def _modules(name, *args, **kw):
    torch.manual_seed(0)
    tm = getattr(tnn, name)(*args, **kw)
    em = getattr(enn, name)(*args, **kw)
    res = em.load_state_dict({k: ember.tensor(_np(v).copy())
                              for k, v in tm.state_dict().items()}, strict=True)
    assert not res.missing_keys and not res.unexpected_keys
    assert repr(em) == repr(tm)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    return em, tm


def _loss(lib, out, hid):
    """A loss that weights every output element differently."""
    outs = [out] + (list(hid) if isinstance(hid, tuple) else [hid])
    total = 0
    for k, o in enumerate(outs):
        w = np.cos(np.arange(int(np.prod(o.shape))) * (0.37 + k)).reshape(tuple(o.shape))
        w = (ember.tensor(w.astype(np.float32)) if lib == "ember" else
             torch.tensor(w.astype(np.float32)))
        total = total + (o * w).sum() + 0.1 * (o * o).sum()
    return total


def _compare_grads(em, tm, pairs):
    for n, p in tm.named_parameters():
        _close(dict(em.named_parameters())[n].grad, p.grad, what=n)
    for e, t, what in pairs:
        _close(e.grad, t.grad, what=what)


CONFIGS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bias=False, bidirectional=True)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(proj_size=3)),
    ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True, bias=False)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True, bias=False)),
]


def _states(name, kw, B, rng, unbatched=False):
    nl = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    H = 6
    P = kw.get("proj_size") or H
    shp = (nl, P) if unbatched else (nl, B, P)
    eh, th = _pair(rng.standard_normal(shp) * 0.5)
    if name != "LSTM":
        return eh, th, [(eh, th, "h0")]
    cshp = (nl, H) if unbatched else (nl, B, H)
    ec, tc = _pair(rng.standard_normal(cshp) * 0.5)
    return (eh, ec), (th, tc), [(eh, th, "h0"), (ec, tc, "c0")]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "h0"])
def test_layers_match_torch(name, kw, with_state):
    em, tm = _modules(name, 4, 6, **kw)
    rng = np.random.default_rng(0)
    T, B = 5, 3
    shape = (B, T, 4) if kw.get("batch_first") else (T, B, 4)
    ex, tx = _pair(rng.standard_normal(shape))
    pairs = [(ex, tx, "input")]
    if with_state:
        ehx, thx, sp = _states(name, kw, B, rng)
        pairs += sp
        eo, eh = em(ex, ehx)
        to, th = tm(tx, thx)
    else:
        eo, eh = em(ex)
        to, th = tm(tx)
    _close(eo, to, "output")
    if name == "LSTM":
        _close(eh[0], th[0], "h_n")
        _close(eh[1], th[1], "c_n")
    else:
        _close(eh, th, "h_n")
    _loss("ember", eo, eh).backward()
    _loss("torch", to, th).backward()
    _compare_grads(em, tm, pairs)


@pytest.mark.parametrize("name,kw", [("LSTM", dict(num_layers=2, proj_size=2)),
                                     ("GRU", dict(bidirectional=True)),
                                     ("RNN", dict(batch_first=True))])
def test_unbatched_matches_torch(name, kw):
    em, tm = _modules(name, 4, 6, **kw)
    rng = np.random.default_rng(1)
    ex, tx = _pair(rng.standard_normal((5, 4)))
    ehx, thx, sp = _states(name, kw, None, rng, unbatched=True)
    eo, eh = em(ex, ehx)
    to, th = tm(tx, thx)
    _close(eo, to, "output")
    _loss("ember", eo, eh).backward()
    _loss("torch", to, th).backward()
    _compare_grads(em, tm, [(ex, tx, "input")] + sp)


@pytest.mark.parametrize("name,kw", [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(num_layers=2, bidirectional=True, nonlinearity="relu")),
])
@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "h0"])
def test_packed_matches_torch(name, kw, with_state):
    em, tm = _modules(name, 4, 6, **kw)
    rng = np.random.default_rng(2)
    lens = [3, 5, 1, 4]
    ex, tx = _pair(rng.standard_normal((5, 4, 4)))
    ep = eu.pack_padded_sequence(ex, lens, enforce_sorted=False)
    tp = tu.pack_padded_sequence(tx, lens, enforce_sorted=False)
    _close(ep.data, tp.data, "packed data")
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert ep.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert ep.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    pairs = [(ex, tx, "input")]
    if with_state:
        ehx, thx, sp = _states(name, kw, 4, rng)
        pairs += sp
        eo, eh = em(ep, ehx)
        to, th = tm(tp, thx)
    else:
        eo, eh = em(ep)
        to, th = tm(tp)
    assert isinstance(eo, eu.PackedSequence)
    _close(eo.data, to.data, "packed output")
    epad, elen = eu.pad_packed_sequence(eo, batch_first=True, total_length=6)
    tpad, tlen = tu.pad_packed_sequence(to, batch_first=True, total_length=6)
    _close(epad, tpad, "padded output")
    assert elen.tolist() == tlen.tolist()
    if name == "LSTM":
        _close(eh[0], th[0], "h_n")
        _close(eh[1], th[1], "c_n")
    else:
        _close(eh, th, "h_n")
    _loss("ember", epad, eh).backward()
    _loss("torch", tpad, th).backward()
    _compare_grads(em, tm, pairs)


@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                     ("LSTMCell", {}), ("GRUCell", {}),
                                     ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(name, kw, batched):
    em, tm = _modules(name, 4, 6, **kw)
    rng = np.random.default_rng(3)
    lead = (3,) if batched else ()
    ex, tx = _pair(rng.standard_normal(lead + (4,)))
    eh, th = _pair(rng.standard_normal(lead + (6,)))
    pairs = [(ex, tx, "input"), (eh, th, "h")]
    if name == "LSTMCell":
        ec, tc = _pair(rng.standard_normal(lead + (6,)))
        pairs.append((ec, tc, "c"))
        eo, to = em(ex, (eh, ec)), tm(tx, (th, tc))
        _close(eo[0], to[0])
        _close(eo[1], to[1])
        _loss("ember", eo[0], eo[1]).backward()
        _loss("torch", to[0], to[1]).backward()
    else:
        eo, to = em(ex, eh), tm(tx, th)
        _close(eo, to)
        _loss("ember", eo, ()).backward()
        _loss("torch", to, ()).backward()
    _compare_grads(em, tm, pairs)
    # no state given: zeros
    if name == "LSTMCell":
        _close(em(ex)[0], tm(tx)[0])
    else:
        _close(em(ex), tm(tx))


def test_state_dict_round_trip_and_eval_dropout():
    em, tm = _modules("LSTM", 4, 6, num_layers=3, dropout=0.3, bidirectional=True,
                      proj_size=2)
    torch.manual_seed(1)
    tm2 = tnn.LSTM(4, 6, num_layers=3, dropout=0.3, bidirectional=True, proj_size=2)
    res = tm2.load_state_dict({k: torch.tensor(_np(v).copy())
                               for k, v in em.state_dict().items()}, strict=True)
    assert not res.missing_keys and not res.unexpected_keys
    for k, v in tm.state_dict().items():
        np.testing.assert_array_equal(_np(tm2.state_dict()[k]), _np(v))
    em.eval()
    tm.eval()
    ex, tx = _pair(np.random.default_rng(4).standard_normal((3, 2, 4)), grad=False)
    _close(em(ex)[0], tm(tx)[0])


def test_default_init_distribution():
    ember.manual_seed(0)
    m = enn.GRU(10, 16, num_layers=2)
    bound = 1 / 4
    vals = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    assert abs(vals.mean()) < 0.01 and abs(vals.std() - bound / np.sqrt(3)) < 0.01


# ---------------------------------------------------------------------------
# utilities

def test_pad_sequence_matches_torch():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((n, 2, 3)).astype(np.float32) for n in (3, 5, 1)]
    for bf in (False, True):
        for side in ("right", "left"):
            es = [ember.tensor(a, requires_grad=True) for a in arrays]
            ts = [torch.tensor(a, requires_grad=True) for a in arrays]
            e = eu.pad_sequence(es, batch_first=bf, padding_value=-2.0, padding_side=side)
            t = tu.pad_sequence(ts, batch_first=bf, padding_value=-2.0, padding_side=side)
            _close(e, t)
            _loss("ember", e, ()).backward()
            _loss("torch", t, ()).backward()
            for a, b in zip(es, ts, strict=True):
                _close(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_pad_match_torch(batch_first, enforce_sorted):
    rng = np.random.default_rng(6)
    lens = [5, 4, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4, 4]
    shape = (5, 6, 3) if batch_first else (6, 5, 3)
    ex, tx = _pair(rng.standard_normal(shape))
    ep = eu.pack_padded_sequence(ex, ember.tensor(lens), batch_first=batch_first,
                                 enforce_sorted=enforce_sorted)
    tp = tu.pack_padded_sequence(tx, torch.tensor(lens), batch_first=batch_first,
                                 enforce_sorted=enforce_sorted)
    _close(ep.data, tp.data)
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    for a, b in ((ep.sorted_indices, tp.sorted_indices),
                 (ep.unsorted_indices, tp.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    epad, elen = eu.pad_packed_sequence(ep, batch_first=batch_first, padding_value=0.5,
                                        total_length=7)
    tpad, tlen = tu.pad_packed_sequence(tp, batch_first=batch_first, padding_value=0.5,
                                        total_length=7)
    _close(epad, tpad)
    assert elen.tolist() == tlen.tolist() and elen.dtype == ember.int64
    _loss("ember", epad, ()).backward()
    _loss("torch", tpad, ()).backward()
    _close(ex.grad, tx.grad)
    # pack_sequence / unpack_sequence / unpad_sequence
    arrays = [rng.standard_normal((n, 2)).astype(np.float32) for n in lens]
    e = eu.pack_sequence([ember.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    t = tu.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    _close(e.data, t.data)
    assert e.batch_sizes.tolist() == t.batch_sizes.tolist()
    for a, b in zip(eu.unpack_sequence(e), tu.unpack_sequence(t), strict=True):
        _close(a, b)
    tp2 = tu.pad_sequence([torch.tensor(a) for a in arrays], batch_first=batch_first)
    ep2 = eu.pad_sequence([ember.tensor(a) for a in arrays], batch_first=batch_first)
    for a, b in zip(eu.unpad_sequence(ep2, ember.tensor(lens), batch_first=batch_first),
                    tu.unpad_sequence(tp2, torch.tensor(lens), batch_first=batch_first),
                    strict=True):
        _close(a, b)
