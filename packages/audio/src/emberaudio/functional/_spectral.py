"""Spectral functional ops on ember's stft/istft and fft: spectrograms and their inverse,
Griffin-Lim, the phase vocoder, pitch shifting, the spectral centroid and FFT convolution.

Everything here is a composition of differentiable ember ops (``ember.stft``, ``ember.istft``,
``ember.fft``, complex ``abs``/``angle``/``polar``), so gradients flow through it and it runs
on whatever device the input lives on.
"""

from __future__ import annotations

import math

import ember
import ember.nn.functional as F
from emberaudio.functional._resample import resample
from emberaudio.functional.functional import _CONVOLVE_MODES, _apply_convolve_mode

__all__ = [
    "fftconvolve", "griffinlim", "inverse_spectrogram", "phase_vocoder", "pitch_shift",
    "spectral_centroid", "spectrogram",
]


def _pack(x: ember.Tensor, keep: int) -> ember.Tensor:
    """``x`` with its leading dimensions folded into one (``reshape(-1, ...)`` that also works
    when a kept dimension is zero)."""
    return x.reshape(math.prod(x.shape[:x.ndim - keep]), *x.shape[x.ndim - keep:])


def _get_spec_norms(normalized) -> tuple[bool, bool]:
    """``(frame_length_norm, window_norm)`` of a ``normalized`` argument."""
    if isinstance(normalized, str):
        if normalized not in ("frame_length", "window"):
            raise ValueError(f"Invalid normalized parameter: {normalized}")
        return normalized == "frame_length", normalized == "window"
    if isinstance(normalized, bool):
        return False, normalized
    raise TypeError(f"normalized must be a bool or one of 'window', 'frame_length', got "
                    f"{type(normalized).__name__}")


def _check_waveform(waveform, name: str = "waveform") -> None:
    if not isinstance(waveform, ember.Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(waveform).__name__}")
    if waveform.ndim == 0:
        raise ValueError(f"{name} must have a time dimension, got a 0-dimensional tensor")


def spectrogram(waveform: ember.Tensor, pad: int, window: ember.Tensor, n_fft: int,
                hop_length: int, win_length: int, power: float | None, normalized: bool | str,
                center: bool = True, pad_mode: str = "reflect", onesided: bool = True,
                return_complex: bool | None = None) -> ember.Tensor:
    r"""Create a spectrogram or a batch of spectrograms from a raw audio signal. The
    spectrogram can be either magnitude-only or complex.

    Args:
        waveform (Tensor): tensor of audio of dimension ``(..., time)``.
        pad (int): two sided padding of signal.
        window (Tensor): window tensor that is applied/multiplied to each frame/window.
        n_fft (int): size of FFT.
        hop_length (int): length of hop between STFT windows.
        win_length (int): window size.
        power (float or None): exponent for the magnitude spectrogram (must be > 0), e.g.,
            1 for magnitude, 2 for power, etc. If ``None``, the complex spectrum is returned.
        normalized (bool or str): whether to normalize by magnitude after stft. ``"window"``
            divides by the window's L2 norm, ``"frame_length"`` by ``sqrt(n_fft)`` (the
            ``normalized`` of :func:`ember.stft`); ``True`` maps to ``"window"``.
        center (bool, optional): whether to pad ``waveform`` on both sides so that the
            :math:`t`-th frame is centered at time :math:`t \times \text{hop\_length}`.
            Default: ``True``.
        pad_mode (str, optional): the padding of ``center``. Default: ``"reflect"``.
        onesided (bool, optional): return only the ``n_fft // 2 + 1`` non-negative
            frequencies. Default: ``True``.
        return_complex (bool, optional): deprecated and not used.

    Returns:
        Tensor: dimension ``(..., freq, time)``, freq is ``n_fft // 2 + 1`` and time the
        number of window hops.

    Examples::

        >>> waveform = ember.randn(2, 16000)
        >>> window = ember.hann_window(400)
        >>> spectrogram(waveform, 0, window, 400, 200, 400, 2.0, False).shape
        ember.Size([2, 201, 81])
    """
    if return_complex is not None:
        import warnings

        warnings.warn("`return_complex` argument is now deprecated and is not effective."
                      "`torchaudio.functional.spectrogram(power=None)` always returns a tensor "
                      "with complex dtype. Please remove the argument in the function call.",
                      stacklevel=2)
    _check_waveform(waveform)
    if power is not None and power <= 0:
        raise ValueError(f"power must be positive or None, got {power}")
    if pad > 0:
        waveform = F.pad(waveform, (pad, pad), "constant")
    frame_length_norm, window_norm = _get_spec_norms(normalized)
    shape = waveform.shape
    rows = _pack(waveform, 1)
    spec = ember.stft(rows, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                      window=window, center=center, pad_mode=pad_mode,
                      normalized=frame_length_norm, onesided=onesided, return_complex=True)
    spec = spec.reshape(*shape[:-1], *spec.shape[-2:])
    if window_norm:
        spec = spec / window.pow(2.0).sum().sqrt()
    if power is None:
        return spec
    if power == 1.0:
        return spec.abs()
    return spec.abs().pow(power)


