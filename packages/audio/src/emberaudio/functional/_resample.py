"""Band-limited resampling by windowed-sinc interpolation, as a strided convolution."""

from __future__ import annotations

import math
import warnings

import numpy as np

import ember
import ember.nn.functional as F

__all__ = ["resample", "speed"]

_KAISER_BETA = 14.769656459379492


def _sinc_resample_kernel(orig_freq, new_freq, gcd: int, lowpass_filter_width: int,
                          rolloff: float, resampling_method: str, beta: float | None,
                          dtype: np.dtype | None):
    """The ``(new, 1, 2 * width + orig)`` interpolation kernels and the half-width.

    Built on the host in ``dtype`` (float64 when None, then cast to float32), with the same
    order of operations as torchaudio so the taps agree to rounding.
    """
    if int(orig_freq) != orig_freq or int(new_freq) != new_freq:
        raise ValueError(
            "Frequencies must be of integer type to ensure quality resampling computation. "
            "To work around this, manually convert both frequencies to integer values that "
            "maintain their resampling rate ratio before passing them into the function.")
    if resampling_method in ("sinc_interpolation", "kaiser_window"):
        replacement = {"sinc_interpolation": "sinc_interp_hann",
                       "kaiser_window": "sinc_interp_kaiser"}[resampling_method]
        warnings.warn(f'"{resampling_method}" resampling method name is being deprecated and '
                      f'replaced by "{replacement}" in the next release.', stacklevel=3)
        resampling_method = replacement
    elif resampling_method not in ("sinc_interp_hann", "sinc_interp_kaiser"):
        raise ValueError(f"Invalid resampling method: {resampling_method}")
    orig = int(orig_freq) // gcd
    new = int(new_freq) // gcd
    if lowpass_filter_width <= 0:
        raise ValueError("Low pass filter width should be positive.")
    base_freq = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base_freq)
    work = np.dtype(np.float64 if dtype is None else dtype)
    # NumPy 2 keeps the array's precision with Python scalars, as torch does.
    idx = np.arange(-width, width + orig, dtype=work)[None, None] / orig
    # torchaudio's output-phase offsets are float32 when no dtype is given (an integer
    # arange divided into the default dtype), the tap positions float64
    phase_dtype = np.float32 if dtype is None else work
    phases = (np.arange(0, -new, -1) / new).astype(phase_dtype)
    t = phases.astype(work)[:, None, None] + idx
    t = np.clip(t * base_freq, -lowpass_filter_width, lowpass_filter_width)
    if resampling_method == "sinc_interp_hann":
        window = np.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    else:
        # torchaudio holds beta in a float32 scalar tensor
        beta32 = np.float32(_KAISER_BETA if beta is None else beta)
        arg = work.type(beta32) * np.sqrt(1 - (t / lowpass_filter_width) ** 2)
        window = np.i0(arg.astype(np.float64)).astype(work) / np.float32(np.i0(beta32))
        window = window.astype(work)
    t = t * math.pi
    scale = base_freq / orig
    with np.errstate(invalid="ignore", divide="ignore"):
        kernels = np.where(t == 0, work.type(1.0), np.sin(t) / t)
    kernels = kernels * (window * scale)
    if dtype is None:
        kernels = kernels.astype(np.float32)
    return kernels, width


def _apply_sinc_resample_kernel(waveform: ember.Tensor, orig_freq, new_freq, gcd: int,
                                kernel: ember.Tensor, width: int) -> ember.Tensor:
    if not waveform.is_floating_point():
        raise TypeError("Expected floating point type for waveform tensor, but received "
                        f"{waveform.dtype}.")
    orig = int(orig_freq) // gcd
    new = int(new_freq) // gcd
    shape = waveform.shape
    signal = waveform.reshape(-1, shape[-1])
    length = shape[-1]
    padded = F.pad(signal, (width, width + orig))
    # The strided convolution with the (new, 1, taps) kernels, written as what it is: the
    # windows of `taps` samples every `orig` (a view) times the kernels, one matmul, which
    # runs about twice as fast as conv1d's im2col here. Output phase j of window i is
    # output sample i * new + j.
    windows = padded.unfold(-1, kernel.shape[-1], orig)  # (signals, positions, taps)
    resampled = ember.matmul(windows, kernel[:, 0].t()).reshape(signal.shape[0], -1)
    target_length = math.ceil(new * length / orig)
    resampled = resampled[..., :target_length]
    return resampled.reshape(*shape[:-1], resampled.shape[-1])


