"""emberaudio.models.SquimObjective: torchaudio's state-dict keys (written out from
torchaudio's models/squim/objective.py), the dual-path chunking against its inverse, the
pooling and ranges against closed forms, loudness invariance, the pipeline bundle offline.
Numbers against torchaudio are in tests/interop/test_audio_models_torchaudio.py."""

import math

import numpy as np
import pytest

import ember
import ember.hub
from emberaudio import models, pipelines
from emberaudio.models.squim import objective as sq


def _np(t):
    return t.detach().numpy()


def _small():
    ember.manual_seed(0)
    return models.squim_objective_model(feat_dim=8, win_len=16, d_model=8, nhead=2,
                                        hidden_dim=6, num_blocks=2, rnn_type="LSTM",
                                        chunk_size=7).eval()


def _rnn_keys(prefix):
    return [f"{prefix}.rnn.{k}_l0{r}" for r in ("", "_reverse")
            for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")] + [
        f"{prefix}.proj.weight", f"{prefix}.proj.bias"]


def test_state_dict_keys_and_shapes():
    state = _small().state_dict()
    expected = ["encoder.conv1d.weight"]
    for kind in ("row_rnn", "col_rnn"):
        for i in range(2):
            expected += _rnn_keys(f"dprnn.{kind}.{i}")
    for kind in ("row_norm", "col_norm"):
        for i in range(2):
            expected += [f"dprnn.{kind}.{i}.weight", f"dprnn.{kind}.{i}.bias"]
    expected += ["dprnn.conv.0.weight", "dprnn.conv.0.bias", "dprnn.conv.1.weight"]
    layer = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
             "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
             "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    for b in range(3):
        expected += [f"branches.{b}.0.{k}" for k in layer] + [f"branches.{b}.1.alpha"] + [
            f"branches.{b}.2.{k}" for k in ("0.weight", "0.bias", "1.weight", "2.weight",
                                            "2.bias")]
    assert list(state) == expected
    assert state["encoder.conv1d.weight"].shape == (8, 1, 16)
    assert state["dprnn.row_rnn.0.rnn.weight_ih_l0"].shape == (24, 8)
    assert state["dprnn.row_rnn.0.proj.weight"].shape == (8, 12)
    assert state["branches.0.0.linear1.weight"].shape == (32, 8)


def test_base_architecture():
    model = models.squim_objective_base()
    state = model.state_dict()
    assert state["encoder.conv1d.weight"].shape == (256, 1, 64)
    assert state["dprnn.row_rnn.1.rnn.weight_hh_l0"].shape == (1024, 256)
    assert "dprnn.row_rnn.2.proj.weight" not in state
    assert state["branches.2.0.linear1.weight"].shape == (1024, 256)
    assert model.dprnn.chunk_size == 71 and model.dprnn.chunk_stride == 35


@pytest.mark.parametrize("frames", [1, 6, 7, 20, 36])
def test_chunking_then_merging_adds_each_frame_twice(frames):
    dprnn = sq.DPRNN(feat_dim=3, hidden_dim=2, num_blocks=1, d_model=3, chunk_size=8,
                     chunk_stride=4)
    x = ember.randn(2, 3, frames)
    chunks, rest = dprnn.chunking(x)
    assert chunks.shape[:3] == (2, 3, 8)
    # half-overlapping chunks: overlap-add counts every frame twice
    np.testing.assert_allclose(_np(dprnn.merging(chunks, rest)), 2 * _np(x), rtol=1e-6)


def test_autopool_and_range_sigmoid():
    pool = sq.AutoPool()
    with ember.no_grad():
        pool.alpha.fill_(2.0)
    x = ember.randn(3, 5, 4)
    w = np.exp(2 * _np(x))
    w /= w.sum(1, keepdims=True)
    np.testing.assert_allclose(_np(pool(x)), (w * _np(x)).sum(1), rtol=1e-5, atol=1e-6)
    sigmoid = sq.RangeSigmoid((1.0, 4.0))
    np.testing.assert_allclose(_np(sigmoid(ember.tensor([0.0, 50.0]))), [2.5, 4.0], rtol=1e-6)
    assert sq.PESQRange[0] == 1.0
    assert sq.PESQRange[1] == pytest.approx(0.999 + 4 / (1 + math.exp(-1.3669 * 4.5 + 3.8224)))
    with pytest.raises(ValueError, match="val_range"):
        sq.RangeSigmoid([0, 1])


def test_scores_ranges_and_loudness_invariance():
    model = _small()
    x = ember.randn(2, 400)
    with ember.no_grad():
        stoi, pesq, sisdr = model(x)
        louder = model(x * 7.0)
    assert stoi.shape == pesq.shape == sisdr.shape == (2,)
    assert np.all((_np(stoi) > 0) & (_np(stoi) < 1))
    assert np.all((_np(pesq) > sq.PESQRange[0]) & (_np(pesq) < sq.PESQRange[1]))
    for a, b in zip((stoi, pesq, sisdr), louder):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="2D Tensor"):
        model(ember.randn(1, 1, 400))
    with pytest.raises(ValueError, match="rnn_type"):
        sq.SingleRNN("TCN", 4, 4)


def test_gradients_reach_every_parameter():
    model = _small().train()
    scores = model(ember.randn(2, 300))
    sum(s.sum() for s in scores).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name


def test_squim_objective_bundle(tmp_path, monkeypatch):
    from emberaudio.pipelines import _squim

    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    monkeypatch.setattr(_squim, "squim_objective_base", _small)   # the base is slow here
    bundle = pipelines.SQUIM_OBJECTIVE
    assert bundle.sample_rate == 16000 and bundle._path == "squim_objective_dns2020.pth"
    reference = _small()
    path = tmp_path / "torchaudio" / "models" / "squim_objective_dns2020.pth"
    path.parent.mkdir(parents=True)
    ember.save(reference.state_dict(), path)
    model = bundle.get_model()
    x = ember.randn(1, 800)
    with ember.no_grad():
        for got, expected in zip(model(x), reference(x)):
            np.testing.assert_allclose(_np(got), _np(expected), rtol=1e-5, atol=1e-6)
