"""emberaudio.pipelines, offline: the bundles' published addresses, sample rates, labels and
architectures (torchaudio 2.9's, written out here), and get_model() on small checkpoints the
tests write in the published format (torch pickles, as ember.save writes them) into a
temporary hub cache or serve through pooch's downloader hook. Never the network."""

import hashlib
import json
import shutil
from functools import partial

import numpy as np
import pytest

import ember
import ember.hub
from emberaudio import models, pipelines, transforms
from emberaudio.datasets import utils as download_utils
from emberaudio.pipelines import _rnnt, _tts, _wav2vec2

EN = ("|", "E", "T", "A", "O", "N", "I", "H", "S", "R", "D", "L", "U", "M", "W", "C", "F", "G",
      "Y", "P", "B", "V", "K", "'", "X", "J", "Q", "Z")


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A hub cache of its own (ember.hub.get_dir())."""
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path / "hub"))
    return tmp_path / "hub"


@pytest.fixture
def served(monkeypatch):
    """URLs served from local files {url: path} through pooch's downloader hook."""
    pytest.importorskip("pooch")
    files = {}

    def downloader(url, output_file, pooch_instance):
        shutil.copyfile(files[url], output_file)

    monkeypatch.setattr(download_utils, "_downloader", downloader)
    return files


def _tiny_w2v_params(aux=None, wavlm=False):
    params = {"extractor_mode": "group_norm",
              "extractor_conv_layer_config": [(8, 10, 5), (8, 3, 2)],
              "extractor_conv_bias": False, "encoder_embed_dim": 8,
              "encoder_projection_dropout": 0.0, "encoder_pos_conv_kernel": 4,
              "encoder_pos_conv_groups": 2, "encoder_num_layers": 1, "encoder_num_heads": 2,
              "encoder_attention_dropout": 0.0, "encoder_ff_interm_features": 12,
              "encoder_ff_interm_dropout": 0.0, "encoder_dropout": 0.0,
              "encoder_layer_norm_first": False, "encoder_layer_drop": 0.0,
              "aux_num_out": aux}
    if wavlm:
        params.update(encoder_num_buckets=8, encoder_max_distance=16)
    return params


def _published_state(model, extra_rows=()):
    """The model's state dict laid out as the published fairseq-derived checkpoints are: the
    positional convolution under weight_norm's old names, and (ASR) the CTC head with the
    unused dictionary rows still in."""
    state = {}
    for key, value in model.state_dict().items():
        key = key.replace("parametrizations.weight.original0", "weight_g").replace(
            "parametrizations.weight.original1", "weight_v")
        state[key] = value.clone()
    if extra_rows:
        for key in ("aux.weight", "aux.bias"):
            rows = list(state[key])
            for i in sorted(extra_rows):
                rows.insert(i, ember.full_like(rows[0], 99.0))
            state[key] = ember.stack(rows)
    return state


# -- the published bundles ---------------------------------------------------------------------

def test_every_name_is_a_bundle():
    for name in pipelines.__all__:
        obj = getattr(pipelines, name)
        if name[0].isupper() and name.upper() == name:
            assert isinstance(obj, (pipelines.Wav2Vec2Bundle, pipelines.RNNTBundle,
                                    pipelines.SourceSeparationBundle,
                                    pipelines.SquimObjectiveBundle, pipelines.SquimSubjectiveBundle,
                                    pipelines.Tacotron2TTSBundle)), name
            assert obj.__doc__ and "See" in obj.__doc__, name


