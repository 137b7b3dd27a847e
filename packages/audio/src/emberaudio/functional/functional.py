"""Functional audio ops that need no FFT: scales, filter banks, companding, deltas,
masking, normalisation, noise, convolution, pitch detection and edit distance."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import ember
import ember.nn.functional as F

__all__ = [
    "DB_to_amplitude", "add_noise", "amplitude_to_DB", "compute_deltas", "convolve",
    "create_dct", "detect_pitch_frequency", "edit_distance", "linear_fbanks",
    "mask_along_axis", "mask_along_axis_iid", "melscale_fbanks", "mu_law_decoding",
    "mu_law_encoding", "sliding_window_cmn",
]


def amplitude_to_DB(x: ember.Tensor, multiplier: float, amin: float, db_multiplier: float,
                    top_db: float | None = None) -> ember.Tensor:
    r"""Turn a spectrogram from the power/amplitude scale to the decibel scale.

    The output of each tensor in a batch depends on the maximum value of that tensor, and
    so may return different values for an audio clip split into snippets vs. a full clip.

    Args:
        x (Tensor): input spectrogram(s) before being converted to decibel scale; the input
            should take the form ``(..., freq, time)``; batched inputs should include a
            channel dimension and have the form ``(batch, channel, freq, time)``.
        multiplier (float): use 10. for power and 20. for amplitude.
        amin (float): number to clamp ``x``.
        db_multiplier (float): log10(max(reference value and amin)).
        top_db (float or None, optional): minimum negative cut-off in decibels; a
            reasonable number is 80. Default: ``None``.

    Returns:
        Tensor: output tensor in decibel scale.
    """
    x_db = multiplier * ember.log10(ember.clamp(x, min=amin))
    x_db = x_db - multiplier * db_multiplier
    if top_db is not None:
        shape = x_db.shape
        packed_channels = shape[-3] if x_db.ndim > 2 else 1
        x_db = x_db.reshape(-1, packed_channels, shape[-2], shape[-1])
        floor = x_db.amax(dim=(-3, -2, -1)) - top_db
        x_db = ember.maximum(x_db, floor.reshape(-1, 1, 1, 1))
        x_db = x_db.reshape(tuple(shape))
    return x_db


def DB_to_amplitude(x: ember.Tensor, ref: float, power: float) -> ember.Tensor:
    r"""Turn a tensor from the decibel scale to the power/amplitude scale.

    Args:
        x (Tensor): input tensor before being converted to power/amplitude scale.
        ref (float): reference which the output will be scaled by.
        power (float): if power equals 1, will compute DB to power. If 0.5, will compute
            DB to amplitude.

    Returns:
        Tensor: output tensor in power/amplitude scale.
    """
    return ref * ember.pow(ember.pow(10.0, 0.1 * x), power)


def mu_law_encoding(x: ember.Tensor, quantization_channels: int) -> ember.Tensor:
    r"""Encode a signal based on mu-law companding; the input is expected in [-1, 1].

    Args:
        x (Tensor): input tensor.
        quantization_channels (int): number of channels.

    Returns:
        Tensor: input after mu-law encoding, int64 in ``[0, quantization_channels - 1]``.
    """
    mu = quantization_channels - 1.0
    if not x.is_floating_point():
        warnings.warn("The input Tensor must be of floating type. This will be an error in "
                      "the v0.12 release.", stacklevel=2)
        x = x.to(ember.float32)
    mu = ember.tensor(mu, dtype=x.dtype, device=x.device)
    x_mu = ember.sign(x) * ember.log1p(mu * ember.abs(x)) / ember.log1p(mu)
    return ((x_mu + 1) / 2 * mu + 0.5).to(ember.int64)


def mu_law_decoding(x_mu: ember.Tensor, quantization_channels: int) -> ember.Tensor:
    r"""Decode mu-law encoded signal, the inverse of :func:`mu_law_encoding`.

    Args:
        x_mu (Tensor): input tensor.
        quantization_channels (int): number of channels.

    Returns:
        Tensor: input after mu-law decoding, in [-1, 1].
    """
    mu = quantization_channels - 1.0
    if not x_mu.is_floating_point():
        x_mu = x_mu.to(ember.float32)
    mu = ember.tensor(mu, dtype=x_mu.dtype, device=x_mu.device)
    x = x_mu / mu * 2 - 1.0
    return ember.sign(x) * (ember.exp(ember.abs(x) * ember.log1p(mu)) - 1.0) / mu


def _hz_to_mel(freq: float, mel_scale: str = "htk") -> float:
    if mel_scale not in ("slaney", "htk"):
        raise ValueError('mel_scale should be one of "htk" or "slaney".')
    if mel_scale == "htk":
        return 2595.0 * math.log10(1.0 + freq / 700.0)
    f_sp = 200.0 / 3
    mels = freq / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    if freq >= min_log_hz:
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels: ember.Tensor, mel_scale: str = "htk") -> ember.Tensor:
    if mel_scale not in ("slaney", "htk"):
        raise ValueError('mel_scale should be one of "htk" or "slaney".')
    if mel_scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_sp = 200.0 / 3
    freqs = f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return ember.where(mels >= min_log_mel,
                       min_log_hz * ember.exp(logstep * (mels - min_log_mel)), freqs)


def _triangular_filterbank(all_freqs: ember.Tensor, f_pts: ember.Tensor) -> ember.Tensor:
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = -1.0 * slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return ember.clamp(ember.minimum(down, up), min=0.0)


def _check_bank_args(n_freqs: int, n_filters: int, name: str) -> None:
    for value, what in ((n_freqs, "n_freqs"), (n_filters, name)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{what} must be a non-negative integer, got {value!r}")


def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int,
                    norm: str | None = None, mel_scale: str = "htk") -> ember.Tensor:
    r"""Create a frequency bin conversion matrix.

    Args:
        n_freqs (int): number of frequencies to highlight/apply.
        f_min (float): minimum frequency (Hz).
        f_max (float): maximum frequency (Hz).
        n_mels (int): number of mel filterbanks.
        sample_rate (int): sample rate of the audio waveform.
        norm (str or None, optional): if ``"slaney"``, divide the triangular mel weights by
            the width of the mel band (area normalization). Default: ``None``.
        mel_scale (str, optional): scale to use: ``"htk"`` or ``"slaney"``.
            Default: ``"htk"``.

    Returns:
        Tensor: triangular filter banks (fb matrix) of size (``n_freqs``, ``n_mels``),
        meaning the number of frequencies to highlight/apply to x the number of
        filterbanks; ``A @ melscale_fbanks(A.size(-1), ...)`` is the mel spectrogram of a
        spectrogram ``A`` of shape (..., ``n_freqs``).
    """
    if norm is not None and norm != "slaney":
        raise ValueError('norm must be one of None or "slaney"')
    _check_bank_args(n_freqs, n_mels, "n_mels")
    all_freqs = ember.linspace(0, sample_rate // 2, n_freqs)
    m_min = _hz_to_mel(f_min, mel_scale=mel_scale)
    m_max = _hz_to_mel(f_max, mel_scale=mel_scale)
    m_pts = ember.linspace(m_min, m_max, n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale=mel_scale)
    fb = _triangular_filterbank(all_freqs, f_pts)
    if norm == "slaney":
        enorm = 2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])
        fb = fb * enorm.unsqueeze(0)
    if n_freqs and n_mels and bool((fb.amax(dim=0) == 0.0).any()):
        warnings.warn(
            "At least one mel filterbank has all zero values. The value for `n_mels` "
            f"({n_mels}) may be set too high. Or, the value for `n_freqs` ({n_freqs}) may be "
            "set too low.", stacklevel=2)
    return fb


def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int,
                  sample_rate: int) -> ember.Tensor:
    r"""Create linear triangular filter banks.

    Args:
        n_freqs (int): number of frequencies to highlight/apply.
        f_min (float): minimum frequency (Hz).
        f_max (float): maximum frequency (Hz).
        n_filter (int): number of (linear) triangular filters.
        sample_rate (int): sample rate of the audio waveform.

    Returns:
        Tensor: triangular filter banks (fb matrix) of size (``n_freqs``, ``n_filter``).
    """
    _check_bank_args(n_freqs, n_filter, "n_filter")
    all_freqs = ember.linspace(0, sample_rate // 2, n_freqs)
    f_pts = ember.linspace(f_min, f_max, n_filter + 2)
    return _triangular_filterbank(all_freqs, f_pts)


def create_dct(n_mfcc: int, n_mels: int, norm: str | None) -> ember.Tensor:
    r"""Create a DCT transformation matrix with shape (``n_mels``, ``n_mfcc``), normalized
    depending on norm (a DCT-II).

    Args:
        n_mfcc (int): number of mfc coefficients to retain.
        n_mels (int): number of mel filterbanks.
        norm (str or None): norm to use (either ``"ortho"`` or ``None``).

    Returns:
        Tensor: the transformation matrix, to be right-multiplied to row-wise data of size
        (``n_mels``, ``n_mfcc``).
    """
    if norm is not None and norm != "ortho":
        raise ValueError('norm must be either "ortho" or None')
    if n_mels <= 0 or n_mfcc < 0:
        raise ValueError(f"n_mels must be positive and n_mfcc non-negative, got n_mels="
                         f"{n_mels}, n_mfcc={n_mfcc}")
    n = ember.arange(float(n_mels))
    k = ember.arange(float(n_mfcc)).unsqueeze(1)
    dct = ember.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    if norm is None:
        dct = dct * 2.0
    else:
        first = ember.ones(n_mfcc, 1)
        if n_mfcc:
            first[0] = 1.0 / math.sqrt(2.0)
        dct = dct * first * math.sqrt(2.0 / float(n_mels))
    return dct.t()


def compute_deltas(specgram: ember.Tensor, win_length: int = 5, mode: str = "replicate"
                   ) -> ember.Tensor:
    r"""Compute delta coefficients of a tensor, usually a spectrogram:

    .. math::
       d_t = \frac{\sum_{n=1}^{N} n (c_{t+n} - c_{t-n})}{2 \sum_{n=1}^{N} n^2}

    where :math:`N = (\text{win\_length} - 1) // 2`.

    Args:
        specgram (Tensor): tensor of audio of dimension ``(..., freq, time)``.
        win_length (int, optional): the window length used for computing delta.
            Default: ``5``.
        mode (str, optional): mode parameter passed to padding. Default: ``"replicate"``.

    Returns:
        Tensor: tensor of deltas of dimension ``(..., freq, time)``.
    """
    if win_length < 3:
        raise ValueError("Window length should be greater than or equal to 3. Found "
                         f"win_length {win_length}")
    shape = specgram.shape
    rows = specgram.reshape(1, -1, shape[-1])
    n = (win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3
    rows = F.pad(rows, (n, n), mode=mode)
    kernel = ember.arange(-n, n + 1, 1, dtype=specgram.dtype, device=specgram.device)
    kernel = kernel.repeat(rows.shape[1], 1, 1)
    return (F.conv1d(rows, kernel, groups=rows.shape[1]) / denom).reshape(tuple(shape))


def _get_mask_param(mask_param: int, p: float, axis_length: int) -> int:
    return mask_param if p == 1.0 else min(mask_param, int(axis_length * p))


def _check_mask_args(dim: int, axis: int, p: float, least: int) -> None:
    if dim < least:
        what = "three dimensions" if least == 3 else "two dimensions (time and frequency)"
        raise ValueError(f"Spectrogram must have at least {what} ({dim} given).")
    if axis not in (dim - 2, dim - 1):
        raise ValueError(f"Only Frequency and Time masking are supported (axis {dim - 2} and "
                         f"axis {dim - 1} supported; {axis} given).")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")


def mask_along_axis_iid(specgrams: ember.Tensor, mask_param: int, mask_value: float,
                        axis: int, p: float = 1.0) -> ember.Tensor:
    r"""Apply a mask along ``axis``, drawn independently for each example and channel:
    ``[v_0, v_0 + v)`` with ``v`` from ``uniform(0, max_v)`` and ``v_0`` from
    ``uniform(0, specgrams.size(axis) - v)``, where ``max_v = mask_param`` when ``p = 1``
    and ``min(mask_param, floor(specgrams.size(axis) * p))`` otherwise.

    Args:
        specgrams (Tensor): real spectrograms ``(..., freq, time)``, at least 3D.
        mask_param (int): number of columns to be masked is uniformly sampled from
            ``[0, mask_param]``.
        mask_value (float): value to assign to the masked columns.
        axis (int): axis to apply masking on (``ndim - 2`` or ``ndim - 1``).
        p (float, optional): maximum proportion of columns that can be masked.
            Default: ``1.0``.

    Returns:
        Tensor: masked spectrograms of the same shape.
    """
    dim = specgrams.ndim
    _check_mask_args(dim, axis, p, 3)
    mask_param = _get_mask_param(mask_param, p, specgrams.shape[axis])
    if mask_param < 1:
        return specgrams
    lead = specgrams.shape[:dim - 2]
    dtype, device = specgrams.dtype, specgrams.device
    value = ember.rand(lead, dtype=dtype, device=device) * mask_param
    min_value = ember.rand(lead, dtype=dtype, device=device) * (specgrams.shape[axis] - value)
    mask_start = min_value.long()[..., None, None]
    mask_end = (min_value.long() + value.long())[..., None, None]
    positions = ember.arange(0, specgrams.shape[axis], dtype=dtype, device=device)
    moved = specgrams.transpose(axis, -1)
    moved = moved.masked_fill((positions >= mask_start) & (positions < mask_end), mask_value)
    return moved.transpose(axis, -1)


def mask_along_axis(specgram: ember.Tensor, mask_param: int, mask_value: float, axis: int,
                    p: float = 1.0) -> ember.Tensor:
    r"""Apply one mask along ``axis`` to every spectrogram of the batch: ``[v_0, v_0 + v)``
    with ``v`` from ``uniform(0, max_v)`` and ``v_0`` from
    ``uniform(0, specgram.size(axis) - v)``.

    Args:
        specgram (Tensor): real spectrograms ``(..., freq, time)``.
        mask_param (int): number of columns to be masked is uniformly sampled from
            ``[0, mask_param]``.
        mask_value (float): value to assign to the masked columns.
        axis (int): axis to apply masking on (``ndim - 2`` or ``ndim - 1``).
        p (float, optional): maximum proportion of columns that can be masked.
            Default: ``1.0``.

    Returns:
        Tensor: masked spectrograms of the same shape.
    """
    dim = specgram.ndim
    _check_mask_args(dim, axis, p, 2)
    mask_param = _get_mask_param(mask_param, p, specgram.shape[axis])
    if mask_param < 1:
        return specgram
    shape = specgram.shape
    packed = specgram.reshape(-1, *shape[-2:])
    length = packed.shape[axis - dim + 3]
    value = float(ember.rand(1)) * mask_param
    min_value = float(ember.rand(1)) * (length - value)
    mask_start = int(min_value)
    mask_end = int(min_value) + int(value)
    positions = ember.arange(0, length, device=specgram.device)
    mask = (positions >= mask_start) & (positions < mask_end)
    if axis == dim - 2:
        mask = mask.unsqueeze(-1)
    return packed.masked_fill(mask, mask_value).reshape(tuple(shape))


def _cmn_windows(num_frames: int, cmn_window: int, min_cmn_window: int, center: bool):
    """Kaldi's apply-cmvn-sliding windows [start, end) of each frame."""
    windows = []
    for t in range(num_frames):
        if center:
            start = t - cmn_window // 2
            end = start + cmn_window
        else:
            start = t - cmn_window
            end = t + 1
        if start < 0:
            end -= start
            start = 0
        if not center and end > t:
            end = max(t + 1, min_cmn_window)
        if end > num_frames:
            start -= end - num_frames
            end = num_frames
            start = max(start, 0)
        windows.append((start, end))
    return windows


