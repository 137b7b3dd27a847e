"""emberaudio.transforms' spectral and multi-channel modules: each is its functional op,
with torchaudio's defaults, attributes and state-dict keys; MFCC/LFCC against SciPy's DCT
(and librosa where installed); InverseMelScale against NumPy's least squares."""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as F
import emberaudio.transforms as T

RNG = np.random.default_rng(8)
WAVE = ember.from_numpy(RNG.uniform(-0.5, 0.5, (2, 1600)).astype(np.float32))


def _close(a, b, **kw):
    np.testing.assert_allclose(a.numpy(), b.numpy(), **kw)


def test_spectrogram_defaults_and_buffers():
    spec = T.Spectrogram()
    assert (spec.n_fft, spec.win_length, spec.hop_length, spec.pad, spec.power) == (
        400, 400, 200, 0, 2.0)
    assert list(spec.state_dict()) == ["window"]
    _close(spec.window, ember.hann_window(400))
    _close(spec(WAVE), F.spectrogram(WAVE, 0, ember.hann_window(400), 400, 200, 400, 2.0,
                                     False))
    custom = T.Spectrogram(n_fft=64, win_length=48, hop_length=10, pad=3,
                           window_fn=ember.hamming_window, wkwargs={"periodic": False},
                           power=None, normalized="frame_length", center=False)
    window = ember.hamming_window(48, periodic=False)
    _close(custom(WAVE), F.spectrogram(WAVE, 3, window, 64, 10, 48, None, "frame_length",
                                       center=False))
    with pytest.warns(UserWarning, match="deprecated"):
        T.Spectrogram(return_complex=True)


def test_inverse_spectrogram_round_trip():
    forward = T.Spectrogram(n_fft=128, hop_length=32, power=None)
    inverse = T.InverseSpectrogram(n_fft=128, hop_length=32)
    assert list(inverse.state_dict()) == ["window"]
    _close(inverse(forward(WAVE), 1600), WAVE, atol=2e-6)


def test_griffinlim_module_is_the_functional():
    spec = T.Spectrogram(n_fft=128, hop_length=32)(WAVE)
    gl = T.GriffinLim(n_fft=128, n_iter=3, hop_length=32, rand_init=False, length=1600)
    assert gl.momentum == 0.99 and list(gl.state_dict()) == ["window"]
    _close(gl(spec), F.griffinlim(spec, ember.hann_window(128), 128, 32, 128, 2.0, 3, 0.99,
                                  1600, False))
    with pytest.raises(ValueError, match="momentum"):
        T.GriffinLim(momentum=1.5)


def test_melspectrogram_is_melscale_of_spectrogram():
    mel = T.MelSpectrogram(sample_rate=16000, n_fft=512, hop_length=160, n_mels=40)
    assert sorted(mel.state_dict()) == ["mel_scale.fb", "spectrogram.window"]
    power = T.Spectrogram(n_fft=512, hop_length=160)(WAVE)
    fb = F.melscale_fbanks(257, 0.0, 8000.0, 40, 16000)
    expected = np.einsum("bft,fm->bmt", power.numpy(), fb.numpy())
    _close(mel(WAVE), ember.from_numpy(expected), rtol=1e-4, atol=1e-6)
    with pytest.warns(UserWarning, match="onesided"):
        T.MelSpectrogram(onesided=True)


def test_melspectrogram_of_a_tone_peaks_at_its_mel_band():
    sr, freq = 16000, 1000.0
    tone = ember.from_numpy(np.sin(2 * np.pi * freq * np.arange(sr) / sr).astype(np.float32))
    mel = T.MelSpectrogram(sample_rate=sr, n_fft=1024, n_mels=64)(tone)
    peak = int(np.median(mel.numpy().argmax(axis=0)))
    mels = np.linspace(0, 2595 * np.log10(1 + 8000 / 700), 66)
    centres = 700 * (10 ** (mels / 2595) - 1)[1:-1]
    assert peak == int(np.abs(centres - freq).argmin())


def _db(power, top_db=80.0):
    db = 10 * np.log10(np.maximum(power, 1e-10))
    return np.maximum(db, db.max() - top_db)


