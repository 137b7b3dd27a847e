"""The short-time Fourier transform (stft, istft) and the window functions (hann,
hamming, blackman, bartlett, kaiser), with PyTorch's defaults. The transforms are
the ops of ``_fft``; framing is a strided view (``unfold``) and overlap-add its
adjoint, so everything here is differentiable in the signal and the window.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype
from ember._C._core import Node
from ember._ops import _fft
from ember._ops._util import TensorBase, apply, xp_of

__all__ = [
    "stft", "istft", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window",
]


# ---------------------------------------------------------------------------
# windows (small tables, computed on the host in float64 by design, then cast)

def _window(name, n, periodic, dtype, device, requires_grad, fn):
    from ember._ops.creation import tensor

    dt = _dtype.get_default_dtype() if dtype is None else dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got "
                           f"window_length={n}")
    if n == 0:
        vals = np.zeros(0)
    elif n == 1:
        vals = np.ones(1)
    else:
        m = n + 1 if periodic else n
        vals = fn(np.arange(m, dtype=np.float64), m)[:n]
    return tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
        requires_grad=False)

    The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``; ``periodic=True`` (for
    spectral analysis) computes ``N + 1`` points and drops the last.

    Examples::

        >>> ember.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 0.5 - 0.5 * np.cos(2 * math.pi * k / (m - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
        layout=None, device=None, requires_grad=False)

    The Hamming window ``alpha - beta cos(2 pi n / (N - 1))``.
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: alpha - beta * np.cos(2 * math.pi * k / (m - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
        requires_grad=False)

    The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 0.42 - 0.5 * np.cos(2 * math.pi * k / (m - 1))
                   + 0.08 * np.cos(4 * math.pi * k / (m - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
        requires_grad=False)

    The Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``.
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
        device=None, requires_grad=False)

    The Kaiser window ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``.
    """
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (m - 1) - 1) ** 2,
                                                             0, None))) / np.i0(beta))


# ---------------------------------------------------------------------------
# framing helpers

def _pad_last(x, p, mode):
    """``x`` padded by ``p`` on both sides of its last dim (reflect, replicate,
    circular or constant), with ember ops so that the gradient flows."""
    from ember._ops.join import cat

    if p == 0:
        return x
    n = x.shape[-1]
    if mode == "reflect":
        if p >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({p}, {p}) "
                               f"at dimension {x.ndim - 1} of input {list(x.shape)}")
        left, right = x[..., 1:p + 1].flip(-1), x[..., n - 1 - p:n - 1].flip(-1)
    elif mode == "replicate":
        left = x[..., :1].expand(*x.shape[:-1], p)
        right = x[..., n - 1:].expand(*x.shape[:-1], p)
    elif mode == "circular":
        if p > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        left, right = x[..., n - p:], x[..., :p]
    elif mode == "constant":
        left = right = x.new_zeros((*x.shape[:-1], p))
    else:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return cat([left, x, right], -1)


def _full_window(window, win_length, n_fft, like):
    """The window (ones if None) centred in ``n_fft`` points."""
    from ember._ops.creation import ones

    if window is None:
        window = ones(win_length, dtype=like.real.dtype if like.is_complex() else like.dtype,
                      device=like.device)
    if win_length < n_fft:
        from ember._ops.join import cat

        left = (n_fft - win_length) // 2
        window = cat([window.new_zeros(left), window,
                      window.new_zeros(n_fft - win_length - left)])
    return window