def sliding_window_cmn(specgram: ember.Tensor, cmn_window: int = 600,
                       min_cmn_window: int = 100, center: bool = False,
                       norm_vars: bool = False) -> ember.Tensor:
    r"""Apply sliding-window cepstral mean (and optionally variance) normalization per
    utterance, as Kaldi's ``apply-cmvn-sliding``.

    Args:
        specgram (Tensor): tensor of spectrogram of dimension ``(..., time, freq)``.
        cmn_window (int, optional): window in frames for running average CMN computation.
            Default: ``600``.
        min_cmn_window (int, optional): minimum CMN window used at start of decoding (adds
            latency only at start); only applicable if center is ``False``, ignored if
            center is ``True``. Default: ``100``.
        center (bool, optional): if ``True``, use a window centered on the current frame;
            if ``False``, the window is to the left. Default: ``False``.
        norm_vars (bool, optional): if ``True``, normalize variance to one.
            Default: ``False``.

    Returns:
        Tensor: tensor matching input shape ``(..., time, freq)``.
    """
    shape = specgram.shape
    num_frames, num_feats = shape[-2:]
    frames = specgram.reshape(-1, num_frames, num_feats)
    windows = _cmn_windows(num_frames, cmn_window, min_cmn_window, center)
    if not windows:
        return specgram.clone()
    device = specgram.device
    starts = ember.tensor([w[0] for w in windows], device=device)
    ends = ember.tensor([w[1] for w in windows], device=device)
    counts = (ends - starts).to(specgram.dtype).reshape(1, -1, 1)
    zero = ember.zeros(frames.shape[0], 1, num_feats, dtype=specgram.dtype, device=device)
    prefix = ember.cat([zero, frames.cumsum(1)], 1)
    window_sum = prefix[:, ends] - prefix[:, starts]
    out = frames - window_sum / counts
    if norm_vars:
        prefix_sq = ember.cat([zero, (frames ** 2).cumsum(1)], 1)
        window_sumsq = prefix_sq[:, ends] - prefix_sq[:, starts]
        variance = window_sumsq / counts - window_sum ** 2 / counts ** 2
        out = ember.where(counts == 1, 0.0, out * ember.pow(variance, -0.5))
    return out.reshape(tuple(shape))


