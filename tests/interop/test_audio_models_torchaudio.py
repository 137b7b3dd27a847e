"""emberaudio.models with torchaudio's weights give torchaudio's outputs, and the state dicts
have the same keys and shapes.

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import warnings

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


# -- Emformer, RNNT, RNNTBeamSearch, Tacotron2 ---------------------------------------------

def _copy_state(ours, theirs):
    their_state = theirs.state_dict()
    our_state = ours.state_dict()
    assert list(our_state) == list(their_state)
    assert all(tuple(our_state[k].shape) == tuple(v.shape) for k, v in their_state.items())
    ours.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in their_state.items()})


def _close(got, expected, tol=1e-4):
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("mem", [0, 2])
def test_emformer_same_outputs_as_torchaudio(mem):
    kwargs = dict(input_dim=8, num_heads=2, ffn_dim=16, num_layers=2, segment_length=4,
                  left_context_length=3, right_context_length=2, max_memory_size=mem,
                  tanh_on_mem=bool(mem))
    torch.manual_seed(0)
    theirs = torchaudio.models.Emformer(**kwargs).eval()
    ours = models.Emformer(**kwargs).eval()
    _copy_state(ours, theirs)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 13, 8)).astype(np.float32)
    lengths = np.array([11, 9, 6])
    with torch.no_grad():
        expected, expected_lengths = theirs(torch.from_numpy(x), torch.from_numpy(lengths))
    with ember.no_grad():
        got, got_lengths = ours(ember.from_numpy(x), ember.from_numpy(lengths))
    _close(got, expected)
    assert got_lengths.tolist() == expected_lengths.tolist()
    their_states = our_states = None
    for step in range(3):
        seg = rng.standard_normal((2, 6, 8)).astype(np.float32)
        seg_lengths = np.array([6, 5 if step == 2 else 6])
        with torch.no_grad():
            expected, expected_lengths, their_states = theirs.infer(
                torch.from_numpy(seg), torch.from_numpy(seg_lengths), their_states)
        with ember.no_grad():
            got, got_lengths, our_states = ours.infer(
                ember.from_numpy(seg), ember.from_numpy(seg_lengths), our_states)
        _close(got, expected)
        assert got_lengths.tolist() == expected_lengths.tolist()
        for their_layer, our_layer in zip(their_states, our_states):
            for t, o in zip(their_layer, our_layer):
                np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)


_RNNT = dict(input_dim=6, encoding_dim=8, num_symbols=5, segment_length=4,
             right_context_length=2, time_reduction_input_dim=4, time_reduction_stride=2,
             transformer_num_heads=2, transformer_ffn_dim=8, transformer_num_layers=2,
             transformer_dropout=0.0, transformer_activation="gelu",
             transformer_left_context_length=3, transformer_max_memory_size=0,
             transformer_weight_init_scale_strategy="depthwise", transformer_tanh_on_mem=True,
             symbol_embedding_dim=8, num_lstm_layers=2, lstm_layer_norm=True,
             lstm_layer_norm_epsilon=1e-3, lstm_dropout=0.0)


def _rnnt_pair():
    torch.manual_seed(0)
    theirs = torchaudio.models.emformer_rnnt_model(**_RNNT).eval()
    ours = models.emformer_rnnt_model(**_RNNT).eval()
    _copy_state(ours, theirs)
    return theirs, ours


def test_rnnt_same_outputs_as_torchaudio():
    theirs, ours = _rnnt_pair()
    rng = np.random.default_rng(0)
    sources = rng.standard_normal((2, 14, 6)).astype(np.float32)
    targets = rng.integers(0, 4, (2, 3))
    args = (sources, np.array([12, 10]), targets, np.array([3, 2]))
    with torch.no_grad():
        expected = theirs(*map(torch.from_numpy, args))
    with ember.no_grad():
        got = ours(*map(ember.from_numpy, args))
    _close(got[0], expected[0])
    assert got[1].tolist() == expected[1].tolist() and got[2].tolist() == expected[2].tolist()
    for t, o in zip(expected[3], got[3]):
        _close(o[0], t[0])
        _close(o[1], t[1])
    segment = sources[:, :6]
    with torch.no_grad():
        expected = theirs.transcribe_streaming(torch.from_numpy(segment),
                                               torch.tensor([6, 6]), None)
    with ember.no_grad():
        got = ours.transcribe_streaming(ember.from_numpy(segment), ember.tensor([6, 6]), None)
    _close(got[0], expected[0])


def test_rnnt_beam_search_same_hypotheses_as_torchaudio():
    theirs, ours = _rnnt_pair()
    their_decoder = torchaudio.models.RNNTBeamSearch(theirs, blank=4)
    our_decoder = models.RNNTBeamSearch(ours, blank=4)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((14, 6)).astype(np.float32)
    with torch.no_grad():
        expected = their_decoder(torch.from_numpy(x), torch.tensor(12), 4)
    with ember.no_grad():
        got = our_decoder(ember.from_numpy(x), ember.tensor(12), 4)
    assert [h[0] for h in got] == [h[0] for h in expected]
    np.testing.assert_allclose([h[3] for h in got], [h[3] for h in expected], rtol=1e-4)
    their_state = our_state = their_hypos = our_hypos = None
    for _ in range(3):
        seg = rng.standard_normal((6, 6)).astype(np.float32)
        with torch.no_grad():
            their_hypos, their_state = their_decoder.infer(
                torch.from_numpy(seg), torch.tensor(6), 3, state=their_state,
                hypothesis=their_hypos)
        with ember.no_grad():
            our_hypos, our_state = our_decoder.infer(
                ember.from_numpy(seg), ember.tensor(6), 3, state=our_state,
                hypothesis=our_hypos)
        assert [h[0] for h in our_hypos] == [h[0] for h in their_hypos]
        np.testing.assert_allclose([h[3] for h in our_hypos], [h[3] for h in their_hypos],
                                   rtol=1e-4)


def test_emformer_rnnt_base_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.emformer_rnnt_base(num_symbols=4097).state_dict()
    ours = models.emformer_rnnt_base(num_symbols=4097).state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


_TACO = dict(n_symbol=10, n_mels=8, symbol_embedding_dim=16, encoder_embedding_dim=16,
             encoder_n_convolution=2, decoder_rnn_dim=16, attention_rnn_dim=12,
             attention_hidden_dim=8, attention_location_n_filter=4,
             attention_location_kernel_size=3, prenet_dim=8, postnet_n_convolution=3,
             postnet_embedding_dim=8, decoder_max_step=6)


def _deterministic_prenet(prenet, relu):
    # The prenet's dropout is always on (it is the decoder's noise); both sides drop it here.
    def forward(x):
        for linear in prenet.layers:
            x = relu(linear(x))
        return x
    prenet.forward = forward


def test_tacotron2_same_outputs_as_torchaudio():
    torch.manual_seed(0)
    theirs = torchaudio.models.Tacotron2(**_TACO).eval()
    ours = models.Tacotron2(**_TACO).eval()
    _copy_state(ours, theirs)
    _deterministic_prenet(theirs.decoder.prenet, torch.relu)
    _deterministic_prenet(ours.decoder.prenet, ember.relu)
    rng = np.random.default_rng(0)
    tokens = np.array([[1, 2, 3, 4, 5, 6, 7], [3, 4, 5, 6, 7, 0, 0]])
    lengths = np.array([7, 5])
    mel = rng.standard_normal((2, 8, 9)).astype(np.float32)
    mel_lengths = np.array([9, 6])
    args = (tokens, lengths, mel, mel_lengths)
    with torch.no_grad():
        expected = theirs(*map(torch.from_numpy, args))
    with ember.no_grad():
        got = ours(*map(ember.from_numpy, args))
    for g, e in zip(got, expected):
        _close(g, e)
    with warnings.catch_warnings(record=True) as their_warnings, torch.no_grad():
        warnings.simplefilter("always")
        expected = theirs.infer(torch.from_numpy(tokens), torch.from_numpy(lengths))
    with warnings.catch_warnings(record=True) as our_warnings, ember.no_grad():
        warnings.simplefilter("always")
        got = ours.infer(ember.from_numpy(tokens), ember.from_numpy(lengths))
    assert len(our_warnings) == len(their_warnings)   # "Reached max decoder steps" or not
    _close(got[0], expected[0])
    assert got[1].tolist() == expected[1].tolist()
    _close(got[2], expected[2])


def test_tacotron2_default_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.Tacotron2(n_symbol=96).state_dict()
    ours = models.Tacotron2(n_symbol=96).state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


def test_hubert_pretrain_same_outputs_as_torchaudio():
    kwargs = dict(extractor_mode="group_norm", extractor_conv_layer_config=[(8, 10, 5),
                                                                            (8, 3, 2)],
                  extractor_conv_bias=False, encoder_embed_dim=8,
                  encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
                  encoder_pos_conv_groups=2, encoder_num_layers=2, encoder_num_heads=2,
                  encoder_attention_dropout=0.0, encoder_ff_interm_features=12,
                  encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
                  encoder_layer_norm_first=False, encoder_layer_drop=0.0, mask_prob=0.0,
                  mask_selection="static", mask_other=0.0, mask_length=3,
                  no_mask_overlap=False, mask_min_space=1, mask_channel_prob=0.0,
                  mask_channel_selection="static", mask_channel_other=0.0,
                  mask_channel_length=2, no_mask_channel_overlap=False,
                  mask_channel_min_space=1, skip_masked=False, skip_nomask=False,
                  num_classes=6, final_dim=4, feature_grad_mult=None)
    kwargs["mask_prob"] = 0.5
    torch.manual_seed(0)
    theirs = torchaudio.models.hubert_pretrain_model(**kwargs).eval()
    ours = models.hubert_pretrain_model(**kwargs).eval()
    _copy_state(ours, theirs)
    rng = np.random.default_rng(0)
    # The span masks are random (different generators): both sides get the same fixed mask.
    fixed = np.zeros((2, 79), dtype=bool)
    fixed[0, 5:20] = fixed[0, 40:50] = fixed[1, 10:25] = True

    def their_mask(x, padding_mask):
        m = torch.from_numpy(fixed)
        x = x.clone()
        x[m] = theirs.mask_generator.mask_embedding.to(x.dtype)
        return x, m

    def our_mask(x, padding_mask):
        m = ember.from_numpy(fixed)
        return ember.where(m[:, :, None], ours.mask_generator.mask_embedding, x), m

    theirs.mask_generator.forward = their_mask
    ours.mask_generator.forward = our_mask
    waveforms = rng.standard_normal((2, 800)).astype(np.float32)
    labels = rng.integers(0, 6, (2, 79))
    lengths = np.array([800, 600])
    with torch.no_grad():
        expected = theirs(*map(torch.from_numpy, (waveforms, labels, lengths)))
    with ember.no_grad():
        got = ours(*map(ember.from_numpy, (waveforms, labels, lengths)))
    for g, e in zip(got, expected):
        _close(g, e)


def test_hubert_pretrain_base_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.hubert_pretrain_base().state_dict()
    ours = models.hubert_pretrain_base().state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


def test_squim_objective_same_outputs_as_torchaudio():
    kwargs = dict(feat_dim=8, win_len=16, d_model=8, nhead=2, hidden_dim=6, num_blocks=2,
                  rnn_type="LSTM", chunk_size=7)
    torch.manual_seed(0)
    theirs = torchaudio.models.squim_objective_model(**kwargs).eval()
    ours = models.squim_objective_model(**kwargs).eval()
    _copy_state(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 500)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x))
    with ember.no_grad():
        got = ours(ember.from_numpy(x))
    for g, e in zip(got, expected):
        _close(g, e)


def test_squim_objective_base_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.squim_objective_base().state_dict()
    ours = models.squim_objective_base().state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


HDEMUCS_SMALL = dict(sources=["a", "b"], audio_channels=1, channels=8, nfft=64, depth=3,
                     norm_starts=1, dconv_attn=1, dconv_lstm=1, dconv_comp=2)


@pytest.mark.parametrize("length", [150, 3300])  # 3300: the BLSTMs see > 200 steps
def test_hdemucs_same_outputs_as_torchaudio(length):
    torch.manual_seed(0)
    theirs = torchaudio.models.HDemucs(**HDEMUCS_SMALL).eval()
    ours = models.HDemucs(**HDEMUCS_SMALL).eval()
    _copy_state(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 1, length)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x))
    with ember.no_grad():
        got = ours(ember.from_numpy(x))
    _close(got, expected)


def test_hdemucs_initialisation_like_torchaudio():
    # the same statistics of the starting weights (the convolutions rescaled, the decays'
    # bias at -2 before the rescaling); the frequency embedding, a random walk, is checked
    # in tests/audio
    torch.manual_seed(0)
    ember.manual_seed(0)
    theirs = torchaudio.models.HDemucs(**HDEMUCS_SMALL).state_dict()
    ours = models.HDemucs(**HDEMUCS_SMALL).state_dict()
    for key, value in theirs.items():
        if value.numel() >= 64 and not key.startswith("freq_emb"):  # a stable spread
            np.testing.assert_allclose(float(ours[key].float().std()),
                                       float(value.float().std()), rtol=0.5, err_msg=key)
    key = "freq_encoder.1.dconv.layers.0.4.query_decay.bias"
    np.testing.assert_allclose(ours[key].numpy().mean(), theirs[key].numpy().mean(), rtol=0.2)


@pytest.mark.parametrize("builder", ["hdemucs_low", "hdemucs_medium", "hdemucs_high"])
def test_hdemucs_builders_keys_and_shapes_match_torchaudio(builder):
    sources = ["drums", "bass", "other", "vocals"]
    theirs = getattr(torchaudio.models, builder)(sources).state_dict()
    ours = getattr(models, builder)(sources).state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


def test_squim_subjective_same_outputs_as_torchaudio():
    from torchaudio.models.squim.subjective import Predictor

    from emberaudio.models.squim.subjective import Predictor as OurPredictor

    w2v = ("group_norm", [(8, 10, 5), (8, 3, 2)], False, 8, 0.0, 4, 2, 2, 2, 0.0, 12, 0.0, 0.0,
           False, 0.0, None)
    torch.manual_seed(0)
    theirs = torchaudio.models.SquimSubjective(torchaudio.models.wav2vec2_model(*w2v),
                                               torch.nn.Linear(8, 4), Predictor(8, 5)).eval()
    ours = models.SquimSubjective(models.wav2vec2_model(*w2v), ember.nn.Linear(8, 4),
                                  OurPredictor(8, 5)).eval()
    _copy_state(ours, theirs)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 500)).astype(np.float32)
    ref = rng.standard_normal((2, 230)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x), torch.from_numpy(ref))
    with ember.no_grad():
        got = ours(ember.from_numpy(x), ember.from_numpy(ref))
    _close(got, expected)


def test_squim_subjective_base_keys_and_shapes_match_torchaudio():
    theirs = torchaudio.models.squim_subjective_base().state_dict()
    ours = models.squim_subjective_base().state_dict()
    assert list(ours) == list(theirs)
    assert all(tuple(ours[k].shape) == tuple(v.shape) for k, v in theirs.items())


# -- names: what of torchaudio.models we have --------------------------------------------------

def test_models_names_against_torchaudio():
    assert set(models.__all__) == set(torchaudio.models.__all__)
