"""Filters: ``lfilter``, ``filtfilt``, ``biquad`` and the SoX-style effects built on them.

The biquad designs are the Audio EQ Cookbook's, as SoX and torchaudio use them; the
parameters may be Python numbers or (differentiable) tensors.
"""

from __future__ import annotations

import math

import numpy as np

import ember
import ember.nn.functional as F
from emberaudio.functional._iir import all_pole

__all__ = [
    "allpass_biquad", "band_biquad", "bandpass_biquad", "bandreject_biquad", "bass_biquad",
    "biquad", "contrast", "dcshift", "deemph_biquad", "deemphasis", "equalizer_biquad",
    "filtfilt", "flanger", "gain", "highpass_biquad", "lfilter", "loudness", "lowpass_biquad",
    "overdrive", "phaser", "preemphasis", "riaa_biquad", "treble_biquad",
]


def _check_float(waveform: ember.Tensor, name: str = "waveform") -> None:
    if not isinstance(waveform, ember.Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(waveform).__name__}")
    if not waveform.is_floating_point():
        raise TypeError(f"Expected {name} to be a floating point tensor, got {waveform.dtype}")


def lfilter(waveform: ember.Tensor, a_coeffs: ember.Tensor, b_coeffs: ember.Tensor,
            clamp: bool = True, batching: bool = True) -> ember.Tensor:
    r"""Perform an IIR filter by evaluating the difference equation

    .. math::
        a_0 y[t] = \sum_{k=0}^{N} b_k x[t-k] - \sum_{k=1}^{N} a_k y[t-k]

    Differentiable in ``waveform``, ``a_coeffs`` and ``b_coeffs``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        a_coeffs (Tensor): denominator coefficients, 1D ``(num_order + 1)`` or 2D
            ``(num_filters, num_order + 1)``; lower delays first: ``[a0, a1, a2, ...]``.
        b_coeffs (Tensor): numerator coefficients, of the shape of ``a_coeffs``.
        clamp (bool, optional): clamp the output to [-1, 1]. Default: ``True``.
        batching (bool, optional): with 2D coefficients, ``True`` applies filter ``i`` to
            ``waveform[..., i, :]``; ``False`` applies every filter to the whole waveform,
            giving ``(..., num_filters, time)``. Default: ``True``.

    Returns:
        Tensor: ``(..., time)``, or ``(..., num_filters, time)`` with 2D coefficients
        and ``batching=False``.

    Examples::

        >>> lfilter(waveform, ember.tensor([1.0, -0.9]), ember.tensor([0.1, 0.0]))
    """
    _check_float(waveform)
    if a_coeffs.shape != b_coeffs.shape:
        raise ValueError("Expected coeffs to be the same size. Found a_coeffs size: "
                         f"{tuple(a_coeffs.shape)}, b_coeffs size: {tuple(b_coeffs.shape)}")
    if a_coeffs.ndim not in (1, 2) or a_coeffs.shape[-1] == 0:
        raise ValueError(f"Expected coeffs to be 1D or 2D and non-empty, got shape "
                         f"{tuple(a_coeffs.shape)}")
    if waveform.ndim == 0:
        raise ValueError("Expected waveform to have a time dimension, got a 0D tensor")
    if a_coeffs.ndim == 2:
        if batching:
            if waveform.ndim < 2 or waveform.shape[-2] != a_coeffs.shape[0]:
                raise ValueError(
                    "Expected number of batches in waveform and coeffs to be the same. Found "
                    f"waveform shape {tuple(waveform.shape)} and {a_coeffs.shape[0]} filters")
        else:
            waveform = ember.stack([waveform] * a_coeffs.shape[0], -2)
    else:
        a_coeffs = a_coeffs.unsqueeze(0)
        b_coeffs = b_coeffs.unsqueeze(0)
    a_coeffs = a_coeffs.to(waveform.dtype)
    b_coeffs = b_coeffs.to(waveform.dtype)
    shape = waveform.shape
    channels, taps = a_coeffs.shape
    if shape[-1] == 0:
        return waveform.clone()
    signal = waveform.reshape(math.prod(shape[:-1]) // channels, channels, shape[-1])
    # The FIR part as a grouped convolution, then the recursion on its output.
    padded = F.pad(signal, (taps - 1, 0))
    a0 = a_coeffs[:, :1]
    fir = F.conv1d(padded, b_coeffs.flip(1).unsqueeze(1), groups=channels) / a0
    output = all_pole(fir.contiguous(), a_coeffs / a0)
    if clamp:
        output = output.clamp(min=-1.0, max=1.0)
    return output.reshape(tuple(shape))


def filtfilt(waveform: ember.Tensor, a_coeffs: ember.Tensor, b_coeffs: ember.Tensor,
             clamp: bool = True) -> ember.Tensor:
    r"""Apply an IIR filter forward and backward (zero phase), as ``scipy.signal.filtfilt``
    without its edge padding.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        a_coeffs (Tensor): 1D ``(num_order + 1)`` or 2D ``(num_filters, num_order + 1)``.
        b_coeffs (Tensor): of the shape of ``a_coeffs``.
        clamp (bool, optional): clamp the output to [-1, 1]. Default: ``True``.

    Returns:
        Tensor: ``(..., time)`` or, with 2D coefficients, ``(..., num_filters, time)``.
    """
    forward = lfilter(waveform, a_coeffs, b_coeffs, clamp=False, batching=True)
    return lfilter(forward.flip(-1), a_coeffs, b_coeffs, clamp=clamp, batching=True).flip(-1)


def _coefficient(value, waveform: ember.Tensor) -> ember.Tensor:
    if isinstance(value, ember.Tensor):
        return value.to(waveform.dtype).reshape(1)
    return ember.tensor([float(value)], dtype=waveform.dtype, device=waveform.device)


def biquad(waveform: ember.Tensor, b0, b1, b2, a0, a1, a2) -> ember.Tensor:
    r"""Perform a biquad filter of input tensor, ``lfilter`` with three coefficients each.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        b0, b1, b2 (float or Tensor): numerator coefficients (current input, one and two
            samples back).
        a0, a1, a2 (float or Tensor): denominator coefficients.

    Returns:
        Tensor: ``(..., time)``, clamped to [-1, 1].
    """
    _check_float(waveform)
    a = ember.cat([_coefficient(v, waveform) for v in (a0, a1, a2)])
    b = ember.cat([_coefficient(v, waveform) for v in (b0, b1, b2)])
    return lfilter(waveform, a, b)


def _w0(waveform, sample_rate, freq) -> ember.Tensor:
    return 2 * math.pi * _coefficient(freq, waveform) / sample_rate


def _alpha(w0, Q):
    return ember.sin(w0) / 2 / Q


def lowpass_biquad(waveform: ember.Tensor, sample_rate: int, cutoff_freq, Q=0.707
                   ) -> ember.Tensor:
    """Two-pole low-pass filter, like SoX's ``lowpass``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform, e.g. 44100 (Hz).
        cutoff_freq (float or Tensor): filter cutoff frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    w0 = _w0(waveform, sample_rate, cutoff_freq)
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    b0 = (1 - cos) / 2
    return biquad(waveform, b0, 1 - cos, b0, 1 + alpha, -2 * cos, 1 - alpha)


def highpass_biquad(waveform: ember.Tensor, sample_rate: int, cutoff_freq, Q=0.707
                    ) -> ember.Tensor:
    """Two-pole high-pass filter, like SoX's ``highpass``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        cutoff_freq (float or Tensor): filter cutoff frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    w0 = _w0(waveform, sample_rate, cutoff_freq)
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    b0 = (1 + cos) / 2
    return biquad(waveform, b0, -1 - cos, b0, 1 + alpha, -2 * cos, 1 - alpha)


def allpass_biquad(waveform: ember.Tensor, sample_rate: int, central_freq, Q=0.707
                   ) -> ember.Tensor:
    """Two-pole all-pass filter, like SoX's ``allpass``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        central_freq (float or Tensor): central frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    w0 = _w0(waveform, sample_rate, central_freq)
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    return biquad(waveform, 1 - alpha, -2 * cos, 1 + alpha, 1 + alpha, -2 * cos, 1 - alpha)


def bandpass_biquad(waveform: ember.Tensor, sample_rate: int, central_freq, Q=0.707,
                    const_skirt_gain: bool = False) -> ember.Tensor:
    """Two-pole band-pass filter, like SoX's ``bandpass``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        central_freq (float or Tensor): central frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
        const_skirt_gain (bool, optional): constant skirt gain (peak gain = Q) instead of
            a constant 0 dB peak gain. Default: ``False``.
    """
    w0 = _w0(waveform, sample_rate, central_freq)
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    temp = ember.sin(w0) / 2 if const_skirt_gain else alpha
    return biquad(waveform, temp, 0.0, -temp, 1 + alpha, -2 * cos, 1 - alpha)


def bandreject_biquad(waveform: ember.Tensor, sample_rate: int, central_freq, Q=0.707
                      ) -> ember.Tensor:
    """Two-pole band-reject (notch) filter, like SoX's ``bandreject``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        central_freq (float or Tensor): central frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    w0 = _w0(waveform, sample_rate, central_freq)
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    return biquad(waveform, 1.0, -2 * cos, 1.0, 1 + alpha, -2 * cos, 1 - alpha)


def band_biquad(waveform: ember.Tensor, sample_rate: int, central_freq, Q=0.707,
                noise: bool = False) -> ember.Tensor:
    """Two-pole band filter, like SoX's ``band``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        central_freq (float or Tensor): central frequency (Hz).
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
        noise (bool, optional): a mode for noise-like (unpitched) audio. Default: ``False``.
    """
    w0 = _w0(waveform, sample_rate, central_freq)
    bw_hz = _coefficient(central_freq, waveform) / Q
    a2 = ember.exp(-2 * math.pi * bw_hz / sample_rate)
    a1 = -4 * a2 / (1 + a2) * ember.cos(w0)
    b0 = ember.sqrt(1 - a1 * a1 / (4 * a2)) * (1 - a2)
    if noise:
        mult = ember.sqrt(((1 + a2) * (1 + a2) - a1 * a1) * (1 - a2) / (1 + a2)) / b0
        b0 = mult * b0
    return biquad(waveform, b0, 0.0, 0.0, 1.0, a1, a2)


def _shelf(waveform, sample_rate, gain, central_freq, Q):
    w0 = _w0(waveform, sample_rate, central_freq)
    alpha = _alpha(w0, Q)
    A = ember.exp(_coefficient(gain, waveform) / 40 * math.log(10))
    cos = ember.cos(w0)
    return A, 2 * ember.sqrt(A) * alpha, (A - 1) * cos, (A + 1) * cos


def bass_biquad(waveform: ember.Tensor, sample_rate: int, gain, central_freq=100, Q=0.707
                ) -> ember.Tensor:
    """Boost or cut the bass (low) frequencies: a low shelf, like SoX's ``bass``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        gain (float or Tensor): gain at 0 Hz (dB), positive to boost.
        central_freq (float or Tensor, optional): central frequency (Hz). Default: ``100``.
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    A, temp1, temp2, temp3 = _shelf(waveform, sample_rate, gain, central_freq, Q)
    b0 = A * ((A + 1) - temp2 + temp1)
    b1 = 2 * A * ((A - 1) - temp3)
    b2 = A * ((A + 1) - temp2 - temp1)
    a0 = (A + 1) + temp2 + temp1
    a1 = -2 * ((A - 1) + temp3)
    a2 = (A + 1) + temp2 - temp1
    return biquad(waveform, b0 / a0, b1 / a0, b2 / a0, a0 / a0, a1 / a0, a2 / a0)


def treble_biquad(waveform: ember.Tensor, sample_rate: int, gain, central_freq=3000,
                  Q=0.707) -> ember.Tensor:
    """Boost or cut the treble (high) frequencies: a high shelf, like SoX's ``treble``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        gain (float or Tensor): gain at the Nyquist frequency (dB), positive to boost.
        central_freq (float or Tensor, optional): central frequency (Hz). Default: ``3000``.
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    A, temp1, temp2, temp3 = _shelf(waveform, sample_rate, gain, central_freq, Q)
    b0 = A * ((A + 1) + temp2 + temp1)
    b1 = -2 * A * ((A - 1) + temp3)
    b2 = A * ((A + 1) + temp2 - temp1)
    a0 = (A + 1) - temp2 + temp1
    a1 = 2 * ((A - 1) - temp3)
    a2 = (A + 1) - temp2 - temp1
    return biquad(waveform, b0, b1, b2, a0, a1, a2)


def equalizer_biquad(waveform: ember.Tensor, sample_rate: int, center_freq, gain, Q=0.707
                     ) -> ember.Tensor:
    """A peaking equalizer, like SoX's ``equalizer``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        center_freq (float or Tensor): filter's central frequency (Hz).
        gain (float or Tensor): desired gain at the boost (or attenuation) in dB.
        Q (float or Tensor, optional): Q factor. Default: ``0.707``.
    """
    w0 = _w0(waveform, sample_rate, center_freq)
    A = ember.exp(_coefficient(gain, waveform) / 40.0 * math.log(10))
    alpha, cos = _alpha(w0, Q), ember.cos(w0)
    return biquad(waveform, 1 + alpha * A, -2 * cos, 1 - alpha * A, 1 + alpha / A, -2 * cos,
                  1 - alpha / A)


def deemph_biquad(waveform: ember.Tensor, sample_rate: int) -> ember.Tensor:
    """ISO 908 CD de-emphasis (a treble shelf), like SoX's ``deemph``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): 44100 or 48000 (Hz).
    """
    if sample_rate == 44100:
        central_freq, width_slope, gain = 5283, 0.4845, -9.477
    elif sample_rate == 48000:
        central_freq, width_slope, gain = 5356, 0.479, -9.62
    else:
        raise ValueError("Sample rate must be 44100 (audio-CD) or 48000 (DAT)")
    w0 = 2 * math.pi * central_freq / sample_rate
    A = math.exp(gain / 40.0 * math.log(10))
    alpha = math.sin(w0) / 2 * math.sqrt((A + 1 / A) * (1 / width_slope - 1) + 2)
    temp1 = 2 * math.sqrt(A) * alpha
    temp2 = (A - 1) * math.cos(w0)
    temp3 = (A + 1) * math.cos(w0)
    b0 = A * ((A + 1) + temp2 + temp1)
    b1 = -2 * A * ((A - 1) + temp3)
    b2 = A * ((A + 1) + temp2 - temp1)
    a0 = (A + 1) - temp2 + temp1
    a1 = 2 * ((A - 1) - temp3)
    a2 = (A + 1) - temp2 - temp1
    return biquad(waveform, b0, b1, b2, a0, a1, a2)


_RIAA = {  # zeros and poles of the RIAA playback curve at each supported rate
    44100: ([-0.2014898, 0.9233820], [0.7083149, 0.9924091]),
    48000: ([-0.1766069, 0.9321590], [0.7396325, 0.9931330]),
    88200: ([-0.1168735, 0.9648312], [0.8590646, 0.9964002]),
    96000: ([-0.1141486, 0.9676817], [0.8699137, 0.9966946]),
}


def riaa_biquad(waveform: ember.Tensor, sample_rate: int) -> ember.Tensor:
    """RIAA vinyl playback equalization, like SoX's ``riaa``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): 44100, 48000, 88200 or 96000 (Hz).
    """
    if sample_rate not in _RIAA:
        raise ValueError("Sample rate must be 44.1k, 48k, 88.2k, or 96k")
    zeros, poles = _RIAA[sample_rate]
    b0, b1, b2 = 1.0, -(zeros[0] + zeros[1]), zeros[0] * zeros[1]
    a0, a1, a2 = 1.0, -(poles[0] + poles[1]), poles[0] * poles[1]
    # normalised to 0 dB at 1 kHz
    y = 2 * math.pi * 1000 / sample_rate
    b_re = b0 + b1 * math.cos(-y) + b2 * math.cos(-2 * y)
    a_re = a0 + a1 * math.cos(-y) + a2 * math.cos(-2 * y)
    b_im = b1 * math.sin(-y) + b2 * math.sin(-2 * y)
    a_im = a1 * math.sin(-y) + a2 * math.sin(-2 * y)
    g = 1 / math.sqrt((b_re ** 2 + b_im ** 2) / (a_re ** 2 + a_im ** 2))
    return biquad(waveform, b0 * g, b1 * g, b2 * g, a0, a1, a2)


def contrast(waveform: ember.Tensor, enhancement_amount: float = 75.0) -> ember.Tensor:
    """Make the audio sound louder, like SoX's ``contrast`` (a compression).

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        enhancement_amount (float, optional): in [0, 100]; 0 still changes the audio.
            Default: ``75.0``.
    """
    if not 0 <= enhancement_amount <= 100:
        raise ValueError("Allowed range of value for enhancement_amount : 0-100")
    amount = enhancement_amount / 750.0
    scaled = waveform * (math.pi / 2)
    return ember.sin(scaled + amount * ember.sin(scaled * 4))


def dcshift(waveform: ember.Tensor, shift: float, limiter_gain: float | None = None
            ) -> ember.Tensor:
    """Shift the DC offset, like SoX's ``dcshift``, with an optional limiter.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        shift (float): the shift, in [-2, 2].
        limiter_gain (float or None, optional): applied only where the signal would clip
            (about 0.05). Default: ``None`` (no limiter, the output is clamped).
    """
    if limiter_gain is None or shift == 0:
        return (waveform + shift).clamp(min=-1, max=1)
    threshold = 1.0 - (abs(shift) - limiter_gain)
    shifted = (waveform + shift).clamp(min=-1, max=1)
    if shift > 0:
        mask = waveform > threshold
        limited = (waveform - threshold) * limiter_gain / (1 - threshold)
        limited = (limited + threshold + shift).clamp(max=threshold)
    else:
        mask = waveform < -threshold
        limited = (waveform + threshold) * limiter_gain / (1 - threshold)
        limited = (limited - threshold + shift).clamp(min=-threshold)
    return ember.where(mask, limited, shifted)


def gain(waveform: ember.Tensor, gain_db: float = 1.0) -> ember.Tensor:
    """Apply an amplification or an attenuation to the whole waveform.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        gain_db (float, optional): the gain in decibels. Default: ``1.0``.
    """
    if gain_db == 0:
        return waveform
    return waveform * 10 ** (gain_db / 20)


def overdrive(waveform: ember.Tensor, gain: float = 20, colour: float = 20) -> ember.Tensor:
    """Apply an overdrive (a non-linear distortion), like SoX's ``overdrive``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        gain (float, optional): the gain at the boost in dB, in [0, 100]. Default: ``20``.
        colour (float, optional): the amount of even harmonic content, in [0, 100].
            Default: ``20``.
    """
    _check_float(waveform)
    shape = waveform.shape
    signal = waveform.reshape(-1, shape[-1])
    driven = signal * 10 ** (gain / 20) + colour / 200
    cubic = driven - driven ** 3 / 3
    driven = ember.where(driven < -1, -2.0 / 3.0, ember.where(driven > 1, 2.0 / 3.0, cubic))
    # last_out = driven[i] - driven[i-1] + 0.995 * last_out: a first-order high-pass
    a = ember.tensor([1.0, -0.995], dtype=waveform.dtype, device=waveform.device)
    b = ember.tensor([1.0, -1.0], dtype=waveform.dtype, device=waveform.device)
    last_out = lfilter(driven, a, b, clamp=False)
    return (signal * 0.5 + last_out * 0.75).clamp(min=-1, max=1).reshape(tuple(shape))


def _wave_table(wave_type: str, integer: bool, table_size: int, lo: float, hi: float,
                phase: float):
    """SoX's modulation tables (sine or triangle between ``lo`` and ``hi``), as lists."""
    phase_offset = int(phase / math.pi / 2 * table_size + 0.5)
    values = []
    for t in range(table_size):
        point = (t + phase_offset) % table_size
        if wave_type == "SINE":
            d = (math.sin(point / table_size * 2 * math.pi) + 1) / 2
        else:
            d = point * 2 / table_size
            quarter = 4 * point // table_size
            d = {0: d + 0.5, 1: 1.5 - d, 2: 1.5 - d, 3: d - 1.5}[quarter]
        d = d * (hi - lo) + lo
        if integer:
            d = int(d - 0.5) if d < 0 else int(d + 0.5)
        values.append(d)
    return values


def phaser(waveform: ember.Tensor, sample_rate: int, gain_in: float = 0.4,
           gain_out: float = 0.74, delay_ms: float = 3.0, decay: float = 0.4,
           mod_speed: float = 0.5, sinusoidal: bool = True) -> ember.Tensor:
    """Apply a phasing effect, like SoX's ``phaser``. Differentiable in ``waveform``.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        sample_rate (int): sampling rate of the waveform (Hz).
        gain_in (float, optional): input gain, in [0, 1]. Default: ``0.4``.
        gain_out (float, optional): output gain, in [0, 1e9]. Default: ``0.74``.
        delay_ms (float, optional): delay in milliseconds, in [0, 5]. Default: ``3.0``.
        decay (float, optional): decay, in [0, 0.99]. Default: ``0.4``.
        mod_speed (float, optional): modulation speed in Hz, in [0.1, 2]. Default: ``0.5``.
        sinusoidal (bool, optional): sinusoidal modulation, else triangular.
            Default: ``True``.
    """
    _check_float(waveform)
    shape = waveform.shape
    signal = waveform.reshape(-1, shape[-1]) * gain_in
    buf_len = int(delay_ms * 0.001 * sample_rate + 0.5)
    mod_len = int(sample_rate / mod_speed + 0.5)
    table = _wave_table("SINE" if sinusoidal else "TRIANGLE", True, mod_len, 1.0,
                        float(buf_len), math.pi / 2)
    # SoX's ring buffer: slot delay_pos is written with decay * out[i] at step i; step i
    # reads the slot last written at step `source`, or an untouched (zero) slot.
    zero = ember.zeros(signal.shape[0], dtype=signal.dtype, device=signal.device)
    written = {}
    outputs = []
    delay_pos = mod_pos = 0
    for i in range(shape[-1]):
        slot = int((delay_pos + table[mod_pos]) % buf_len)
        mod_pos = (mod_pos + 1) % mod_len
        delay_pos = (delay_pos + 1) % buf_len
        out = signal[:, i] + written.get(slot, zero)
        written[delay_pos] = out * decay
        outputs.append(out)
    result = (ember.stack(outputs, 1) if outputs else signal) * gain_out
    return result.clamp(min=-1, max=1).reshape(tuple(shape))


def flanger(waveform: ember.Tensor, sample_rate: int, delay: float = 0.0, depth: float = 2.0,
            regen: float = 0.0, width: float = 71.0, speed: float = 0.5, phase: float = 25.0,
            modulation: str = "sinusoidal", interpolation: str = "linear") -> ember.Tensor:
    """Apply a flanger effect, like SoX's ``flanger``. Differentiable in ``waveform``.

    Args:
        waveform (Tensor): audio of dimension ``(..., channel, time)``, at most 4 channels.
        sample_rate (int): sampling rate of the waveform (Hz).
        delay (float, optional): base delay in milliseconds, in [0, 30]. Default: ``0``.
        depth (float, optional): added swept delay in milliseconds, in [0, 10].
            Default: ``2``.
        regen (float, optional): percentage regeneration (feedback), in [-95, 95].
            Default: ``0``.
        width (float, optional): percentage of delayed signal mixed with the original, in
            [0, 100]. Default: ``71``.
        speed (float, optional): sweeps per second (Hz), in [0.1, 10]. Default: ``0.5``.
        phase (float, optional): percentage phase shift between channels, in [0, 100].
            Default: ``25``.
        modulation (str, optional): ``"sinusoidal"`` or ``"triangular"``.
        interpolation (str, optional): ``"linear"`` or ``"quadratic"``.
    """
    if modulation not in ("sinusoidal", "triangular"):
        raise ValueError('Only "sinusoidal" or "triangular" modulation allowed')
    if interpolation not in ("linear", "quadratic"):
        raise ValueError('Only "linear" or "quadratic" interpolation allowed')
    _check_float(waveform)
    if waveform.ndim < 2:
        raise ValueError("Expected waveform of dimension (..., channel, time), got "
                         f"{waveform.ndim}D")
    shape = waveform.shape
    if shape[-2] > 4:
        raise ValueError("Max 4 channels allowed")
    signal = waveform.reshape(-1, shape[-2], shape[-1])
    channels = shape[-2]
    feedback_gain = regen / 100
    delay_gain = width / 100
    in_gain = 1.0 / (1 + delay_gain)
    delay_gain = delay_gain / (1 + delay_gain) * (1 - abs(feedback_gain))
    buf_len = int((delay / 1000 + depth / 1000) * sample_rate + 0.5) + 2
    lfo_len = int(sample_rate / speed)
    table = _wave_table("SINE" if modulation == "sinusoidal" else "TRIANGLE", False, lfo_len,
                        float(math.floor(delay / 1000 * sample_rate + 0.5)), buf_len - 2.0,
                        3 * math.pi / 2)
    # SoX keeps the LFO in single precision.
    table = np.asarray(table, dtype=np.float32).tolist()
    offsets = [int(c * lfo_len * phase / 100 + 0.5) for c in range(channels)]
    # The ring buffer holds the last buf_len written frames: reading `d` slots ahead of the
    # write position reads the frame written d steps ago (0 steps: the one just written).
    zero = ember.zeros(signal.shape[0], dtype=signal.dtype, device=signal.device)
    written = [[] for _ in range(channels)]
    last = [zero] * channels
    columns = [[] for _ in range(channels)]
    taps = 3 if interpolation == "quadratic" else 2
    for i in range(shape[-1]):
        lfo_pos = i % lfo_len
        for c in range(channels):
            value = table[(lfo_pos + offsets[c]) % lfo_len]
            frac = value - math.floor(value)
            base = int(math.floor(value))
            written[c].append(signal[:, c, i] + last[c] * feedback_gain)
            history = written[c]
            taps_now = []
            for j in range(taps):
                back = (base + j) % buf_len
                taps_now.append(history[i - back] if i - back >= 0 else zero)
            if interpolation == "linear":
                delayed = taps_now[0] + (taps_now[1] - taps_now[0]) * frac
            else:
                d2 = taps_now[2] - taps_now[0]
                d1 = taps_now[1] - taps_now[0]
                a = d2 * 0.5 - d1
                b = d1 * 2 - d2 * 0.5
                delayed = taps_now[0] + (a * frac + b) * frac
            last[c] = delayed
            columns[c].append(signal[:, c, i] * in_gain + delayed * delay_gain)
    if shape[-1] == 0:
        return waveform.clamp(min=-1, max=1)
    result = ember.stack([ember.stack(col, -1) for col in columns], 1)
    return result.clamp(min=-1, max=1).reshape(tuple(shape))


def preemphasis(waveform: ember.Tensor, coeff: float = 0.97) -> ember.Tensor:
    r"""Pre-emphasize a waveform along its last dimension:
    :math:`y[i] = x[i] - \text{coeff} \cdot x[i - 1]`.

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        coeff (float, optional): the pre-emphasis coefficient, typically between 0.0 and
            1.0. Default: ``0.97``.
    """
    if waveform.shape[-1] == 0:
        return waveform.clone()
    rest = waveform[..., 1:] - coeff * waveform[..., :-1]
    return ember.cat([waveform[..., :1], rest], -1)


def deemphasis(waveform: ember.Tensor, coeff: float = 0.97) -> ember.Tensor:
    r"""De-emphasize a waveform along its last dimension, the inverse of
    :func:`preemphasis`: :math:`y[i] = x[i] + \text{coeff} \cdot y[i - 1]` (clamped to
    [-1, 1], as ``lfilter``).

    Args:
        waveform (Tensor): audio of dimension ``(..., time)``.
        coeff (float, optional): the de-emphasis coefficient. Default: ``0.97``.
    """
    a = ember.tensor([1.0, -coeff], dtype=waveform.dtype, device=waveform.device)
    b = ember.tensor([1.0, 0.0], dtype=waveform.dtype, device=waveform.device)
    return lfilter(waveform, a, b)


def loudness(waveform: ember.Tensor, sample_rate: int) -> ember.Tensor:
    r"""Measure audio loudness according to the ITU-R BS.1770-4 recommendation: K-weighting
    (a high shelf and a high-pass), mean-square energy of 400 ms blocks overlapping by 75 %,
    channel weights, then the absolute (-70 LKFS) and relative (-10 LU) gates.

    Args:
        waveform (Tensor): audio data of dimension ``(..., channels, time)``, at most 5
            channels (L, R, C, Ls, Rs).
        sample_rate (int): sampling rate of the waveform.

    Returns:
        Tensor: loudness estimates (LKFS), ``(...)``.
    """
    if waveform.ndim < 2:
        raise ValueError("Expected waveform of dimension (..., channels, time), got "
                         f"{waveform.ndim}D")
    if waveform.shape[-2] > 5:
        raise ValueError("Only up to 5 channels are supported.")
    gate_samples = int(round(0.4 * sample_rate))
    step = int(round(gate_samples * (1 - 0.75)))
    if waveform.shape[-1] < gate_samples:
        raise ValueError(f"The waveform ({waveform.shape[-1]} frames) is shorter than one "
                         f"400 ms block ({gate_samples} frames at {sample_rate} Hz)")
    kweight_bias = -0.691
    weighted = treble_biquad(waveform, sample_rate, 4.0, 1500.0, 1 / math.sqrt(2))
    weighted = highpass_biquad(weighted, sample_rate, 38.0, 0.5)
    energy = (weighted ** 2).unfold(-1, gate_samples, step).mean(-1)  # (..., channels, blocks)
    g = ember.tensor([1.0, 1.0, 1.0, 1.41, 1.41], dtype=waveform.dtype,
                     device=waveform.device)[:energy.shape[-2]]
    block_loudness = kweight_bias + 10 * ember.log10((g.unsqueeze(-1) * energy).sum(-2))

    def gated_energy(gate):
        mask = gate.unsqueeze(-2).to(energy.dtype)
        filtered = (mask * energy).sum(-1) / mask.sum(-1)
        return (g * filtered).sum(-1)

    absolute = block_loudness > -70.0
    gamma_rel = kweight_bias + 10 * ember.log10(gated_energy(absolute)) - 10
    relative = absolute & (block_loudness > gamma_rel.unsqueeze(-1))
    return kweight_bias + 10 * ember.log10(gated_energy(relative))
