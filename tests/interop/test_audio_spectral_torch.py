"""emberaudio's spectral ops against torch re-implementations of torchaudio's formulas
(torch.stft/istft/fft, einsum, linalg), values and gradients.

torchaudio itself needs a torch build of its own (see `nox -s audio_torchaudio` and
tests/interop/test_audio_spectral_torchaudio.py); these run with CI's torch 2.13.
"""

import math

import numpy as np
import pytest

import ember
import emberaudio.functional as EF
import emberaudio.transforms as ET

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(4242)
WAVE = RNG.uniform(-0.6, 0.6, (2, 3, 1500)).astype(np.float32)


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def _e(a):
    return ember.from_numpy(np.ascontiguousarray(a).copy())


def _torch_spectrogram(x, pad, window, n_fft, hop, win, power, normalized, center=True,
                       pad_mode="reflect", onesided=True):
    if pad:
        x = torch.nn.functional.pad(x, (pad, pad))
    shape = x.shape
    spec = torch.stft(x.reshape(-1, shape[-1]), n_fft, hop, win, window, center, pad_mode,
                      normalized == "frame_length", onesided, return_complex=True)
    spec = spec.reshape(shape[:-1] + spec.shape[-2:])
    if normalized is True or normalized == "window":
        spec = spec / window.pow(2).sum().sqrt()
    return spec if power is None else spec.abs().pow(power)


@pytest.mark.parametrize("power, normalized, center", [
    (2.0, False, True), (1.0, "window", False), (None, "frame_length", True), (1.5, True, True)])
def test_spectrogram_matches_torch_stft(power, normalized, center):
    ours = EF.spectrogram(_e(WAVE), 2, ember.hann_window(200), 200, 50, 200, power, normalized,
                          center)
    theirs = _torch_spectrogram(_t(WAVE), 2, torch.hann_window(200), 200, 50, 200, power,
                                normalized, center)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-4)


