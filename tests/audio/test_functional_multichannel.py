"""emberaudio.functional's multi-channel ops (PSD, MVDR, RTF, beamforming), the Frechet
distance, vad and dither, against NumPy and closed forms; gradchecks and errors."""

import numpy as np
import pytest

import ember
import emberaudio.functional as F
from ember.autograd import gradcheck

RNG = np.random.default_rng(21)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _hermitian_pd(batch, channels):
    a = _complex(*batch, channels, channels)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + channels * np.eye(channels)


def _tik(mat, reg=1e-7, eps=1e-8):
    trace = np.trace(mat, axis1=-2, axis2=-1).real
    return mat + (trace * reg + eps)[..., None, None] * np.eye(mat.shape[-1])


def test_psd_is_the_masked_outer_product_sum():
    spec = _complex(2, 3, 5, 7)  # (batch, channel, freq, time)
    mask = RNG.uniform(0, 1, (2, 5, 7))
    expected = np.einsum("bcft,beft->bfce", spec, np.conj(spec))
    out = F.psd(ember.from_numpy(spec))
    assert tuple(out.shape) == (2, 5, 3, 3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    weights = mask / (mask.sum(-1, keepdims=True) + 1e-10)
    expected = np.einsum("bcft,beft,bft->bfce", spec, np.conj(spec), weights)
    np.testing.assert_allclose(F.psd(ember.from_numpy(spec), ember.from_numpy(mask)).numpy(),
                               expected, rtol=1e-12)
    raw = np.einsum("bcft,beft,bft->bfce", spec, np.conj(spec), mask)
    np.testing.assert_allclose(F.psd(ember.from_numpy(spec), ember.from_numpy(mask),
                                     normalize=False).numpy(), raw, rtol=1e-12)
    with pytest.raises(ValueError, match="mask"):
        F.psd(ember.from_numpy(spec), ember.from_numpy(mask[:, :4]))


def test_mvdr_weights_souden_against_numpy():
    psd_s, psd_n = _hermitian_pd((4,), 3), _hermitian_pd((4,), 3)
    ws = np.linalg.solve(_tik(psd_n), psd_s)
    ws = ws / (np.trace(ws, axis1=-2, axis2=-1)[..., None, None] + 1e-8)
    out = F.mvdr_weights_souden(ember.from_numpy(psd_s), ember.from_numpy(psd_n), 1)
    np.testing.assert_allclose(out.numpy(), ws[..., :, 1], rtol=1e-10)
    one_hot = ember.tensor([0.0, 1.0, 0.0])
    np.testing.assert_allclose(F.mvdr_weights_souden(ember.from_numpy(psd_s),
                                                     ember.from_numpy(psd_n), one_hot).numpy(),
                               ws[..., :, 1], rtol=1e-10)
    with pytest.raises(TypeError, match="reference_channel"):
        F.mvdr_weights_souden(ember.from_numpy(psd_s), ember.from_numpy(psd_n), 1.5)
    with pytest.raises(TypeError, match="psd_s"):
        F.mvdr_weights_souden(ember.from_numpy(psd_s.real), ember.from_numpy(psd_n.real), 0)
    with pytest.raises(ValueError, match="same"):
        F.mvdr_weights_souden(ember.from_numpy(psd_s), ember.from_numpy(psd_n[:2]), 0)


def test_mvdr_weights_rtf_is_distortionless():
    psd_n = _hermitian_pd((5,), 4)
    rtf = _complex(5, 4)
    w = F.mvdr_weights_rtf(ember.from_numpy(rtf), ember.from_numpy(psd_n),
                           diagonal_loading=False, eps=0.0).numpy()
    np.testing.assert_allclose(np.einsum("fc,fc->f", np.conj(w), rtf), np.ones(5), rtol=1e-10)
    scaled = F.mvdr_weights_rtf(ember.from_numpy(rtf), ember.from_numpy(psd_n), 2).numpy()
    num = np.linalg.solve(_tik(psd_n), rtf[..., None])[..., 0]
    den = np.einsum("fc,fc->f", np.conj(rtf), num).real
    expected = num / (den[:, None] + 1e-8) * np.conj(rtf[:, 2:3])
    np.testing.assert_allclose(scaled, expected, rtol=1e-10)
    with pytest.raises(ValueError, match="rtf"):
        F.mvdr_weights_rtf(ember.from_numpy(rtf[:, :3]), ember.from_numpy(psd_n))


def test_rtf_of_a_rank_one_speech_psd_is_its_steering_vector():
    v = _complex(3, 4)
    psd_s = np.einsum("fc,fe->fce", v, np.conj(v))
    psd_n = np.broadcast_to(np.eye(4, dtype=complex), (3, 4, 4)).copy()

    def parallel(a, b):
        cos = np.abs(np.einsum("fc,fc->f", np.conj(a), b))
        return cos / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))

    evd = F.rtf_evd(ember.from_numpy(psd_s)).numpy()
    np.testing.assert_allclose(parallel(evd, v), 1.0, rtol=1e-10)
    for n_iter in (1, 2, 3, 5):
        power = F.rtf_power(ember.from_numpy(psd_s), ember.from_numpy(psd_n), 0,
                            n_iter=n_iter).numpy()
        np.testing.assert_allclose(parallel(power, v), 1.0, rtol=1e-8)
    with pytest.raises(ValueError, match="iteration"):
        F.rtf_power(ember.from_numpy(psd_s), ember.from_numpy(psd_n), 0, n_iter=0)
    with pytest.raises(TypeError, match="psd_s"):
        F.rtf_evd(ember.from_numpy(psd_s.real))