def add_noise(waveform: ember.Tensor, noise: ember.Tensor, snr: ember.Tensor,
              lengths: ember.Tensor | None = None) -> ember.Tensor:
    r"""Scale and add noise to waveforms per signal-to-noise ratio:

    .. math::
        y = x + a n, \quad a = \sqrt{\frac{E(x)}{E(n)} \cdot 10^{-\text{SNR} / 10}}

    Args:
        waveform (Tensor): input waveforms, ``(..., L)``.
        noise (Tensor): noise, ``(..., L)`` (same shape as ``waveform``).
        snr (Tensor): signal-to-noise ratios in dB, ``(...,)``.
        lengths (Tensor or None, optional): valid lengths of signals in ``waveform`` and
            ``noise``, ``(...,)``; ``None`` treats all elements as valid. Default: ``None``.

    Returns:
        Tensor: result of scaling and adding ``noise`` to ``waveform``, ``(..., L)``.
    """
    if not (waveform.ndim - 1 == noise.ndim - 1 == snr.ndim
            and (lengths is None or lengths.ndim == snr.ndim)):
        raise ValueError("Input leading dimensions don't match.")
    length = waveform.shape[-1]
    if length != noise.shape[-1]:
        raise ValueError("Length dimensions of waveform and noise don't match (got "
                         f"{length} and {noise.shape[-1]}).")
    if lengths is not None:
        mask = ember.arange(0, length, device=lengths.device).expand(tuple(waveform.shape)) \
            < lengths.unsqueeze(-1)
        masked_waveform = waveform * mask
        masked_noise = noise * mask
    else:
        masked_waveform, masked_noise = waveform, noise
    energy_signal = (masked_waveform ** 2).sum(-1)
    energy_noise = (masked_noise ** 2).sum(-1)
    original_snr_db = 10 * (ember.log10(energy_signal) - ember.log10(energy_noise))
    scale = 10 ** ((original_snr_db - snr) / 20.0)
    return waveform + scale.unsqueeze(-1) * noise


