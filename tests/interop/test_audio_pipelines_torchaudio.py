"""emberaudio.pipelines against torchaudio 2.9's: the same bundles with the same files,
architectures, sample rates and labels; a checkpoint saved by torch loads into a bundle's
model and gives torchaudio's outputs; the RNN-T features and the TTS text processing give
torchaudio's numbers.

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import json
from functools import partial

import numpy as np
import pytest

import ember
import ember.hub
from emberaudio import models, pipelines
from emberaudio.pipelines import _rnnt, _tts

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")
ta_pipelines = pytest.importorskip("torchaudio.pipelines")

def test_pipelines_names_against_torchaudio():
    assert set(pipelines.__all__) == set(ta_pipelines.__all__)


def _wav2vec2_names():
    return [n for n in pipelines.__all__
            if isinstance(getattr(pipelines, n), pipelines.Wav2Vec2Bundle)]


@pytest.mark.parametrize("name", _wav2vec2_names())
def test_wav2vec2_bundle_matches_torchaudio(name):
    ours, theirs = getattr(pipelines, name), getattr(ta_pipelines, name)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._path == theirs._path
    assert {k: (list(v) if isinstance(v, list) else v) for k, v in ours._params.items()} == {
        k: (list(v) if isinstance(v, list) else v) for k, v in theirs._params.items()}
    assert ours.sample_rate == theirs.sample_rate
    assert ours._normalize_waveform == theirs._normalize_waveform
    assert ours._model_type == theirs._model_type
    if isinstance(ours, pipelines.Wav2Vec2ASRBundle):
        assert ours.get_labels() == theirs.get_labels()
        assert tuple(ours._remove_aux_axis) == tuple(theirs._remove_aux_axis)
    if isinstance(ours, pipelines.Wav2Vec2FABundle):
        assert ours.get_dict() == theirs.get_dict()
        assert ours.get_dict(star=None) == theirs.get_dict(star=None)


def test_other_bundles_match_torchaudio():
    ours = pipelines.EMFORMER_RNNT_BASE_LIBRISPEECH
    theirs = ta_pipelines.EMFORMER_RNNT_BASE_LIBRISPEECH
    for field in ("_rnnt_path", "_global_stats_path", "_sp_model_path", "_right_padding",
                  "_blank", "_sample_rate", "_n_fft", "_n_mels", "_hop_length",
                  "_segment_length", "_right_context_length"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours._rnnt_factory_func.keywords == theirs._rnnt_factory_func.keywords
    for name in ("SQUIM_OBJECTIVE", "SQUIM_SUBJECTIVE"):
        ours, theirs = getattr(pipelines, name), getattr(ta_pipelines, name)
        assert (ours._path, ours.sample_rate) == (theirs._path, theirs.sample_rate)
    for name in ("HDEMUCS_HIGH_MUSDB", "HDEMUCS_HIGH_MUSDB_PLUS"):
        ours, theirs = getattr(pipelines, name), getattr(ta_pipelines, name)
        assert (ours._model_path, ours.sample_rate) == (theirs._model_path, theirs.sample_rate)
        assert theirs._model_factory_func.keywords == {"sources": ours._model_factory_func()
                                                       .sources}
    ours, theirs = pipelines.CONVTASNET_BASE_LIBRI2MIX, ta_pipelines.CONVTASNET_BASE_LIBRI2MIX
    assert (ours._model_path, ours.sample_rate) == (theirs._model_path, theirs.sample_rate)
    assert ours._model_factory_func.keywords == theirs._model_factory_func.keywords
    for name in ("TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH", "TACOTRON2_GRIFFINLIM_PHONE_LJSPEECH",
                 "TACOTRON2_WAVERNN_CHAR_LJSPEECH", "TACOTRON2_WAVERNN_PHONE_LJSPEECH"):
        ours, theirs = getattr(pipelines, name), getattr(ta_pipelines, name)
        assert ours._tacotron2_path == theirs._tacotron2_path
        assert ours._tacotron2_params == theirs._tacotron2_params
        assert ours._wavernn_path == getattr(theirs, "_wavernn_path", None)
        assert ours._wavernn_params == getattr(theirs, "_wavernn_params", None)
    ours = pipelines.TACOTRON2_WAVERNN_CHAR_LJSPEECH.get_text_processor()
    theirs = ta_pipelines.TACOTRON2_WAVERNN_CHAR_LJSPEECH.get_text_processor()
    assert tuple(ours.tokens) == tuple(theirs.tokens)
    text = ["Hello world! T T S stands for Text to Speech!", "(a-b); c?"]
    got, expected = ours(text), theirs(text)
    assert got[0].tolist() == expected[0].tolist() and got[1].tolist() == expected[1].tolist()
    from torchaudio.pipelines._tts import utils as ta_tts_utils

    assert _tts._PHONES == tuple(ta_tts_utils._get_phones())


def test_a_torch_saved_checkpoint_loads_into_a_bundle(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    params = dict(extractor_mode="layer_norm", extractor_conv_layer_config=[(8, 10, 5),
                                                                            (8, 3, 2)],
                  extractor_conv_bias=True, encoder_embed_dim=8,
                  encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
                  encoder_pos_conv_groups=2, encoder_num_layers=2, encoder_num_heads=2,
                  encoder_attention_dropout=0.0, encoder_ff_interm_features=12,
                  encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
                  encoder_layer_norm_first=True, encoder_layer_drop=0.0, aux_num_out=5)
    torch.manual_seed(0)
    reference = torchaudio.models.wav2vec2_model(**params).eval()
    state = dict(reference.state_dict())
    # the published files: the old weight-norm names and fairseq's three unused rows
    for key in list(state):
        for new, old in (("parametrizations.weight.original0", "weight_g"),
                         ("parametrizations.weight.original1", "weight_v")):
            if new in key:
                state[key.replace(new, old)] = state.pop(key)
    for key in ("aux.weight", "aux.bias"):
        rows = list(state[key])
        state[key] = torch.stack(rows[:1] + [torch.full_like(rows[0], 7.0)] * 3 + rows[1:])
    (tmp_path / "checkpoints").mkdir()
    torch.save(state, tmp_path / "checkpoints" / "tiny.pth")
    bundle = pipelines.Wav2Vec2ASRBundle("tiny.pth", params, 16000, True, "Wav2Vec2",
                                         _labels=tuple("abcd"))
    model = bundle.get_model()
    x = np.random.default_rng(0).standard_normal((2, 400)).astype(np.float32)
    with torch.no_grad():
        expected, _ = reference(torch.nn.functional.layer_norm(torch.from_numpy(x), (2, 400)))
    with ember.no_grad():
        got, _ = model(ember.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)


def test_rnnt_features_match_torchaudio(tmp_path, monkeypatch):
    from torchaudio.pipelines import rnnt_pipeline as ta_rnnt

    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    stats = {"mean": np.linspace(-1, 1, 80).tolist(), "invstddev": np.linspace(0.5, 2, 80)
             .tolist()}
    path = tmp_path / "torchaudio" / "pipeline-assets" / "global_stats_rnnt_librispeech.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(stats))
    bundle = pipelines.EMFORMER_RNNT_BASE_LIBRISPEECH
    ours = bundle.get_feature_extractor()
    theirs = ta_rnnt._ModuleFeatureExtractor(torch.nn.Sequential(
        torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=400, n_mels=80,
                                             hop_length=160),
        ta_rnnt._FunctionalModule(lambda x: x.transpose(1, 0)),
        ta_rnnt._FunctionalModule(lambda x: ta_rnnt._piecewise_linear_log(x * ta_rnnt._gain)),
        ta_rnnt._GlobalStatsNormalization(str(path)),
        ta_rnnt._FunctionalModule(lambda x: torch.nn.functional.pad(x, (0, 0, 0, 4)))))
    waveform = (np.random.default_rng(0).standard_normal(4000) * 0.1).astype(np.float32)
    expected, expected_length = theirs(torch.from_numpy(waveform))
    got, got_length = ours(ember.from_numpy(waveform))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-3, atol=1e-3)
    assert got_length.tolist() == expected_length.tolist()
    assert _rnnt._gain == pytest.approx(ta_rnnt._gain)


def test_source_separation_bundle_loads_torch_weights(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    kwargs = dict(num_sources=2, enc_num_feats=8, msk_num_feats=4, msk_num_hidden_feats=6,
                  msk_num_layers=2, msk_num_stacks=1)
    torch.manual_seed(0)
    reference = torchaudio.models.ConvTasNet(**kwargs).eval()
    (tmp_path / "torchaudio" / "models").mkdir(parents=True)
    torch.save(reference.state_dict(), tmp_path / "torchaudio" / "models" / "tasnet.pt")
    bundle = pipelines.SourceSeparationBundle("models/tasnet.pt",
                                              partial(models.ConvTasNet, **kwargs), 8000)
    x = np.random.default_rng(0).standard_normal((1, 1, 160)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x))
    with ember.no_grad():
        got = bundle.get_model()(ember.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
