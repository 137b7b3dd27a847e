"""SoX-style effects that need the FFT or randomness: voice activity detection (``vad``) and
dithering (``dither``), with torchaudio's numbers; and ``apply_codec``, an encode/decode
round trip through libsndfile.

NOTE [ vad is sequential ]
SoX's ``vad`` walks the signal one measurement period at a time, updating smoothed spectra
and a noise estimate, and stops at the first trigger; each step depends on the previous one,
so the walk is a Python loop over periods (small FFTs on the waveform's device) and the
trigger bookkeeping runs on Python floats, as in torchaudio. It is not differentiable
(torchaudio's is not either): its output is a slice of the input.
"""

from __future__ import annotations

import math
import warnings

import ember
from emberaudio.functional._spectral import _pack

__all__ = ["apply_codec", "dither", "fade", "vad"]

FADE_SHAPES = ("linear", "exponential", "logarithmic", "quarter_sine", "half_sine")


def _measure(measure_len_ws: int, samples: ember.Tensor, spectrum: ember.Tensor,
             noise_spectrum: ember.Tensor, spectrum_window: ember.Tensor, spectrum_start: int,
             spectrum_end: int, cepstrum_window: ember.Tensor, cepstrum_start: int,
             cepstrum_end: int, noise_reduction_amount: float, measure_smooth_time_mult: float,
             noise_up_time_mult: float, noise_down_time_mult: float, boot_count: int
             ) -> tuple[float, ember.Tensor, ember.Tensor]:
    """One measurement of cepstral power; returns it with the updated spectra."""
    dft_len_ws = spectrum.shape[-1]
    frame = ember.zeros(dft_len_ws, device=samples.device)
    frame[:measure_len_ws] = samples * spectrum_window[:measure_len_ws]
    bins = ember.fft.rfft(frame)
    mult = boot_count / (1.0 + boot_count) if boot_count >= 0 else measure_smooth_time_mult
    band = slice(spectrum_start, spectrum_end)
    spectrum = spectrum.clone()
    spectrum[band] = spectrum[band] * mult + bins[band].abs() * (1 - mult)
    power = spectrum[band] ** 2
    if boot_count >= 0:
        noise_mult = ember.zeros(spectrum_end - spectrum_start, device=samples.device)
    else:
        noise_mult = ember.where(power > noise_spectrum[band],
                                 ember.tensor(noise_up_time_mult, device=samples.device),
                                 ember.tensor(noise_down_time_mult, device=samples.device))
    noise_spectrum = noise_spectrum.clone()
    noise_spectrum[band] = noise_spectrum[band] * noise_mult + power * (1 - noise_mult)
    magnitude = ember.sqrt(ember.clamp(power - noise_reduction_amount * noise_spectrum[band],
                                       min=0.0))
    cepstrum = ember.zeros(dft_len_ws >> 1, device=samples.device)
    cepstrum[band] = magnitude * cepstrum_window
    cepstrum = ember.fft.rfft(cepstrum)
    result = float(cepstrum[cepstrum_start:cepstrum_end].abs().pow(2).sum())
    result = math.log(result / (cepstrum_end - cepstrum_start)) if result > 0 else -math.inf
    return max(0.0, 21 + result), spectrum, noise_spectrum