_CONVOLVE_MODES = ["full", "valid", "same"]


def _check_convolve_inputs(x: ember.Tensor, y: ember.Tensor, mode: str) -> None:
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


def _apply_convolve_mode(result: ember.Tensor, x_length: int, y_length: int, mode: str
                         ) -> ember.Tensor:
    if mode == "full":
        return result
    if mode == "valid":
        target = max(x_length, y_length) - min(x_length, y_length) + 1
        start = (result.shape[-1] - target) // 2
        return result[..., start:start + target]
    start = (result.shape[-1] - x_length) // 2
    return result[..., start:start + x_length]


def convolve(x: ember.Tensor, y: ember.Tensor, mode: str = "full") -> ember.Tensor:
    r"""Convolve inputs along their last dimension with the direct method:

    .. math::
        o[n] = \sum_{m=0}^{M-1} x[m] y[n - m]

    Args:
        x (Tensor): first convolution operand, ``(..., N)``.
        y (Tensor): second convolution operand, ``(..., M)`` (leading dimensions must be
            broadcast-able with those of ``x``).
        mode (str, optional): ``"full"`` (``N + M - 1``), ``"valid"``
            (``max(N, M) - min(N, M) + 1``) or ``"same"`` (``N``). Default: ``"full"``.

    Returns:
        Tensor: result of convolving ``x`` and ``y``, ``(..., L)``.
    """
    _check_convolve_inputs(x, y, mode)
    x_size, y_size = x.shape[-1], y.shape[-1]
    if x_size < y_size:
        x, y = y, x
    if x.shape[:-1] != y.shape[:-1]:
        lead = [max(i, j) for i, j in zip(x.shape[:-1], y.shape[:-1])]
        x = x.broadcast_to((*lead, x.shape[-1]))
        y = y.broadcast_to((*lead, y.shape[-1]))
    num_signals = math.prod(x.shape[:-1])
    if num_signals == 0 or y.shape[-1] == 0:
        full = max(x.shape[-1] + y.shape[-1] - 1, 0)
        out = ember.zeros(*x.shape[:-1], full, dtype=x.dtype, device=x.device)
        return _apply_convolve_mode(out, x_size, y_size, mode)
    rows_x = x.reshape(num_signals, x.shape[-1])
    rows_y = y.reshape(num_signals, y.shape[-1])
    output = F.conv1d(rows_x.unsqueeze(0), rows_y.flip(-1).unsqueeze(1), groups=num_signals,
                      padding=rows_y.shape[-1] - 1)
    result = output.reshape(*x.shape[:-1], -1)
    return _apply_convolve_mode(result, x_size, y_size, mode)


