"""emberaudio's spectral and multi-channel functional ops and transforms against torchaudio
2.9 on the same signals (float32 tolerance), and the state-dict keys of the transforms.

Runs where torchaudio is installed (`nox -s audio_torchaudio`); skipped elsewhere.
"""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as EF
import emberaudio.transforms as ET

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")
TF = torchaudio.functional
TT = torchaudio.transforms

RNG = np.random.default_rng(2029)
WAVE = RNG.uniform(-0.6, 0.6, (2, 3, 1200)).astype(np.float32)
MONO = RNG.uniform(-0.6, 0.6, (2, 4000)).astype(np.float32)
CSPEC = (RNG.standard_normal((2, 3, 65, 30))
         + 1j * RNG.standard_normal((2, 3, 65, 30))).astype(np.complex64)
MAG = RNG.uniform(0.1, 2.0, (2, 65, 30)).astype(np.float32)


def _both(array):
    return ember.from_numpy(np.ascontiguousarray(array).copy()), torch.from_numpy(
        np.ascontiguousarray(array).copy())


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


def _compare(ours, theirs, rtol=1e-4, atol=2e-5):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol)


def _window(lib, n, dtype=None):
    return lib.hann_window(n) if dtype is None else lib.hann_window(n, dtype=dtype)


@pytest.mark.parametrize("power, normalized, center, onesided", [
    (2.0, False, True, True), (1.0, True, True, True), (None, "frame_length", False, True),
    (None, "window", True, False), (0.5, False, False, True)])
def test_spectrogram(power, normalized, center, onesided):
    ours_in, theirs_in = _both(WAVE)
    ours = EF.spectrogram(ours_in, 3, _window(ember, 128), 128, 32, 128, power, normalized,
                          center, "reflect", onesided)
    theirs = TF.spectrogram(theirs_in, 3, _window(torch, 128), 128, 32, 128, power, normalized,
                            center, "reflect", onesided)
    _compare(ours, theirs, atol=1e-4)


def test_inverse_spectrogram():
    ours_in, theirs_in = _both(CSPEC)
    ours = EF.inverse_spectrogram(ours_in, 1000, 4, _window(ember, 128), 128, 32, 128, True)
    theirs = TF.inverse_spectrogram(theirs_in, 1000, 4, _window(torch, 128), 128, 32, 128, True)
    _compare(ours, theirs, atol=1e-4)