def test_apply_beamforming_and_errors():
    w, spec = _complex(2, 5, 3), _complex(2, 3, 5, 6)
    out = F.apply_beamforming(ember.from_numpy(w), ember.from_numpy(spec))
    np.testing.assert_allclose(out.numpy(), np.einsum("bfc,bcft->bft", np.conj(w), spec))
    with pytest.raises(ValueError, match="dimensions"):
        F.apply_beamforming(ember.from_numpy(w[0]), ember.from_numpy(spec))
    with pytest.raises(TypeError, match="complex|cfloat"):
        F.apply_beamforming(ember.from_numpy(w.real), ember.from_numpy(spec.real))


def test_gradcheck_multichannel():
    a, b = (ember.from_numpy(RNG.standard_normal((2, 4, 6))).requires_grad_() for _ in "ab")
    assert gradcheck(lambda x, y: ember.view_as_real(F.psd(ember.complex(x, y))), (a, b))
    s = ember.from_numpy(_hermitian_pd((2,), 2))
    n_re = ember.from_numpy(RNG.standard_normal((2, 2, 2))).requires_grad_()

    def souden(x):
        noise = ember.complex(x @ x.transpose(-1, -2) + 2 * ember.eye(2, dtype=ember.float64),
                              ember.zeros(2, 2, 2, dtype=ember.float64))
        return ember.view_as_real(F.mvdr_weights_souden(s, noise, 0))

    assert gradcheck(souden, (n_re,))


def test_frechet_distance_of_diagonal_gaussians():
    mu_x, mu_y = RNG.standard_normal(4), RNG.standard_normal(4)
    sx, sy = RNG.uniform(0.5, 2.0, 4), RNG.uniform(0.5, 2.0, 4)
    out = F.frechet_distance(*(ember.from_numpy(a) for a in (mu_x, np.diag(sx), mu_y,
                                                              np.diag(sy))))
    expected = ((mu_x - mu_y) ** 2).sum() + (sx + sy - 2 * np.sqrt(sx * sy)).sum()
    assert float(out) == pytest.approx(expected, rel=1e-10)
    same = F.frechet_distance(*(ember.from_numpy(a) for a in (mu_x, np.diag(sx), mu_x,
                                                               np.diag(sx))))
    assert abs(float(same)) < 1e-10
    with pytest.raises(ValueError, match="one-dimensional"):
        F.frechet_distance(ember.zeros(2, 2), ember.eye(2), ember.zeros(2), ember.eye(2))
    with pytest.raises(ValueError, match="same shape"):
        F.frechet_distance(ember.zeros(2), ember.eye(2), ember.zeros(3), ember.eye(2))


def _speech_like(rate, seconds, onset):
    """Noise floor, then a 200 Hz pulse train through a resonance (a crude voiced sound)."""
    n = int(rate * seconds)
    x = RNG.standard_normal(n) * 1e-3
    t = np.arange(n - int(onset * rate)) / rate
    voiced = np.sign(np.sin(2 * np.pi * 200 * t)) * np.sin(2 * np.pi * 700 * t) * 0.5
    x[int(onset * rate):] += voiced
    return x.astype(np.float32)


def test_vad_trims_the_leading_silence():
    rate = 16000
    x = _speech_like(rate, 3.0, 1.5)
    out = F.vad(ember.from_numpy(x), rate)
    trimmed = x.shape[0] - out.shape[0]
    assert 0.9 * rate < trimmed <= 1.55 * rate
    np.testing.assert_array_equal(out.numpy(), x[trimmed:])
    stereo = F.vad(ember.from_numpy(np.stack([x, x])), rate)
    assert tuple(stereo.shape) == (2, out.shape[0])
    silent = F.vad(ember.from_numpy(x[: rate]), rate)
    assert tuple(silent.shape) == (0,)
    assert tuple(F.vad(ember.zeros(2, 0), rate).shape) == (2, 0)
    with pytest.raises(ValueError, match="cepstrum"):
        F.vad(ember.from_numpy(x), rate, hp_lifter_freq=3000.0)
    with pytest.warns(UserWarning, match="Batch"):
        F.vad(ember.zeros(1, 1, 100), rate)