def inverse_spectrogram(spectrogram: ember.Tensor, length: int | None, pad: int,
                        window: ember.Tensor, n_fft: int, hop_length: int, win_length: int,
                        normalized: bool | str, center: bool = True, pad_mode: str = "reflect",
                        onesided: bool = True) -> ember.Tensor:
    r"""Create an inverse spectrogram or a batch of inverse spectrograms from the provided
    complex-valued spectrogram.

    Args:
        spectrogram (Tensor): complex tensor of audio of dimension ``(..., freq, time)``.
        length (int or None): the output length of the waveform.
        pad (int): two sided padding of signal; only effective when ``length`` is given.
        window (Tensor): window tensor that is applied/multiplied to each frame/window.
        n_fft (int): size of FFT.
        hop_length (int): length of hop between STFT windows.
        win_length (int): window size.
        normalized (bool or str): whether the stft output was normalized by magnitude
            (``"window"``, ``"frame_length"``; ``True`` maps to ``"window"``).
        center (bool, optional): whether the waveform was padded on both sides.
            Default: ``True``.
        pad_mode (str, optional): provided for compatibility with :func:`spectrogram`, not
            used. Default: ``"reflect"``.
        onesided (bool, optional): whether the spectrogram was made onesided.
            Default: ``True``.

    Returns:
        Tensor: dimension ``(..., time)``: the least squares estimation of the original
        signal.
    """
    frame_length_norm, window_norm = _get_spec_norms(normalized)
    if not spectrogram.is_complex():
        raise ValueError("Expected `spectrogram` to be complex dtype.")
    if spectrogram.ndim < 2:
        raise ValueError(f"Expected a spectrogram of at least 2 dimensions (..., freq, time), "
                         f"got {spectrogram.ndim}")
    if window_norm:
        spectrogram = spectrogram * window.pow(2.0).sum().sqrt()
    shape = spectrogram.shape
    packed = _pack(spectrogram, 2)
    waveform = ember.istft(packed, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                           window=window, center=center, normalized=frame_length_norm,
                           onesided=onesided,
                           length=length + 2 * pad if length is not None else None,
                           return_complex=False)
    if length is not None and pad > 0:
        waveform = waveform[:, pad:-pad]
    return waveform.reshape(*shape[:-2], waveform.shape[-1])


def _complex_dtype(real_dtype: ember.dtype) -> ember.dtype:
    if real_dtype == ember.float64:
        return ember.complex128
    if real_dtype == ember.float32:
        return ember.complex64
    raise ValueError(f"Unexpected dtype {real_dtype}")


