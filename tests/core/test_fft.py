"""ember.fft, stft/istft and the windows beyond the op database: dtypes, argument
errors, frequencies, the round trip stft -> istft, and the gradients of the
one-sided transforms (whose adjoints double the conjugate-pair bins)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.testing import assert_close

F = ember.fft


def test_dtypes_follow_pytorch():
    assert F.fft(ember.ones(4)).dtype == ember.complex64
    assert F.fft(ember.ones(4, dtype=ember.float64)).dtype == ember.complex128
    assert F.rfft(ember.arange(4)).dtype == ember.complex64  # integers: default float
    assert F.irfft(ember.ones(3, dtype=ember.complex128)).dtype == ember.float64
    assert F.irfft(ember.ones(3, dtype=ember.complex64)).shape == (4,)
    assert F.hfft(ember.ones(3, dtype=ember.complex64), n=5).shape == (5,)
    assert F.ihfft(ember.ones(6)).shape == (4,)


def test_errors():
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got "
                                           "ComplexFloat"):
        F.rfft(ember.ones(4, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        F.fft(ember.ones(4), n=0)
    with pytest.raises(ValueError, match="Invalid normalization mode: bad"):
        F.fft(ember.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match="dim and shape arguments must have the same length"):
        F.fftn(ember.ones(4, 4), s=(2,), dim=(0, 1))
    with pytest.raises(IndexError):
        F.fft(ember.ones(4), dim=3)


def test_frequencies_and_shifts():
    assert_close(F.fftfreq(5, d=0.5), ember.tensor(np.fft.fftfreq(5, 0.5), dtype=ember.float32))
    assert_close(F.rfftfreq(6), ember.tensor(np.fft.rfftfreq(6), dtype=ember.float32))
    assert F.fftfreq(4, dtype=ember.float64).dtype == ember.float64
    x = ember.arange(10).reshape(2, 5)
    assert F.fftshift(x).tolist() == np.fft.fftshift(np.arange(10).reshape(2, 5)).tolist()
    assert F.ifftshift(F.fftshift(x)).tolist() == x.tolist()


def test_round_trips_and_norms():
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((3, 8)))
    for norm in (None, "ortho", "forward"):
        assert_close(F.irfft(F.rfft(x, norm=norm), n=8, norm=norm), x)
        assert_close(F.ifftn(F.fftn(x, norm=norm), norm=norm).real, x)
        assert_close(F.ihfft(F.hfft(F.ihfft(x, norm=norm), n=8, norm=norm), norm=norm),
                     F.ihfft(x, norm=norm))
    # Parseval with ortho
    assert_close((F.fft(x, norm="ortho").abs() ** 2).sum(), (x ** 2).sum())


def test_rfft_irfft_gradients():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 7)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.view_as_real(F.rfft(a, n=9)), (x,))
    re = ember.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    im = ember.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    for n in (None, 7, 9, 4):
        assert ember.autograd.gradcheck(
            lambda a, b, n=n: F.irfft(ember.complex(a, b), n=n, norm="ortho"), (re, im))


def test_windows_defaults():
    w = ember.hann_window(8)
    assert w.dtype == ember.float32 and w.shape == (8,)
    assert_close(w, ember.tensor(np.hanning(9)[:8], dtype=ember.float32))
    assert_close(ember.hann_window(8, periodic=False),
                 ember.tensor(np.hanning(8), dtype=ember.float32))
    assert_close(ember.kaiser_window(6, False, 5.0, dtype=ember.float64),
                 ember.tensor(np.kaiser(6, 5.0)))
    assert ember.hamming_window(0).shape == (0,)
    assert ember.blackman_window(1).tolist() == [1.0]
    assert ember.bartlett_window(5, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        ember.hann_window(4, dtype=ember.int64)


def test_stft_arguments():
    x = ember.randn(2, 100)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        ember.stft(x, 16)
    with pytest.raises(RuntimeError, match="expected 0 < n_fft"):
        ember.stft(x, 0, return_complex=True)
    with pytest.raises(RuntimeError, match="expected hop_length > 0"):
        ember.stft(x, 16, hop_length=0, return_complex=True)
    with pytest.raises(RuntimeError, match="1D window tensor of size equal to win_length=16"):
        ember.stft(x, 16, window=ember.ones(8), return_complex=True)
    s = ember.stft(x, 16, return_complex=True)
    assert s.shape == (2, 9, 1 + 100 // 4) and s.dtype == ember.complex64
    assert ember.stft(x[0], 16, center=False, return_complex=True).shape == (9, 1 + 84 // 4)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = ember.stft(x, 16, return_complex=False)
    assert r.shape == (2, 9, 26, 2)
    assert_close(x.stft(16, return_complex=True), s)
    with pytest.raises(RuntimeError, match="align_to_window should only be set when center"):
        ember.stft(x, 16, return_complex=True, align_to_window=True)
    a = ember.stft(x, 16, win_length=10, center=False, align_to_window=True,
                   window=ember.hann_window(10), return_complex=True)
    assert a.shape == (2, 9, 1 + (100 - 10) // 4)
    first = F.rfft(ember.cat([ember.zeros(3), x[0, :10] * ember.hann_window(10),
                              ember.zeros(3)]))
    assert_close(a[0, :, 0], first, atol=1e-5, rtol=1e-5)
    sc = ember.stft(ember.complex(x, x), 16, return_complex=True)
    assert sc.shape == (2, 16, 26)  # two-sided for complex input


def test_stft_istft_round_trip_and_gradient():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((2, 200)))
    w = ember.hann_window(64, dtype=ember.float64)
    spec = ember.stft(x, 64, hop_length=16, window=w, return_complex=True)
    y = ember.istft(spec, 64, hop_length=16, window=w, length=200)
    assert_close(y, x)
    assert_close(spec.istft(64, hop_length=16, window=w, length=200), x)
    xs = ember.tensor(rng.standard_normal(40), requires_grad=True)
    ws = ember.hann_window(8, dtype=ember.float64).requires_grad_(True)
    assert ember.autograd.gradcheck(
        lambda a, b: ember.view_as_real(ember.stft(a, 8, hop_length=2, window=b,
                                                   return_complex=True)), (xs, ws))
    assert ember.autograd.gradcheck(
        lambda a: ember.istft(ember.stft(a, 8, hop_length=2, window=ws.detach(),
                                         return_complex=True), 8, hop_length=2,
                              window=ws.detach()), (xs,))


def test_istft_checks():
    spec = ember.stft(ember.randn(100), 16, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(spec, 16, window=ember.zeros(16))
    with pytest.raises(RuntimeError, match="complex-valued input"):
        ember.istft(ember.view_as_real(spec), 16)
    with pytest.raises(RuntimeError, match="match n_fft / 2 \\+ 1"):
        ember.istft(spec[:8], 16, onesided=True)


# -- the CPU kernels (NOTE [ CPU FFTs ]) ------------------------------------------------------

@pytest.mark.parametrize("name, dtype, s, axes", [
    ("rfftn", np.float32, (1024,), (1,)), ("rfftn", np.float64, (6, 10), (0, 2)),
    ("fftn", np.complex64, (7,), (2,)), ("ifftn", np.complex128, (3, 4), (1, 2)),
    ("irfftn", np.complex64, (16,), (2,)), ("irfftn", np.complex128, (5, 8), (0, 1))])
def test_cpu_fft_kernels_match_numpy(name, dtype, s, axes):
    from ember._backend import cpu

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 9))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(x.shape)
    x = x.astype(dtype)[:, :, ::2]  # a strided view
    for norm in ("backward", "ortho", "forward"):
        got = cpu.kernel(name, x)(x, s, axes, norm)
        expected = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * 10)


def test_cpu_fft_without_scipy_uses_numpy(monkeypatch):
    from ember._backend import _cpu_kernels

    monkeypatch.setattr(_cpu_kernels, "_scipy_fft", [None])
    x = np.random.default_rng(1).standard_normal((4, 12)).astype(np.float32)
    assert_close(ember.fft.rfft(ember.from_numpy(x)), ember.from_numpy(np.fft.rfft(x)))
    assert_close(ember.stft(ember.from_numpy(x[0]), 4, return_complex=True, center=False),
                 ember.from_numpy(np.fft.rfft(np.lib.stride_tricks.sliding_window_view(
                     x[0], 4)[::1], axis=-1).T))


def test_fft_workers_follow_set_num_threads(monkeypatch):
    from ember import _threads

    monkeypatch.setitem(_threads._state, "num_threads", 3)  # what set_num_threads(3) records
    assert _threads.intra_op_threads() == 3
    monkeypatch.setitem(_threads._state, "num_threads", None)
    assert _threads.intra_op_threads() == _threads._default_threads()