@pytest.mark.parametrize("name, path, arch", [
    ("WAV2VEC2_BASE", "wav2vec2_fairseq_base_ls960.pth", (768, 12, 3072, False, False)),
    ("WAV2VEC2_ASR_LARGE_100H", "wav2vec2_fairseq_large_ls960_asr_ls100.pth",
     (1024, 24, 4096, False, False)),
    ("WAV2VEC2_ASR_LARGE_LV60K_960H", "wav2vec2_fairseq_large_lv60k_asr_ls960.pth",
     (1024, 24, 4096, True, True)),
    ("WAV2VEC2_XLSR53", "wav2vec2_fairseq_large_xlsr53.pth", (1024, 24, 4096, True, True)),
    ("WAV2VEC2_XLSR_2B", "wav2vec2_xlsr_2b.pth", (1920, 48, 7680, True, True)),
    ("HUBERT_BASE", "hubert_fairseq_base_ls960.pth", (768, 12, 3072, False, False)),
    ("HUBERT_ASR_XLARGE", "hubert_fairseq_xlarge_ll60k_asr_ls960.pth",
     (1280, 48, 5120, True, True)),
    ("VOXPOPULI_ASR_BASE_10K_DE", "wav2vec2_voxpopuli_base_10k_asr_de.pt",
     (768, 12, 3072, False, False)),
    ("WAVLM_LARGE", "wavlm_large.pth", (1024, 24, 4096, True, True)),
])
def test_wav2vec2_bundles(name, path, arch):
    bundle = getattr(pipelines, name)
    assert bundle._url == f"https://download.pytorch.org/torchaudio/models/{path}"
    assert bundle.sample_rate == 16000
    dim, layers, ff, norm_first, normalize = arch
    p = bundle._params
    assert (p["encoder_embed_dim"], p["encoder_num_layers"], p["encoder_ff_interm_features"],
            p["encoder_layer_norm_first"], bundle._normalize_waveform) == arch
    assert p["extractor_conv_layer_config"] == [(512, 10, 5)] + [(512, 3, 2)] * 4 + [
        (512, 2, 2)] * 2
    assert bundle._model_type == ("WavLM" if name.startswith("WAVLM") else "Wav2Vec2")


def test_asr_labels():
    assert pipelines.WAV2VEC2_ASR_BASE_960H.get_labels() == ("-", *EN)
    assert pipelines.HUBERT_ASR_LARGE.get_labels(blank="<b>")[0] == "<b>"
    for name in pipelines.__all__:
        bundle = getattr(pipelines, name)
        if isinstance(bundle, pipelines.Wav2Vec2ASRBundle):
            assert len(bundle.get_labels(**({"star": None} if isinstance(
                bundle, pipelines.Wav2Vec2FABundle) else {}))) == bundle._params["aux_num_out"]
    de = pipelines.VOXPOPULI_ASR_BASE_10K_DE
    assert "".join(de.get_labels()) == "-|enirstadhulgcmobwfkzpvüäöjßyxq"
    assert de._remove_aux_axis == (1, 2, 3, 35)
    assert pipelines.VOXPOPULI_ASR_BASE_10K_EN._remove_aux_axis == (1, 2, 3, 31)
    assert pipelines.VOXPOPULI_ASR_BASE_10K_FR._remove_aux_axis == (1, 2, 3)


def test_mms_fa_labels_dict_tokenizer():
    bundle = pipelines.MMS_FA
    assert bundle._url == ("https://dl.fbaipublicfiles.com/mms/torchaudio/"
                           "ctc_alignment_mling_uroman/model.pt")
    labels = bundle.get_labels()
    assert labels[0] == "-" and labels[-1] == "*" and len(labels) == 29
    assert "".join(bundle.get_labels(star=None)) == "-aienoutsrmkldghybpwcvjzf'qx"
    assert bundle.get_dict()["a"] == 1 and bundle.get_dict()["*"] == 28
    tokenizer = bundle.get_tokenizer()
    assert isinstance(tokenizer, pipelines.Wav2Vec2FABundle.Tokenizer)
    assert tokenizer(["hi", "a"]) == [[15, 2], [1]]
    with pytest.raises(ValueError, match="normalize"):
        tokenizer(["Hi"])


