"""ember.nn's recurrent layers (RNN, LSTM, GRU, the cells) and nn.utils.rnn.

Gradients are checked against finite differences in float64 (inputs, initial states and
every weight), packed batches against running each sequence alone, and the modules'
names, shapes, repr and errors against PyTorch's (written out here; the comparison with
torch itself is tests/interop/test_nn_rnn_torch.py).
"""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from ember.nn._functional import _rnn
from ember.nn.utils import rnn as rnn_utils

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _t(a, grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _weights(rng, mode, n_in, H, num_layers=1, bidirectional=False, bias=True, proj=0):
    """A flat list of float64 weights in PyTorch's order (requires grad)."""
    nd = 2 if bidirectional else 1
    g = GATES[mode] * H
    P = proj or H
    out = []
    for layer in range(num_layers):
        for _ in range(nd):
            inp = n_in if layer == 0 else P * nd
            ws = [rng.uniform(-0.6, 0.6, (g, inp)), rng.uniform(-0.6, 0.6, (g, P))]
            if bias:
                ws += [rng.uniform(-0.5, 0.5, g), rng.uniform(-0.5, 0.5, g)]
            if proj:
                ws.append(rng.uniform(-0.6, 0.6, (proj, H)))
            out += [_t(w, True) for w in ws]
    return out


# ---------------------------------------------------------------------------
# gradcheck of the compute

CASES = [
    ("RNN_TANH", dict()),
    ("RNN_RELU", dict()),
    ("LSTM", dict()),
    ("GRU", dict()),
    ("LSTM", dict(proj=2)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("RNN_TANH", dict(num_layers=2, bidirectional=True, bias=False)),
    ("LSTM", dict(bias=False, proj=2, bidirectional=True)),
]


@pytest.mark.parametrize("mode,kw", CASES, ids=[f"{m}-{k}" for m, k in CASES])
@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
def test_gradcheck_layers(mode, kw, packed):
    rng = np.random.default_rng(0)
    n_in, H, B = 3, 3, 3
    nl = kw.get("num_layers", 1)
    nd = 2 if kw.get("bidirectional") else 1
    P = kw.get("proj") or H
    ws = _weights(rng, mode, n_in, H, **kw)
    lstm = mode == "LSTM"
    if packed:
        lens = [4, 2, 1]  # sorted: the layer sees packed data
        batch_sizes = tuple(int((np.array(lens) > t).sum()) for t in range(lens[0]))
        x = _t(rng.standard_normal((sum(lens), n_in)), True)
    else:
        batch_sizes = None
        x = _t(rng.standard_normal((4, B, n_in)), True)
    h0 = _t(rng.standard_normal((nl * nd, B, P)) * 0.5, True)
    c0 = _t(rng.standard_normal((nl * nd, B, H)) * 0.5, True)
    has_bias = kw.get("bias", True)

    def f(x, h0, c0, *ws):
        out, h, c = _rnn.rnn_forward(mode, x, h0, c0 if lstm else None, list(ws), has_bias,
                                     kw.get("proj", 0), nl, 0.0, False, nd == 2, batch_sizes)
        return (out, h, c) if lstm else (out, h)

    assert gradcheck(f, (x, h0, c0, *ws), atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("cls,kw", [(nn.RNNCell, {}), (nn.RNNCell, {"nonlinearity": "relu"}),
                                    (nn.LSTMCell, {}), (nn.GRUCell, {}),
                                    (nn.GRUCell, {"bias": False})])
def test_gradcheck_cells(cls, kw):
    ember.manual_seed(0)
    cell = cls(3, 4, dtype=ember.float64, **kw)
    rng = np.random.default_rng(1)
    x = _t(rng.standard_normal((2, 3)), True)
    h = _t(rng.standard_normal((2, 4)), True)
    c = _t(rng.standard_normal((2, 4)), True)
    params = [p for p in cell.parameters()]

    def f(x, h, c, *ps):
        names = [n for n, _ in cell.named_parameters()]
        res = ember.nn._functional._rnn.cell_forward(
            "LSTM" if cls is nn.LSTMCell else
            ("GRU" if cls is nn.GRUCell else
             ("RNN_RELU" if kw.get("nonlinearity") == "relu" else "RNN_TANH")),
            x, h, c if cls is nn.LSTMCell else None, ps[0], ps[1],
            ps[2] if "bias_ih" in names else None, ps[3] if "bias_hh" in names else None)
        return res if cls is nn.LSTMCell else res[0]

    assert gradcheck(f, (x, h, c, *params), atol=1e-6, rtol=1e-4)
    # the module gives the same as the function
    out = cell(x, (h, c)) if cls is nn.LSTMCell else cell(x, h)
    ref = f(x, h, c, *params)
    if cls is nn.LSTMCell:
        np.testing.assert_allclose(out[0].detach().numpy(), ref[0].detach().numpy())
        np.testing.assert_allclose(out[1].detach().numpy(), ref[1].detach().numpy())
    else:
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())


def test_gradcheck_module_packed_unsorted():
    """Through the module: pack_padded_sequence (unsorted), LSTM, pad_packed_sequence."""
    ember.manual_seed(0)
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, dtype=ember.float64)
    rng = np.random.default_rng(2)
    x = _t(rng.standard_normal((4, 3, 2)), True)
    h0 = _t(rng.standard_normal((4, 3, 3)), True)
    c0 = _t(rng.standard_normal((4, 3, 3)), True)
    lens = [2, 4, 1]

    def f(x, h0, c0):
        p = rnn_utils.pack_padded_sequence(x, lens, enforce_sorted=False)
        out, (h, c) = m(p, (h0, c0))
        pad, _ = rnn_utils.pad_packed_sequence(out, total_length=5)
        return pad, h, c

    assert gradcheck(f, (x, h0, c0), atol=1e-6, rtol=1e-4)


# ---------------------------------------------------------------------------
# packed batches equal each sequence run alone

@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_equals_each_sequence_alone(cls, batch_first):
    ember.manual_seed(0)
    kw = dict(num_layers=2, bidirectional=True, batch_first=batch_first)
    m = cls(3, 4, **kw)
    rng = np.random.default_rng(3)
    lens = [3, 5, 1, 4]
    seqs = [ember.tensor(rng.standard_normal((n, 3)).astype(np.float32)) for n in lens]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    out, hid = m(packed)
    padded, out_lens = rnn_utils.pad_packed_sequence(out, batch_first=batch_first)
    assert out_lens.tolist() == lens
    h_n = hid[0] if cls is nn.LSTM else hid
    for i, s in enumerate(seqs):
        xi = s.unsqueeze(0 if batch_first else 1)
        oi, hi = m(xi)
        hi = hi[0] if cls is nn.LSTM else hi
        got = padded[i, :lens[i]] if batch_first else padded[:lens[i], i]
        want = oi[0] if batch_first else oi[:, 0]
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(h_n[:, i].detach().numpy(), hi[:, 0].detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        # padding stays zero
        rest = padded[i, lens[i]:] if batch_first else padded[lens[i]:, i]
        assert np.all(rest.detach().numpy() == 0)


@settings(max_examples=20, deadline=None)
@given(lens=st.lists(st.integers(1, 6), min_size=1, max_size=5),
       mode=st.sampled_from(["LSTM", "GRU", "RNN"]), seed=st.integers(0, 2**16))
def test_hypothesis_packed_lstm_vs_loop(lens, mode, seed):
    """A packed bidirectional layer equals a NumPy step-by-step loop per sequence."""
    rng = np.random.default_rng(seed)
    H, n_in = 3, 2
    m = getattr(nn, mode)(n_in, H, bidirectional=True, dtype=ember.float64)
    seqs = [rng.standard_normal((n, n_in)) for n in lens]
    packed = rnn_utils.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    out, _ = m(packed)
    padded, _ = rnn_utils.pad_packed_sequence(out, batch_first=True)
    p = {k: v.detach().numpy() for k, v in m.state_dict().items()}

    def sig(v):
        return 1 / (1 + np.exp(-v))

    def run(seq, sfx):
        wi, wh = p["weight_ih_l0" + sfx], p["weight_hh_l0" + sfx]
        b = p["bias_ih_l0" + sfx], p["bias_hh_l0" + sfx]
        h, c = np.zeros(H), np.zeros(H)
        ys = []
        for xt in seq:
            gi, gh = wi @ xt + b[0], wh @ h + b[1]
            if mode == "LSTM":
                g = gi + gh
                i_, f_, g_, o_ = sig(g[:H]), sig(g[H:2 * H]), np.tanh(g[2 * H:3 * H]), \
                    sig(g[3 * H:])
                c = f_ * c + i_ * g_
                h = o_ * np.tanh(c)
            elif mode == "GRU":
                r = sig(gi[:H] + gh[:H])
                z = sig(gi[H:2 * H] + gh[H:2 * H])
                n = np.tanh(gi[2 * H:] + r * gh[2 * H:])
                h = (1 - z) * n + z * h
            else:
                h = np.tanh(gi + gh)
            ys.append(h)
        return np.array(ys)

    for i, s in enumerate(seqs):
        fwd = run(s, "")
        bwd = run(s[::-1], "_reverse")[::-1]
        want = np.concatenate([fwd, bwd], 1)
        np.testing.assert_allclose(padded[i, :len(s)].detach().numpy(), want, rtol=1e-10,
                                   atol=1e-12)


# ---------------------------------------------------------------------------
# module API: names, shapes, init, repr, options

def test_parameter_names_shapes_and_init():
    ember.manual_seed(0)
    m = nn.LSTM(5, 8, num_layers=2, bidirectional=True, proj_size=3)
    names = [n for n, _ in m.named_parameters()]
    want = []
    for layer in range(2):
        for sfx in ("", "_reverse"):
            want += [f"weight_ih_l{layer}{sfx}", f"weight_hh_l{layer}{sfx}",
                     f"bias_ih_l{layer}{sfx}", f"bias_hh_l{layer}{sfx}",
                     f"weight_hr_l{layer}{sfx}"]
    assert names == want
    assert list(m.state_dict().keys()) == want
    assert m.weight_ih_l0.shape == (32, 5)
    assert m.weight_hh_l0.shape == (32, 3)
    assert m.weight_ih_l1_reverse.shape == (32, 6)
    assert m.weight_hr_l1.shape == (3, 8)
    bound = 1 / math.sqrt(8)
    for p in m.parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound
    assert m._flat_weights_names == want
    assert [id(w) for w in m._flat_weights] == [id(p) for p in m.parameters()]
    assert m.flatten_parameters() is None
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 5
    g = nn.GRU(4, 6, bias=False)
    assert list(g.state_dict().keys()) == ["weight_ih_l0", "weight_hh_l0"]
    assert g.weight_ih_l0.shape == (18, 4)
    c = nn.LSTMCell(3, 5)
    assert list(c.state_dict().keys()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert c.weight_ih.shape == (20, 3)
    c2 = nn.RNNCell(3, 5, bias=False)
    assert c2.bias_ih is None and list(c2.state_dict().keys()) == ["weight_ih", "weight_hh"]


def test_repr():
    assert repr(nn.LSTM(10, 20, 2, dropout=0.5, bidirectional=True, batch_first=True,
                        proj_size=5, bias=False)) == (
        "LSTM(10, 20, proj_size=5, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
        "bidirectional=True)")
    assert repr(nn.GRU(3, 4)) == "GRU(3, 4)"
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"
    assert repr(nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == (
        "RNNCell(3, 4, bias=False, nonlinearity=relu)")
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    assert repr(nn.GRUCell(3, 4)) == "GRUCell(3, 4)"


def test_to_double_updates_flat_weights_and_runs():
    m = nn.GRU(3, 4).double()
    assert all(w.dtype == ember.float64 for w in m._flat_weights)
    out, h = m(ember.randn(2, 1, 3, dtype=ember.float64))
    assert out.dtype == ember.float64 and h.shape == (1, 1, 4)


def test_assigning_a_weight_is_used():
    m = nn.RNN(2, 3)
    m.weight_hh_l0 = nn.Parameter(ember.zeros(3, 3))
    assert m._flat_weights[1] is m.weight_hh_l0
    x = ember.randn(4, 1, 2)
    out, _ = m(x)
    # with W_hh = 0 every step depends on its own input only
    out1, _ = m(x[2:3])
    np.testing.assert_allclose(out[2].detach().numpy(), out1[0].detach().numpy(), rtol=1e-6)


def test_unbatched_and_batch_first_shapes():
    m = nn.LSTM(3, 4, num_layers=2, batch_first=True, proj_size=2)
    x = ember.randn(5, 3)
    out, (h, c) = m(x)
    assert out.shape == (5, 2) and h.shape == (2, 2) and c.shape == (2, 4)
    out_b, (hb, cb) = m(x.unsqueeze(0))
    np.testing.assert_allclose(out.detach().numpy(), out_b[0].detach().numpy(), rtol=1e-6)
    out2, _ = m(ember.randn(6, 5, 3))
    assert out2.shape == (6, 5, 2)
    g = nn.GRU(3, 4, bidirectional=True)
    out, h = g(ember.randn(5, 3), ember.zeros(2, 4))
    assert out.shape == (5, 8) and h.shape == (2, 4)
    cell = nn.GRUCell(3, 4)
    assert cell(ember.randn(3)).shape == (4,)
    lc = nn.LSTMCell(3, 4)
    h, c = lc(ember.randn(3), (ember.zeros(4), ember.zeros(4)))
    assert h.shape == (4,) and c.shape == (4,)


def test_initial_state_is_used():
    m = nn.RNN(2, 3)
    x = ember.randn(4, 2, 2)
    h0 = ember.randn(1, 2, 3)
    out, h = m(x, h0)
    # the first step by hand
    w_ih, w_hh = m.weight_ih_l0.detach().numpy(), m.weight_hh_l0.detach().numpy()
    b = m.bias_ih_l0.detach().numpy() + m.bias_hh_l0.detach().numpy()
    want = np.tanh(x[0].numpy() @ w_ih.T + h0[0].numpy() @ w_hh.T + b)
    np.testing.assert_allclose(out[0].detach().numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h[0].detach().numpy(), out[-1].detach().numpy())


def test_dropout_between_layers():
    ember.manual_seed(0)
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0)
    x = ember.randn(5, 2, 3)
    out, _ = m(x)
    # dropout=1 zeroes the first layer's output: layer 2 sees zeros
    ref = nn.GRU(4, 4)
    ref.load_state_dict({k.replace("l1", "l0"): v for k, v in m.state_dict().items()
                         if k.endswith("l1")})
    want, _ = ref(ember.zeros(5, 2, 4))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    m.eval()
    out_eval, _ = m(x)
    assert not np.allclose(out_eval.detach().numpy(), want.detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


@pytest.mark.parametrize("mode,kw", [("LSTM", dict(proj=2)), ("GRU", dict()),
                                     ("RNN_TANH", dict())])
@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
def test_gradgradcheck(mode, kw, packed):
    """create_graph=True records the backward (the composite recomputation)."""
    rng = np.random.default_rng(7)
    ws = _weights(rng, mode, 2, 2, **kw)
    P = kw.get("proj") or 2
    if packed:
        batch_sizes = (2, 1)
        x = _t(rng.standard_normal((3, 2)), True)
    else:
        batch_sizes = None
        x = _t(rng.standard_normal((2, 2, 2)), True)
    h0 = _t(rng.standard_normal((2, P)), True)
    c0 = _t(rng.standard_normal((2, 2)), True) if mode == "LSTM" else None

    def f(x, h0, w_ih, w_hh, b_ih, b_hh, *rest):
        w_hr = rest[0] if rest else None
        res = _rnn._layer(mode, x, h0, c0, (w_ih, w_hh, b_ih, b_hh, w_hr), batch_sizes, True)
        return res[0], res[1]

    assert ember.autograd.gradgradcheck(f, (x, h0, *ws), atol=1e-5, rtol=1e-3)


def test_composite_matches_fast_node():
    rng = np.random.default_rng(8)
    for mode in ("LSTM", "GRU", "RNN_RELU"):
        ws = _weights(rng, mode, 3, 4, proj=2 if mode == "LSTM" else 0)
        x = _t(rng.standard_normal((7, 3)))
        bs = (3, 2, 1, 1)
        P = 2 if mode == "LSTM" else 4
        h0, c0 = _t(rng.standard_normal((3, P))), _t(rng.standard_normal((3, 4)))
        c0 = c0 if mode == "LSTM" else None
        for rev in (False, True):
            w5 = tuple(ws) if mode == "LSTM" else tuple(ws) + (None,)
            fast = _rnn._layer(mode, x, h0, c0, w5, bs, rev)
            slow = _rnn._composite_layer(mode, x, h0, c0, *w5, bs, rev)
            for a, b in zip(fast, slow, strict=True):
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(),
                                           rtol=1e-12, atol=1e-13)


def test_inplace_change_of_input_is_detected():
    m = nn.GRU(2, 3)
    x = ember.randn(3, 1, 2, requires_grad=True)
    y = x * 1
    out, _ = m(y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_inplace_change_of_output_is_detected(cls):
    """The output shares memory with the states backward reads: changing it is refused."""
    m = cls(2, 3)
    x = ember.randn(3, 2, 2, requires_grad=True)
    out, _ = m(x)
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ---------------------------------------------------------------------------
# errors (PyTorch's messages)

def test_constructor_errors():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.RNN(10, 20, proj_size=3)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(10, 20, proj_size=3)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(10, 20, proj_size=20)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'foo'"):
        nn.RNN(3, 4, nonlinearity="foo")
    with pytest.raises(ValueError, match=r"dropout should be a number in range \[0, 1\]"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(TypeError, match="input_size should be of type int, got: float"):
        nn.LSTM(3.0, 4)
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: foo"):
        nn.RNNCell(3, 4, nonlinearity="foo")(ember.randn(2, 3))


def test_forward_errors():
    m = nn.LSTM(10, 20, 2)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 10, got 7"):
        m(ember.randn(5, 3, 7))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 3, 20\), got "
                                           r"\[2, 2, 20\]"):
        m(ember.randn(5, 3, 10), (ember.randn(2, 2, 20), ember.randn(2, 3, 20)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 3, 20\), got "
                                           r"\[2, 3, 21\]"):
        m(ember.randn(5, 3, 10), (ember.randn(2, 3, 20), ember.randn(2, 3, 21)))
    with pytest.raises(ValueError, match=r"RNN input dtype \(ember.float64\) does not match "
                                         r"weight dtype \(ember.float32\)"):
        m(ember.randn(5, 3, 10, dtype=ember.float64))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        m(ember.randn(5, 3, 3, 10))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx and cx should also be "
                                           r"3-D but got \(2-D, 3-D\) tensors"):
        m(ember.randn(5, 3, 10), (ember.randn(3, 20), ember.randn(2, 3, 20)))
    g = nn.GRU(10, 20)
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but "
                                           "got 4-D tensor"):
        g(ember.randn(5, 3, 10), ember.randn(1, 3, 20, 1))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 3, 20\), got "
                                           r"\[2, 3, 20\]"):
        g(ember.randn(5, 3, 10), ember.randn(2, 3, 20))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor "
                                         "instead"):
        nn.RNN(3, 4)(ember.randn(3))
    c = nn.LSTMCell(10, 20)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 "
                                           "expected 10"):
        c(ember.randn(3, 5))
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden0 batch "
                                           "size 2"):
        c(ember.randn(3, 10), (ember.randn(2, 20), ember.randn(3, 20)))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 7, "
                                           "expected 20"):
        c(ember.randn(3, 10), (ember.randn(3, 20), ember.randn(3, 7)))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got "
                                           "Double and Float"):
        g(ember.randn(5, 3, 10), ember.randn(1, 3, 20, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got "
                                           "Double and Float"):
        nn.GRUCell(3, 4)(ember.randn(2, 3, dtype=ember.float64))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D "
                                         "instead"):
        nn.GRUCell(3, 4)(ember.randn(1, 2, 3))


