"""Audio transforms as modules: each ``forward`` is one call into emberaudio.functional."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ember
from ember import nn
from emberaudio import functional as F
from emberaudio.functional._effects import FADE_SHAPES
from emberaudio.functional._resample import _apply_sinc_resample_kernel, _sinc_resample_kernel

__all__ = [
    "AddNoise", "AmplitudeToDB", "ComputeDeltas", "Convolve", "Deemphasis", "Fade",
    "FrequencyMasking", "Loudness", "MelScale", "MuLawDecoding", "MuLawEncoding", "Preemphasis",
    "RNNTLoss", "Resample", "SlidingWindowCmn", "SpecAugment", "Speed", "SpeedPerturbation",
    "TimeMasking", "Vol",
]


class AmplitudeToDB(nn.Module):
    r"""Turn a tensor from the power/amplitude scale to the decibel scale.

    Args:
        stype (str, optional): scale of input tensor (``"power"`` or ``"magnitude"``). The
            power being the elementwise square of the magnitude. Default: ``"power"``.
        top_db (float or None, optional): minimum negative cut-off in decibels. A reasonable
            number is 80. Default: ``None``.

    Examples::

        >>> transform = transforms.AmplitudeToDB(stype="amplitude", top_db=80)
        >>> waveform_db = transform(waveform)
    """

    def __init__(self, stype: str = "power", top_db: float | None = None) -> None:
        super().__init__()
        self.stype = stype
        if top_db is not None and top_db < 0:
            raise ValueError("top_db must be positive value")
        self.top_db = top_db
        self.multiplier = 10.0 if stype == "power" else 20.0
        self.amin = 1e-10
        self.ref_value = 1.0
        self.db_multiplier = math.log10(max(self.amin, self.ref_value))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): input features, ``(..., freq, time)``.

        Returns:
            Tensor: the input in decibels.
        """
        return F.amplitude_to_DB(x, self.multiplier, self.amin, self.db_multiplier, self.top_db)


def _apply_bank(specgram: ember.Tensor, bank: ember.Tensor) -> ember.Tensor:
    """``(S^T bank)^T`` for ``S`` of shape ``(..., freq, time)`` and ``bank`` ``(freq, n)``:
    torchaudio's product, with the batch folded into the rows of one GEMM. A spectrogram
    from stft is laid out ``(..., time, freq)`` in memory, so the fold is a view; one large
    GEMM instead of one per batch item is what keeps BLAS threads busy (several times faster
    on a loaded machine)."""
    freq_last = specgram.transpose(-1, -2)
    rows = freq_last.reshape(math.prod(freq_last.shape[:-1]), bank.shape[0])
    out = ember.matmul(rows, bank)
    return out.reshape(*freq_last.shape[:-1], bank.shape[1]).transpose(-1, -2)