def test_aligner_matches_forced_align():
    from emberaudio import functional as F

    rng = np.random.default_rng(0)
    logits = rng.standard_normal((30, 5)).astype(np.float32)
    emission = ember.from_numpy(logits).log_softmax(-1)
    aligner = pipelines.MMS_FA.get_aligner()
    assert isinstance(aligner, pipelines.Wav2Vec2FABundle.Aligner)
    spans = aligner(emission, [[1, 2], [3]])
    assert [len(w) for w in spans] == [2, 1]
    aligned, scores = F.forced_align(emission.unsqueeze(0), ember.tensor([[1, 2, 3]],
                                                                         dtype=ember.int32))
    expected = F.merge_tokens(aligned[0], scores[0].exp())
    flat = [s for w in spans for s in w]
    assert [(s.token, s.start, s.end) for s in flat] == [(s.token, s.start, s.end)
                                                          for s in expected]
    np.testing.assert_allclose([s.score for s in flat], [s.score for s in expected])
    with pytest.raises(ValueError, match="2D"):
        aligner(emission.unsqueeze(0), [[1]])


def test_other_bundles_facts():
    rnnt = pipelines.EMFORMER_RNNT_BASE_LIBRISPEECH
    assert (rnnt.sample_rate, rnnt.n_fft, rnnt.n_mels, rnnt.hop_length, rnnt.segment_length,
            rnnt.right_context_length) == (16000, 400, 80, 160, 16, 4)
    assert rnnt._rnnt_path == "models/emformer_rnnt_base_librispeech.pt" and rnnt._blank == 4096
    assert rnnt._rnnt_factory_func.keywords == {"num_symbols": 4097}
    tasnet = pipelines.CONVTASNET_BASE_LIBRI2MIX
    assert tasnet.sample_rate == 8000
    assert tasnet._model_path == "models/conv_tasnet_base_libri2mix.pt"
    taco = pipelines.TACOTRON2_WAVERNN_PHONE_LJSPEECH
    assert taco._tacotron2_path == ("tacotron2_english_phonemes_1500_epochs_wavernn_"
                                    "ljspeech.pth")
    assert taco._wavernn_path == "wavernn_10k_epochs_8bits_ljspeech.pth"
    assert taco._tacotron2_params["n_symbol"] == 96
    assert pipelines.TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH._tacotron2_params["n_symbol"] == 38


# -- get_model on small checkpoints -------------------------------------------------------

