"""emberaudio.models.SquimSubjective: the predictor and the attention pooling against closed
forms, the reference's alignment, forward and backward on a small wav2vec 2.0, the base
architecture's state-dict keys (torchaudio's: the wav2vec2_base keys under ssl_model, then the
projector and the predictor), errors, and the SQUIM_SUBJECTIVE bundle offline. Numbers against
torchaudio are in tests/interop/test_audio_models_torchaudio.py."""

import numpy as np
import pytest

import ember
import ember.hub
from emberaudio import models, pipelines
from emberaudio.models.squim import subjective as sq
from emberaudio.pipelines import _squim


def _tiny_ssl():
    return models.wav2vec2_model(
        "group_norm", [(8, 10, 5), (8, 3, 2)], False, 8, 0.0, 4, 2, 2, 2, 0.0, 12, 0.0, 0.0,
        False, 0.0, None)


def _small():
    ember.manual_seed(0)
    return sq.SquimSubjective(_tiny_ssl(), ember.nn.Linear(8, 4), sq.Predictor(8, 5)).eval()


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_predictor_is_the_expected_level():
    ember.manual_seed(0)
    predictor = sq.Predictor(3, 5)
    x = ember.randn(2, 7, 3)
    pool = predictor.att_pool_layer
    xn = x.numpy()
    att = _softmax(xn @ pool.linear1.weight.detach().numpy().T
                   + pool.linear1.bias.detach().numpy(), 1)  # (2, 7, 1) over time
    pooled = (att * xn).sum(1) @ pool.linear2.weight.detach().numpy().T \
        + pool.linear2.bias.detach().numpy()
    expected = (_softmax(pooled, 1) * np.linspace(0, 4, 5)).sum(1)
    np.testing.assert_allclose(predictor(x).detach().numpy(), expected, rtol=1e-5)


def test_reference_is_repeated_then_cut():
    model = _small()
    waveform = ember.zeros(2, 7)
    reference = ember.arange(6.0).reshape(2, 3)
    _, aligned = model._align_shapes(waveform, reference)
    np.testing.assert_array_equal(aligned.numpy(), [[0, 1, 2, 0, 1, 2, 0], [3, 4, 5, 3, 4, 5, 3]])
    _, cut = model._align_shapes(ember.zeros(2, 2), reference)
    np.testing.assert_array_equal(cut.numpy(), [[0, 1], [3, 4]])


def test_forward_and_backward():
    model = _small().train()
    waveform = ember.randn(2, 400, requires_grad=True)
    mos = model(waveform, ember.randn(2, 150))
    assert mos.shape == (2,)
    assert ((mos.detach().numpy() >= 1) & (mos.detach().numpy() <= 5)).all()
    mos.sum().backward()
    assert float(waveform.grad.abs().sum()) > 0
    assert model.projector.weight.grad is not None
    assert model.predictor.att_pool_layer.linear1.weight.grad is not None


def test_the_score_compares_the_reference_first():
    model = _small()
    waveform, reference = ember.randn(1, 400), ember.randn(1, 400)
    with ember.no_grad():
        both = ember.cat((model._features(reference), model._features(waveform)), dim=2)
        np.testing.assert_allclose(model(waveform, reference).numpy(),
                                   5 - model.predictor(both).numpy(), rtol=1e-6)


def test_base_architecture_keys():
    model = models.squim_subjective_base()
    state = model.state_dict()
    ssl_keys = list(models.wav2vec2_base().state_dict())
    assert list(state) == [f"ssl_model.{k}" for k in ssl_keys] + [
        "projector.weight", "projector.bias", "predictor.att_pool_layer.linear1.weight",
        "predictor.att_pool_layer.linear1.bias", "predictor.att_pool_layer.linear2.weight",
        "predictor.att_pool_layer.linear2.bias"]
    assert state["projector.weight"].shape == (32, 768)
    assert state["predictor.att_pool_layer.linear1.weight"].shape == (1, 64)
    assert state["predictor.att_pool_layer.linear2.weight"].shape == (5, 64)
    assert model.predictor.att_dim == 5


def test_errors():
    model = _small()
    with pytest.raises(ValueError, match="waveform must be 2D"):
        model(ember.randn(400), ember.randn(1, 400))
    with pytest.raises(ValueError, match="reference must be 2D"):
        model(ember.randn(1, 400), ember.randn(1, 1, 400))
    with pytest.raises(ValueError, match="empty"):
        model(ember.randn(1, 400), ember.randn(1, 0))
    with pytest.raises(ValueError, match="ssl_type"):
        models.squim_subjective_model("not_a_model", 8, 4, 5)


def test_squim_subjective_bundle(tmp_path, monkeypatch):
    bundle = pipelines.SQUIM_SUBJECTIVE
    assert isinstance(bundle, pipelines.SquimSubjectiveBundle)
    assert (bundle._path, bundle.sample_rate) == ("squim_subjective_bvcc_daps.pth", 16000)
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    monkeypatch.setattr(_squim, "squim_subjective_base", _small)
    reference = _small()
    with ember.no_grad():  # weights that differ from a fresh model's
        reference.projector.weight.add_(0.5)
    (tmp_path / "torchaudio" / "models").mkdir(parents=True)
    ember.save(reference.state_dict(),
               tmp_path / "torchaudio" / "models" / "squim_subjective_bvcc_daps.pth")
    model = bundle.get_model()
    assert not model.training
    waveform, clean = ember.randn(1, 400), ember.randn(1, 300)
    with ember.no_grad():
        np.testing.assert_allclose(model(waveform, clean).numpy(),
                                   reference(waveform, clean).numpy(), rtol=1e-6)