# ---------------------------------------------------------------------------
# nn.utils.rnn

def test_pack_pad_round_trip_and_layout():
    x = ember.arange(4 * 3, dtype=ember.float32).reshape(4, 3, 1)
    p = rnn_utils.pack_padded_sequence(x, [4, 2, 1])
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    assert p.batch_sizes.dtype == ember.int64
    assert p.data[:, 0].tolist() == [0, 1, 2, 3, 4, 6, 9]
    assert p.sorted_indices is None and p.unsorted_indices is None
    pad, lens = rnn_utils.pad_packed_sequence(p, padding_value=-1.0, total_length=5)
    assert pad.shape == (5, 3, 1) and lens.tolist() == [4, 2, 1]
    want = x.numpy().copy()
    want[2:, 1] = -1
    want[1:, 2] = -1
    np.testing.assert_array_equal(pad[:4].numpy(), want)
    assert np.all(pad[4].numpy() == -1)
    # batch_first and unsorted lengths as a tensor
    xb = x.transpose(0, 1)
    p2 = rnn_utils.pack_padded_sequence(xb, ember.tensor([1, 4, 2]), batch_first=True,
                                        enforce_sorted=False)
    assert p2.sorted_indices.tolist() == [1, 2, 0]
    assert p2.unsorted_indices.tolist() == [2, 0, 1]
    pad2, lens2 = rnn_utils.pad_packed_sequence(p2, batch_first=True)
    assert lens2.tolist() == [1, 4, 2] and pad2.shape == (3, 4, 1)
    assert pad2[0, :, 0].tolist() == [0, 0, 0, 0]
    assert pad2[1, :, 0].tolist() == [1, 4, 7, 10]
    assert pad2[2, :, 0].tolist() == [2, 5, 0, 0]