class MelScale(nn.Module):
    r"""Turn a normal STFT into a mel frequency STFT with triangular filter banks.

    Args:
        n_mels (int, optional): number of mel filterbanks. Default: ``128``.
        sample_rate (int, optional): sample rate of audio signal. Default: ``16000``.
        f_min (float, optional): minimum frequency. Default: ``0.``.
        f_max (float or None, optional): maximum frequency. Default: ``sample_rate // 2``.
        n_stft (int, optional): number of bins in STFT. Default: ``201``.
        norm (str or None, optional): if ``"slaney"``, divide the triangular mel weights by
            the width of the mel band (area normalization). Default: ``None``.
        mel_scale (str, optional): scale to use: ``"htk"`` or ``"slaney"``.
            Default: ``"htk"``.

    Shape:
        - Input: ``(..., n_stft, time)``
        - Output: ``(..., n_mels, time)``
    """

    def __init__(self, n_mels: int = 128, sample_rate: int = 16000, f_min: float = 0.0,
                 f_max: float | None = None, n_stft: int = 201, norm: str | None = None,
                 mel_scale: str = "htk") -> None:
        super().__init__()
        self.n_mels = n_mels
        self.sample_rate = sample_rate
        self.f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.f_min = f_min
        self.norm = norm
        self.mel_scale = mel_scale
        if f_min > self.f_max:
            raise ValueError(f"Require f_min: {f_min} <= f_max: {self.f_max}")
        fb = F.melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate,
                               self.norm, self.mel_scale)
        self.register_buffer("fb", fb)

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): a spectrogram STFT of dimension ``(..., freq, time)``.

        Returns:
            Tensor: mel frequency spectrogram of size ``(..., n_mels, time)``.
        """
        if specgram.shape[-2] != self.fb.shape[0]:
            raise ValueError(f"Expected a spectrogram with {self.fb.shape[0]} frequency bins "
                             f"(n_stft), got {specgram.shape[-2]}")
        return _apply_bank(specgram, self.fb)


class MuLawEncoding(nn.Module):
    r"""Encode signal based on mu-law companding.

    Args:
        quantization_channels (int, optional): number of channels. Default: ``256``.
    """

    def __init__(self, quantization_channels: int = 256) -> None:
        super().__init__()
        self.quantization_channels = quantization_channels

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): a signal to be encoded, in [-1, 1].

        Returns:
            Tensor: an encoded signal.
        """
        return F.mu_law_encoding(x, self.quantization_channels)