def griffinlim(specgram: ember.Tensor, window: ember.Tensor, n_fft: int, hop_length: int,
               win_length: int, power: float, n_iter: int, momentum: float,
               length: int | None, rand_init: bool) -> ember.Tensor:
    r"""Compute a waveform from a linear scale magnitude spectrogram using the Griffin-Lim
    transformation (the fast variant with momentum of Perraudin et al.).

    Args:
        specgram (Tensor): a magnitude-only STFT spectrogram of dimension
            ``(..., freq, frames)`` where freq is ``n_fft // 2 + 1``.
        window (Tensor): window tensor that is applied/multiplied to each frame/window.
        n_fft (int): size of FFT, creates ``n_fft // 2 + 1`` bins.
        hop_length (int): length of hop between STFT windows.
        win_length (int): window size.
        power (float): exponent for the magnitude spectrogram (must be > 0), e.g., 1 for
            magnitude, 2 for power, etc.
        n_iter (int): number of iterations for the phase recovery process.
        momentum (float): the momentum parameter for fast Griffin-Lim; 0 recovers the
            original Griffin-Lim method. Must be in ``[0, 1)``.
        length (int or None): array length of the expected output.
        rand_init (bool): initializes the phase randomly if ``True``, to zero otherwise.

    Returns:
        Tensor: waveform of ``(..., time)``, where time equals ``length`` if given.
    """
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in range [0, 1). Found: {momentum}")
    if power <= 0:
        raise ValueError(f"power must be positive, got {power}")
    if specgram.ndim < 2:
        raise ValueError(f"Expected a spectrogram of at least 2 dimensions (..., freq, time), "
                         f"got {specgram.ndim}")
    momentum = momentum / (1 + momentum)
    shape = specgram.shape
    specgram = _pack(specgram, 2).pow(1 / power)
    cdtype = _complex_dtype(specgram.dtype)
    if rand_init:
        # real and imaginary parts uniform in [0, 1), interleaved as torch.rand draws them
        pairs = ember.rand(*specgram.shape, 2, dtype=specgram.dtype, device=specgram.device)
        angles = ember.view_as_complex(pairs)
    else:
        angles = ember.full(tuple(specgram.shape), 1, dtype=cdtype, device=specgram.device)
    tprev = None
    for _ in range(n_iter):
        inverse = ember.istft(specgram * angles, n_fft=n_fft, hop_length=hop_length,
                              win_length=win_length, window=window, length=length)
        rebuilt = ember.stft(inverse, n_fft=n_fft, hop_length=hop_length,
                             win_length=win_length, window=window, center=True,
                             pad_mode="reflect", normalized=False, onesided=True,
                             return_complex=True)
        angles = rebuilt
        if momentum and tprev is not None:
            angles = angles - tprev * momentum
        angles = angles / (angles.abs() + 1e-16)
        tprev = rebuilt
    waveform = ember.istft(specgram * angles, n_fft=n_fft, hop_length=hop_length,
                           win_length=win_length, window=window, length=length)
    return waveform.reshape(*shape[:-2], waveform.shape[-1])


def phase_vocoder(complex_specgrams: ember.Tensor, rate: float, phase_advance: ember.Tensor
                  ) -> ember.Tensor:
    r"""Given an STFT tensor, speed up in time without modifying pitch by a factor of
    ``rate``.

    Args:
        complex_specgrams (Tensor): a tensor of dimension ``(..., freq, num_frame)`` with
            complex dtype.
        rate (float): speed-up factor.
        phase_advance (Tensor): expected phase advance in each bin, of dimension
            ``(freq, 1)``.

    Returns:
        Tensor: stretched spectrogram, of the same dtype as the input, with
        ``ceil(num_frame / rate)`` frames.

    Examples::

        >>> freq, hop_length = 1025, 512
        >>> complex_specgrams = ember.randn(2, freq, 300, dtype=ember.cfloat)
        >>> phase_advance = ember.linspace(0, math.pi * hop_length, freq)[..., None]
        >>> phase_vocoder(complex_specgrams, 1.3, phase_advance).shape
        ember.Size([2, 1025, 231])
    """
    if rate <= 0:
        raise ValueError(f"rate must be positive, got {rate}")
    if rate == 1.0:
        return complex_specgrams
    if complex_specgrams.ndim < 2:
        raise ValueError(f"Expected a spectrogram of at least 2 dimensions (..., freq, time), "
                         f"got {complex_specgrams.ndim}")
    shape = complex_specgrams.shape
    specs = _pack(complex_specgrams, 2)
    real_dtype = specs.real.dtype if specs.is_complex() else specs.dtype
    device = specs.device
    time_steps = ember.arange(0, specs.shape[-1], rate, device=device, dtype=real_dtype)
    alphas = time_steps % 1.0
    phase_0 = specs[..., :1].angle()
    specs = F.pad(specs, [0, 2])
    index_0 = time_steps.long()
    specs_0 = specs.index_select(-1, index_0)
    specs_1 = specs.index_select(-1, index_0 + 1)
    angle_0 = specs_0.angle()
    angle_1 = specs_1.angle()
    norm_0 = specs_0.abs()
    norm_1 = specs_1.abs()
    phase = angle_1 - angle_0 - phase_advance
    phase = phase - 2 * math.pi * ember.round(phase / (2 * math.pi))
    phase = phase + phase_advance
    phase = ember.cat([phase_0, phase[..., :-1]], dim=-1)
    phase_acc = ember.cumsum(phase, -1)
    mag = alphas * norm_1 + (1 - alphas) * norm_0
    stretched = ember.polar(mag, phase_acc)
    return stretched.reshape(*shape[:-2], *stretched.shape[1:])