def test_pad_sequence_options_and_unpad():
    a, b = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0])
    assert rnn_utils.pad_sequence([a, b]).tolist() == [[1, 4], [2, 0], [3, 0]]
    assert rnn_utils.pad_sequence([a, b], batch_first=True, padding_value=-1,
                                  padding_side="left").tolist() == [[1, 2, 3], [-1, -1, 4]]
    padded = rnn_utils.pad_sequence([a, b], batch_first=True)
    seqs = rnn_utils.unpad_sequence(padded, ember.tensor([3, 1]), batch_first=True)
    assert [s.tolist() for s in seqs] == [[1, 2, 3], [4]]
    packed = rnn_utils.pack_sequence([b, a], enforce_sorted=False)
    assert [s.tolist() for s in rnn_utils.unpack_sequence(packed)] == [[4], [1, 2, 3]]


def test_gradients_through_pack_and_pad():
    rng = np.random.default_rng(5)
    x = _t(rng.standard_normal((4, 3, 2)), True)
    seqs = [_t(rng.standard_normal((n, 2)), True) for n in (2, 4, 1)]

    def f(x):
        p = rnn_utils.pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        return rnn_utils.pad_packed_sequence(p, batch_first=True, padding_value=0.5)[0] ** 2

    assert gradcheck(f, (x,))
    assert gradcheck(lambda *s: rnn_utils.pad_sequence(list(s), padding_side="left") * 3,
                     tuple(seqs))
    assert gradcheck(lambda *s: rnn_utils.pack_sequence(list(s), enforce_sorted=False).data,
                     tuple(seqs))