class OverlapAdd(Node):
    """Frames ``(..., T, n)`` added into a signal ``(..., n + hop (T - 1))``: the adjoint
    of framing with ``unfold``; one vectorized add per ``hop``-sized piece of a frame."""

    def forward(self, frames, hop):
        self.hop = hop
        xp = xp_of(frames)
        *batch, T, n = frames.shape
        length = n + hop * (T - 1)
        r = -(-n // hop)
        padded = xp.zeros((*batch, T, r * hop), dtype=frames.dtype)
        padded[..., :n] = frames
        pieces = padded.reshape(*batch, T, r, hop)
        out = xp.zeros((*batch, T + r - 1, hop), dtype=frames.dtype)
        for j in range(r):
            out[..., j:j + T, :] += pieces[..., :, j, :]
        self.n = n
        return out.reshape(*batch, (T + r - 1) * hop)[..., :length]

    def backward(self, g):
        return g.unfold(-1, self.n, self.hop)


def _check_stft_args(fn, length, n_fft, hop_length, win_length, window):
    if hop_length is None:
        hop_length = n_fft // 4
    if win_length is None:
        win_length = n_fft
    if n_fft <= 0 or (length is not None and n_fft > length):
        raise RuntimeError(f"{fn}: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{fn}: expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{fn}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{fn}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    return hop_length, win_length


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
        pad_mode='reflect', normalized=False, onesided=None, return_complex=None) -> Tensor

    The short-time Fourier transform: the DFT of windowed frames of ``n_fft`` samples
    every ``hop_length`` samples.

    Args:
        input (Tensor): ``(L,)`` or ``(B, L)``.
        n_fft (int): the frame (and DFT) size.
        hop_length (int, optional): the step between frames. Default: ``n_fft // 4``.
        win_length (int, optional): the window size; the window is zero-padded on both
            sides to ``n_fft``. Default: ``n_fft``.
        window (Tensor, optional): 1-d, of size ``win_length``. Default: ones.
        center (bool): pad ``n_fft // 2`` samples on both sides first, so that frame
            ``t`` is centred at ``t * hop_length``. Default: True.
        pad_mode (str): the padding of ``center``: ``'reflect'`` (default),
            ``'constant'``, ``'replicate'`` or ``'circular'``.
        normalized (bool): multiply by ``n_fft ** -0.5``. Default: False.
        onesided (bool, optional): only the ``n_fft // 2 + 1`` non-negative frequencies
            (default for real input and window).
        return_complex (bool): must be given for real inputs; ``False`` returns the
            real and imaginary parts in a last dim of size 2 (deprecated in PyTorch).
        align_to_window (bool, optional): with ``center=False`` only: frames start where
            the window (shorter than ``n_fft``) starts, so that frame ``t`` covers samples
            ``t * hop_length`` to ``t * hop_length + win_length``.

    Shape:
        Output: ``(B?, n_freq, n_frames)`` with ``n_frames = 1 + (L' - n_fft) //
        hop_length`` (``L'`` the length after centre padding).
    """
    from ember._ops.complex_ops import view_as_real

    if not isinstance(input, TensorBase):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True "
                               "in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    nd = input.ndim
    if nd not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {nd}D tensor")
    x = input if nd == 2 else input.unsqueeze(0)
    if x._data.dtype.kind in "biu":
        x = x.to(_dtype.get_default_dtype())
    if center:
        x = _pad_last(x, n_fft // 2, pad_mode)
    hop_length, win_length = _check_stft_args("stft", x.shape[-1], n_fft, hop_length,
                                              win_length, window)
    w = _full_window(window, win_length, n_fft, x)
    if align_to_window and win_length < n_fft:  # frames start with the window
        from ember._ops.join import cat

        left = (n_fft - win_length) // 2
        x = cat([x.new_zeros((*x.shape[:-1], left)), x,
                 x.new_zeros((*x.shape[:-1], n_fft - win_length - left))], -1)
    frames = x.unfold(-1, n_fft, hop_length)  # (B, T, n_fft), a view
    if window is not None or win_length < n_fft:
        frames = frames * w
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, norm=norm) if onesided else _fft.fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    if nd == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
        normalized=False, onesided=None, length=None, return_complex=False) -> Tensor

    The inverse of :func:`stft`: the inverse DFT of each frame, windowed and overlap-
    added, divided by the overlap-added squared window (which must not vanish
    anywhere: the NOLA condition). The arguments are those given to :func:`stft`;
    ``length`` trims or zero-pads the output to that many samples.

    Args:
        input (Tensor): complex, ``(B?, n_freq, n_frames)``.
        return_complex (bool): the output is complex (for a two-sided, complex
            ``input``). Default: False.

    Shape:
        Output: ``(B?, length)``.
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop_length, win_length = _check_stft_args("istft", None, n_fft, hop_length, win_length,
                                              window)
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, but got {nd}D")
    spec = input if nd == 3 else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2:]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of "
                               f"the input tensor to match n_fft / 2 + 1 when onesided=True, "
                               f"but got {n_freq}")
    elif n_fft != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{n_freq}")
    if return_complex and onesided:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    frames_spec = spec.transpose(-1, -2)  # (B, T, n_freq)
    if onesided:
        frames = _fft.irfft(frames_spec, n=n_fft, norm=norm)
    elif return_complex:
        frames = _fft.ifft(frames_spec, n=n_fft, norm=norm)
    else:  # a real output: PyTorch keeps the first n_fft // 2 + 1 bins and takes irfft
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows require return_complex=True")
        frames = _fft.irfft(frames_spec[..., :n_fft // 2 + 1], n=n_fft, norm=norm)
    real_dt = frames.real.dtype if frames.is_complex() else frames.dtype
    if window is None:
        from ember._ops.creation import ones

        window = ones(win_length, dtype=real_dt, device=frames.device)
    w = _full_window(window, win_length, n_fft, frames)
    frames = frames * w
    y = apply(OverlapAdd, frames, hop_length)
    wsq = (w * w.conj()).real if w.is_complex() else w * w
    env = apply(OverlapAdd, wsq.expand(n_frames, n_fft), hop_length)
    expected = n_fft + hop_length * (n_frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    y = y[..., start:min(end, expected)]
    env = env[..., start:min(end, expected)]
    if env.numel() and float(env.abs().min()) < 1e-11:
        raise RuntimeError(
            f"istft(n_fft={n_fft}, hop_length={hop_length}, win_length={win_length}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={int(onesided)}, "
            f"length={length}, return_complex={int(return_complex)}) window overlap add min: "
            "1 (the squared window overlap-adds to zero somewhere: the NOLA condition fails)")
    y = y / env
    if end > expected:
        from ember._ops.join import cat

        y = cat([y, y.new_zeros((*y.shape[:-1], end - expected))], -1)
    if nd == 2:
        y = y.squeeze(0)
    return y


METHODS = {"stft": stft, "istft": istft}
