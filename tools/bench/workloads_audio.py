"""Workloads of emberaudio (issue 20): a mel spectrogram and a resampling, emberaudio's
transforms against the same computation written with torch ops (torchaudio needs a torch
build of its own, so the torch side is torchaudio's algorithm in plain torch: ``torch.stft``
then a matmul with the mel filter bank; a padded strided ``conv1d`` with the sinc kernel).

The filter bank and the sinc kernel are built once, in NumPy, by the formulas torchaudio
uses (setup, not timed); emberaudio builds its own, the same tables.
"""

from __future__ import annotations

import math

import numpy as np

from .registry import Target, workload
from .workloads import F32, _rng, tensor

AUDIO = "audio"
_OPTS = dict(group=AUDIO, source="#20", repeats=15, budget_s=20.0, block_s=0.2, cpu_only=True)
TARGET = Target("time ember/torch", "<=", 1.2)

MEL_BATCH, MEL_RATE, MEL_SECONDS = 16, 16000, 10
N_FFT, HOP, N_MELS = 400, 200, 128  # MelSpectrogram's defaults
RESAMPLE_FROM, RESAMPLE_TO, RESAMPLE_SECONDS = 44100, 16000, 60


def _is_ember(lib) -> bool:
    return lib.__name__ == "ember"


def _mel_fbanks(n_freqs: int, n_mels: int, sample_rate: int) -> np.ndarray:
    """HTK triangular mel filters, (n_freqs, n_mels), as torchaudio.functional.melscale_fbanks."""
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs, dtype=F32)
    top = 2595.0 * math.log10(1.0 + (sample_rate // 2) / 700.0)
    f_pts = 700.0 * (10 ** (np.linspace(0, top, n_mels + 2, dtype=F32) / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up)).astype(F32)


@workload("audio_melspectrogram", title=f"MelSpectrogram, batch {MEL_BATCH} x {MEL_SECONDS} s "
          f"at {MEL_RATE // 1000} kHz (n_fft {N_FFT}, hop {HOP}, {N_MELS} mels)",
          targets=(TARGET,), requires=("stft", "hann_window"),
          notes=("torch side: torch.stft + matmul with the mel filter bank",), **_OPTS)
def audio_melspectrogram(lib, device):
    x = tensor(lib, _rng().uniform(-0.5, 0.5, (MEL_BATCH, MEL_RATE * MEL_SECONDS)).astype(F32),
               device)
    if _is_ember(lib):
        import emberaudio

        mel = emberaudio.transforms.MelSpectrogram(MEL_RATE, n_fft=N_FFT, hop_length=HOP,
                                                   n_mels=N_MELS).to(device)
        return lambda: mel(x)
    window = lib.hann_window(N_FFT, device=device)
    fb = tensor(lib, _mel_fbanks(N_FFT // 2 + 1, N_MELS, MEL_RATE), device)

    def melspectrogram():
        spec = lib.stft(x, N_FFT, HOP, N_FFT, window, center=True, pad_mode="reflect",
                        return_complex=True).abs().pow(2.0)
        return lib.matmul(spec.transpose(-1, -2), fb).transpose(-1, -2)

    return melspectrogram


def _sinc_kernel(orig: int, new: int, width_zeros: int = 6, rolloff: float = 0.99):
    """torchaudio's sinc_interp_hann kernel (new, 1, taps) and its half width."""
    gcd = math.gcd(orig, new)
    orig, new = orig // gcd, new // gcd
    base = min(orig, new) * rolloff
    width = math.ceil(width_zeros * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64)[None, None] / orig
    t = (np.arange(0, -new, -1, dtype=F32)[:, None, None] / new + idx) * base
    t = np.clip(t, -width_zeros, width_zeros)
    window = np.cos(t * math.pi / width_zeros / 2) ** 2
    t = t * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        kernel = np.where(t == 0, 1.0, np.sin(t) / t) * window * (base / orig)
    return kernel.astype(F32), width, orig, new


@workload("audio_resample", title=f"resample {RESAMPLE_FROM / 1000:g} kHz -> "
          f"{RESAMPLE_TO // 1000} kHz, {RESAMPLE_SECONDS} s mono",
          targets=(TARGET,), requires=("nn.functional.conv1d",),
          notes=("torch side: torchaudio's padded strided conv1d with the same kernel",),
          **_OPTS)
def audio_resample(lib, device):
    x = tensor(lib, _rng().uniform(-0.5, 0.5, (1, RESAMPLE_FROM * RESAMPLE_SECONDS)).astype(F32),
               device)
    if _is_ember(lib):
        import emberaudio

        resample = emberaudio.transforms.Resample(RESAMPLE_FROM, RESAMPLE_TO).to(device)
        return lambda: resample(x)
    kernel, width, orig, new = _sinc_kernel(RESAMPLE_FROM, RESAMPLE_TO)
    weight = tensor(lib, kernel, device)
    length = x.shape[-1]
    target = math.ceil(new * length / orig)
    conv1d, pad = lib.nn.functional.conv1d, lib.nn.functional.pad

    def resample():
        padded = pad(x, (width, width + orig))
        out = conv1d(padded[:, None], weight, stride=orig)
        return out.transpose(1, 2).reshape(1, -1)[..., :target]

    return resample
