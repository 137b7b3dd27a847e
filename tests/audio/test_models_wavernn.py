"""emberaudio.models.WaveRNN: torchaudio's state-dict keys (written out from torchaudio's
models/wavernn.py), shapes, the upsampler's closed form, sampling, gradients, determinism."""

import numpy as np
import pytest

import ember
from emberaudio.models import WaveRNN
from emberaudio.models.wavernn import Stretch2d, UpsampleNetwork


def _small(**kwargs):
    ember.manual_seed(0)
    return WaveRNN([2, 3], 16, 6, n_res_block=1, n_rnn=8, n_fc=10, kernel_size=5, n_freq=4,
                   n_hidden=6, n_output=8, **kwargs)


def _bn(prefix):
    return [prefix + k for k in ("weight", "bias", "running_mean", "running_var",
                                 "num_batches_tracked")]


def test_state_dict_keys_and_shapes():
    state = _small().state_dict()
    r = "upsample.resnet.melresnet_model."
    expected = ([r + "0.weight"] + _bn(r + "1.")
                + [r + "3.resblock_model.0.weight"] + _bn(r + "3.resblock_model.1.")
                + [r + "3.resblock_model.3.weight"] + _bn(r + "3.resblock_model.4.")
                + [r + "4.weight", r + "4.bias", "upsample.upsample_layers.1.weight",
                   "upsample.upsample_layers.3.weight", "fc.weight", "fc.bias"]
                + [f"rnn{i}.{k}_l0" for i in (1, 2)
                   for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                + ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight",
                   "fc3.bias"])
    assert list(state) == expected
    assert state[r + "0.weight"].shape == (6, 4, 5)
    assert state["fc.weight"].shape == (8, 4 + 2 + 1)            # n_freq + n_aux + 1
    assert state["rnn2.weight_ih_l0"].shape == (24, 8 + 2)
    assert state["fc2.weight"].shape == (10, 12)
    assert state["upsample.upsample_layers.3.weight"].shape == (1, 1, 1, 7)
    with pytest.raises(ValueError, match="total_scale == hop_length"):
        WaveRNN([2, 3], 16, 5)


def test_forward_shapes_and_checks():
    model = _small()
    out = model(ember.rand(2, 1, (10 - 4) * 6), ember.rand(2, 1, 4, 10))
    assert out.shape == (2, 1, 36, 16)
    with pytest.raises(ValueError, match="channel of waveform"):
        model(ember.rand(2, 2, 36), ember.rand(2, 1, 4, 10))
    with pytest.raises(ValueError, match="channel of specgram"):
        model(ember.rand(2, 1, 36), ember.rand(2, 3, 4, 10))
    with pytest.raises(ValueError, match="samples"):
        model(ember.rand(2, 1, 60), ember.rand(2, 1, 4, 10))


def test_stretch_and_upsampling_closed_forms():
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    got = Stretch2d(time_scale=3, freq_scale=2)(ember.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x, 2, axis=-2), 3, axis=-1))
    net = UpsampleNetwork([3], n_res_block=0, n_freq=3, n_hidden=4, n_output=4,
                          kernel_size=3).eval()
    spec = np.random.default_rng(1).standard_normal((1, 3, 5)).astype(np.float32)
    up, res = net(ember.from_numpy(spec))
    assert up.shape == (1, 3, 9) and res.shape == (1, 4, 9)
    # Stretch by 3 then a 7-tap moving average (zero padded), less (3 - 1) // 2 * 3 each side.
    stretched = np.pad(np.repeat(spec, 3, axis=-1), ((0, 0), (0, 0), (3, 3)))
    smooth = np.stack([stretched[..., i:i + 7].mean(-1) for i in range(15)], -1)
    np.testing.assert_allclose(up.detach().numpy(), smooth[..., 3:-3], rtol=1e-5, atol=1e-6)


def test_infer_samples_in_range_with_lengths():
    model = _small().eval()
    spec = ember.rand(2, 4, 3)
    ember.manual_seed(5)
    wave, lengths = model.infer(spec, ember.tensor([3, 2]))
    assert wave.shape == (2, 1, 18) and lengths.tolist() == [18, 12]
    values = wave.numpy() * 7.5 + 7.5     # back to the 16 classes
    np.testing.assert_allclose(values, np.round(values), atol=1e-4)
    assert values.min() >= 0 and values.max() <= 15
    ember.manual_seed(5)
    again, none = model.infer(spec)
    np.testing.assert_array_equal(again.numpy(), wave.numpy())
    assert none is None


def test_gradients_flow_and_eval_is_deterministic():
    model = _small()
    wave, spec = ember.rand(2, 1, 36), ember.rand(2, 1, 4, 10)
    model(wave, spec).pow(2).mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and bool(ember.isfinite(p.grad).all()), name
    model.eval()
    np.testing.assert_array_equal(model(wave, spec).detach().numpy(),
                                  model(wave, spec).detach().numpy())