def test_dither_tpdf_and_noise_shaping_closed_forms():
    x = RNG.uniform(-0.5, 0.5, (2, 300)).astype(np.float32)
    tri = (1 - np.abs(2 * np.arange(300) / 300 - 1)).astype(np.float32)  # periodic Bartlett
    expected = np.round(x * np.float32(2 ** 15 - 2) + tri) / np.float32(2 ** 15)
    out = F.dither(ember.from_numpy(x))
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-7)
    shaped = F.dither(ember.from_numpy(x), noise_shaping=True).numpy()
    error = expected - x
    np.testing.assert_allclose(shaped[:, 1:], expected[:, 1:] + error[:, :-1], atol=1e-6)
    np.testing.assert_allclose(shaped[:, 0], expected[:, 0], atol=1e-7)
    for density in ("RPDF", "GPDF"):
        noisy = F.dither(ember.from_numpy(x), density).numpy()
        assert tuple(noisy.shape) == (2, 300)
        np.testing.assert_allclose(noisy * 2 ** 15, np.round(noisy * 2 ** 15), atol=1e-3)
        assert np.abs(noisy - x).max() < 1e-3
    assert tuple(F.dither(ember.zeros(3, 0)).shape) == (3, 0)
    with pytest.raises(ValueError, match="density_function"):
        F.dither(ember.from_numpy(x), "uniform")


def test_apply_codec_round_trips_through_libsndfile():
    x = (np.sin(np.arange(4000) / 7.0) * 0.5).astype(np.float32)[None].repeat(2, 0)
    for fmt in ("wav", "flac"):  # 16-bit PCM: within one quantisation step
        out = F.apply_codec(ember.from_numpy(x), 8000, fmt, bits_per_sample=16)
        assert tuple(out.shape) == (2, 4000) and out.dtype == ember.float32
        assert np.abs(out.numpy() - x).max() <= 1.0 / 32768 + 1e-7
    lossy = F.apply_codec(ember.from_numpy(x), 8000, "ogg")
    assert lossy.shape[0] == 2 and np.abs(lossy.numpy()[:, :4000] - x).max() < 0.1
    frames_last = F.apply_codec(ember.from_numpy(x.T.copy()), 8000, "wav",
                                channels_first=False, encoding="ULAW", bits_per_sample=8)
    assert tuple(frames_last.shape) == (4000, 2)
    with pytest.raises(ValueError, match="2D"):
        F.apply_codec(ember.from_numpy(x[0]), 8000, "wav")


def test_gradcheck_rtf_beamforming_and_frechet():
    def cplx(*shape):
        return (ember.from_numpy(RNG.standard_normal(shape)).requires_grad_(),
                ember.from_numpy(RNG.standard_normal(shape)).requires_grad_())

    w_re, w_im = cplx(2, 3)
    y_re, y_im = cplx(3, 2, 4)
    assert gradcheck(lambda a, b, c, d: ember.view_as_real(F.apply_beamforming(
        ember.complex(a, b), ember.complex(c, d))), (w_re, w_im, y_re, y_im))
    noise = ember.from_numpy(_hermitian_pd((2,), 3))
    speech = ember.from_numpy(_hermitian_pd((2,), 3))
    v_re, v_im = cplx(2, 3)
    assert gradcheck(lambda a, b: ember.view_as_real(F.mvdr_weights_rtf(
        ember.complex(a, b), noise, 0)), (v_re, v_im))
    s_re = ember.from_numpy(RNG.standard_normal((2, 3, 3))).requires_grad_()

    def power(x):
        psd_s = speech + ember.complex(x @ x.transpose(-1, -2),
                                       ember.zeros(2, 3, 3, dtype=ember.float64))
        return ember.view_as_real(F.rtf_power(psd_s, noise, 1))

    assert gradcheck(power, (s_re,))
    mu = ember.from_numpy(RNG.standard_normal(3)).requires_grad_()
    assert gradcheck(lambda m: F.frechet_distance(m, ember.eye(3, dtype=ember.float64),
                                                  ember.zeros(3, dtype=ember.float64),
                                                  2 * ember.eye(3, dtype=ember.float64)),
                     (mu,))
