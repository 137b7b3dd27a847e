"""emberaudio.transforms: each module is its functional op, with torchaudio's attributes."""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as F
import emberaudio.transforms as T

RNG = np.random.default_rng(5)
WAVE = ember.from_numpy(RNG.uniform(-0.5, 0.5, (2, 400)).astype(np.float32))
SPEC = ember.from_numpy(RNG.uniform(0.0, 2.0, (2, 201, 30)).astype(np.float32))


def _close(a, b, **kw):
    np.testing.assert_allclose(a.numpy(), b.numpy(), **kw)


def test_modules_call_their_functionals():
    _close(T.AmplitudeToDB()(SPEC), F.amplitude_to_DB(SPEC, 10.0, 1e-10, 0.0))
    _close(T.AmplitudeToDB("magnitude", 50)(SPEC), F.amplitude_to_DB(SPEC, 20.0, 1e-10, 0.0, 50))
    _close(T.MuLawEncoding(128)(WAVE), F.mu_law_encoding(WAVE, 128))
    _close(T.MuLawDecoding()(T.MuLawEncoding()(WAVE)), F.mu_law_decoding(
        F.mu_law_encoding(WAVE, 256), 256))
    _close(T.ComputeDeltas(7)(SPEC), F.compute_deltas(SPEC, 7))
    _close(T.SlidingWindowCmn(10, 3)(SPEC), F.sliding_window_cmn(SPEC, 10, 3))
    _close(T.Preemphasis(0.5)(WAVE), F.preemphasis(WAVE, 0.5))
    _close(T.Deemphasis(0.5)(WAVE), F.deemphasis(WAVE, 0.5))
    _close(T.Convolve("valid")(WAVE, WAVE[:, :9]), F.convolve(WAVE, WAVE[:, :9], "valid"))
    snr = ember.tensor([5.0, 10.0])
    _close(T.AddNoise()(WAVE, WAVE.flip(-1), snr), F.add_noise(WAVE, WAVE.flip(-1), snr))


def test_melscale_is_a_matmul_with_the_filterbank():
    mel = T.MelScale(n_mels=40, sample_rate=16000, n_stft=201)
    fb = F.melscale_fbanks(201, 0.0, 8000.0, 40, 16000)
    expected = np.einsum("bft,fm->bmt", SPEC.numpy(), fb.numpy())
    _close(mel(SPEC), ember.from_numpy(expected), rtol=1e-5, atol=1e-6)
    assert list(mel.state_dict()) == ["fb"]
    with pytest.raises(ValueError, match="f_min"):
        T.MelScale(f_min=9000.0, sample_rate=16000)
    with pytest.raises(ValueError, match="201 frequency bins"):
        mel(SPEC[:, :100])


def test_resample_module_caches_its_kernel():
    module = T.Resample(44100, 16000)
    assert module.kernel.dtype == ember.float32 and module.kernel.shape[0] == 160
    out = module(WAVE)
    assert out.shape == (2, math.ceil(400 * 160 / 441))
    _close(out, F.resample(WAVE, 44100, 16000), rtol=1e-4, atol=1e-6)
    assert T.Resample(8000, 8000)(WAVE) is WAVE
    assert "kernel" in module.state_dict()


@pytest.mark.parametrize("shape", ["linear", "exponential", "logarithmic", "quarter_sine",
                                   "half_sine"])
def test_fade_envelopes(shape):
    ones = ember.ones(1, 100)
    faded = T.Fade(20, 30, shape)(ones).numpy()[0]
    assert faded[0] == pytest.approx(0.0, abs=1e-6)
    assert faded[-1] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_array_equal(faded[20:70], 1.0)
    assert (np.diff(faded[:20]) >= -1e-7).all() and (np.diff(faded[70:]) <= 1e-7).all()
    if shape == "linear":
        np.testing.assert_allclose(faded[:20], np.linspace(0, 1, 20), rtol=1e-6)
    with pytest.raises(ValueError, match="longer than the waveform"):
        T.Fade(200)(ones)


def test_fade_rejects_unknown_shapes():
    with pytest.raises(ValueError, match="fade_shape"):
        T.Fade(10, 10, "cosine")


def test_vol():
    _close(T.Vol(2.0)(WAVE), ember.clamp(WAVE * 2.0, -1, 1))
    _close(T.Vol(6.0, "db")(WAVE), ember.clamp(WAVE * 10 ** 0.3, -1, 1), rtol=1e-6)
    _close(T.Vol(4.0, "power")(WAVE), ember.clamp(WAVE * 2.0, -1, 1), rtol=1e-6)
    with pytest.raises(ValueError, match="gain_type"):
        T.Vol(1.0, "volts")
    with pytest.raises(ValueError, match="must be positive"):
        T.Vol(-1.0)


def test_masking_modules():
    ember.manual_seed(1)
    spec = ember.ones(4, 2, 50, 60)
    freq = T.FrequencyMasking(20)(spec).numpy()
    masked_rows = (freq == 0).all(axis=(0, 1, 3))
    assert masked_rows.sum() < 20 and ((freq == 0).sum(axis=(0, 1, 3)) % (4 * 2 * 60) == 0).all()
    time = T.TimeMasking(25, iid_masks=True)(spec, mask_value=-3.0).numpy()
    per_example = (time == -3.0).all(axis=2).sum(-1)
    assert per_example.shape == (4, 2) and (per_example < 25).all()
    with pytest.raises(ValueError, match="p must be between"):
        T.TimeMasking(10, p=2.0)
    augmented = T.SpecAugment(2, 10, 2, 10, zero_masking=True)(spec).numpy()
    assert augmented.shape == spec.shape and (augmented == 0).any()
    mean_masked = T.SpecAugment(1, 30, 0, 5)(SPEC).numpy()
    masked = mean_masked != SPEC.numpy()
    np.testing.assert_allclose(mean_masked[masked], float(SPEC.mean()), rtol=1e-6)


def test_speed_and_speed_perturbation():
    out, lengths = T.Speed(16000, 1.25)(WAVE, ember.tensor([400, 200]))
    assert out.shape == (2, 320) and lengths.tolist() == [320, 160]
    _close(out, F.speed(WAVE, 16000, 1.25)[0], rtol=1e-4, atol=1e-6)
    ember.manual_seed(0)
    perturb = T.SpeedPerturbation(16000, [0.5, 1.0, 2.0])
    lengths_seen = {perturb(WAVE)[0].shape[-1] for _ in range(20)}
    assert lengths_seen <= {800, 400, 200} and len(lengths_seen) > 1
    with pytest.raises(ValueError, match="at least one"):
        T.SpeedPerturbation(16000, [])


def test_transforms_are_differentiable():
    x = ember.tensor(RNG.uniform(-0.3, 0.3, (1, 60)), dtype=ember.float64, requires_grad=True)
    modules = [T.Resample(3, 2).to(ember.float64), T.Preemphasis(), T.Deemphasis(),
               T.Fade(10, 10, "half_sine"), T.ComputeDeltas()]
    for module in modules:
        x.grad = None
        module(x).sum().backward()
        assert x.grad is not None and np.isfinite(x.grad.numpy()).all(), type(module).__name__


def test_every_public_name_is_documented():
    for name in T.__all__:
        assert getattr(T, name).__doc__, name