def test_mfcc_is_the_ortho_dct_of_the_db_mel_spectrogram():
    scipy_fft = pytest.importorskip("scipy.fft")
    mfcc = T.MFCC(sample_rate=16000, n_mfcc=13, melkwargs={"n_fft": 400, "hop_length": 160,
                                                           "n_mels": 23})
    assert sorted(mfcc.state_dict()) == ["MelSpectrogram.mel_scale.fb",
                                         "MelSpectrogram.spectrogram.window", "dct_mat"]
    x = WAVE[0]
    mel = mfcc.MelSpectrogram(x).numpy().astype(np.float64)
    expected = scipy_fft.dct(_db(mel), type=2, norm="ortho", axis=0)[:13]
    _close(mfcc(x), ember.from_numpy(expected), rtol=1e-3, atol=2e-3)
    logged = T.MFCC(n_mfcc=10, log_mels=True, melkwargs={"n_mels": 20})
    mel = logged.MelSpectrogram(x).numpy().astype(np.float64)
    expected = scipy_fft.dct(np.log(mel + 1e-6), type=2, norm="ortho", axis=0)[:10]
    _close(logged(x), ember.from_numpy(expected), rtol=1e-3, atol=2e-3)
    with pytest.raises(ValueError, match="MFCC"):
        T.MFCC(n_mfcc=50, melkwargs={"n_mels": 40})
    with pytest.raises(ValueError, match="DCT"):
        T.MFCC(dct_type=3)


def test_mfcc_matches_librosa():
    librosa = pytest.importorskip("librosa")
    sr = 16000
    t = np.arange(sr // 2) / sr
    y = (0.5 * np.sin(2 * np.pi * 300 * t) + 0.2 * np.sin(2 * np.pi * 1200 * t)
         + 0.01 * RNG.standard_normal(t.shape)).astype(np.float32)
    ours = T.MFCC(sample_rate=sr, n_mfcc=20, melkwargs={
        "n_fft": 512, "hop_length": 128, "n_mels": 40, "norm": "slaney",
        "mel_scale": "slaney"})(ember.from_numpy(y)).numpy()
    mel = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=512, hop_length=128, n_mels=40,
                                         pad_mode="reflect", htk=False, norm="slaney")
    theirs = librosa.feature.mfcc(S=librosa.power_to_db(mel, top_db=80.0), n_mfcc=20,
                                  dct_type=2, norm="ortho")
    np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=5e-3)


def test_lfcc_is_the_dct_of_the_db_linear_filtered_spectrogram():
    scipy_fft = pytest.importorskip("scipy.fft")
    lfcc = T.LFCC(sample_rate=8000, n_filter=30, n_lfcc=12, speckwargs={"n_fft": 200})
    assert sorted(lfcc.state_dict()) == ["Spectrogram.window", "dct_mat", "filter_mat"]
    x = WAVE[1]
    power = lfcc.Spectrogram(x).numpy().astype(np.float64)
    filtered = lfcc.filter_mat.numpy().T @ power
    expected = scipy_fft.dct(_db(filtered), type=2, norm="ortho", axis=0)[:12]
    _close(lfcc(x), ember.from_numpy(expected), rtol=1e-3, atol=2e-3)
    with pytest.raises(ValueError, match="LFCC"):
        T.LFCC(n_lfcc=500, speckwargs={"n_fft": 400})


def test_inverse_melscale_is_the_clamped_least_squares_solution():
    inverse = T.InverseMelScale(n_stft=33, n_mels=16, sample_rate=8000)
    assert list(inverse.state_dict()) == ["fb"]
    mel = ember.from_numpy(RNG.uniform(0, 1, (2, 16, 5)))
    fb = inverse.fb.numpy().astype(np.float64)
    expected = np.stack([np.linalg.lstsq(fb.T, m, rcond=None)[0] for m in mel.numpy()])
    out = T.InverseMelScale(n_stft=33, n_mels=16, sample_rate=8000, driver="gelsd")(
        mel.to(ember.float32))
    assert tuple(out.shape) == (2, 33, 5)
    np.testing.assert_allclose(out.numpy(), np.maximum(expected, 0), rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="mel bins"):
        inverse(ember.zeros(2, 15, 5))
    with pytest.raises(ValueError, match="driver"):
        T.InverseMelScale(n_stft=33, driver="svd")


def test_inverse_melscale_with_an_empty_filter():
    # 65 bins cannot fill 32 mel filters at 16 kHz: one is all zeros, and the default driver
    # (gels) refuses the rank-deficient system as torchaudio's does; gelsd solves it
    mel = ember.from_numpy(RNG.uniform(0, 1, (1, 32, 4)).astype(np.float32))
    with pytest.warns(UserWarning, match="all zero"):
        inverse = T.InverseMelScale(n_stft=65, n_mels=32)
    with pytest.raises(ember.linalg.LinAlgError, match="full rank"):
        inverse(mel)
    with pytest.warns(UserWarning, match="all zero"):
        out = T.InverseMelScale(n_stft=65, n_mels=32, driver="gelsd")(mel)
    assert tuple(out.shape) == (1, 65, 4) and np.isfinite(out.numpy()).all()


