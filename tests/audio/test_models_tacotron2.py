"""emberaudio.models.Tacotron2: torchaudio's state-dict keys (written out from torchaudio's
models/tacotron2.py), the location-sensitive attention against NumPy, teacher-forced and
free-running decoding (shapes, masks, stop tokens, lengths), errors. Numbers against
torchaudio are in tests/interop/test_audio_models_torchaudio.py."""

import numpy as np
import pytest

import ember
from emberaudio.models import Tacotron2
from emberaudio.models.tacotron2 import _Attention


def _np(t):
    return t.detach().numpy()


def _small(**kwargs):
    ember.manual_seed(0)
    return Tacotron2(n_symbol=10, n_mels=8, symbol_embedding_dim=16, encoder_embedding_dim=16,
                     encoder_n_convolution=2, decoder_rnn_dim=16, attention_rnn_dim=12,
                     attention_hidden_dim=8, attention_location_n_filter=4,
                     attention_location_kernel_size=3, prenet_dim=8, postnet_n_convolution=3,
                     postnet_embedding_dim=8, **kwargs)


def _bn(prefix):
    return [prefix + k for k in ("weight", "bias", "running_mean", "running_var",
                                 "num_batches_tracked")]


def test_state_dict_keys_and_shapes():
    state = _small().state_dict()
    expected = (["embedding.weight"]
                + [k for i in range(2) for k in [f"encoder.convolutions.{i}.0.weight",
                                                 f"encoder.convolutions.{i}.0.bias"]
                   + _bn(f"encoder.convolutions.{i}.1.")]
                + [f"encoder.lstm.{k}_l0{r}" for r in ("", "_reverse")
                   for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                + ["decoder.prenet.layers.0.weight", "decoder.prenet.layers.1.weight"]
                + [f"decoder.attention_rnn.{k}" for k in ("weight_ih", "weight_hh", "bias_ih",
                                                          "bias_hh")]
                + ["decoder.attention_layer.query_layer.weight",
                   "decoder.attention_layer.memory_layer.weight",
                   "decoder.attention_layer.v.weight",
                   "decoder.attention_layer.location_layer.location_conv.weight",
                   "decoder.attention_layer.location_layer.location_dense.weight"]
                + [f"decoder.decoder_rnn.{k}" for k in ("weight_ih", "weight_hh", "bias_ih",
                                                        "bias_hh")]
                + ["decoder.linear_projection.weight", "decoder.linear_projection.bias",
                   "decoder.gate_layer.weight", "decoder.gate_layer.bias"]
                + [k for i in range(3) for k in [f"postnet.convolutions.{i}.0.weight",
                                                 f"postnet.convolutions.{i}.0.bias"]
                   + _bn(f"postnet.convolutions.{i}.1.")])
    assert list(state) == expected
    assert state["encoder.lstm.weight_ih_l0"].shape == (32, 16)      # 4 * (16 / 2)
    assert state["decoder.attention_rnn.weight_ih"].shape == (48, 8 + 16)
    assert state["decoder.decoder_rnn.weight_ih"].shape == (64, 12 + 16)
    assert state["decoder.attention_layer.location_layer.location_conv.weight"].shape == (
        4, 2, 3)
    assert state["decoder.linear_projection.weight"].shape == (8, 16 + 16)
    assert state["postnet.convolutions.0.0.weight"].shape == (8, 8, 5)
    assert state["postnet.convolutions.2.1.weight"].shape == (8,)


def test_default_architecture_sizes():
    ember.manual_seed(0)
    state = Tacotron2(n_symbol=38).state_dict()
    assert state["embedding.weight"].shape == (38, 512)
    assert state["decoder.attention_rnn.weight_hh"].shape == (4096, 1024)
    assert state["decoder.prenet.layers.0.weight"].shape == (256, 80)
    assert sum(k.startswith("postnet.convolutions.") and k.endswith("0.weight")
               for k in state) == 5


def test_attention_against_numpy():
    ember.manual_seed(0)
    attention = _Attention(6, 5, 4, 3, 3)
    hidden = ember.randn(2, 6)
    memory = ember.randn(2, 7, 5)
    weights_cat = ember.rand(2, 2, 7)
    mask = ember.tensor([[False] * 7, [False] * 4 + [True] * 3])
    processed = attention.memory_layer(memory)
    context, weights = attention(hidden, memory, processed, weights_cat, mask)
    wq = _np(attention.query_layer.weight)
    wm = _np(attention.memory_layer.weight)
    v = _np(attention.v.weight)
    conv = _np(attention.location_layer.location_conv.weight)      # (3, 2, 3)
    dense = _np(attention.location_layer.location_dense.weight)    # (4, 3)
    cat = np.pad(_np(weights_cat), ((0, 0), (0, 0), (1, 1)))
    loc = np.stack([sum(cat[:, c, k:k + 7] * conv[f, c, k] for c in range(2) for k in range(3))
                    for f in range(3)], axis=1)                   # (2, 3, 7)
    energies = (np.tanh((_np(hidden) @ wq.T)[:, None] + loc.transpose(0, 2, 1) @ dense.T
                        + _np(memory) @ wm.T) @ v.T)[..., 0]
    energies[1, 4:] = -np.inf
    expected = np.exp(energies - energies.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(_np(weights), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(context), np.einsum("bt,btd->bd", expected, _np(memory)),
                               rtol=1e-5, atol=1e-6)


def test_forward_teacher_forcing():
    model = _small(mask_padding=True).eval()
    tokens = ember.tensor([[1, 2, 3, 4, 5, 6, 7], [3, 4, 5, 6, 7, 0, 0]])
    mel = ember.randn(2, 8, 9)
    before, after, gates, alignments = model(tokens, ember.tensor([7, 5]), mel,
                                             ember.tensor([9, 6]))
    assert before.shape == after.shape == (2, 8, 9)
    assert gates.shape == (2, 9) and alignments.shape == (2, 9, 7)
    # attention: distributions over the valid tokens only
    np.testing.assert_allclose(_np(alignments).sum(-1), 1.0, rtol=1e-5)
    assert np.all(_np(alignments)[1, :, 5:] == 0)
    # padding past the mel lengths: zeros, and a stop-token logit of 1000
    assert np.all(_np(before)[1, :, 6:] == 0) and np.all(_np(after)[1, :, 6:] == 0)
    assert np.all(_np(gates)[1, 6:] == 1e3)
    # the postnet predicts a residual (evaluation: no dropout there)
    unmasked = _small().eval()
    ember.manual_seed(3)
    b2, a2, _, _ = unmasked(tokens, ember.tensor([7, 5]), mel, ember.tensor([9, 6]))
    np.testing.assert_allclose(_np(a2), _np(b2 + unmasked.postnet(b2)), rtol=1e-5, atol=1e-5)


def test_gradients_reach_every_parameter():
    model = _small().train()
    tokens = ember.tensor([[1, 2, 3, 4], [5, 6, 7, 0]])
    mel = ember.randn(2, 8, 5)
    before, after, gates, _ = model(tokens, ember.tensor([4, 3]), mel, ember.tensor([5, 5]))
    (before.square().mean() + after.square().mean() + gates.square().mean()).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and np.isfinite(_np(p.grad)).all(), name


def test_infer_stops_on_the_gate():
    model = _small(decoder_max_step=12).eval()
    with ember.no_grad():
        model.decoder.gate_layer.weight.zero_()
        model.decoder.gate_layer.bias.fill_(10.0)              # sigmoid(10) > 0.5: stop
    tokens = ember.tensor([[1, 2, 3], [4, 5, 0]])
    with ember.no_grad():
        mel, lengths, alignments = model.infer(tokens, ember.tensor([3, 2]))
    assert mel.shape == (2, 8, 1) and lengths.tolist() == [1, 1]
    assert lengths.dtype == ember.int32 and alignments.shape == (2, 1, 3)


def test_infer_runs_to_the_maximum_and_warns():
    model = _small(decoder_max_step=6).eval()
    with ember.no_grad():
        model.decoder.gate_layer.weight.zero_()
        model.decoder.gate_layer.bias.fill_(-10.0)             # never stops
    tokens = ember.tensor([[1, 2, 3, 4]])
    with pytest.warns(UserWarning, match="max decoder steps"), ember.no_grad():
        mel, lengths, alignments = model.infer(tokens)          # lengths=None: all valid
    assert mel.shape == (1, 8, 6) and lengths.tolist() == [6]
    np.testing.assert_allclose(_np(alignments).sum(-1), 1.0, rtol=1e-5)


def test_infer_lengths_count_until_each_sample_stops():
    model = _small(decoder_max_step=8, decoder_early_stopping=False).eval()
    with ember.no_grad():
        model.decoder.gate_layer.weight.zero_()
        model.decoder.gate_layer.bias.fill_(10.0)
    with pytest.warns(UserWarning), ember.no_grad():
        mel, lengths, _ = model.infer(ember.tensor([[1, 2], [3, 4]]))
    assert mel.shape == (2, 8, 8) and lengths.tolist() == [1, 1]


def test_errors():
    # (torchaudio builds these and fails at the first forward with a shape mismatch)
    with pytest.raises(ValueError, match="odd"):
        Tacotron2(n_symbol=10, attention_location_kernel_size=4)
    with pytest.raises(ValueError, match="odd"):
        Tacotron2(n_symbol=10, postnet_kernel_size=4)
    model = _small()
    with pytest.raises(ValueError, match="tokens must be"):
        model.infer(ember.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError):  # pack_padded_sequence needs decreasing lengths
        model.infer(ember.tensor([[1, 2, 0], [1, 2, 3]]), ember.tensor([2, 3]))
