"""The IIR recursion under ``lfilter``, as an autograd Function.

NOTE [ The IIR recursion ]
``lfilter`` splits a filter into its FIR part (a grouped conv1d through ember ops, hence
differentiable in the waveform and in ``b``) and its all-pole part
``y[t] = f[t] - sum_k a[k] y[t - k]`` (``a`` normalised so that ``a[0] = 1``), which is
sequential in time: it runs here on NumPy arrays, vectorised over batch and channels, with
SciPy's C loop when SciPy is installed and a NumPy loop otherwise. Its backward is the same
recursion run backwards in time on the gradient (an all-pole filter's adjoint is its
time-reversed self), and the gradient of ``a[k]`` is ``-sum_t u[t] y[t - k]`` where ``u`` is
that reversed output; so ``lfilter`` is differentiable in the waveform and in both
coefficient vectors, as torchaudio's is. The arrays travel through the host: on a CUDA
device the recursion runs on the CPU between two copies.
"""

from __future__ import annotations

import numpy as np

import ember
from ember.autograd import Function

# SciPy's lfilter, imported on first use (SciPy is optional: the NumPy loop does the same).
_UNRESOLVED = object()
_scipy_lfilter = _UNRESOLVED


def _scipy():
    global _scipy_lfilter
    if _scipy_lfilter is _UNRESOLVED:
        try:
            from scipy.signal import lfilter
        except ImportError:
            lfilter = None
        _scipy_lfilter = lfilter
    return _scipy_lfilter

__all__ = ["all_pole"]


def _host(t: ember.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _recursion_numpy(f: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``y[..., c, t] = f[..., c, t] - sum_{k>=1} a[c, k] y[..., c, t-k]`` for f (B, C, T)."""
    order = a.shape[1] - 1
    batch, channels, length = f.shape
    y = np.zeros((batch, channels, length + order), dtype=f.dtype)
    taps = np.ascontiguousarray(a[:, :0:-1])  # a[c, order], ..., a[c, 1]: oldest first
    for t in range(length):
        window = y[:, :, t:t + order]
        y[:, :, t + order] = f[:, :, t] - np.einsum("bck,ck->bc", window, taps)
    return y[:, :, order:]


def _recursion(f: np.ndarray, a: np.ndarray) -> np.ndarray:
    if a.shape[1] == 1:
        return f.copy()
    scipy_lfilter = _scipy()
    if scipy_lfilter is None:
        return _recursion_numpy(f, a)
    out = np.empty_like(f)
    one = np.ones(1, dtype=f.dtype)
    for c in range(a.shape[0]):
        out[:, c] = scipy_lfilter(one, a[c], f[:, c], axis=-1)
    return out


class _AllPole(Function):
    @staticmethod
    def forward(ctx, f, a):
        f_host = _host(f)
        y = _recursion(f_host, _host(a).astype(f_host.dtype, copy=False))
        out = ember.from_numpy(y).to(f.device)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, y = ctx.saved_tensors
        a_host = _host(a)
        y_host = _host(y)
        g = _host(grad).astype(y_host.dtype, copy=False)
        u = np.ascontiguousarray(_recursion(np.ascontiguousarray(g[..., ::-1]), a_host)[..., ::-1])
        grad_f = ember.from_numpy(u).to(grad.device)
        grad_a = None
        if ctx.needs_input_grad[1]:
            order = a_host.shape[1] - 1
            length = y_host.shape[-1]
            ga = np.zeros_like(a_host)
            for k in range(1, min(order, length) + 1):
                ga[:, k] = -np.einsum("bct,bct->c", u[..., k:], y_host[..., :length - k])
            grad_a = ember.from_numpy(ga).to(a.device)
        return grad_f, grad_a


def all_pole(f: ember.Tensor, a: ember.Tensor) -> ember.Tensor:
    """The all-pole recursion of ``f`` (B, C, T) with normalised ``a`` (C, order + 1)."""
    return _AllPole.apply(f, a)