def spectral_centroid(waveform: ember.Tensor, sample_rate: int, pad: int, window: ember.Tensor,
                      n_fft: int, hop_length: int, win_length: int) -> ember.Tensor:
    r"""Compute the spectral centroid for each channel along the time axis: the weighted
    average of the frequency values, weighted by their magnitude.

    Args:
        waveform (Tensor): tensor of audio of dimension ``(..., time)``.
        sample_rate (int): sample rate of the audio waveform.
        pad (int): two sided padding of signal.
        window (Tensor): window tensor that is applied/multiplied to each frame/window.
        n_fft (int): size of FFT.
        hop_length (int): length of hop between STFT windows.
        win_length (int): window size.

    Returns:
        Tensor: dimension ``(..., time)``.
    """
    specgram = spectrogram(waveform, pad=pad, window=window, n_fft=n_fft,
                           hop_length=hop_length, win_length=win_length, power=1.0,
                           normalized=False)
    freqs = ember.linspace(0, sample_rate // 2, steps=1 + n_fft // 2,
                           device=specgram.device).reshape(-1, 1)
    return (freqs * specgram).sum(dim=-2) / specgram.sum(dim=-2)


def _stretch_waveform(waveform: ember.Tensor, n_steps: float, bins_per_octave: int = 12,
                      n_fft: int = 512, win_length: int | None = None,
                      hop_length: int | None = None, window: ember.Tensor | None = None
                      ) -> ember.Tensor:
    """The waveform time-stretched by ``2 ** (n_steps / bins_per_octave)`` with the phase
    vocoder: the first half of a pitch shift (the resampling is the second)."""
    if hop_length is None:
        hop_length = n_fft // 4
    if win_length is None:
        win_length = n_fft
    if window is None:
        window = ember.hann_window(window_length=win_length, device=waveform.device)
    shape = waveform.shape
    rows = _pack(waveform, 1)
    rate = 2.0 ** (-float(n_steps) / bins_per_octave)
    spec = ember.stft(rows, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                      window=window, center=True, pad_mode="reflect", normalized=False,
                      onesided=True, return_complex=True)
    phase_advance = ember.linspace(0, math.pi * hop_length, spec.shape[-2],
                                   device=spec.device)[..., None]
    stretched = phase_vocoder(spec, rate, phase_advance)
    len_stretch = int(round(shape[-1] / rate))
    return ember.istft(stretched, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                       window=window, length=len_stretch)


def _fix_waveform_shape(waveform_shift: ember.Tensor, shape) -> ember.Tensor:
    """Crop or zero-pad the shifted waveform to the original length, and unpack the batch."""
    ori_len = shape[-1]
    shift_len = waveform_shift.shape[-1]
    if shift_len > ori_len:
        waveform_shift = waveform_shift[..., :ori_len]
    else:
        waveform_shift = F.pad(waveform_shift, [0, ori_len - shift_len])
    return waveform_shift.reshape(*shape[:-1], waveform_shift.shape[-1])