def test_spectrogram_gradient_matches_torch():
    x = RNG.standard_normal((2, 300))
    xe = _e(x).requires_grad_()
    xt = _t(x).requires_grad_()
    g = RNG.standard_normal((2, 33, 300 // 16 + 1))
    EF.spectrogram(xe, 0, ember.hann_window(64, dtype=ember.float64), 64, 16, 64, 2.0,
                   False).backward(_e(g))
    _torch_spectrogram(xt, 0, torch.hann_window(64, dtype=torch.float64), 64, 16, 64, 2.0,
                       False).backward(_t(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_inverse_spectrogram_matches_torch_istft():
    spec = (RNG.standard_normal((2, 65, 40)) + 1j * RNG.standard_normal((2, 65, 40)))
    window = np.hanning(130)[:128]
    ours = EF.inverse_spectrogram(_e(spec), 1200, 3, _e(window), 128, 32, 128, "window")
    scaled = _t(spec) * _t(window).pow(2).sum().sqrt()
    theirs = torch.istft(scaled, 128, 32, 128, _t(window), length=1206)[:, 3:-3]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-9)


def _torch_griffinlim(spec, window, n_fft, hop, win, power, n_iter, momentum, length):
    momentum = momentum / (1 + momentum)
    spec = spec.pow(1 / power)
    angles = torch.full(spec.shape, 1, dtype=torch.complex128)
    tprev = torch.tensor(0.0, dtype=spec.dtype)
    for _ in range(n_iter):
        inverse = torch.istft(spec * angles, n_fft, hop, win, window, length=length)
        rebuilt = torch.stft(inverse, n_fft, hop, win, window, return_complex=True)
        angles = rebuilt - tprev * momentum
        angles = angles / (angles.abs() + 1e-16)
        tprev = rebuilt
    return torch.istft(spec * angles, n_fft, hop, win, window, length=length)


@pytest.mark.parametrize("momentum", [0.0, 0.99])
def test_griffinlim_matches_torch(momentum):
    mag = RNG.uniform(0.1, 2.0, (33, 25))
    window = np.hanning(66)[:64]
    ours = EF.griffinlim(_e(mag), _e(window), 64, 16, 64, 2.0, 5, momentum, 384, False)
    theirs = _torch_griffinlim(_t(mag), _t(window), 64, 16, 64, 2.0, 5, momentum, 384)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-8, atol=1e-9)


def _torch_phase_vocoder(spec, rate, advance):
    steps = torch.arange(0, spec.shape[-1], rate, dtype=torch.float64)
    alphas = steps % 1.0
    phase_0 = spec[..., :1].angle()
    spec = torch.nn.functional.pad(spec, [0, 2])
    s0 = spec.index_select(-1, steps.long())
    s1 = spec.index_select(-1, (steps + 1).long())
    phase = s1.angle() - s0.angle() - advance
    phase = phase - 2 * math.pi * torch.round(phase / (2 * math.pi)) + advance
    phase = torch.cumsum(torch.cat([phase_0, phase[..., :-1]], -1), -1)
    return torch.polar(alphas * s1.abs() + (1 - alphas) * s0.abs(), phase)


def test_phase_vocoder_values_and_gradients_match_torch():
    re, im = RNG.standard_normal((2, 17, 12)), RNG.standard_normal((2, 17, 12))
    advance = np.linspace(0, math.pi * 8, 17)[:, None]
    er, ei = _e(re).requires_grad_(), _e(im).requires_grad_()
    tr, ti = _t(re).requires_grad_(), _t(im).requires_grad_()
    ours = EF.phase_vocoder(ember.complex(er, ei), 1.4, _e(advance))
    theirs = _torch_phase_vocoder(torch.complex(tr, ti), 1.4, _t(advance))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9,
                               atol=1e-9)
    ember.view_as_real(ours).sum().backward()
    torch.view_as_real(theirs).sum().backward()
    np.testing.assert_allclose(er.grad.numpy(), tr.grad.numpy(), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ei.grad.numpy(), ti.grad.numpy(), rtol=1e-7, atol=1e-8)


def test_melspectrogram_and_mfcc_match_torch():
    mel = ET.MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=40)
    x = WAVE[0]
    fb = _t(mel.mel_scale.fb.numpy())
    power = _torch_spectrogram(_t(x), 0, torch.hann_window(400), 400, 160, 400, 2.0, False)
    expected = torch.matmul(power.transpose(-1, -2), fb).transpose(-1, -2)
    np.testing.assert_allclose(mel(_e(x)).numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    mfcc = ET.MFCC(16000, n_mfcc=13, melkwargs={"n_fft": 400, "hop_length": 160, "n_mels": 40})
    db = 10 * torch.log10(expected.clamp(min=1e-10))
    db = torch.maximum(db, db.amax() - 80.0)
    dct = _t(mfcc.dct_mat.numpy())
    theirs = torch.matmul(db.transpose(-1, -2), dct).transpose(-1, -2)
    np.testing.assert_allclose(mfcc(_e(x)).numpy(), theirs.numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_fftconvolve_matches_torch_fft(mode):
    x, y = WAVE, WAVE[:1, :, :101]
    n = x.shape[-1] + y.shape[-1] - 1
    full = torch.fft.irfft(torch.fft.rfft(_t(x), n=n) * torch.fft.rfft(_t(y), n=n), n=n)
    start = {"full": 0, "valid": (n - (x.shape[-1] - y.shape[-1] + 1)) // 2,
             "same": (n - x.shape[-1]) // 2}[mode]
    size = {"full": n, "valid": x.shape[-1] - y.shape[-1] + 1, "same": x.shape[-1]}[mode]
    np.testing.assert_allclose(EF.fftconvolve(_e(x), _e(y), mode).numpy(),
                               full[..., start:start + size].numpy(), rtol=1e-4, atol=1e-4)


def test_psd_and_mvdr_match_torch():
    spec = RNG.standard_normal((2, 3, 7, 30)) + 1j * RNG.standard_normal((2, 3, 7, 30))
    mask = RNG.uniform(0, 1, (2, 7, 30))
    st = _t(spec).transpose(-3, -2)
    outer = torch.einsum("...ct,...et->...tce", st, st.conj())
    weights = _t(mask) / (_t(mask).sum(-1, keepdim=True) + 1e-10)
    psd_t = (outer * weights[..., None, None]).sum(-3)
    psd_e = EF.psd(_e(spec), _e(mask))
    np.testing.assert_allclose(psd_e.numpy(), psd_t.numpy(), rtol=1e-10)
    noise_t = (outer * (1 - weights)[..., None, None]).sum(-3)
    noise_e = ember.from_numpy(noise_t.numpy())
    eye = torch.eye(3, dtype=torch.complex128)
    loaded = noise_t + (torch.diagonal(noise_t, dim1=-2, dim2=-1).sum(-1).real[..., None, None]
                        * 1e-7 + 1e-8) * eye
    ws = torch.linalg.solve(loaded, psd_t)
    ws = ws / (torch.diagonal(ws, dim1=-2, dim2=-1).sum(-1)[..., None, None] + 1e-8)
    np.testing.assert_allclose(EF.mvdr_weights_souden(psd_e, noise_e, 2).numpy(),
                               ws[..., 2].numpy(), rtol=1e-9, atol=1e-12)