def test_time_stretch():
    stretch = T.TimeStretch(hop_length=32, n_freq=65, fixed_rate=1.25)
    _close(stretch.phase_advance, ember.linspace(0, math.pi * 32, 65)[:, None])
    spec = T.Spectrogram(n_fft=128, hop_length=32, power=None)(WAVE)
    out = stretch(spec)
    assert tuple(out.shape) == (2, 65, math.ceil(spec.shape[-1] / 1.25))
    _close(out, F.phase_vocoder(spec, 1.25, stretch.phase_advance))
    assert tuple(stretch(spec, 0.5).shape) == (2, 65, 2 * spec.shape[-1])
    with pytest.raises(ValueError, match="fixed_rate"):
        T.TimeStretch(n_freq=65)(spec)
    with pytest.warns(UserWarning, match="complex"):
        stretch(spec.abs())
    assert list(T.TimeStretch().state_dict()) == ["phase_advance"]


def test_pitch_shift_module():
    # an octave keeps the resampling ratio small (2:1); a ratio like 9513:8000 makes
    # torchaudio's (and so our) sinc kernel 8000 x 19000 taps
    shift = T.PitchShift(8000, -12)
    assert sorted(shift.state_dict()) == ["kernel", "window"]
    assert shift.hop_length == 128
    _close(shift(WAVE), F.pitch_shift(WAVE, 8000, -12), atol=1e-5)
    wave64 = WAVE.to(ember.float64)
    out = shift(wave64)
    assert out.dtype == ember.float64
    _close(out, F.pitch_shift(wave64, 8000, -12), atol=1e-10)
    assert "kernel" not in T.PitchShift(8000, 0).state_dict()


def test_centroid_convolution_and_vad_modules():
    centroid = T.SpectralCentroid(8000, n_fft=128)
    _close(centroid(WAVE), F.spectral_centroid(WAVE, 8000, 0, ember.hann_window(128), 128, 64,
                                               128))
    _close(T.FFTConvolve("valid")(WAVE, WAVE[:, :9]), F.fftconvolve(WAVE, WAVE[:, :9], "valid"))
    with pytest.raises(ValueError, match="mode"):
        T.FFTConvolve("circular")
    vad = T.Vad(16000, trigger_level=6.0)
    quiet = ember.from_numpy((RNG.standard_normal(8000) * 1e-3).astype(np.float32))
    _close(vad(quiet), F.vad(quiet, 16000, trigger_level=6.0))


def _complex(*shape):
    return ember.from_numpy(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape))


def test_psd_and_mvdr_modules():
    spec = _complex(2, 3, 9, 20)  # (batch, channel, freq, time)
    mask = ember.from_numpy(RNG.uniform(0, 1, (2, 9, 20)))
    _close(T.PSD()(spec, mask), F.psd(spec, mask, True, 1e-15))
    multi = ember.from_numpy(RNG.uniform(0, 1, (2, 3, 9, 20)))
    _close(T.PSD(multi_mask=True)(spec, multi), F.psd(spec, multi.mean(-3), True, 1e-15))
    mvdr = T.MVDR()
    assert sorted(mvdr.state_dict()) == ["mask_sum_n", "mask_sum_s", "psd_n", "psd_s"]
    psd_s, psd_n = F.psd(spec, mask, True, 1e-15), F.psd(spec, 1 - mask, True, 1e-15)
    expected = F.apply_beamforming(F.mvdr_weights_souden(psd_s, psd_n, 0), spec)
    _close(mvdr(spec, mask, 1 - mask), expected, rtol=1e-8)
    with pytest.warns(UserWarning, match="mask_n"):
        mvdr(spec, mask)
    for solution in ("stv_evd", "stv_power"):
        out = T.MVDR(ref_channel=1, solution=solution)(spec.to(ember.complex64), mask, 1 - mask)
        assert out.dtype == ember.complex64 and tuple(out.shape) == (2, 9, 20)
    online = T.MVDR(online=True)
    first = online(spec, mask, 1 - mask)
    _close(first, expected, rtol=1e-8)
    assert tuple(online.psd_s.shape) == (2, 9, 3, 3)
    online(spec, mask, 1 - mask)
    _close(online.mask_sum_s, 2 * mask.sum(-1), rtol=1e-12)
    with pytest.raises(ValueError, match="solution"):
        T.MVDR(solution="pinv")
    with pytest.raises(ValueError, match="complex|cfloat"):
        mvdr(spec.real, mask)
    rtf = _complex(2, 9, 3)
    _close(T.RTFMVDR()(spec, rtf, psd_n, 0),
           F.apply_beamforming(F.mvdr_weights_rtf(rtf, psd_n, 0), spec))
    _close(T.SoudenMVDR()(spec, psd_s, psd_n, 2),
           F.apply_beamforming(F.mvdr_weights_souden(psd_s, psd_n, 2), spec))