def pitch_shift(waveform: ember.Tensor, sample_rate: int, n_steps: float,
                bins_per_octave: int = 12, n_fft: int = 512, win_length: int | None = None,
                hop_length: int | None = None, window: ember.Tensor | None = None
                ) -> ember.Tensor:
    r"""Shift the pitch of a waveform by ``n_steps`` steps: a phase-vocoder time stretch
    followed by resampling back to the original duration.

    Args:
        waveform (Tensor): the input waveform of shape ``(..., time)``.
        sample_rate (int): sample rate of ``waveform``.
        n_steps (int): the (fractional) steps to shift ``waveform``.
        bins_per_octave (int, optional): the number of steps per octave. Default: ``12``.
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins.
            Default: ``512``.
        win_length (int or None, optional): window size; ``None`` uses ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows; ``None``
            uses ``win_length // 4``.
        window (Tensor or None, optional): window tensor applied to each frame; ``None``
            uses ``ember.hann_window(win_length)``.

    Returns:
        Tensor: the pitch-shifted audio waveform of shape ``(..., time)``.
    """
    _check_waveform(waveform)
    stretched = _stretch_waveform(waveform, n_steps, bins_per_octave, n_fft, win_length,
                                  hop_length, window)
    rate = 2.0 ** (-float(n_steps) / bins_per_octave)
    shifted = resample(stretched, int(sample_rate / rate), sample_rate)
    return _fix_waveform_shape(shifted, waveform.shape)


def fftconvolve(x: ember.Tensor, y: ember.Tensor, mode: str = "full") -> ember.Tensor:
    r"""Convolve inputs along their last dimension using FFT. For inputs with large last
    dimensions, this is generally much faster than :func:`convolve`. Unlike
    :func:`ember.nn.functional.conv1d` (a cross-correlation) this applies the true
    convolution; the output is always floating point (integer inputs are cast).

    Args:
        x (Tensor): first convolution operand, ``(..., N)``.
        y (Tensor): second convolution operand, ``(..., M)`` (leading dimensions must be
            broadcast-able with those of ``x``).
        mode (str, optional): ``"full"`` (``N + M - 1``), ``"valid"``
            (``max(N, M) - min(N, M) + 1``) or ``"same"`` (``N``). Default: ``"full"``.

    Returns:
        Tensor: result of convolving ``x`` and ``y``, ``(..., L)``.
    """
    if x.ndim != y.ndim:
        raise ValueError(f"The operands must be the same dimension (got {x.ndim} and "
                         f"{y.ndim}).")
    if x.ndim == 0:
        raise ValueError("The operands must have a time dimension, got 0D tensors")
    for i in range(x.ndim - 1):
        if not (x.shape[i] == y.shape[i] or x.shape[i] == 1 or y.shape[i] == 1):
            raise ValueError("Leading dimensions of x and y are not broadcastable (got "
                             f"{tuple(x.shape)} and {tuple(y.shape)}).")
    if mode not in _CONVOLVE_MODES:
        raise ValueError(f"Unrecognized mode value '{mode}'. Please specify one of "
                         f"{_CONVOLVE_MODES}.")
    n = x.shape[-1] + y.shape[-1] - 1
    if n <= 0 or x.shape[-1] == 0 or y.shape[-1] == 0:
        lead = [max(i, j) for i, j in zip(x.shape[:-1], y.shape[:-1])]
        dtype = x.dtype if x.is_floating_point() else ember.get_default_dtype()
        out = ember.zeros(*lead, max(n, 0), dtype=dtype, device=x.device)
        return _apply_convolve_mode(out, x.shape[-1], y.shape[-1], mode)
    product = ember.fft.rfft(x, n=n) * ember.fft.rfft(y, n=n)
    result = ember.fft.irfft(product, n=n)
    return _apply_convolve_mode(result, x.shape[-1], y.shape[-1], mode)