@pytest.mark.parametrize("momentum", [0.0, 0.99])
def test_griffinlim(momentum):
    ours_in, theirs_in = _both(MAG)
    ours = EF.griffinlim(ours_in, _window(ember, 128), 128, 32, 128, 2.0, 8, momentum, None,
                         False)
    theirs = TF.griffinlim(theirs_in, _window(torch, 128), 128, 32, 128, 2.0, 8, momentum, None,
                           False)
    _compare(ours, theirs, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("rate", [0.8, 1.3])
def test_phase_vocoder(rate):
    ours_in, theirs_in = _both(CSPEC)
    advance = np.linspace(0, math.pi * 32, 65, dtype=np.float32)[:, None]
    ours = EF.phase_vocoder(ours_in, rate, ember.from_numpy(advance.copy()))
    theirs = TF.phase_vocoder(theirs_in, rate, torch.from_numpy(advance.copy()))
    _compare(ours, theirs, atol=1e-3)


def test_spectral_centroid_and_pitch_shift():
    ours_in, theirs_in = _both(MONO)
    _compare(EF.spectral_centroid(ours_in, 8000, 2, _window(ember, 256), 256, 64, 256),
             TF.spectral_centroid(theirs_in, 8000, 2, _window(torch, 256), 256, 64, 256),
             rtol=1e-3, atol=1e-2)
    # octaves keep the sinc kernel small (ratios 1:2, 2:1)
    _compare(EF.pitch_shift(ours_in, 8000, 12), TF.pitch_shift(theirs_in, 8000, 12), atol=1e-4)
    _compare(EF.pitch_shift(ours_in, 8000, -12, n_fft=256),
             TF.pitch_shift(theirs_in, 8000, -12, n_fft=256), atol=1e-4)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_fftconvolve(mode):
    x_e, x_t = _both(WAVE)
    y_e, y_t = _both(WAVE[:1, :, :77])
    _compare(EF.fftconvolve(x_e, y_e, mode), TF.fftconvolve(x_t, y_t, mode), atol=1e-4)


def _psd_pair():
    spec = (RNG.standard_normal((2, 4, 9, 40)) + 1j * RNG.standard_normal((2, 4, 9, 40)))
    mask = RNG.uniform(0, 1, (2, 9, 40))
    return spec.astype(np.complex64), mask.astype(np.float32)


def test_multichannel_functionals():
    spec, mask = _psd_pair()
    (se, st), (me, mt) = _both(spec), _both(mask)
    _compare(EF.psd(se, me), TF.psd(st, mt), atol=1e-4)
    # the same complex128 PSDs into both (the float32 PSDs differ by rounding, which the
    # power iterations below amplify past rtol=1e-6)
    ps_e, pn_e = EF.psd(se, me).to(ember.complex128), EF.psd(se, 1 - me).to(ember.complex128)
    ps_t, pn_t = torch.from_numpy(ps_e.numpy()), torch.from_numpy(pn_e.numpy())
    _compare(EF.mvdr_weights_souden(ps_e, pn_e, 1), TF.mvdr_weights_souden(ps_t, pn_t, 1),
             rtol=1e-6, atol=1e-8)
    rtf_e, rtf_t = EF.rtf_power(ps_e, pn_e, 0), TF.rtf_power(ps_t, pn_t, 0)
    _compare(rtf_e, rtf_t, rtol=1e-6, atol=1e-8)
    _compare(EF.mvdr_weights_rtf(rtf_e, pn_e, 0), TF.mvdr_weights_rtf(rtf_t, pn_t, 0),
             rtol=1e-6, atol=1e-8)
    evd_e, evd_t = EF.rtf_evd(ps_e), TF.rtf_evd(ps_t)
    # eigenvectors are defined up to a phase: compare after aligning it
    phase = (evd_t.numpy() * np.conj(evd_e.numpy())).sum(-1, keepdims=True)
    np.testing.assert_allclose(evd_e.numpy() * phase / np.abs(phase), evd_t.numpy(), atol=1e-8)
    weights = EF.mvdr_weights_souden(ps_e, pn_e, 0)
    _compare(EF.apply_beamforming(weights, se.to(ember.complex128)),
             TF.apply_beamforming(torch.from_numpy(weights.numpy()), st.to(torch.cdouble)),
             rtol=1e-6, atol=1e-8)


def test_frechet_distance():
    a = RNG.standard_normal((5, 5))
    b = RNG.standard_normal((5, 5))
    args = [RNG.standard_normal(5), a @ a.T, RNG.standard_normal(5), b @ b.T]
    ours = EF.frechet_distance(*(ember.from_numpy(x) for x in args))
    theirs = TF.frechet_distance(*(torch.from_numpy(x) for x in args))
    assert float(ours) == pytest.approx(float(theirs), rel=1e-8)


def test_vad_and_dither():
    rate = 16000
    x = RNG.standard_normal(3 * rate) * 1e-3
    t = np.arange(int(1.5 * rate)) / rate
    x[int(1.5 * rate):] += np.sign(np.sin(2 * np.pi * 200 * t)) * np.sin(2 * np.pi * 700 * t) / 2
    xe, xt = _both(x.astype(np.float32))
    _compare(EF.vad(xe, rate), TF.vad(xt, rate))
    _compare(EF.vad(xe[None].expand(2, -1), rate, trigger_level=5.0, pre_trigger_time=0.1),
             TF.vad(xt[None].expand(2, -1), rate, trigger_level=5.0, pre_trigger_time=0.1))
    we, wt = _both(MONO)
    _compare(EF.dither(we), TF.dither(wt), atol=1e-7)
    _compare(EF.dither(we, noise_shaping=True), TF.dither(wt, noise_shaping=True), atol=1e-7)


# (id, class, constructor args, constructor kwargs, inputs)
TRANSFORMS = [
    ("Spectrogram", "Spectrogram", (), {}, (MONO,)),
    ("Spectrogram_complex", "Spectrogram", (), {"n_fft": 256, "power": None,
                                                "normalized": True}, (MONO,)),
    ("InverseSpectrogram", "InverseSpectrogram", (), {"n_fft": 128}, (CSPEC,)),
    ("GriffinLim", "GriffinLim", (), {"n_fft": 128, "n_iter": 4, "rand_init": False},
     (MAG,)),
    ("MelSpectrogram", "MelSpectrogram", (16000,), {"n_fft": 512, "n_mels": 64}, (MONO,)),
    ("MelSpectrogram_slaney", "MelSpectrogram", (8000,), {"n_fft": 256, "n_mels": 32,
                                                          "norm": "slaney",
                                                          "mel_scale": "slaney"}, (MONO,)),
    ("MFCC", "MFCC", (), {"n_mfcc": 13, "melkwargs": {"n_mels": 40}}, (MONO,)),
    ("MFCC_log", "MFCC", (8000, 20, 2, "ortho", True), {}, (MONO,)),
    ("LFCC", "LFCC", (), {"n_lfcc": 20}, (MONO,)),
    # 65 bins for 32 mels at 16 kHz leave a filter empty: a rank-deficient system that
    # torchaudio's default driver (gels) refuses, as ember's does (tested in tests/audio)
    ("InverseMelScale", "InverseMelScale", (201,), {"n_mels": 32},
     (RNG.uniform(0, 1, (2, 32, 10)).astype(np.float32),)),
    ("TimeStretch", "TimeStretch", (), {"n_freq": 65, "fixed_rate": 1.2}, (CSPEC,)),
    ("SpectralCentroid", "SpectralCentroid", (8000,), {}, (MONO,)),
    ("PitchShift", "PitchShift", (8000, -12), {}, (MONO,)),
    ("FFTConvolve", "FFTConvolve", ("same",), {}, (WAVE, WAVE[..., :40])),
    ("PSD", "PSD", (), {}, (CSPEC,)),
]


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_matches_torchaudio(case):
    _, name, args, kwargs, inputs = case
    ours = getattr(ET, name)(*args, **kwargs)
    theirs = getattr(TT, name)(*args, **kwargs)
    out = ours(*(ember.from_numpy(np.ascontiguousarray(x).copy()) for x in inputs))
    ref = theirs(*(torch.from_numpy(np.ascontiguousarray(x).copy()) for x in inputs))
    tol = {"rtol": 1e-3, "atol": 1e-3} if name in ("GriffinLim", "InverseMelScale",
                                                   "TimeStretch") else {"atol": 1e-4}
    _compare(out, ref, **tol)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    # torchaudio's state dict loads into ours
    ours.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})


