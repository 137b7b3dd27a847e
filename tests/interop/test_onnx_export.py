"""ember.onnx.export: the exported models pass onnx.checker and run in onnxruntime with
ember's eager outputs, also at other batch and sequence sizes than traced."""

import io
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _run(data, *inputs):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feeds)


def _flat(out):
    if isinstance(out, ember.Tensor):
        return [out]
    res = []
    for o in out:
        if o is not None:
            res.extend(_flat(o))
    return res


def export_and_compare(model, args, other_args=(), rtol=1e-4, atol=1e-5, **kwargs):
    """Export ``model`` on ``args``; compare onnxruntime with eager on ``args`` and on each
    tuple in ``other_args``. Returns the model bytes."""
    model.eval()
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, **kwargs)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    for a in (args, *other_args):
        with ember.no_grad():
            expected = _flat(model(*a))
        got = _run(data, *[t for t in a if isinstance(t, ember.Tensor)])
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol, atol=atol)
    return data


# -- the five models -----------------------------------------------------------------------

def test_mlp_dynamic_batch():
    ember.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(),
                        nn.Dropout(0.2), nn.Linear(16, 3))
    data = export_and_compare(mlp, (ember.randn(3, 4),), [(ember.randn(7, 4),)],
                              input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    m = onnx.load_from_string(data)
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert m.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {i.name for i in m.graph.initializer} >= {"0.weight", "0.bias", "5.weight"}


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), (2, 2))
        x = x.view(x.size(0), -1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc3(F.relu(self.fc2(x))), dim=1)


def test_lenet_dynamic_batch():
    ember.manual_seed(0)
    export_and_compare(LeNet(), (ember.randn(2, 1, 28, 28),), [(ember.randn(5, 1, 28, 28),)],
                       input_names=["image"], dynamic_axes={"image": [0]})


def test_resnet18_dynamic_batch():
    models = pytest.importorskip("embervision.models")
    ember.manual_seed(0)
    model = models.resnet18(num_classes=10)
    # non-trivial running statistics, so that BatchNorm's eval form is checked
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    export_and_compare(model, (ember.randn(2, 3, 32, 32),), [(ember.randn(3, 3, 32, 32),)],
                       rtol=1e-3, atol=1e-4, input_names=["x"], dynamic_axes={"x": {0: "N"}})


class LSTMLM(nn.Module):
    def __init__(self, vocab=50, emb=16, hidden=24, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.drop = nn.Dropout(0.3)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, dropout=0.3)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.drop(self.embed(tokens)))
        b, t, _ = out.shape
        logits = self.head(out.reshape(b * t, -1))
        return logits.view(b, t, -1), h


def test_lstm_language_model_dynamic_batch_and_sequence():
    ember.manual_seed(0)
    tok = ember.randint(0, 50, (2, 7))
    export_and_compare(LSTMLM(), (tok,), [(ember.randint(0, 50, (4, 11)),)],
                       input_names=["tokens"], output_names=["logits", "h"],
                       dynamic_axes={"tokens": {0: "batch", 1: "seq"}})


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_bidirectional_initial_states(mode):
    ember.manual_seed(1)
    cls = getattr(nn, mode)
    rnn = cls(5, 6, num_layers=2, bidirectional=True)
    x = ember.randn(4, 3, 5)
    h0 = ember.randn(4, 3, 6)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x, h0):
            if mode == "LSTM":
                out, (h, c) = self.rnn(x, (h0, h0 * 0.5))
                return out, h, c
            out, h = self.rnn(x, h0)
            return out, h

    export_and_compare(M(), (x, h0), [(ember.randn(6, 2, 5), ember.randn(4, 2, 6))],
                       input_names=["x", "h0"],
                       dynamic_axes={"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"}})


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = ember.arange(max_len).unsqueeze(1)
        div = ember.exp(ember.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = ember.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = ember.sin(pos * div)
        pe[0, :, 1::2] = ember.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class Encoder(nn.Module):
    def __init__(self, vocab=40, d=32, heads=4, layers=2, causal=False):
        super().__init__()
        self.causal = causal
        self.embed = nn.Embedding(vocab, d)
        self.pos = PositionalEncoding(d)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=64, dropout=0.1,
                                           batch_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d, 3)

    def forward(self, tokens):
        x = self.pos(self.embed(tokens) * math.sqrt(32))
        mask = None
        if self.causal:
            mask = nn.Transformer.generate_square_subsequent_mask(tokens.size(1))
        x = self.encoder(x, mask=mask)
        return self.head(x.mean(dim=1))


@pytest.mark.parametrize("causal", [False, True])
def test_transformer_encoder_dynamic_batch_and_sequence(causal):
    ember.manual_seed(0)
    model = Encoder(causal=causal)
    export_and_compare(model, (ember.randint(0, 40, (2, 9)),),
                       [(ember.randint(0, 40, (5, 13)),)], rtol=1e-3, atol=1e-4,
                       input_names=["tokens"], dynamic_axes={"tokens": {0: "b", 1: "s"}})


def test_multihead_attention_masks_and_weights():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4)  # (L, N, E)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, q, kv, pad):
            return self.mha(q, kv, kv, key_padding_mask=pad)

    q, kv = ember.randn(5, 2, 16), ember.randn(7, 2, 16)
    pad = ember.zeros(2, 7, dtype=ember.bool)
    pad[1, 5:] = True
    export_and_compare(M(), (q, kv, pad), rtol=1e-4, atol=1e-5)


def test_scaled_dot_product_attention():
    class M(nn.Module):
        def forward(self, q, k, v, m):
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
            return a + F.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = ember.randn(2, 3, 6, 8), ember.randn(2, 3, 6, 8), ember.randn(2, 3, 6, 8)
    m = ember.rand(6, 6) > 0.3
    m[:, 0] = True
    export_and_compare(M(), (q, k, v, m), [(ember.randn(1, 3, 9, 8), ember.randn(1, 3, 9, 8),
                                            ember.randn(1, 3, 9, 8), ember.ones(9, 9) > 0)],
                       input_names=["q", "k", "v", "m"],
                       dynamic_axes={"q": {0: "b", 2: "s"}, "k": {0: "b", 2: "s"},
                                     "v": {0: "b", 2: "s"}, "m": {0: "s", 1: "s"}})