def test_packed_sequence_methods():
    p = rnn_utils.pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])])
    assert isinstance(p, tuple) and len(p) == 4
    d = p.double()
    assert d.data.dtype == ember.float64 and d.batch_sizes is p.batch_sizes
    assert p.to(ember.float32) is p
    assert p.long().data.dtype == ember.int64
    assert not p.is_cuda
    data, bs, si, ui = p
    assert bs.tolist() == [2, 1]
    assert repr(p).startswith("PackedSequence(data=tensor(")
    assert rnn_utils.invert_permutation(ember.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert rnn_utils.invert_permutation(None) is None


def test_utils_errors():
    x = ember.randn(5, 3, 2)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing "
                                           "order when `enforce_sorted` is True"):
        rnn_utils.pack_padded_sequence(x, [5, 4, 6])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        rnn_utils.pack_padded_sequence(x, [5, 4, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to "
                                           r"batch_size, but got 2 \(batch_size=3\)"):
        rnn_utils.pack_padded_sequence(x, [5, 4])
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 "
                                           "tensor, but got 2D cpu Long tensor"):
        rnn_utils.pack_padded_sequence(x, ember.tensor([[5, 4, 3]]))
    p = rnn_utils.pack_padded_sequence(x, [5, 4, 3])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of "
                                         "the longest sequence in input, but got "
                                         "total_length=3 and max sequence length being 5"):
        rnn_utils.pad_packed_sequence(p, total_length=3)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size "
                                           r"of tensor b \(3\) at non-singleton dimension 1"):
        rnn_utils.pad_sequence([ember.randn(3, 2), ember.randn(3, 3)])
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        rnn_utils.pad_sequence([])
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, "
                                           "but got up."):
        rnn_utils.pad_sequence([ember.randn(3, 2)], padding_side="up")
    with pytest.raises(RuntimeError, match="pad_sequence: Expected iterable for input "
                                           "sequences, but got arg of type: <class 'int'>"):
        rnn_utils.pad_sequence(5)
