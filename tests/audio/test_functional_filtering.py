"""emberaudio.functional filters against SciPy, closed-form responses and finite differences.

The comparison with torchaudio itself is tests/interop/test_audio_functional_torchaudio.py.
"""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as F
from ember.autograd import gradcheck
from emberaudio.functional import _iir

RATE = 8000
RNG = np.random.default_rng(7)


def _t(array, dtype=ember.float64, grad=False):
    return ember.tensor(np.asarray(array), dtype=dtype, requires_grad=grad)


def _response(filter_fn, freqs, length=8192):
    """|H(f)| of a filter from its impulse response (scaled to stay clear of the clamp)."""
    impulse = np.zeros(length)
    impulse[0] = 1e-3
    h = filter_fn(_t(impulse)).numpy() / 1e-3
    spectrum = np.abs(np.fft.rfft(h))
    bins = np.fft.rfftfreq(length, 1 / RATE)
    return np.interp(freqs, bins, spectrum)


@pytest.mark.parametrize("use_scipy", [True, False])
def test_lfilter_matches_scipy(monkeypatch, use_scipy):
    signal = pytest.importorskip("scipy.signal")
    if not use_scipy:
        monkeypatch.setattr(_iir, "_scipy_lfilter", None)
    x = RNG.uniform(-0.5, 0.5, (2, 3, 300))
    a = np.array([2.0, -1.1, 0.4, -0.05])
    b = np.array([0.3, 0.2, 0.1, 0.05])
    ours = F.lfilter(_t(x), _t(a), _t(b), clamp=False).numpy()
    np.testing.assert_allclose(ours, signal.lfilter(b, a, x, axis=-1), rtol=1e-10, atol=1e-12)
    clamped = F.lfilter(_t(x * 4), _t(a), _t(b)).numpy()
    np.testing.assert_allclose(clamped, np.clip(signal.lfilter(b, a, x * 4, axis=-1), -1, 1))


def test_lfilter_numpy_loop_float32(monkeypatch):
    monkeypatch.setattr(_iir, "_scipy_lfilter", None)
    x = RNG.uniform(-0.5, 0.5, (4, 100)).astype(np.float32)
    a, b = np.array([1.0, -0.9], np.float32), np.array([0.1, 0.0], np.float32)
    out = F.lfilter(ember.from_numpy(x), ember.from_numpy(a), ember.from_numpy(b))
    expected = np.zeros_like(x)
    for t in range(100):
        expected[:, t] = 0.1 * x[:, t] + (0.9 * expected[:, t - 1] if t else 0)
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_scipy", [True, False])
def test_lfilter_gradcheck(monkeypatch, use_scipy):
    if not use_scipy:
        monkeypatch.setattr(_iir, "_scipy_lfilter", None)
    x = _t(RNG.uniform(-0.3, 0.3, (2, 2, 15)), grad=True)
    a = _t([[1.0, -0.5, 0.2], [1.5, 0.3, -0.1]], grad=True)
    b = _t([[0.4, 0.2, 0.1], [0.3, -0.2, 0.05]], grad=True)
    assert gradcheck(lambda *v: F.lfilter(*v, clamp=False), (x, a, b))
    assert gradcheck(lambda *v: F.filtfilt(*v, clamp=False), (x, a, b))