def test_mvdr_modules():
    spec, mask = _psd_pair()
    (se, st), (me, mt) = _both(spec), _both(mask)
    for solution in ("ref_channel", "stv_power"):
        ours = ET.MVDR(ref_channel=1, solution=solution)
        theirs = TT.MVDR(ref_channel=1, solution=solution)
        _compare(ours(se, me, 1 - me), theirs(st, mt, 1 - mt), rtol=1e-4, atol=1e-5)
        assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ps_e, pn_e = EF.psd(se, me), EF.psd(se, 1 - me)
    ps_t, pn_t = TF.psd(st, mt), TF.psd(st, 1 - mt)
    _compare(ET.SoudenMVDR()(se, ps_e, pn_e, 0), TT.SoudenMVDR()(st, ps_t, pn_t, 0),
             rtol=1e-3, atol=1e-4)
    rtf_e, rtf_t = EF.rtf_power(ps_e, pn_e, 0), TF.rtf_power(ps_t, pn_t, 0)
    _compare(ET.RTFMVDR()(se, rtf_e, pn_e, 0), TT.RTFMVDR()(st, rtf_t, pn_t, 0),
             rtol=1e-3, atol=1e-4)


def test_names_cover_torchaudio():
    """Every public name of torchaudio.functional and torchaudio.transforms exists here."""
    missing_f = sorted(set(TF.__all__) - set(EF.__all__))
    missing_t = sorted(set(TT.__all__) - set(ET.__all__))
    assert not missing_f and not missing_t, (missing_f, missing_t)