class MuLawDecoding(nn.Module):
    r"""Decode mu-law encoded signal.

    Args:
        quantization_channels (int, optional): number of channels. Default: ``256``.
    """

    def __init__(self, quantization_channels: int = 256) -> None:
        super().__init__()
        self.quantization_channels = quantization_channels

    def forward(self, x_mu: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x_mu (Tensor): a mu-law encoded signal which needs to be decoded.

        Returns:
            Tensor: the signal decoded.
        """
        return F.mu_law_decoding(x_mu, self.quantization_channels)


class Resample(nn.Module):
    r"""Resample a signal from one frequency to another, caching the interpolation kernel.

    Args:
        orig_freq (int, optional): the original frequency of the signal. Default: ``16000``.
        new_freq (int, optional): the desired frequency. Default: ``16000``.
        resampling_method (str, optional): ``"sinc_interp_hann"`` or
            ``"sinc_interp_kaiser"``. Default: ``"sinc_interp_hann"``.
        lowpass_filter_width (int, optional): controls the sharpness of the filter.
            Default: ``6``.
        rolloff (float, optional): the roll-off frequency of the filter, as a fraction of
            the Nyquist. Default: ``0.99``.
        beta (float or None, optional): the shape parameter of the Kaiser window.
        dtype (ember.dtype or None, optional): the dtype the kernel is computed in and kept
            as; ``None`` computes it in float64 and keeps it as float32. Default: ``None``.

    Examples::

        >>> transform = transforms.Resample(44100, 16000)
        >>> resampled = transform(waveform)
    """

    def __init__(self, orig_freq: int = 16000, new_freq: int = 16000,
                 resampling_method: str = "sinc_interp_hann", lowpass_filter_width: int = 6,
                 rolloff: float = 0.99, beta: float | None = None, *,
                 dtype: ember.dtype | None = None) -> None:
        super().__init__()
        self.orig_freq = orig_freq
        self.new_freq = new_freq
        self.gcd = math.gcd(int(orig_freq), int(new_freq))
        self.resampling_method = resampling_method
        self.lowpass_filter_width = lowpass_filter_width
        self.rolloff = rolloff
        self.beta = beta
        if orig_freq <= 0 or new_freq <= 0:
            raise ValueError("Original frequency and desired frequecy should be positive")
        if orig_freq != new_freq:
            np_dtype = None if dtype is None else str(dtype).removeprefix("ember.")
            kernel, self.width = _sinc_resample_kernel(
                orig_freq, new_freq, self.gcd, lowpass_filter_width, rolloff,
                resampling_method, beta, np_dtype)
            self.register_buffer("kernel", ember.from_numpy(kernel))

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): the input signal of dimension ``(..., time)``.

        Returns:
            Tensor: output signal of dimension ``(..., time)``.
        """
        if self.orig_freq == self.new_freq:
            return waveform
        return _apply_sinc_resample_kernel(waveform, self.orig_freq, self.new_freq, self.gcd,
                                           self.kernel.to(waveform.dtype), self.width)


class Fade(nn.Module):
    r"""Add a fade in and/or fade out to a waveform.

    Args:
        fade_in_len (int, optional): length of fade-in (time frames). Default: ``0``.
        fade_out_len (int, optional): length of fade-out (time frames). Default: ``0``.
        fade_shape (str, optional): shape of fade: ``"quarter_sine"``, ``"half_sine"``,
            ``"linear"``, ``"logarithmic"``, ``"exponential"``. Default: ``"linear"``.
    """

    def __init__(self, fade_in_len: int = 0, fade_out_len: int = 0,
                 fade_shape: str = "linear") -> None:
        super().__init__()
        if fade_shape not in FADE_SHAPES:
            raise ValueError(f"fade_shape must be one of {list(FADE_SHAPES)}, got "
                             f"{fade_shape!r}")
        if fade_in_len < 0 or fade_out_len < 0:
            raise ValueError("fade_in_len and fade_out_len must be non-negative")
        self.fade_in_len = fade_in_len
        self.fade_out_len = fade_out_len
        self.fade_shape = fade_shape

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: tensor of audio of dimension ``(..., time)``.
        """
        return F.fade(waveform, self.fade_in_len, self.fade_out_len, self.fade_shape)


class _AxisMasking(nn.Module):
    def __init__(self, mask_param: int, axis: int, iid_masks: bool, p: float = 1.0) -> None:
        super().__init__()
        self.mask_param = mask_param
        self.axis = axis
        self.iid_masks = iid_masks
        self.p = p

    def forward(self, specgram: ember.Tensor, mask_value: float = 0.0) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): tensor of dimension ``(..., freq, time)``.
            mask_value (float): value to assign to the masked columns.

        Returns:
            Tensor: masked spectrogram of dimensions ``(..., freq, time)``.
        """
        axis = self.axis + specgram.ndim - 3
        if self.iid_masks:
            return F.mask_along_axis_iid(specgram, self.mask_param, mask_value, axis, p=self.p)
        return F.mask_along_axis(specgram, self.mask_param, mask_value, axis, p=self.p)


class FrequencyMasking(_AxisMasking):
    r"""Apply masking to a spectrogram in the frequency domain (SpecAugment).

    Args:
        freq_mask_param (int): maximum possible length of the mask; indices uniformly
            sampled from ``[0, freq_mask_param)``.
        iid_masks (bool, optional): whether to apply different masks to each example/channel
            in the batch. Default: ``False``. This option is applicable only when the input
            tensor is 4D (or more).
    """

    def __init__(self, freq_mask_param: int, iid_masks: bool = False) -> None:
        super().__init__(freq_mask_param, 1, iid_masks)


class TimeMasking(_AxisMasking):
    r"""Apply masking to a spectrogram in the time domain (SpecAugment).

    Args:
        time_mask_param (int): maximum possible length of the mask; indices uniformly
            sampled from ``[0, time_mask_param)``.
        iid_masks (bool, optional): whether to apply different masks to each example/channel
            in the batch. Default: ``False``.
        p (float, optional): maximum proportion of time steps that can be masked.
            Default: ``1.0``.
    """

    def __init__(self, time_mask_param: int, iid_masks: bool = False, p: float = 1.0) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")
        super().__init__(time_mask_param, 2, iid_masks, p=p)


class SpecAugment(nn.Module):
    r"""Apply time and frequency masking to a spectrogram (SpecAugment).

    Args:
        n_time_masks (int): number of time masks; 0 for none.
        time_mask_param (int): maximum possible length of a time mask.
        n_freq_masks (int): number of frequency masks; 0 for none.
        freq_mask_param (int): maximum possible length of a frequency mask.
        iid_masks (bool, optional): different masks for each example/channel in the batch
            (inputs of 3D and more). Default: ``True``.
        p (float, optional): maximum proportion of time steps that can be masked.
            Default: ``1.0``.
        zero_masking (bool, optional): mask with 0, else with the spectrogram's mean.
            Default: ``False``.
    """

    def __init__(self, n_time_masks: int, time_mask_param: int, n_freq_masks: int,
                 freq_mask_param: int, iid_masks: bool = True, p: float = 1.0,
                 zero_masking: bool = False) -> None:
        super().__init__()
        self.n_time_masks = n_time_masks
        self.time_mask_param = time_mask_param
        self.n_freq_masks = n_freq_masks
        self.freq_mask_param = freq_mask_param
        self.iid_masks = iid_masks
        self.p = p
        self.zero_masking = zero_masking

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): tensor of shape ``(..., freq, time)``.

        Returns:
            Tensor: masked spectrogram of shape ``(..., freq, time)``.
        """
        mask_value = 0.0 if self.zero_masking else float(specgram.mean())
        time_dim = specgram.ndim - 1
        freq_dim = time_dim - 1
        mask = (F.mask_along_axis_iid if specgram.ndim > 2 and self.iid_masks
                else F.mask_along_axis)
        for _ in range(self.n_time_masks):
            specgram = mask(specgram, self.time_mask_param, mask_value, time_dim, p=self.p)
        for _ in range(self.n_freq_masks):
            specgram = mask(specgram, self.freq_mask_param, mask_value, freq_dim, p=self.p)
        return specgram


class Vol(nn.Module):
    r"""Adjust volume of waveform (the result is clamped to [-1, 1]).

    Args:
        gain (float): interpreted according to the given ``gain_type``: if ``"amplitude"``,
            it is a positive amplitude ratio; if ``"power"``, a power (voltage squared); if
            ``"db"``, in decibels.
        gain_type (str, optional): type of gain: ``"amplitude"``, ``"power"``, ``"db"``.
            Default: ``"amplitude"``.
    """

    def __init__(self, gain: float, gain_type: str = "amplitude") -> None:
        super().__init__()
        self.gain = gain
        self.gain_type = gain_type
        if gain_type not in ("amplitude", "power", "db"):
            raise ValueError("Expected gain_type to be one of ['amplitude', 'power', 'db']")
        if gain_type in ("amplitude", "power") and gain < 0:
            raise ValueError("If gain_type = amplitude or power, gain must be positive.")

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: tensor of audio of dimension ``(..., time)``.
        """
        if self.gain_type == "amplitude":
            waveform = waveform * self.gain
        elif self.gain_type == "db":
            waveform = F.gain(waveform, self.gain)
        else:
            waveform = F.gain(waveform, 10 * math.log10(self.gain))
        return ember.clamp(waveform, -1, 1)