def test_lfilter_errors_and_edge_cases():
    x = ember.zeros(2, 10)
    with pytest.raises(ValueError, match="same size"):
        F.lfilter(x, ember.tensor([1.0, 0.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match="number of batches"):
        F.lfilter(x, ember.ones(3, 2), ember.ones(3, 2))
    with pytest.raises(TypeError, match="floating point"):
        F.lfilter(ember.zeros(2, 10, dtype=ember.int64), ember.ones(2), ember.ones(2))
    empty = F.lfilter(ember.zeros(3, 0), ember.tensor([1.0, 0.5]), ember.tensor([1.0, 0.0]))
    assert empty.shape == (3, 0)
    unbatched = F.lfilter(ember.zeros(10), ember.ones(2, 2), ember.ones(2, 2), batching=False)
    assert unbatched.shape == (2, 10)
    strided = ember.from_numpy(RNG.uniform(-0.5, 0.5, (10, 2)).astype(np.float32)).t()
    a, b = ember.tensor([1.0, -0.5]), ember.tensor([1.0, 0.0])
    np.testing.assert_allclose(F.lfilter(strided, a, b).numpy(),
                               F.lfilter(strided.contiguous(), a, b).numpy())
    nan = F.lfilter(ember.tensor([[0.0, float("nan"), 0.0]]), a, b, clamp=False)
    assert np.isnan(nan.numpy()[0, 1:]).all() and nan.numpy()[0, 0] == 0


# (function, kwargs, frequency, expected |H|): the cookbook's closed forms
RESPONSES = [
    (F.lowpass_biquad, {"cutoff_freq": 1000.0, "Q": 0.707}, 0.0, 1.0),
    (F.lowpass_biquad, {"cutoff_freq": 1000.0, "Q": 0.707}, 1000.0, 0.707),
    (F.lowpass_biquad, {"cutoff_freq": 1000.0, "Q": 2.0}, 1000.0, 2.0),
    (F.highpass_biquad, {"cutoff_freq": 1000.0, "Q": 0.707}, 1000.0, 0.707),
    (F.highpass_biquad, {"cutoff_freq": 1000.0}, 4000.0, 1.0),
    (F.bandpass_biquad, {"central_freq": 1500.0, "Q": 3.0}, 1500.0, 1.0),
    (F.bandpass_biquad, {"central_freq": 1500.0, "Q": 3.0, "const_skirt_gain": True},
     1500.0, 3.0),
    (F.bandreject_biquad, {"central_freq": 1500.0, "Q": 3.0}, 1500.0, 0.0),
    (F.allpass_biquad, {"central_freq": 1500.0}, 700.0, 1.0),
    (F.allpass_biquad, {"central_freq": 1500.0}, 3100.0, 1.0),
    (F.equalizer_biquad, {"center_freq": 1200.0, "gain": 6.0, "Q": 1.0}, 1200.0,
     10 ** (6.0 / 20)),
    (F.bass_biquad, {"gain": -6.0}, 0.0, 10 ** (-6.0 / 20)),
    (F.treble_biquad, {"gain": -6.0}, 4000.0, 10 ** (-6.0 / 20)),
    (F.band_biquad, {"central_freq": 1000.0, "Q": 4.0}, 1000.0, 1.0),
]


@pytest.mark.parametrize("fn, kwargs, freq, expected", RESPONSES,
                         ids=[f"{r[0].__name__}-{r[2]}" for r in RESPONSES])
def test_biquad_responses(fn, kwargs, freq, expected):
    magnitude = _response(lambda x: fn(x, RATE, **kwargs), [freq])[0]
    assert magnitude == pytest.approx(expected, abs=0.02)


def test_riaa_and_deemph_gains():
    # RIAA playback is normalised to 0 dB at 1 kHz and boosts the bass by about 19 dB
    rate = 44100
    impulse = np.zeros(1 << 16)
    impulse[0] = 1e-3
    for fn, checks in ((F.riaa_biquad, [(1000.0, 1.0), (20.0, 10 ** (19.3 / 20))]),
                       (F.deemph_biquad, [(100.0, 1.0), (16000.0, 10 ** (-9.3 / 20))])):
        h = fn(_t(impulse), rate).numpy() / 1e-3
        spectrum = np.abs(np.fft.rfft(h))
        bins = np.fft.rfftfreq(h.size, 1 / rate)
        for freq, gain in checks:
            assert np.interp(freq, bins, spectrum) == pytest.approx(gain, rel=0.05)
    with pytest.raises(ValueError, match="44.1k, 48k"):
        F.riaa_biquad(ember.zeros(10), 16000)
    with pytest.raises(ValueError, match="44100"):
        F.deemph_biquad(ember.zeros(10), 16000)


def test_biquad_parameters_are_differentiable():
    x = _t(RNG.uniform(-0.3, 0.3, 40))
    cutoff = _t(900.0, grad=True)
    q = _t(0.8, grad=True)
    assert gradcheck(lambda c, qq: F.lowpass_biquad(x, RATE, c, qq), (cutoff, q))
    gain_db = _t(3.0, grad=True)
    assert gradcheck(lambda g: F.equalizer_biquad(x, RATE, 1000.0, g), (gain_db,))
    assert gradcheck(lambda g: F.bass_biquad(x, RATE, g), (gain_db,))
    assert gradcheck(lambda w: F.biquad(w, 0.2, 0.1, 0.05, 1.0, -0.3, 0.1),
                     (_t(RNG.uniform(-0.3, 0.3, (2, 20)), grad=True),))


def test_contrast_gain_dcshift_closed_forms():
    x = RNG.uniform(-1, 1, 200)
    np.testing.assert_allclose(F.contrast(_t(x), 75.0).numpy(),
                               np.sin(x * np.pi / 2 + 0.1 * np.sin(x * np.pi / 2 * 4)))
    np.testing.assert_allclose(F.gain(_t(x), 6.0).numpy(), x * 10 ** 0.3)
    np.testing.assert_allclose(F.dcshift(_t(x), 0.3).numpy(), np.clip(x + 0.3, -1, 1))
    limited = F.dcshift(_t(x), 0.5, 0.05).numpy()
    threshold = 1 - (0.5 - 0.05)
    high = x > threshold
    np.testing.assert_allclose(limited[~high], np.clip(x[~high] + 0.5, -1, 1))
    assert (limited[high] <= threshold).all()
    with pytest.raises(ValueError, match="0-100"):
        F.contrast(_t(x), 120.0)


def test_overdrive_phaser_flanger_trivial_settings_and_gradients():
    x = RNG.uniform(-0.5, 0.5, (2, 60))
    # no feedback: the phaser scales the input; no mix: the flanger passes it through
    np.testing.assert_allclose(F.phaser(_t(x), RATE, 0.5, 0.8, decay=0.0).numpy(), x * 0.4)
    np.testing.assert_allclose(F.flanger(_t(x), RATE, width=0.0).numpy(), x)
    # overdrive of silence is the high-passed colour offset: a decaying step
    quiet = F.overdrive(_t(np.zeros((1, 5))), gain=0, colour=20).numpy()[0]
    offset = 0.1 - 0.1 ** 3 / 3
    np.testing.assert_allclose(quiet, 0.75 * offset * 0.995 ** np.arange(5))
    xs = _t(x[:1, :12] * 0.2, grad=True)
    assert gradcheck(lambda v: F.phaser(v, RATE, delay_ms=1.0), (xs,))
    assert gradcheck(lambda v: F.flanger(v, RATE, regen=40.0), (xs,))
    assert gradcheck(lambda v: F.overdrive(v, gain=5, colour=10), (xs * 0.1,))
    with pytest.raises(ValueError, match="Max 4 channels"):
        F.flanger(ember.zeros(5, 10), RATE)
    with pytest.raises(ValueError, match="modulation"):
        F.flanger(ember.zeros(1, 10), RATE, modulation="square")


def test_preemphasis_deemphasis_invert_each_other():
    x = RNG.uniform(-0.3, 0.3, (3, 50))
    pre = F.preemphasis(_t(x), 0.9).numpy()
    np.testing.assert_allclose(pre[:, 1:], x[:, 1:] - 0.9 * x[:, :-1])
    np.testing.assert_allclose(pre[:, 0], x[:, 0])
    np.testing.assert_allclose(F.deemphasis(_t(pre), 0.9).numpy(), x, atol=1e-12)
    assert F.preemphasis(ember.zeros(2, 0)).shape == (2, 0)
    assert gradcheck(lambda v: F.preemphasis(v), (_t(x[:, :10], grad=True),))


def test_gradient_is_finite_through_long_filters():
    x = _t(RNG.uniform(-0.3, 0.3, 2000), grad=True)
    F.highpass_biquad(x, RATE, 200.0).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    assert math.isfinite(float(x.grad.abs().sum()))


def test_loudness_of_a_sine_is_bs1770s():
    # BS.1770: a 1 kHz sine at -20 dBFS in two channels reads -20 LKFS (one channel: -23)
    rate = 16000
    t = np.arange(rate * 2) / rate
    tone = np.sin(2 * np.pi * 1000 * t) * 10 ** (-20 / 20)
    stereo = F.loudness(_t(np.stack([tone, tone])), rate)
    mono = F.loudness(_t(tone[None]), rate)
    assert float(stereo) == pytest.approx(-20.0, abs=0.1)
    assert float(mono) == pytest.approx(-23.0, abs=0.1)
    # silence after the tone is gated away (ungated, the energy would halve: -26 LKFS); the
    # few blocks straddling the edge stay within the relative gate
    padded = np.concatenate([tone, np.zeros(rate * 2)])
    assert -23.5 < float(F.loudness(_t(padded[None]), rate)) < float(mono)
    with pytest.raises(ValueError, match="up to 5 channels"):
        F.loudness(ember.zeros(6, rate), rate)
    with pytest.raises(ValueError, match="shorter than one"):
        F.loudness(ember.zeros(1, 100), rate)