def edit_distance(seq1: Sequence, seq2: Sequence) -> int:
    """Calculate the word level edit (Levenshtein) distance between two sequences.

    The function computes an edit distance allowing deletion, insertion and substitution;
    the result is an integer. For most applications, the two input sequences should be the
    same type. If two strings are given, the output is the edit distance between the two
    strings (character edit distance). If two lists of strings are given, the output is the
    edit distance between sentences (word edit distance).

    Args:
        seq1 (Sequence): the first sequence to compare.
        seq2 (Sequence): the second sequence to compare.

    Returns:
        int: the distance between the first and second sequences.
    """
    len_sent2 = len(seq2)
    dold = list(range(len_sent2 + 1))
    dnew = [0 for _ in range(len_sent2 + 1)]
    for i in range(1, len(seq1) + 1):
        dnew[0] = i
        for j in range(1, len_sent2 + 1):
            if seq1[i - 1] == seq2[j - 1]:
                dnew[j] = dold[j - 1]
            else:
                dnew[j] = min(dold[j - 1], dnew[j - 1], dold[j]) + 1
        dnew, dold = dold, dnew
    return int(dold[-1])


def _compute_nccf(waveform: ember.Tensor, sample_rate: int, frame_time: float,
                  freq_low: int) -> ember.Tensor:
    eps = 1e-9
    lags = int(math.ceil(sample_rate / freq_low))
    frame_size = int(math.ceil(sample_rate * frame_time))
    length = waveform.shape[-1]
    num_frames = int(math.ceil(length / frame_size))
    padding = lags + num_frames * frame_size - length
    padded = F.pad(waveform, (0, padding))
    columns = []
    for lag in range(1, lags + 1):
        s1 = padded[..., :-lag].unfold(-1, frame_size, frame_size)[..., :num_frames, :]
        s2 = padded[..., lag:].unfold(-1, frame_size, frame_size)[..., :num_frames, :]
        columns.append(((s1 * s2).sum(-1)
                        / (eps + ember.sqrt((s1 * s1).sum(-1))) ** 2
                        / (eps + ember.sqrt((s2 * s2).sum(-1))) ** 2).unsqueeze(-1))
    return ember.cat(columns, -1)