class ComputeDeltas(nn.Module):
    r"""Compute delta coefficients of a tensor, usually a spectrogram.

    Args:
        win_length (int, optional): the window length used for computing delta.
            Default: ``5``.
        mode (str, optional): mode parameter passed to padding. Default: ``"replicate"``.
    """

    def __init__(self, win_length: int = 5, mode: str = "replicate") -> None:
        super().__init__()
        self.win_length = win_length
        self.mode = mode

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): tensor of audio of dimension ``(..., freq, time)``.

        Returns:
            Tensor: tensor of deltas of dimension ``(..., freq, time)``.
        """
        return F.compute_deltas(specgram, win_length=self.win_length, mode=self.mode)


class SlidingWindowCmn(nn.Module):
    r"""Apply sliding-window cepstral mean (and optionally variance) normalization per
    utterance.

    Args:
        cmn_window (int, optional): window in frames for running average CMN computation.
            Default: ``600``.
        min_cmn_window (int, optional): minimum CMN window used at start of decoding.
            Default: ``100``.
        center (bool, optional): center the window on the current frame. Default: ``False``.
        norm_vars (bool, optional): normalize variance to one. Default: ``False``.
    """

    def __init__(self, cmn_window: int = 600, min_cmn_window: int = 100, center: bool = False,
                 norm_vars: bool = False) -> None:
        super().__init__()
        self.cmn_window = cmn_window
        self.min_cmn_window = min_cmn_window
        self.center = center
        self.norm_vars = norm_vars

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): tensor of spectrogram of dimension ``(..., time, freq)``.

        Returns:
            Tensor: tensor of spectrogram of dimension ``(..., time, freq)``.
        """
        return F.sliding_window_cmn(specgram, self.cmn_window, self.min_cmn_window,
                                    self.center, self.norm_vars)