def vad(waveform: ember.Tensor, sample_rate: int, trigger_level: float = 7.0,
        trigger_time: float = 0.25, search_time: float = 1.0, allowed_gap: float = 0.25,
        pre_trigger_time: float = 0.0, boot_time: float = 0.35, noise_up_time: float = 0.1,
        noise_down_time: float = 0.01, noise_reduction_amount: float = 1.35,
        measure_freq: float = 20.0, measure_duration: float | None = None,
        measure_smooth_time: float = 0.4, hp_filter_freq: float = 50.0,
        lp_filter_freq: float = 6000.0, hp_lifter_freq: float = 150.0,
        lp_lifter_freq: float = 2000.0) -> ember.Tensor:
    r"""Voice Activity Detector, similar to SoX's ``vad``.

    Attempts to trim silence and quiet background sounds from the ends of recordings of
    speech, with a simple cepstral power measurement (so it may be fooled by other sounds,
    especially music). It trims only from the front; to trim the back, reverse first.

    Args:
        waveform (Tensor): tensor of audio of dimension ``(channels, time)`` or ``(time)``;
            channels are treated as recordings of the same event and the output is trimmed
            to the earliest voice activity in any channel.
        sample_rate (int): sample rate of audio signal.
        trigger_level (float, optional): the measurement level used to trigger activity
            detection. Default: ``7.0``.
        trigger_time (float, optional): the time constant (in seconds) used to help ignore
            short bursts of sound. Default: ``0.25``.
        search_time (float, optional): the amount of audio (in seconds) to search for
            quieter/shorter bursts of audio to include prior to the trigger point.
            Default: ``1.0``.
        allowed_gap (float, optional): the allowed gap (in seconds) between quieter/shorter
            bursts of audio to include prior to the trigger point. Default: ``0.25``.
        pre_trigger_time (float, optional): the amount of audio (in seconds) to preserve
            before the trigger point and any found quieter/shorter bursts. Default: ``0.0``.
        boot_time (float, optional): the time for the initial noise estimate.
            Default: ``0.35``.
        noise_up_time (float, optional): time constant of the adaptive noise estimator when
            the noise level is increasing. Default: ``0.1``.
        noise_down_time (float, optional): time constant of the adaptive noise estimator
            when the noise level is decreasing. Default: ``0.01``.
        noise_reduction_amount (float, optional): amount of noise reduction to use in the
            detection algorithm. Default: ``1.35``.
        measure_freq (float, optional): frequency of the algorithm's measurements.
            Default: ``20.0``.
        measure_duration (float or None, optional): measurement duration; ``None`` is twice
            the measurement period. Default: ``None``.
        measure_smooth_time (float, optional): time constant used to smooth spectral
            measurements. Default: ``0.4``.
        hp_filter_freq (float, optional): "brick-wall" frequency of the high-pass filter
            applied at the input to the detector. Default: ``50.0``.
        lp_filter_freq (float, optional): "brick-wall" frequency of the low-pass filter
            applied at the input to the detector. Default: ``6000.0``.
        hp_lifter_freq (float, optional): "brick-wall" frequency of the high-pass lifter.
            Default: ``150.0``.
        lp_lifter_freq (float, optional): "brick-wall" frequency of the low-pass lifter.
            Default: ``2000.0``.

    Returns:
        Tensor: tensor of audio of dimension ``(..., time)``, trimmed at the front (empty in
        time when no activity triggers).
    """
    if waveform.ndim == 0:
        raise ValueError("waveform must have a time dimension, got a 0-dimensional tensor")
    if waveform.ndim > 2:
        warnings.warn("Expected input tensor dimension of 1 for single channel or 2 for "
                      f"multi-channel. Got {waveform.ndim} instead. Batch semantics is not "
                      "supported. Please refer to https://github.com/pytorch/audio/issues/1348 "
                      "and https://github.com/pytorch/audio/issues/1468.", stacklevel=2)
    if waveform.shape[-1] == 0 or waveform.numel() == 0:
        return waveform[..., :0]
    if sample_rate <= 0 or measure_freq <= 0:
        raise ValueError(f"sample_rate and measure_freq must be positive, got {sample_rate} and "
                         f"{measure_freq}")
    device = waveform.device
    measure_duration = 2.0 / measure_freq if measure_duration is None else measure_duration
    measure_len_ws = int(sample_rate * measure_duration + 0.5)
    measure_len_ns = measure_len_ws
    dft_len_ws = 16
    while dft_len_ws < measure_len_ws:
        dft_len_ws *= 2
    measure_period_ns = int(sample_rate / measure_freq + 0.5)
    measures_len = math.ceil(search_time * measure_freq)
    search_pre_trigger_len_ns = measures_len * measure_period_ns
    gap_len = int(allowed_gap * measure_freq + 0.5)
    fixed_pre_trigger_len_ns = int(pre_trigger_time * sample_rate + 0.5)
    samples_len_ns = fixed_pre_trigger_len_ns + search_pre_trigger_len_ns + measure_len_ns

    spectrum_window = (ember.full((measure_len_ws,), 2.0 / math.sqrt(float(measure_len_ws)),
                                  device=device)
                       * ember.hann_window(measure_len_ws, device=device, dtype=ember.float32))
    spectrum_start = max(int(hp_filter_freq / sample_rate * dft_len_ws + 0.5), 1)
    spectrum_end = min(int(lp_filter_freq / sample_rate * dft_len_ws + 0.5), dft_len_ws // 2)
    width = spectrum_end - spectrum_start
    if width <= 0:
        raise ValueError(f"Expected hp_filter_freq ({hp_filter_freq}) to be below "
                         f"lp_filter_freq ({lp_filter_freq}) by at least one DFT bin.")
    cepstrum_window = (ember.full((width,), 2.0 / math.sqrt(float(width)), device=device)
                       * ember.hann_window(width, device=device, dtype=ember.float32))
    cepstrum_start = math.ceil(sample_rate * 0.5 / lp_lifter_freq)
    cepstrum_end = min(math.floor(sample_rate * 0.5 / hp_lifter_freq), dft_len_ws // 4)
    if cepstrum_end <= cepstrum_start:
        raise ValueError("Expected cepstrum_start to be smaller than cepstrum_end."
                         f"Found: cepstrum_start: {cepstrum_start}, cepstrum_end: "
                         f"{cepstrum_end}.")
    noise_up_time_mult = math.exp(-1.0 / (noise_up_time * measure_freq))
    noise_down_time_mult = math.exp(-1.0 / (noise_down_time * measure_freq))
    measure_smooth_time_mult = math.exp(-1.0 / (measure_smooth_time * measure_freq))
    trigger_meas_time_mult = math.exp(-1.0 / (trigger_time * measure_freq))
    boot_count_max = int(boot_time * measure_freq - 0.5)
    boot_count = measures_index = flushed_len_ns = 0

    shape = waveform.shape
    rows = _pack(waveform, 1)
    n_channels, ilen = rows.shape
    mean_meas = [0.0] * n_channels
    spectra = [ember.zeros(dft_len_ws, device=device) for _ in range(n_channels)]
    noise_spectra = [ember.zeros(dft_len_ws, device=device) for _ in range(n_channels)]
    measures = [[0.0] * measures_len for _ in range(n_channels)]
    has_triggered = False
    num_measures_to_flush = 0
    pos = 0
    for pos in range(measure_len_ns, ilen, measure_period_ns):
        for i in range(n_channels):
            meas, spectra[i], noise_spectra[i] = _measure(
                measure_len_ws, rows[i, pos - measure_len_ws:pos], spectra[i],
                noise_spectra[i], spectrum_window, spectrum_start, spectrum_end,
                cepstrum_window, cepstrum_start, cepstrum_end, noise_reduction_amount,
                measure_smooth_time_mult, noise_up_time_mult, noise_down_time_mult, boot_count)
            measures[i][measures_index] = ember.tensor(meas).item()  # a float32 table
            # the running mean is kept in float32, as torchaudio's tensor of means is
            mean_meas[i] = float(ember.tensor(mean_meas[i] * trigger_meas_time_mult
                                              + meas * (1.0 - trigger_meas_time_mult)))
            has_triggered = has_triggered or mean_meas[i] >= trigger_level
            if has_triggered:
                n = measures_len
                k = measures_index
                j_trigger = j_zero = n
                j = 0
                for j in range(n):
                    if measures[i][k] >= trigger_level and j <= j_trigger + gap_len:
                        j_zero = j_trigger = j
                    elif measures[i][k] == 0 and j_trigger >= j_zero:
                        j_zero = j
                    k = (k + n - 1) % n
                j = min(j, j_zero)
                num_measures_to_flush = min(max(num_measures_to_flush, j), n)
        measures_index = (measures_index + 1) % measures_len
        if boot_count >= 0:
            boot_count = -1 if boot_count == boot_count_max else boot_count + 1
        if has_triggered:
            flushed_len_ns = (measures_len - num_measures_to_flush) * measure_period_ns
            break
    if not has_triggered:
        return rows[..., :0].reshape(*shape[:-1], 0)
    # a negative start counts from the end, as torchaudio's slice does
    res = rows[:, pos - samples_len_ns + flushed_len_ns:]
    return res.reshape(*shape[:-1], res.shape[-1])


def _add_noise_shaping(dithered: ember.Tensor, waveform: ember.Tensor) -> ember.Tensor:
    """``dithered[n] + error[n - 1]`` with ``error = dithered - waveform``."""
    shape = dithered.shape
    rows = _pack(dithered, 1)
    error = rows - _pack(waveform, 1)
    delayed = ember.cat([error.new_zeros((error.shape[0], 1)), error[:, :-1]], dim=1)
    return (rows + delayed).reshape(tuple(shape))


def _random_index(high: int) -> int:
    return int(ember.randint(high, (1,)).item()) if high > 0 else 0


def _apply_probability_distribution(waveform: ember.Tensor, density_function: str = "TPDF"
                                    ) -> ember.Tensor:
    shape = waveform.shape
    rows = _pack(waveform, 1)
    channel_size = rows.shape[0] - 1
    time_size = rows.shape[-1] - 1
    random_channel = _random_index(channel_size)
    random_time = _random_index(time_size)
    number_of_bits = 16
    up_scaling = 2 ** (number_of_bits - 1) - 2
    down_scaling = 2 ** (number_of_bits - 1)
    signal_scaled = rows * up_scaling
    if density_function == "RPDF":
        # torchaudio's "rectangular" noise is one sample of the signal, offset by -0.5
        signal_scaled_dis = signal_scaled + (rows[random_channel, random_time] - 0.5)
    elif density_function == "GPDF":
        # a sum of seven samples of the signal at random places (torchaudio's "gaussian")
        gaussian = rows[random_channel, random_time]
        for _ in range(6):
            gaussian = gaussian + rows[_random_index(channel_size), _random_index(time_size)]
        signal_scaled_dis = signal_scaled + gaussian
    else:
        tpdf = ember.bartlett_window(time_size + 1, dtype=signal_scaled.dtype,
                                     device=signal_scaled.device)
        signal_scaled_dis = signal_scaled + tpdf.repeat(channel_size + 1, 1)
    quantised = ember.round(signal_scaled_dis) / down_scaling
    return quantised.reshape(*shape[:-1], quantised.shape[-1])


def dither(waveform: ember.Tensor, density_function: str = "TPDF",
           noise_shaping: bool = False) -> ember.Tensor:
    r"""Apply dither: quantise to 16 bits after adding a small noise, which masks the
    nonlinear truncation distortion of quantisation.

    Args:
        waveform (Tensor): tensor of audio of dimension ``(..., time)``.
        density_function (str, optional): the density function of the noise: ``"TPDF"``
            (triangular), ``"RPDF"`` (rectangular) or ``"GPDF"`` (gaussian), as torchaudio
            defines them. Default: ``"TPDF"``.
        noise_shaping (bool, optional): shape the spectral energy of the quantisation error
            (add the previous sample's error). Default: ``False``.

    Returns:
        Tensor: the dithered waveform.
    """
    if density_function not in ("TPDF", "RPDF", "GPDF"):
        raise ValueError(f'density_function must be one of "TPDF", "RPDF" or "GPDF", got '
                         f"{density_function!r}")
    if waveform.ndim == 0:
        raise ValueError("waveform must have a time dimension, got a 0-dimensional tensor")
    if waveform.numel() == 0:
        return waveform.clone()
    dithered = _apply_probability_distribution(waveform, density_function=density_function)
    if noise_shaping:
        return _add_noise_shaping(dithered, waveform)
    return dithered


def apply_codec(waveform: ember.Tensor, sample_rate: int, format: str,
                channels_first: bool = True, compression: float | None = None,
                encoding: str | None = None, bits_per_sample: int | None = None
                ) -> ember.Tensor:
    r"""Apply a codec as a form of augmentation: encode the waveform in ``format`` in memory
    and decode it back (through :func:`emberaudio.save` and :func:`emberaudio.load`, that
    is libsndfile, where torchaudio used SoX; torchaudio deprecates this function).

    Args:
        waveform (Tensor): audio data, 2D (see ``channels_first``).
        sample_rate (int): sample rate of the audio waveform.
        format (str): file format: ``"wav"``, ``"flac"``, ``"ogg"``/``"vorbis"``,
            ``"mp3"``... (what :func:`emberaudio.save` writes).
        channels_first (bool, optional): ``(channel, time)`` if ``True``, ``(time, channel)``
            otherwise, for input and output. Default: ``True``.
        compression (float or None, optional): the compression level of formats other
            than WAV (see :func:`emberaudio.save`).
        encoding (str or None, optional): the encoding, e.g. ``"PCM_S"``, ``"ULAW"``.
        bits_per_sample (int or None, optional): the bit depth, e.g. 8, 16, 24.

    Returns:
        Tensor: the decoded waveform, in the same layout (float32, resampled back to
        ``sample_rate`` if the codec changed it).
    """
    import io

    from emberaudio._io import load, save
    from emberaudio.functional._resample import resample

    if waveform.ndim != 2:
        raise ValueError(f"apply_codec expects a 2D waveform, got {waveform.ndim}D")
    buffer = io.BytesIO()
    save(buffer, waveform.detach().cpu(), sample_rate, channels_first=channels_first,
         format=format, encoding=encoding, bits_per_sample=bits_per_sample,
         compression=compression)
    buffer.seek(0)
    augmented, rate = load(buffer, channels_first=channels_first, format=format)
    if rate != sample_rate:
        augmented = resample(augmented, rate, sample_rate)
    return augmented.to(waveform.device)


def _fade_in_curve(length, n, shape, device):
    fade = ember.linspace(0, 1, n, device=device)
    ones = ember.ones(length - n, device=device)
    if shape == "exponential":
        fade = ember.pow(2, fade - 1) * fade
    elif shape == "logarithmic":
        fade = ember.log10(0.1 + fade) + 1
    elif shape == "quarter_sine":
        fade = ember.sin(fade * math.pi / 2)
    elif shape == "half_sine":
        fade = ember.sin(fade * math.pi - math.pi / 2) / 2 + 0.5
    return ember.cat((fade, ones)).clamp(0, 1)


def _fade_out_curve(length, n, shape, device):
    fade = ember.linspace(0, 1, n, device=device)
    ones = ember.ones(length - n, device=device)
    if shape == "linear":
        fade = -fade + 1
    elif shape == "exponential":
        fade = ember.pow(2, -fade) * (1 - fade)
    elif shape == "logarithmic":
        fade = ember.log10(1.1 - fade) + 1
    elif shape == "quarter_sine":
        fade = ember.sin(fade * math.pi / 2 + math.pi / 2)
    else:
        fade = ember.sin(fade * math.pi + math.pi / 2) / 2 + 0.5
    return ember.cat((ones, fade)).clamp(0, 1)


def fade(waveform, fade_in_len: int = 0, fade_out_len: int = 0, fade_shape: str = "linear"):
    """``waveform`` (``(..., time)``) with a fade-in over its first ``fade_in_len`` frames
    and a fade-out over its last ``fade_out_len``; ``fade_shape``: ``"linear"``,
    ``"exponential"``, ``"logarithmic"``, ``"quarter_sine"`` or ``"half_sine"``. The function
    form of :class:`~emberaudio.transforms.Fade` (torchaudio has only the transform): the
    same curves, the same numbers."""
    if fade_shape not in FADE_SHAPES:
        raise ValueError(f"fade_shape must be one of {list(FADE_SHAPES)}, got {fade_shape!r}")
    if fade_in_len < 0 or fade_out_len < 0:
        raise ValueError("fade_in_len and fade_out_len must be non-negative")
    length = waveform.shape[-1]
    if fade_in_len > length or fade_out_len > length:
        raise ValueError(f"The fades ({fade_in_len} in, {fade_out_len} out) are longer than "
                         f"the waveform ({length} frames)")
    device = waveform.device
    return (_fade_in_curve(length, fade_in_len, fade_shape, device)
            * _fade_out_curve(length, fade_out_len, fade_shape, device) * waveform)
