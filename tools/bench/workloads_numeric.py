"""Workloads of the numeric namespaces (issue 17): batched linear algebra and the FFT of
audio-sized signals, against PyTorch (and NumPy, the LAPACK/pocketfft that ember calls)."""

from __future__ import annotations

import numpy as np

from .registry import workload
from .workloads import F32, _rng, tensor

NUMERIC = "numeric"
_OPTS = dict(group=NUMERIC, source="#17", baseline=True, repeats=15, budget_s=15.0,
             block_s=0.1)

N_BATCH, N_MAT, N_RHS = 256, 32, 4
N_AUDIO = 441_000  # 10 s at 44.1 kHz


@workload("linalg_solve_batched", title=f"linalg.solve, {N_BATCH} x {N_MAT}x{N_MAT} float32, "
          f"{N_RHS} right-hand sides", requires=("linalg.solve",), **_OPTS)
def linalg_solve_batched(lib, device):
    rng = _rng()
    a = rng.standard_normal((N_BATCH, N_MAT, N_MAT), F32) + N_MAT * np.eye(N_MAT, dtype=F32)
    b = rng.standard_normal((N_BATCH, N_MAT, N_RHS), F32)
    A, B = tensor(lib, a, device), tensor(lib, b, device)
    return lambda: lib.linalg.solve(A, B)


@workload("fft_rfft_audio", title="fft.rfft, 10 s of 44.1 kHz audio (441,000 float32)",
          requires=("fft.rfft",), **_OPTS)
def fft_rfft_audio(lib, device):
    x = tensor(lib, _rng().standard_normal(N_AUDIO, F32), device)
    return lambda: lib.fft.rfft(x)


@workload("stft_audio", title="stft, 10 s of 16 kHz audio, n_fft 1024, hop 256, Hann",
          requires=("stft", "hann_window"), **{**_OPTS, "baseline": False})
def stft_audio(lib, device):
    x = tensor(lib, _rng().standard_normal(160_000, F32), device)
    w = lib.hann_window(1024, device=device)
    return lambda: lib.stft(x, 1024, hop_length=256, window=w, return_complex=True)