class Preemphasis(nn.Module):
    r"""Pre-emphasize a waveform along its last dimension.

    Args:
        coeff (float, optional): pre-emphasis coefficient. Default: ``0.97``.
    """

    def __init__(self, coeff: float = 0.97) -> None:
        super().__init__()
        self.coeff = coeff

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): waveform, with shape ``(..., N)``.

        Returns:
            Tensor: pre-emphasized waveform, with shape ``(..., N)``.
        """
        return F.preemphasis(waveform, coeff=self.coeff)


class Deemphasis(nn.Module):
    r"""De-emphasize a waveform along its last dimension.

    Args:
        coeff (float, optional): de-emphasis coefficient. Default: ``0.97``.
    """

    def __init__(self, coeff: float = 0.97) -> None:
        super().__init__()
        self.coeff = coeff

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): waveform, with shape ``(..., N)``.

        Returns:
            Tensor: de-emphasized waveform, with shape ``(..., N)``.
        """
        return F.deemphasis(waveform, coeff=self.coeff)


class AddNoise(nn.Module):
    r"""Scale and add noise to waveforms per signal-to-noise ratio (see
    :func:`emberaudio.functional.add_noise`)."""

    def forward(self, waveform: ember.Tensor, noise: ember.Tensor, snr: ember.Tensor,
                lengths: ember.Tensor | None = None) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): input waveforms, ``(..., L)``.
            noise (Tensor): noise, ``(..., L)``.
            snr (Tensor): signal-to-noise ratios in dB, ``(...,)``.
            lengths (Tensor or None, optional): valid lengths, ``(...,)``.

        Returns:
            Tensor: result of scaling and adding ``noise`` to ``waveform``, ``(..., L)``.
        """
        return F.add_noise(waveform, noise, snr, lengths)


class Convolve(nn.Module):
    r"""Convolve inputs along their last dimension with the direct method (see
    :func:`emberaudio.functional.convolve`).

    Args:
        mode (str, optional): ``"full"``, ``"valid"`` or ``"same"``. Default: ``"full"``.
    """

    def __init__(self, mode: str = "full") -> None:
        if mode not in ("full", "valid", "same"):
            raise ValueError(f"Unrecognized mode value '{mode}'. Please specify one of "
                             "['full', 'valid', 'same'].")
        super().__init__()
        self.mode = mode

    def forward(self, x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): first convolution operand, ``(..., N)``.
            y (Tensor): second convolution operand, ``(..., M)``.

        Returns:
            Tensor: result of convolving ``x`` and ``y``.
        """
        return F.convolve(x, y, mode=self.mode)