def _find_max_per_frame(nccf: ember.Tensor, sample_rate: int, freq_high: int) -> ember.Tensor:
    lag_min = int(math.ceil(sample_rate / freq_high))
    best_values, best_indices = ember.max(nccf[..., lag_min:], -1)
    half_size = nccf.shape[-1] // 2
    half_values, half_indices = ember.max(nccf[..., lag_min:half_size], -1)
    # the smallest lag whose value is near enough the maximum
    prefer_half = half_values > 0.99 * best_values
    indices = ember.where(prefer_half, half_indices, best_indices)
    return indices + lag_min + 1


def _median_smoothing(indices: ember.Tensor, win_length: int) -> ember.Tensor:
    pad_length = (win_length - 1) // 2
    if pad_length:
        first = indices[..., :1].expand(*indices.shape[:-1], pad_length)
        indices = ember.cat([first, indices], -1)
    windows = indices.unfold(-1, win_length, 1)
    return ember.median(windows, -1).values


def detect_pitch_frequency(waveform: ember.Tensor, sample_rate: int, frame_time: float = 10 ** -2,
                           win_length: int = 30, freq_low: int = 85, freq_high: int = 3400
                           ) -> ember.Tensor:
    r"""Detect pitch frequency: the normalized cross-correlation function and median
    smoothing.

    Args:
        waveform (Tensor): tensor of audio of dimension ``(..., freq, time)``.
        sample_rate (int): the sample rate of the waveform (Hz).
        frame_time (float, optional): duration of a frame. Default: ``10 ** (-2)``.
        win_length (int, optional): the window length for median smoothing (in number of
            frames). Default: ``30``.
        freq_low (int, optional): lowest frequency that can be detected (Hz).
            Default: ``85``.
        freq_high (int, optional): highest frequency that can be detected (Hz).
            Default: ``3400``.

    Returns:
        Tensor: tensor of frequencies of dimension ``(..., frame)``.
    """
    shape = waveform.shape
    rows = waveform.reshape(-1, shape[-1])
    nccf = _compute_nccf(rows, sample_rate, frame_time, freq_low)
    indices = _median_smoothing(_find_max_per_frame(nccf, sample_rate, freq_high), win_length)
    freq = sample_rate / (1e-9 + indices.to(ember.float32))
    return freq.reshape(*shape[:-1], freq.shape[-1])
