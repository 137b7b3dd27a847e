"""emberaudio.models with torchaudio's weights give torchaudio's outputs, and the state dicts
have the same keys and shapes.

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import numpy as np
import pytest

import ember
from emberaudio import models

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")

CASES = [
    ("Wav2Letter", {"num_classes": 12}, (2, 1, 4000)),
    ("Wav2Letter", {"num_classes": 12, "input_type": "mfcc", "num_features": 13},
     (2, 13, 60)),
    ("DeepSpeech", {"n_feature": 20, "n_hidden": 32, "n_class": 9}, (2, 1, 11, 20)),
    ("ConvTasNet", {"num_sources": 2, "enc_num_feats": 32, "msk_num_feats": 16,
                    "msk_num_hidden_feats": 24, "msk_num_layers": 3, "msk_num_stacks": 2},
     (2, 1, 203)),
]


@pytest.mark.parametrize("name, kwargs, shape", CASES, ids=[c[0] for c in CASES])
def test_same_outputs_with_torchaudio_weights(name, kwargs, shape):
    torch.manual_seed(0)
    theirs = getattr(torchaudio.models, name)(**kwargs).eval()
    ours = getattr(models, name)(**kwargs).eval()
    their_state = theirs.state_dict()
    our_state = ours.state_dict()
    assert list(our_state) == list(their_state)
    assert all(tuple(our_state[k].shape) == tuple(v.shape) for k, v in their_state.items())
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


W2V2_SMALL = ([(8, 10, 5), (8, 3, 2), (8, 2, 2)], 16, 0.0, 4, 2, 2, 2, 0.0, 32, 0.0, 0.0)


@pytest.mark.parametrize("mode, bias, layer_norm_first", [("group_norm", False, False),
                                                          ("layer_norm", True, True)])
def test_wav2vec2_same_outputs_with_torchaudio_weights(mode, bias, layer_norm_first):
    conv, *rest = W2V2_SMALL
    args = (mode, conv, bias, *rest, layer_norm_first, 0.0, 6)
    torch.manual_seed(0)
    theirs = torchaudio.models.wav2vec2_model(*args).eval()
    ours = models.wav2vec2_model(*args).eval()
    their_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(their_state)
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})
    x = np.random.default_rng(0).standard_normal((2, 400)).astype(np.float32)
    lengths = np.array([400, 250])
    with torch.no_grad():
        expected, expected_lengths = theirs(torch.from_numpy(x), torch.from_numpy(lengths))
    with ember.no_grad():
        got, got_lengths = ours(ember.from_numpy(x), ember.from_numpy(lengths))
    assert got_lengths.tolist() == expected_lengths.tolist()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)


def test_wav2vec2_base_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.hubert_base().state_dict()
    ours = models.hubert_base().state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


@pytest.mark.parametrize("use_group_norm", [False, True])
def test_conformer_same_outputs_with_torchaudio_weights(use_group_norm):
    kwargs = dict(input_dim=8, num_heads=2, ffn_dim=12, num_layers=2,
                  depthwise_conv_kernel_size=3, use_group_norm=use_group_norm)
    torch.manual_seed(0)
    theirs = torchaudio.models.Conformer(**kwargs).eval()
    ours = models.Conformer(**kwargs).eval()
    their_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(their_state)
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})
    x = np.random.default_rng(0).standard_normal((3, 6, 8)).astype(np.float32)
    lengths = np.array([6, 4, 2])
    with torch.no_grad():
        expected, _ = theirs(torch.from_numpy(x), torch.from_numpy(lengths))
    with ember.no_grad():
        got, _ = ours(ember.from_numpy(x), ember.from_numpy(lengths))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)


def test_wavernn_same_outputs_with_torchaudio_weights():
    kwargs = dict(upsample_scales=[2, 3], n_classes=16, hop_length=6, n_res_block=1, n_rnn=8,
                  n_fc=10, kernel_size=5, n_freq=4, n_hidden=6, n_output=8)
    torch.manual_seed(0)
    theirs = torchaudio.models.WaveRNN(**kwargs).eval()
    ours = models.WaveRNN(**kwargs).eval()
    their_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(their_state)
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})
    rng = np.random.default_rng(0)
    wave = rng.uniform(-1, 1, (2, 1, 36)).astype(np.float32)
    spec = rng.random((2, 1, 4, 10)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(wave), torch.from_numpy(spec)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(wave), ember.from_numpy(spec)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode, layer_norm_first", [("group_norm", False), ("layer_norm", True)])
def test_wavlm_same_outputs_with_torchaudio_weights(mode, layer_norm_first):
    conv, embed, dropout, kernel, groups, layers, heads, attention, ff, ffd, drop = W2V2_SMALL
    args = (mode, conv, False, embed, dropout, kernel, groups, layers, heads, 32, 128,
            attention, ff, ffd, drop, layer_norm_first, 0.0, 6)
    torch.manual_seed(0)
    theirs = torchaudio.models.wavlm_model(*args).eval()
    ours = models.wavlm_model(*args).eval()
    their_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(their_state)
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})
    x = np.random.default_rng(0).standard_normal((2, 400)).astype(np.float32)
    with torch.no_grad():
        expected, _ = theirs(torch.from_numpy(x))
    with ember.no_grad():
        got, _ = ours(ember.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