def _np_dtype(dtype: ember.dtype) -> np.dtype:
    return np.dtype(str(dtype).removeprefix("ember."))


def resample(waveform: ember.Tensor, orig_freq: int, new_freq: int,
             lowpass_filter_width: int = 6, rolloff: float = 0.99,
             resampling_method: str = "sinc_interp_hann", beta: float | None = None
             ) -> ember.Tensor:
    r"""Resample ``waveform`` from ``orig_freq`` to ``new_freq`` by band-limited
    interpolation: a windowed sinc filter applied as a strided convolution (differentiable
    in ``waveform``).

    Args:
        waveform (Tensor): the input signal of dimension ``(..., time)``.
        orig_freq (int): the original frequency of the signal.
        new_freq (int): the desired frequency.
        lowpass_filter_width (int, optional): controls the sharpness of the filter; more
            is sharper but less efficient. Default: ``6``.
        rolloff (float, optional): the roll-off frequency of the filter, as a fraction of
            the Nyquist frequency of the lower rate. Default: ``0.99``.
        resampling_method (str, optional): ``"sinc_interp_hann"`` or
            ``"sinc_interp_kaiser"``. Default: ``"sinc_interp_hann"``.
        beta (float or None, optional): the shape parameter of the Kaiser window.
            Default: ``14.769656459379492``.

    Returns:
        Tensor: the waveform at the new frequency, ``(..., ceil(time * new / orig))``.

    Examples::

        >>> resample(waveform, 44100, 16000).shape
    """
    if orig_freq <= 0.0 or new_freq <= 0.0:
        raise ValueError("Original frequency and desired frequecy should be positive")
    if orig_freq == new_freq:
        return waveform
    if not waveform.is_floating_point():
        raise TypeError("Expected floating point type for waveform tensor, but received "
                        f"{waveform.dtype}.")
    gcd = math.gcd(int(orig_freq), int(new_freq))
    kernel, width = _sinc_resample_kernel(orig_freq, new_freq, gcd, lowpass_filter_width,
                                          rolloff, resampling_method, beta,
                                          _np_dtype(waveform.dtype))
    kernel = ember.from_numpy(kernel).to(waveform.device)
    return _apply_sinc_resample_kernel(waveform, orig_freq, new_freq, gcd, kernel, width)


def speed(waveform: ember.Tensor, orig_freq: int, factor: float,
          lengths: ember.Tensor | None = None) -> tuple[ember.Tensor, ember.Tensor | None]:
    r"""Adjust the waveform's speed by ``factor`` (its pitch changes with it): resampling
    from ``factor * orig_freq`` to ``orig_freq``.

    Args:
        waveform (Tensor): the input signal of dimension ``(..., time)``.
        orig_freq (int): the original frequency of the signal.
        factor (float): above 1 speeds up (shortens), below 1 slows down.
        lengths (Tensor or None, optional): the valid lengths of the signals of the batch,
            ``(...)``. Default: ``None``.

    Returns:
        (Tensor, Tensor or None): the waveform at the new speed, and its valid lengths
        (``None`` when ``lengths`` is ``None``).
    """
    source = int(factor * orig_freq)
    target = int(orig_freq)
    gcd = math.gcd(source, target)
    source //= gcd
    target //= gcd
    out_lengths = None
    if lengths is not None:
        out_lengths = ember.ceil(lengths * target / source).to(lengths.dtype)
    return resample(waveform, source, target), out_lengths
