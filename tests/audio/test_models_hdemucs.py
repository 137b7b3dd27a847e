"""emberaudio.models.HDemucs: a small configuration's forward and backward, the spectrogram
plumbing against its inverse, the BLSTM's windowing, the builders' state-dict keys (written out
from torchaudio 2.9: counts and a digest of keys and shapes), errors, and the HDEMUCS bundles
offline. Numbers against torchaudio are in tests/interop/test_audio_models_torchaudio.py."""

import hashlib

import numpy as np
import pytest

import ember
from emberaudio import models, pipelines
from emberaudio.models import _hdemucs
from emberaudio.pipelines import _source_separation

SMALL = {"audio_channels": 1, "channels": 8, "nfft": 64, "depth": 3, "norm_starts": 1,
         "dconv_attn": 1, "dconv_lstm": 1, "dconv_comp": 2}


def _small(**kwargs):
    ember.manual_seed(0)
    return models.HDemucs(["a", "b"], **{**SMALL, **kwargs})


def test_forward_and_backward():
    model = _small()
    x = ember.randn(2, 1, 200, requires_grad=True)
    out = model(x)
    assert out.shape == (2, 2, 1, 200)
    assert np.isfinite(out.detach().numpy()).all()
    out.square().mean().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0
    unused = {name for name, param in model.named_parameters() if param.grad is None}
    # the merged time layer keeps only its convolution (its norm is built but unused, as in
    # torchaudio, so that the checkpoints' keys are there)
    assert unused == {"time_encoder.1.norm1.weight", "time_encoder.1.norm1.bias"}


def test_two_channels_and_a_length_not_a_multiple_of_the_hop():
    model = _small(audio_channels=2)
    with ember.no_grad():
        assert model(ember.randn(1, 2, 101)).shape == (1, 2, 2, 101)


def test_spectrogram_round_trip():
    model = _small()
    t = np.arange(150, dtype=np.float32)
    # no content at the Nyquist bin (which _spec drops)
    x = ember.from_numpy(np.stack([np.sin(0.3 * t), np.cos(0.11 * t) + 0.2])[:, None])
    z = model._spec(x)
    assert z.shape == (2, 1, 32, 10)  # nfft // 2 bins, ceil(150 / 16) frames
    # the frames beyond both ends are left out: exact away from the ends
    np.testing.assert_allclose(model._ispec(z, 150).numpy()[..., 40:-40],
                               x.numpy()[..., 40:-40], atol=1e-3)


def test_a_signal_shorter_than_the_padding():
    x = ember.randn(1, 3)
    padded = _hdemucs._pad1d_reflect(x, 4, 5)
    # zeros first (to 6 samples), then reflected
    assert padded.shape == (1, 6 + 9)
    np.testing.assert_array_equal(padded.numpy()[0, 4:10],
                                  np.concatenate([x.numpy()[0], np.zeros(3, np.float32)]))


def test_blstm_windows_of_long_sequences():
    ember.manual_seed(0)
    blstm = _hdemucs._BLSTM(3, layers=1, skip=True).eval()
    blstm.max_steps = 8
    x = ember.randn(1, 3, 19)
    with ember.no_grad():
        got = blstm(x).numpy()
        # windows of 8 every 4 steps; each keeps its middle (the first its start, the last
        # its end): 0-5 from window 0, 6-9 from window 1, ...
        for k, (lo, hi) in enumerate([(0, 6), (6, 10), (10, 14), (14, 18), (18, 19)]):
            window = x[..., 4 * k:4 * k + 8]
            window = ember.nn.functional.pad(window, [0, 8 - window.shape[-1]])
            whole = blstm.linear(blstm.lstm(window.permute(2, 0, 1))[0]).permute(1, 2, 0)
            np.testing.assert_allclose(got[..., lo:hi], (whole + window).numpy()[
                ..., lo - 4 * k:hi - 4 * k], rtol=1e-5, atol=1e-6)