class Speed(nn.Module):
    r"""Adjust waveform speed (and pitch with it).

    Args:
        orig_freq (int): original frequency of the signals in ``waveform``.
        factor (float): factor by which to adjust speed of input; above 1 compresses the
            signal, below 1 stretches it.
    """

    def __init__(self, orig_freq: int, factor: float) -> None:
        super().__init__()
        self.orig_freq = orig_freq
        self.factor = factor
        self.source_sample_rate = int(factor * orig_freq)
        self.target_sample_rate = int(orig_freq)
        self.resampler = Resample(orig_freq=self.source_sample_rate,
                                  new_freq=self.target_sample_rate)

    def forward(self, waveform: ember.Tensor, lengths: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        """
        Args:
            waveform (Tensor): input signals, with shape ``(..., time)``.
            lengths (Tensor or None, optional): valid lengths of signals in ``waveform``,
                with shape ``(...)``. Default: ``None``.

        Returns:
            (Tensor, Tensor or None): the speed-adjusted waveform and its valid lengths.
        """
        out_lengths = None
        if lengths is not None:
            out_lengths = ember.ceil(
                lengths * self.target_sample_rate / self.source_sample_rate).to(lengths.dtype)
        return self.resampler(waveform), out_lengths


class SpeedPerturbation(nn.Module):
    r"""Apply a speed perturbation chosen uniformly at random from ``factors``.

    Args:
        orig_freq (int): original frequency of the signals in ``waveform``.
        factors (Sequence[float]): factors by which to adjust speed.
    """

    def __init__(self, orig_freq: int, factors: Sequence[float]) -> None:
        super().__init__()
        if not factors:
            raise ValueError("factors must hold at least one speed factor")
        self.speeders = nn.ModuleList([Speed(orig_freq=orig_freq, factor=f) for f in factors])

    def forward(self, waveform: ember.Tensor, lengths: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        """
        Args:
            waveform (Tensor): input signals, with shape ``(..., time)``.
            lengths (Tensor or None, optional): valid lengths, with shape ``(...)``.

        Returns:
            (Tensor, Tensor or None): the speed-adjusted waveform and its valid lengths.
        """
        idx = int(ember.randint(len(self.speeders), ()))
        return self.speeders[idx](waveform, lengths)


class Loudness(nn.Module):
    r"""Measure audio loudness according to the ITU-R BS.1770-4 recommendation.

    Args:
        sample_rate (int): sample rate of audio signal.

    Examples::

        >>> transform = transforms.Loudness(sample_rate)
        >>> loudness = transform(waveform)
    """

    def __init__(self, sample_rate: int) -> None:
        super().__init__()
        self.sample_rate = sample_rate

    def forward(self, wavefrom: ember.Tensor) -> ember.Tensor:
        """
        Args:
            wavefrom (Tensor): audio waveform of dimension ``(..., channels, time)``.

        Returns:
            Tensor: loudness estimates (LKFS).
        """
        return F.loudness(wavefrom, self.sample_rate)


class RNNTLoss(nn.Module):
    r"""Compute the RNN Transducer loss from *Sequence Transduction with Recurrent Neural
    Networks* (see :func:`emberaudio.functional.rnnt_loss`).

    Args:
        blank (int, optional): blank label. (Default: ``-1``)
        clamp (float, optional): clamp for gradients. (Default: ``-1``)
        reduction (str, optional): ``"none"`` | ``"mean"`` | ``"sum"``.
            (Default: ``"mean"``)
        fused_log_softmax (bool, optional): set to ``False`` if calling log_softmax outside
            of loss. (Default: ``True``)
    """

    def __init__(self, blank: int = -1, clamp: float = -1.0, reduction: str = "mean",
                 fused_log_softmax: bool = True) -> None:
        super().__init__()
        self.blank = blank
        self.clamp = clamp
        self.reduction = reduction
        self.fused_log_softmax = fused_log_softmax

    def forward(self, logits: ember.Tensor, targets: ember.Tensor, logit_lengths: ember.Tensor,
                target_lengths: ember.Tensor) -> ember.Tensor:
        """
        Args:
            logits (Tensor): ``(batch, max seq length, max target length + 1, class)``.
            targets (Tensor): ``(batch, max target length)``, zero padded.
            logit_lengths (Tensor): ``(batch)``, the encoder lengths.
            target_lengths (Tensor): ``(batch)``, the target lengths.

        Returns:
            Tensor: loss with the reduction option applied.
        """
        return F.rnnt_loss(logits, targets, logit_lengths, target_lengths, self.blank,
                           self.clamp, self.reduction, self.fused_log_softmax)