def test_wav2vec2_asr_get_model_from_the_cache(hub):
    ember.manual_seed(0)
    reference = models.wav2vec2_model(**_tiny_w2v_params(aux=4)).eval()
    bundle = pipelines.Wav2Vec2ASRBundle("tiny_asr.pth", _tiny_w2v_params(aux=4), 16000, False,
                                         "Wav2Vec2", _labels=("a", "b", "c"))
    (hub / "checkpoints").mkdir(parents=True)
    ember.save(_published_state(reference, extra_rows=(1, 2, 3)), hub / "checkpoints" /
               "tiny_asr.pth")
    model = bundle.get_model()
    assert not model.training
    waveform = ember.randn(2, 400)
    with ember.no_grad():
        got, _ = model(waveform)
        expected, _ = reference(waveform)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_wav2vec2_download_checks_the_hash(hub, served, tmp_path):
    ember.manual_seed(0)
    reference = models.wav2vec2_model(**_tiny_w2v_params()).eval()
    source = tmp_path / "published.pth"
    ember.save(_published_state(reference), source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    bundle = pipelines.Wav2Vec2Bundle("tiny.pth", _tiny_w2v_params(), 16000, True, "Wav2Vec2")
    served[bundle._url] = source
    with pytest.raises(ValueError, match="(?i)hash"):
        bundle.get_model(dl_kwargs={"sha256": "0" * 64, "progress": False})
    assert not (hub / "checkpoints" / "tiny.pth").exists()
    model = bundle.get_model(dl_kwargs={"sha256": digest, "progress": False})
    assert (hub / "checkpoints" / "tiny.pth").is_file()
    # the bundle normalizes each waveform first (layer norm over time)
    waveform = ember.randn(1, 400) * 5 + 2
    with ember.no_grad():
        got, _ = model(waveform)
        expected, _ = reference(ember.nn.functional.layer_norm(waveform, (400,)))
        features, _ = model.extract_features(waveform)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    assert len(features) == 1
    with pytest.raises(TypeError, match="unexpected download arguments"):
        bundle.get_model(dl_kwargs={"hash": "x"})


def test_check_hash_uses_the_file_name(hub, served, tmp_path):
    from emberaudio.pipelines import _utils

    source = tmp_path / "weights.pth"
    ember.save({"w": ember.ones(2)}, source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    good = f"https://example.org/model-{digest[:8]}.pth"
    bad = "https://example.org/model-00000000.pth"
    served[good] = served[bad] = source
    path = _utils._download_checkpoint(good, {"check_hash": True, "progress": False})
    assert path == hub / "checkpoints" / f"model-{digest[:8]}.pth"
    with pytest.raises(RuntimeError, match="invalid hash value"):
        _utils._download_checkpoint(bad, {"check_hash": True, "progress": False})
    assert not (hub / "checkpoints" / "model-00000000.pth").exists()


def test_wavlm_and_fa_bundles(hub):
    ember.manual_seed(0)
    (hub / "checkpoints").mkdir(parents=True)
    wavlm = models.wavlm_model(**_tiny_w2v_params(wavlm=True)).eval()
    ember.save(_published_state(wavlm), hub / "checkpoints" / "wavlm.pth")
    bundle = pipelines.Wav2Vec2Bundle("wavlm.pth", _tiny_w2v_params(wavlm=True), 16000, False,
                                      "WavLM")
    waveform = ember.randn(1, 300)
    with ember.no_grad():
        np.testing.assert_allclose(bundle.get_model()(waveform)[0].numpy(),
                                   wavlm(waveform)[0].numpy(), rtol=1e-5, atol=1e-6)
    fa = models.wav2vec2_model(**_tiny_w2v_params(aux=3)).eval()
    ember.save(_published_state(fa, extra_rows=(1, 2, 3)), hub / "checkpoints" / "fa.pth")
    bundle = pipelines.Wav2Vec2FABundle("fa.pth", _tiny_w2v_params(aux=3), 16000, False,
                                        "Wav2Vec2", _labels=("x", "y"))
    with ember.no_grad():
        star, _ = bundle.get_model()(waveform)
        plain, _ = bundle.get_model(with_star=False)(waveform)
        logits, _ = fa(waveform)
    np.testing.assert_allclose(plain.numpy(), logits.log_softmax(-1).numpy(), atol=1e-5)
    assert star.shape[-1] == 4 and np.all(star.numpy()[..., -1] == 0)
    with pytest.raises(ValueError, match="Supported model types"):
        pipelines.Wav2Vec2Bundle("x.pth", {}, 16000, False, "Conformer").get_model()


def _tiny_rnnt():
    return partial(models.emformer_rnnt_model, input_dim=8, encoding_dim=8, num_symbols=5,
                   segment_length=4, right_context_length=2, time_reduction_input_dim=4,
                   time_reduction_stride=2, transformer_num_heads=2, transformer_ffn_dim=8,
                   transformer_num_layers=1, transformer_dropout=0.0,
                   transformer_activation="gelu", transformer_left_context_length=3,
                   transformer_max_memory_size=0,
                   transformer_weight_init_scale_strategy="depthwise",
                   transformer_tanh_on_mem=True, symbol_embedding_dim=8, num_lstm_layers=1,
                   lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-3, lstm_dropout=0.0)


def test_rnnt_bundle(hub):
    ember.manual_seed(0)
    reference = _tiny_rnnt()().eval()
    assets = hub / "torchaudio"
    (assets / "models").mkdir(parents=True)
    (assets / "stats").mkdir()
    ember.save(reference.state_dict(), assets / "models" / "tiny_rnnt.pt")
    mean, invstddev = np.linspace(-1, 1, 8), np.linspace(0.5, 2, 8)
    (assets / "stats" / "stats.json").write_text(json.dumps(
        {"mean": mean.tolist(), "invstddev": invstddev.tolist()}))
    bundle = pipelines.RNNTBundle(
        _rnnt_path="models/tiny_rnnt.pt", _rnnt_factory_func=_tiny_rnnt(),
        _global_stats_path="stats/stats.json", _sp_model_path="sp/none.model",
        _right_padding=2, _blank=4, _sample_rate=8000, _n_fft=64, _n_mels=8,
        _hop_length=32, _segment_length=4, _right_context_length=2)
    waveform = ember.randn(600)
    features, length = bundle.get_feature_extractor()(waveform)
    mel = transforms.MelSpectrogram(sample_rate=8000, n_fft=64, n_mels=8, hop_length=32)(
        waveform).numpy().T * 10 ** (2 * 20 * np.log10(32767) * 0.05)
    logged = np.where(mel > np.e, np.log(np.maximum(mel, np.e)), mel)
    logged = np.where(logged <= np.e, logged / np.e, logged)
    expected = np.concatenate([(logged - mean) * invstddev, np.zeros((2, 8))])
    np.testing.assert_allclose(features.numpy(), expected, rtol=1e-4, atol=1e-4)
    assert length.tolist() == [expected.shape[0]]
    streaming, _ = bundle.get_streaming_feature_extractor()(waveform)
    np.testing.assert_allclose(streaming.numpy(), expected[:-2], rtol=1e-4, atol=1e-4)
    assert isinstance(bundle.get_feature_extractor(), pipelines.RNNTBundle.FeatureExtractor)
    decoder = bundle.get_decoder()
    assert isinstance(decoder, models.RNNTBeamSearch) and decoder.blank == 4
    for key, value in reference.state_dict().items():
        np.testing.assert_array_equal(decoder.model.state_dict()[key].numpy(), value.numpy())
    with ember.no_grad():
        hypotheses = decoder(features, length, 2)
    assert hypotheses and hypotheses[0][0][0] == 4
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        (hub / "torchaudio" / "sp").mkdir()
        (hub / "torchaudio" / "sp" / "none.model").write_bytes(b"")
        with pytest.raises(RuntimeError, match="SentencePiece is not available"):
            bundle.get_token_processor()


def test_piecewise_linear_log():
    x = ember.tensor([0.5, np.e, 3.0, 20.0, 1e4])
    got = _rnnt._piecewise_linear_log(x).numpy()
    expected = [0.5 / np.e, 1.0, np.log(3.0) / np.e, np.log(20.0), np.log(1e4)]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_source_separation_bundle(hub):
    ember.manual_seed(0)
    factory = partial(models.ConvTasNet, num_sources=2, enc_num_feats=8, msk_num_feats=4,
                      msk_num_hidden_feats=6, msk_num_layers=2, msk_num_stacks=1)
    reference = factory().eval()
    (hub / "torchaudio" / "models").mkdir(parents=True)
    ember.save(reference.state_dict(), hub / "torchaudio" / "models" / "tasnet.pt")
    bundle = pipelines.SourceSeparationBundle("models/tasnet.pt", factory, 8000)
    mixture = ember.randn(1, 1, 160)
    with ember.no_grad():
        np.testing.assert_allclose(bundle.get_model()(mixture).numpy(),
                                   reference(mixture).numpy(), rtol=1e-5, atol=1e-6)


def test_source_separation_download_into_the_asset_cache(hub, served, tmp_path):
    factory = partial(models.ConvTasNet, num_sources=2, enc_num_feats=8, msk_num_feats=4,
                      msk_num_hidden_feats=6, msk_num_layers=2, msk_num_stacks=1)
    source = tmp_path / "tasnet.pt"
    ember.save(factory().state_dict(), source)
    served["https://download.pytorch.org/torchaudio/models/tasnet.pt"] = source
    pipelines.SourceSeparationBundle("models/tasnet.pt", factory, 8000).get_model()
    assert (hub / "torchaudio" / "models" / "tasnet.pt").is_file()


def test_a_checkpoint_that_is_not_a_state_dict(hub):
    (hub / "torchaudio" / "models").mkdir(parents=True)
    ember.save([ember.zeros(2)], hub / "torchaudio" / "models" / "list.pt")
    bundle = pipelines.SourceSeparationBundle("models/list.pt", models.conv_tasnet_base, 8000)
    with pytest.raises(RuntimeError, match="does not hold a state dict"):
        bundle.get_model()


# -- text to speech -----------------------------------------------------------------------

def test_char_text_processor():
    processor = pipelines.TACOTRON2_WAVERNN_CHAR_LJSPEECH.get_text_processor()
    assert isinstance(processor, pipelines.Tacotron2TTSBundle.TextProcessor)
    assert processor.tokens[:12] == ("_", "-", "!", "'", "(", ")", ",", ".", ":", ";", "?", " ")
    assert "".join(processor.tokens[12:]) == "abcdefghijklmnopqrstuvwxyz"
    tokens, lengths = processor(["Hi, you!", "ab"])
    assert tokens.tolist() == [[19, 20, 6, 11, 36, 26, 32, 2], [12, 13, 0, 0, 0, 0, 0, 0]]
    assert lengths.tolist() == [8, 2] and lengths.dtype == ember.int32
    tokens, lengths = processor("é a")        # characters outside the set are dropped
    assert tokens.tolist() == [[11, 12]]


def test_phone_tokens_and_phonemizer_is_optional():
    assert len(_tts._PHONES) == 96
    assert _tts._PHONES[12:20] == ("AA", "AA0", "AA1", "AA2", "AE", "AE0", "AE1", "AE2")
    assert _tts._PHONES[-5:] == ("V", "W", "Y", "Z", "ZH")
    try:
        import dp  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="DeepPhonemizer is not installed"):
            pipelines.TACOTRON2_GRIFFINLIM_PHONE_LJSPEECH.get_text_processor()


def test_tts_bundle_with_wavernn(hub):
    ember.manual_seed(0)
    taco_params = {**_tts._taco_params(38), "symbol_embedding_dim": 16,
                   "encoder_embedding_dim": 16, "decoder_rnn_dim": 16, "attention_rnn_dim": 16,
                   "attention_hidden_dim": 8, "attention_location_n_filter": 4,
                   "prenet_dim": 8, "postnet_embedding_dim": 8, "decoder_max_step": 4}
    wrnn_params = {"upsample_scales": [2, 2], "n_classes": 2 ** 8, "hop_length": 4,
                   "n_res_block": 1, "n_rnn": 8, "n_fc": 8, "kernel_size": 5, "n_freq": 80,
                   "n_hidden": 4, "n_output": 4}
    taco, wrnn = models.Tacotron2(**taco_params), models.WaveRNN(**wrnn_params)
    (hub / "checkpoints").mkdir(parents=True)
    ember.save(taco.state_dict(), hub / "checkpoints" / "taco.pth")
    ember.save(wrnn.state_dict(), hub / "checkpoints" / "wrnn.pth")
    bundle = _tts._Tacotron2Bundle("taco.pth", taco_params, _wavernn_path="wrnn.pth",
                                   _wavernn_params=wrnn_params)
    tacotron2 = bundle.get_tacotron2()
    assert not tacotron2.training
    np.testing.assert_array_equal(tacotron2.embedding.weight.detach().numpy(),
                                  taco.embedding.weight.detach().numpy())
    vocoder = bundle.get_vocoder()
    assert isinstance(vocoder, pipelines.Tacotron2TTSBundle.Vocoder)
    assert vocoder.sample_rate == 22050
    mel = ember.randn(1, 80, 12) - 3
    ember.manual_seed(1)
    with ember.no_grad():
        waveform, lengths = vocoder(mel, ember.tensor([12]))
    assert waveform.shape == (1, 12 * 4) and lengths.tolist() == [12 * 4]  # frames * hop
    assert waveform.abs().max().item() <= 1.0


def test_griffin_lim_vocoder():
    vocoder = pipelines.TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH.get_vocoder()
    assert vocoder.sample_rate == 22050
    mel = ember.full((1, 80, 6), -4.0)
    waveform, lengths = vocoder(mel, ember.tensor([6]))
    assert waveform.shape == (1, (6 - 1) * 256) and lengths.tolist() == [6]
    assert np.isfinite(waveform.numpy()).all()


def test_unnormalize_waveform():
    got = _tts._unnormalize_waveform(ember.tensor([-2.0, -1.0, 0.0, 1.0]), 8)
    assert got.tolist() == [0, 0, 127, 255]


def test_wav2vec2_wrapper_is_a_module():
    assert issubclass(_wav2vec2._Wav2Vec2Model, ember.nn.Module)