def test_local_state_never_attends_to_itself():
    ember.manual_seed(0)
    attn = _hdemucs._LocalState(4, heads=2, ndecay=2)
    with ember.no_grad():
        for conv in (attn.proj, attn.content):
            conv.weight.copy_(ember.eye(4)[:, :, None])
            conv.bias.zero_()
        # two steps: each attends only to the other (itself is masked to -100)
        x = ember.randn(1, 4, 2)
        np.testing.assert_allclose(attn(x).numpy(), x.numpy() + x.numpy()[..., ::-1],
                                   rtol=1e-5)


def test_scaled_embedding_starts_smooth():
    ember.manual_seed(0)
    raw = ember.nn.Embedding(5, 3).weight.detach().numpy()
    ember.manual_seed(0)
    emb = _hdemucs._ScaledEmbedding(5, 3, scale=10.0, smooth=True)
    smooth = np.cumsum(raw, 0) / np.sqrt(np.arange(1, 6))[:, None]
    np.testing.assert_allclose(emb.embedding.weight.detach().numpy(), smooth / 10, rtol=1e-5)
    np.testing.assert_allclose(emb.weight.detach().numpy(), smooth, rtol=1e-5)
    np.testing.assert_allclose(emb(ember.tensor([2])).detach().numpy(), smooth[2:3],
                               rtol=1e-5)


def _digest(state):
    text = "\n".join(f"{k} {tuple(v.shape)}" for k, v in state.items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# (number of keys, digest of the "key shape" lines in order) of torchaudio 2.9's builders
# for four sources
@pytest.mark.parametrize("builder, count, digest", [
    ("hdemucs_low", 277, "50901ae3a529ac9d"),
    ("hdemucs_medium", 397, "8b415c225094ae40"),
    ("hdemucs_high", 397, "92300dfd4a93103e"),
])
def test_builders_keys_and_shapes(builder, count, digest):
    state = getattr(models, builder)(["drums", "bass", "other", "vocals"]).state_dict()
    assert (len(state), _digest(state)) == (count, digest)


def test_errors():
    model = _small()
    with pytest.raises(ValueError, match="3D"):
        model(ember.randn(1, 200))
    with pytest.raises(ValueError, match="audio_channels"):
        model(ember.randn(1, 2, 200))
    with pytest.raises(ValueError, match="odd"):
        _hdemucs._DConv(8, kernel_size=4)
    with pytest.raises(ValueError, match="divisible"):
        _hdemucs._LocalState(6, heads=4)


def test_hdemucs_bundles(monkeypatch):
    for bundle, path in ((pipelines.HDEMUCS_HIGH_MUSDB, "models/hdemucs_high_musdbhq_only.pt"),
                         (pipelines.HDEMUCS_HIGH_MUSDB_PLUS, "models/hdemucs_high_trained.pt")):
        assert isinstance(bundle, pipelines.SourceSeparationBundle)
        assert (bundle.sample_rate, bundle._model_path) == (44100, path)
    calls = []
    monkeypatch.setattr(_source_separation, "hdemucs_high",
                        lambda sources: calls.append(sources) or sources)
    pipelines.HDEMUCS_HIGH_MUSDB._model_factory_func()
    pipelines.HDEMUCS_HIGH_MUSDB_PLUS._model_factory_func()
    assert calls == [["drums", "bass", "other", "vocals"]] * 2
    assert calls[0] is not calls[1]  # a list of its own for each model


def test_bundle_get_model_from_the_cache(tmp_path, monkeypatch):
    import ember.hub

    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    reference = _small().eval()
    with ember.no_grad():  # weights that differ from a fresh model's
        for param in reference.parameters():
            param.add_(0.01)
    (tmp_path / "torchaudio" / "models").mkdir(parents=True)
    ember.save(reference.state_dict(), tmp_path / "torchaudio" / "models" / "hd.pt")
    bundle = pipelines.SourceSeparationBundle("models/hd.pt", _small, 8000)
    model = bundle.get_model()
    assert not model.training
    x = ember.randn(1, 1, 100)
    with ember.no_grad():
        np.testing.assert_allclose(model(x).numpy(), reference(x).numpy(), rtol=1e-5,
                                   atol=1e-6)