@pytest.mark.parametrize("cls, kwargs", [
    (T.MFCC, {"n_mfcc": 5, "melkwargs": {"n_mels": 10}}), (T.LFCC, {"n_lfcc": 4}),
    (T.PitchShift, {"sample_rate": 16000, "n_steps": 12}), (T.TimeStretch, {"n_freq": 33}),
    (T.InverseMelScale, {"n_stft": 33}), (T.GriffinLim, {}), (T.SpectralCentroid, {
        "sample_rate": 8000}), (T.MVDR, {})])
def test_state_dicts_load_into_a_fresh_module(cls, kwargs):
    state = {k: v + 1 for k, v in cls(**kwargs).state_dict().items()}
    fresh = cls(**kwargs)
    fresh.load_state_dict(state)
    for key, value in fresh.state_dict().items():
        _close(value, state[key])


def test_zero_sized_and_nan_inputs():
    assert tuple(T.MelScale(n_mels=10, n_stft=65)(ember.zeros(2, 65, 0)).shape) == (2, 10, 0)
    assert tuple(T.MFCC(n_mfcc=5, melkwargs={"n_mels": 10})(ember.zeros(0, 3, 800)).shape) == (
        0, 3, 5, 5)
    stretched = T.TimeStretch(n_freq=65, fixed_rate=2.0)(ember.zeros(2, 65, 0,
                                                                     dtype=ember.complex64))
    assert tuple(stretched.shape) == (2, 65, 0)
    empty = T.MVDR()(ember.zeros(0, 3, 9, 5, dtype=ember.complex64), ember.zeros(0, 9, 5),
                     ember.zeros(0, 9, 5))
    assert tuple(empty.shape) == (0, 9, 5)
    x = WAVE.clone()
    x[0, 500] = float("nan")
    mel = T.MelSpectrogram(16000, n_fft=256, n_mels=40)(x).numpy()
    assert np.isnan(mel[0]).any() and not np.isnan(mel[1]).any()


def test_gradcheck_through_mfcc_and_pitch_shift():
    from ember.autograd import gradcheck

    x = ember.from_numpy(RNG.uniform(-0.5, 0.5, 130)).requires_grad_()
    mfcc = T.MFCC(sample_rate=8000, n_mfcc=4, log_mels=True,
                  melkwargs={"n_fft": 64, "hop_length": 32, "n_mels": 8}).to(ember.float64)
    assert gradcheck(mfcc, (x,))
    shift = T.PitchShift(8000, 12, n_fft=64).to(ember.float64)
    assert gradcheck(shift, (x,))


@pytest.mark.parametrize("shape", ["linear", "exponential", "logarithmic", "quarter_sine",
                                   "half_sine"])
def test_fade_function_is_the_transform(shape):
    import emberaudio.functional as AF
    import emberaudio.transforms as AT

    wave = ember.tensor(np.random.default_rng(0).standard_normal((2, 50)).astype(np.float32))
    got = AF.fade(wave, 10, 7, shape)
    np.testing.assert_array_equal(got.numpy(), AT.Fade(10, 7, shape)(wave).numpy())
    # the untouched middle is the waveform; the ends start and end at the curve's limits
    np.testing.assert_array_equal(got[:, 10:43].numpy(), wave[:, 10:43].numpy())
    if shape == "linear":
        np.testing.assert_allclose(got[:, :10].numpy(),
                                   wave[:, :10].numpy() * np.linspace(0, 1, 10), rtol=1e-6)
    with pytest.raises(ValueError, match="longer than the waveform"):
        AF.fade(wave, 51, 0, shape)
    with pytest.raises(ValueError, match="fade_shape must be one of"):
        AF.fade(wave, 1, 1, "cubic")
