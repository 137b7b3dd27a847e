"""emberaudio.functional's spectral ops against closed forms and NumPy: a pure tone's peak
bin, Parseval, perfect reconstruction, the phase vocoder's formula, FFT convolution against
the direct one; float64 gradchecks; zero-size, NaN and bad inputs."""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as F
from ember.autograd import gradcheck

RNG = np.random.default_rng(11)
SR = 8000


def _tone(freq, n=2048, sr=SR, dtype=np.float32):
    return ember.from_numpy((np.sin(2 * np.pi * freq * np.arange(n) / sr)).astype(dtype))


def _spec(x, n_fft=256, hop=64, power=2.0, **kw):
    return F.spectrogram(x, 0, ember.hann_window(n_fft, dtype=x.dtype), n_fft, hop, n_fft,
                         power, False, **kw)


def test_pure_tone_peaks_at_its_bin():
    n_fft = 256
    k = 37
    spec = _spec(_tone(k * SR / n_fft), n_fft=n_fft)
    assert tuple(spec.shape) == (n_fft // 2 + 1, 2048 // 64 + 1)
    assert (spec.numpy()[:, 2:-2].argmax(axis=0) == k).all()
    # a bin-centred tone under a periodic Hann window: |X_k| = n_fft / 4
    np.testing.assert_allclose(spec.numpy()[k, 4:-4], (n_fft / 4) ** 2, rtol=1e-3)


def test_parseval_with_a_rectangular_window():
    x = ember.from_numpy(RNG.standard_normal(1024))
    n_fft = 128
    spec = F.spectrogram(x, 0, ember.ones(n_fft, dtype=ember.float64), n_fft, n_fft, n_fft,
                         2.0, False, center=False, onesided=False)
    frames = x.numpy().reshape(-1, n_fft)
    np.testing.assert_allclose(spec.numpy().sum(0), n_fft * (frames ** 2).sum(1), rtol=1e-10)
    ortho = F.spectrogram(x, 0, ember.ones(n_fft, dtype=ember.float64), n_fft, n_fft, n_fft,
                          2.0, "frame_length", center=False, onesided=False)
    np.testing.assert_allclose(ortho.numpy().sum(0), (frames ** 2).sum(1), rtol=1e-10)


def test_power_complex_normalization_and_batch():
    x = ember.from_numpy(RNG.standard_normal((2, 3, 700)).astype(np.float32))
    window = ember.hann_window(200)
    complex_spec = F.spectrogram(x, 5, window, 200, 50, 200, None, False)
    assert complex_spec.dtype == ember.complex64
    assert tuple(complex_spec.shape) == (2, 3, 101, 710 // 50 + 1)
    ref = ember.stft(ember.nn.functional.pad(x[1, 2], (5, 5)), 200, 50, 200, window,
                     return_complex=True)
    np.testing.assert_allclose(complex_spec[1, 2].numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)
    magnitude = F.spectrogram(x, 5, window, 200, 50, 200, 1.0, False)
    np.testing.assert_allclose(magnitude.numpy(), np.abs(complex_spec.numpy()), rtol=1e-6)
    cubed = F.spectrogram(x, 5, window, 200, 50, 200, 3.0, True)
    norm = np.sqrt((window.numpy() ** 2).sum())
    np.testing.assert_allclose(cubed.numpy(), (np.abs(complex_spec.numpy()) / norm) ** 3,
                               rtol=1e-4, atol=1e-7)
    same = F.spectrogram(x, 5, window, 200, 50, 200, 1.0, "window")
    np.testing.assert_allclose(same.numpy(), magnitude.numpy() / norm, rtol=1e-5, atol=1e-7)


def test_spectrogram_errors_and_odd_inputs():
    window = ember.hann_window(64)
    x = ember.randn(500)
    with pytest.raises(ValueError, match="Invalid normalized"):
        F.spectrogram(x, 0, window, 64, 16, 64, 2.0, "energy")
    with pytest.raises(TypeError, match="normalized"):
        F.spectrogram(x, 0, window, 64, 16, 64, 2.0, 1)
    with pytest.raises(ValueError, match="power"):
        F.spectrogram(x, 0, window, 64, 16, 64, -1.0, False)
    with pytest.raises(ValueError, match="time dimension"):
        F.spectrogram(ember.tensor(1.0), 0, window, 64, 16, 64, 2.0, False)
    with pytest.raises(RuntimeError):  # reflect padding of an empty signal, as torch.stft
        F.spectrogram(ember.zeros(0), 0, window, 64, 16, 64, 2.0, False)
    with pytest.warns(UserWarning, match="deprecated"):
        F.spectrogram(x, 0, window, 64, 16, 64, 2.0, False, return_complex=True)
    nan = x.clone()
    nan[100] = float("nan")
    spec = F.spectrogram(nan, 0, window, 64, 16, 64, 2.0, False).numpy()
    assert np.isnan(spec[:, 100 // 16]).all() and np.isfinite(spec[:, -1]).all()
    empty_batch = F.spectrogram(ember.zeros(0, 3, 500), 0, window, 64, 16, 64, 2.0, False)
    assert tuple(empty_batch.shape) == (0, 3, 33, 500 // 16 + 1)
    strided = ember.randn(2, 1000)[:, ::2]
    np.testing.assert_allclose(
        F.spectrogram(strided, 0, window, 64, 16, 64, 2.0, False).numpy(),
        F.spectrogram(strided.contiguous(), 0, window, 64, 16, 64, 2.0, False).numpy())


@pytest.mark.parametrize("normalized", [False, "window", "frame_length"])
def test_inverse_spectrogram_reconstructs(normalized):
    x = ember.from_numpy(RNG.standard_normal((2, 1000)))
    window = ember.hann_window(128, dtype=ember.float64)
    spec = F.spectrogram(x, 7, window, 128, 32, 128, None, normalized)
    y = F.inverse_spectrogram(spec, 1000, 7, window, 128, 32, 128, normalized)
    assert tuple(y.shape) == (2, 1000)
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-10)
    free = F.inverse_spectrogram(spec, None, 0, window, 128, 32, 128, normalized)
    assert tuple(free.shape) == (2, 32 * (spec.shape[-1] - 1))
    with pytest.raises(ValueError, match="complex"):
        F.inverse_spectrogram(spec.abs(), None, 0, window, 128, 32, 128, normalized)


def test_griffinlim_converges_towards_the_magnitude():
    x = ember.from_numpy(np.sin(2 * np.pi * np.cumsum(np.linspace(200, 900, 2000)) / SR))
    window = ember.hann_window(256, dtype=ember.float64)
    target = _spec(x, n_fft=256, hop=64, power=2.0)

    def error(n_iter, momentum):
        y = F.griffinlim(target, window, 256, 64, 256, 2.0, n_iter, momentum, 2000, False)
        assert tuple(y.shape) == (2000,)
        rebuilt = _spec(y, n_fft=256, hop=64, power=1.0).numpy()
        goal = np.sqrt(target.numpy())
        return np.linalg.norm(rebuilt - goal) / np.linalg.norm(goal)

    first, later, fast = error(1, 0.0), error(16, 0.0), error(16, 0.99)
    assert later < 0.6 * first
    assert fast < later
    with pytest.raises(ValueError, match="momentum"):
        F.griffinlim(target, window, 256, 64, 256, 2.0, 1, 1.0, None, False)
    y = F.griffinlim(target[None].expand(2, *target.shape), window, 256, 64, 256, 2.0, 1, 0.5,
                     None, True)
    assert tuple(y.shape) == (2, 64 * (target.shape[-1] - 1))


def _phase_vocoder_numpy(spec, rate, phase_advance):
    steps = np.arange(0, spec.shape[-1], rate)
    alphas = steps % 1.0
    padded = np.concatenate([spec, np.zeros(spec.shape[:-1] + (2,))], -1)
    s0 = padded[..., steps.astype(int)]
    s1 = padded[..., steps.astype(int) + 1]
    phase = np.angle(s1) - np.angle(s0) - phase_advance
    phase = phase - 2 * np.pi * np.round(phase / (2 * np.pi)) + phase_advance
    phase = np.concatenate([np.angle(spec[..., :1]), phase[..., :-1]], -1)
    mag = alphas * np.abs(s1) + (1 - alphas) * np.abs(s0)
    return mag * np.exp(1j * np.cumsum(phase, -1))


@pytest.mark.parametrize("rate", [1.3, 0.7, 2.0])
def test_phase_vocoder_formula(rate):
    spec = RNG.standard_normal((2, 33, 20)) + 1j * RNG.standard_normal((2, 33, 20))
    advance = np.linspace(0, math.pi * 16, 33)[:, None]
    out = F.phase_vocoder(ember.from_numpy(spec), rate, ember.from_numpy(advance))
    assert tuple(out.shape) == (2, 33, math.ceil(20 / rate))
    np.testing.assert_allclose(out.numpy(), _phase_vocoder_numpy(spec, rate, advance),
                               rtol=1e-9, atol=1e-9)
    same = ember.from_numpy(spec)
    assert F.phase_vocoder(same, 1.0, ember.from_numpy(advance)) is same
    with pytest.raises(ValueError, match="rate"):
        F.phase_vocoder(same, 0.0, ember.from_numpy(advance))


def test_spectral_centroid_of_a_tone_is_its_frequency():
    n_fft = 256
    freq = 40 * SR / n_fft
    centroid = F.spectral_centroid(_tone(freq, dtype=np.float64), SR, 0,
                                   ember.hann_window(n_fft, dtype=ember.float64), n_fft, 128,
                                   n_fft)
    assert tuple(centroid.shape) == (2048 // 128 + 1,)
    np.testing.assert_allclose(centroid.numpy()[2:-2], freq, rtol=2e-3)


def _dominant_frequency(x, sr):
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return np.fft.rfftfreq(len(x), 1 / sr)[spectrum.argmax()]


def test_pitch_shift_an_octave_up():
    x = _tone(440.0, n=8000)
    up = F.pitch_shift(x[None], SR, 12)
    assert tuple(up.shape) == (1, 8000)
    assert abs(_dominant_frequency(up.numpy()[0, 1000:-1000], SR) - 880.0) < 6.0
    down = F.pitch_shift(x, SR, -12, n_fft=256)
    assert abs(_dominant_frequency(down.numpy()[1000:-1000], SR) - 220.0) < 6.0
    still = F.pitch_shift(x, SR, 0)
    np.testing.assert_allclose(still.numpy()[600:-600], x.numpy()[600:-600], atol=1e-4)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_fftconvolve_matches_direct_convolution(mode):
    x = ember.from_numpy(RNG.standard_normal((2, 3, 50)))
    y = ember.from_numpy(RNG.standard_normal((1, 3, 17)))
    np.testing.assert_allclose(F.fftconvolve(x, y, mode).numpy(),
                               F.convolve(x, y, mode).numpy(), atol=1e-10)
    np.testing.assert_allclose(F.fftconvolve(y, x, mode).numpy(),
                               F.convolve(y, x, mode).numpy(), atol=1e-10)


def test_fftconvolve_edge_cases():
    ints = F.fftconvolve(ember.tensor([[1, 2, 3]]), ember.tensor([[1, 1]]))
    assert ints.dtype == ember.float32
    np.testing.assert_allclose(ints.numpy(), [[1, 3, 5, 3]], atol=1e-5)
    with pytest.raises(ValueError, match="same dimension"):
        F.fftconvolve(ember.zeros(3, 4), ember.zeros(4))
    with pytest.raises(ValueError, match="broadcastable"):
        F.fftconvolve(ember.zeros(3, 4), ember.zeros(2, 4))
    with pytest.raises(ValueError, match="mode"):
        F.fftconvolve(ember.zeros(3, 4), ember.zeros(3, 4), "wrap")
    assert tuple(F.fftconvolve(ember.zeros(0, 5), ember.zeros(1, 3)).shape) == (0, 7)
    assert tuple(F.fftconvolve(ember.zeros(2, 5), ember.zeros(2, 0)).shape) == (2, 4)
    nan = ember.tensor([1.0, float("nan"), 0.0, 0.0])
    assert np.isnan(F.fftconvolve(nan, ember.tensor([1.0, 1.0])).numpy()).all()


# ---------------------------------------------------------------------------
# gradients (float64 finite differences)

def _wave(*shape):
    return ember.from_numpy(RNG.standard_normal(shape)).requires_grad_()


def test_gradcheck_spectrogram_and_inverse():
    window = ember.hann_window(16, dtype=ember.float64)
    x = _wave(2, 60)
    assert gradcheck(lambda w: F.spectrogram(w, 2, window, 16, 4, 16, 2.0, False), (x,))
    assert gradcheck(lambda w: F.spectrogram(w, 0, window, 16, 4, 16, 1.0, "window"), (x,))
    re, im = _wave(9, 12), _wave(9, 12)
    assert gradcheck(lambda a, b: F.inverse_spectrogram(ember.complex(a, b), 40, 0, window,
                                                        16, 4, 16, False), (re, im))


def test_gradcheck_centroid_vocoder_griffinlim_fftconvolve():
    window = ember.hann_window(16, dtype=ember.float64)
    x = _wave(50)
    assert gradcheck(lambda w: F.spectral_centroid(w, SR, 0, window, 16, 8, 16), (x,))
    re, im = _wave(9, 6), _wave(9, 6)
    advance = ember.linspace(0, math.pi * 4, 9, dtype=ember.float64)[:, None]
    assert gradcheck(lambda a, b: F.phase_vocoder(ember.complex(a, b), 1.5, advance).abs(),
                     (re, im))
    mag = ember.from_numpy(RNG.uniform(0.5, 2.0, (9, 8))).requires_grad_()
    assert gradcheck(lambda m: F.griffinlim(m, window, 16, 4, 16, 2.0, 2, 0.5, None, False),
                     (mag,))
    a, b = _wave(2, 20), _wave(1, 7)
    assert gradcheck(lambda p, q: F.fftconvolve(p, q, "same"), (a, b))


def test_zero_sized_spectrograms_pass_through():
    advance = ember.linspace(0, math.pi * 32, 65)[:, None]
    no_frames = ember.zeros(65, 0, dtype=ember.complex64)
    assert tuple(F.phase_vocoder(no_frames, 1.5, advance).shape) == (65, 0)
    assert tuple(F.phase_vocoder(ember.zeros(0, 65, 10, dtype=ember.complex64), 1.5,
                                 advance).shape) == (0, 65, 7)
    window = ember.hann_window(128)
    assert tuple(F.inverse_spectrogram(no_frames, None, 0, window, 128, 32, 128,
                                       False).shape) == (0,)
    assert tuple(F.inverse_spectrogram(ember.zeros(0, 2, 65, 4, dtype=ember.complex64), None,
                                       0, window, 128, 32, 128, False).shape) == (0, 2, 96)
