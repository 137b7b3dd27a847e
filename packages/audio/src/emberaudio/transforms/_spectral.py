"""Spectral transforms as modules: spectrograms, their inverses, mel/linear cepstra, time
stretching, pitch shifting, the spectral centroid, FFT convolution and voice activity
detection. Each ``forward`` is one call into emberaudio.functional; the buffers (``window``,
``fb``, ``dct_mat``, ``filter_mat``, ``phase_advance``, ``kernel``) carry torchaudio's names,
so torchaudio state dicts load."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import ember
from ember import nn
from emberaudio import functional as F
from emberaudio.functional._resample import _apply_sinc_resample_kernel, _sinc_resample_kernel
from emberaudio.functional._spectral import _fix_waveform_shape, _pack, _stretch_waveform
from emberaudio.functional.functional import _CONVOLVE_MODES
from emberaudio.transforms._transforms import AmplitudeToDB, MelScale, _apply_bank

__all__ = [
    "FFTConvolve", "GriffinLim", "InverseMelScale", "InverseSpectrogram", "LFCC", "MFCC",
    "MelSpectrogram", "PitchShift", "SpectralCentroid", "Spectrogram", "TimeStretch", "Vad",
]


def _make_window(window_fn: Callable[..., ember.Tensor], win_length: int,
                 wkwargs: dict | None) -> ember.Tensor:
    return window_fn(win_length) if wkwargs is None else window_fn(win_length, **wkwargs)


class Spectrogram(nn.Module):
    r"""Create a spectrogram from an audio signal.

    Args:
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins. Default: ``400``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 2``.
        pad (int, optional): two sided padding of signal. Default: ``0``.
        window_fn (Callable[..., Tensor], optional): a function to create a window tensor
            that is applied/multiplied to each frame/window. Default: ``ember.hann_window``.
        power (float or None, optional): exponent for the magnitude spectrogram (must be
            > 0), e.g., 1 for magnitude, 2 for power; ``None`` returns the complex spectrum.
            Default: ``2``.
        normalized (bool or str, optional): ``"window"``, ``"frame_length"`` or a bool
            (``True`` maps to ``"window"``). Default: ``False``.
        wkwargs (dict or None, optional): arguments for the window function.
        center (bool, optional): pad the waveform on both sides so that the :math:`t`-th
            frame is centered at time :math:`t \times \text{hop\_length}`. Default: ``True``.
        pad_mode (str, optional): the padding of ``center``. Default: ``"reflect"``.
        onesided (bool, optional): return half of the results to avoid redundancy.
            Default: ``True``.
        return_complex (bool, optional): deprecated and not used.

    Shape:
        - Input: ``(..., time)``
        - Output: ``(..., n_fft // 2 + 1, frames)``

    Examples::

        >>> transform = transforms.Spectrogram(n_fft=800)
        >>> spectrogram = transform(waveform)
    """

    def __init__(self, n_fft: int = 400, win_length: int | None = None,
                 hop_length: int | None = None, pad: int = 0,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 power: float | None = 2.0, normalized: bool | str = False,
                 wkwargs: dict | None = None, center: bool = True, pad_mode: str = "reflect",
                 onesided: bool = True, return_complex: bool | None = None) -> None:
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad = pad
        self.power = power
        self.normalized = normalized
        self.center = center
        self.pad_mode = pad_mode
        self.onesided = onesided
        if return_complex is not None:
            warnings.warn("`return_complex` argument is now deprecated and is not effective."
                          "`torchaudio.transforms.Spectrogram(power=None)` always returns a "
                          "tensor with complex dtype. Please remove the argument in the "
                          "function call.", stacklevel=2)

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: dimension ``(..., freq, time)``.
        """
        return F.spectrogram(waveform, self.pad, self.window, self.n_fft, self.hop_length,
                             self.win_length, self.power, self.normalized, self.center,
                             self.pad_mode, self.onesided)


class InverseSpectrogram(nn.Module):
    r"""Create an inverse spectrogram to recover an audio signal from a spectrogram.

    Args:
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins. Default: ``400``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 2``.
        pad (int, optional): two sided padding of signal. Default: ``0``.
        window_fn (Callable[..., Tensor], optional): the window function.
            Default: ``ember.hann_window``.
        normalized (bool or str, optional): whether the stft output was normalized by
            magnitude (``"window"``, ``"frame_length"``, ``True`` = ``"window"``).
            Default: ``False``.
        wkwargs (dict or None, optional): arguments for the window function.
        center (bool, optional): whether the signal was padded on both sides.
            Default: ``True``.
        pad_mode (str, optional): the padding of ``center``. Default: ``"reflect"``.
        onesided (bool, optional): whether the spectrogram is onesided. Default: ``True``.

    Examples::

        >>> spectrogram = ember.randn(2, 257, 100, dtype=ember.cdouble)
        >>> transform = transforms.InverseSpectrogram(n_fft=512)
        >>> waveform = transform(spectrogram, 25344)
    """

    def __init__(self, n_fft: int = 400, win_length: int | None = None,
                 hop_length: int | None = None, pad: int = 0,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 normalized: bool | str = False, wkwargs: dict | None = None,
                 center: bool = True, pad_mode: str = "reflect", onesided: bool = True) -> None:
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad = pad
        self.normalized = normalized
        self.center = center
        self.pad_mode = pad_mode
        self.onesided = onesided

    def forward(self, spectrogram: ember.Tensor, length: int | None = None) -> ember.Tensor:
        """
        Args:
            spectrogram (Tensor): complex tensor of audio of dimension ``(..., freq, time)``.
            length (int or None, optional): the output length of the waveform.

        Returns:
            Tensor: dimension ``(..., time)``, the least squares estimation of the signal.
        """
        return F.inverse_spectrogram(spectrogram, length, self.pad, self.window, self.n_fft,
                                     self.hop_length, self.win_length, self.normalized,
                                     self.center, self.pad_mode, self.onesided)


class GriffinLim(nn.Module):
    r"""Compute a waveform from a linear scale magnitude spectrogram using the Griffin-Lim
    transformation.

    Args:
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins. Default: ``400``.
        n_iter (int, optional): number of iterations for phase recovery. Default: ``32``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 2``.
        window_fn (Callable[..., Tensor], optional): the window function.
            Default: ``ember.hann_window``.
        power (float, optional): exponent for the magnitude spectrogram. Default: ``2``.
        wkwargs (dict or None, optional): arguments for the window function.
        momentum (float, optional): the momentum parameter for fast Griffin-Lim, in
            ``[0, 1)``. Default: ``0.99``.
        length (int, optional): array length of the expected output. Default: ``None``.
        rand_init (bool, optional): initializes the phase randomly if ``True`` and to zero
            otherwise. Default: ``True``.

    Examples::

        >>> spectrogram = ember.randn(2, 257, 100).abs()
        >>> transform = transforms.GriffinLim(n_fft=512)
        >>> waveform = transform(spectrogram)
    """

    def __init__(self, n_fft: int = 400, n_iter: int = 32, win_length: int | None = None,
                 hop_length: int | None = None,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 power: float = 2.0, wkwargs: dict | None = None, momentum: float = 0.99,
                 length: int | None = None, rand_init: bool = True) -> None:
        super().__init__()
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum must be in the range [0, 1). Found: {momentum}")
        self.n_fft = n_fft
        self.n_iter = n_iter
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.length = length
        self.power = power
        self.momentum = momentum
        self.rand_init = rand_init

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        """
        Args:
            specgram (Tensor): a magnitude-only STFT spectrogram of dimension
                ``(..., freq, frames)`` where freq is ``n_fft // 2 + 1``.

        Returns:
            Tensor: waveform of ``(..., time)``.
        """
        return F.griffinlim(specgram, self.window, self.n_fft, self.hop_length,
                            self.win_length, self.power, self.n_iter, self.momentum,
                            self.length, self.rand_init)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class InverseMelScale(nn.Module):
    r"""Estimate a STFT in normal frequency domain from a mel frequency domain one: the
    least squares solution of ``fb^T X = melspec``, clamped at zero.

    Args:
        n_stft (int): number of bins in STFT.
        n_mels (int, optional): number of mel filterbanks. Default: ``128``.
        sample_rate (int, optional): sample rate of audio signal. Default: ``16000``.
        f_min (float, optional): minimum frequency. Default: ``0.``.
        f_max (float or None, optional): maximum frequency. Default: ``sample_rate // 2``.
        norm (str or None, optional): ``"slaney"`` divides the triangular mel weights by the
            width of the mel band. Default: ``None``.
        mel_scale (str, optional): scale to use: ``"htk"`` or ``"slaney"``.
            Default: ``"htk"``.
        driver (str, optional): the LAPACK method of :func:`ember.linalg.lstsq`: ``"gels"``,
            ``"gelsy"``, ``"gelsd"`` or ``"gelss"``. Default: ``"gels"``.

    Shape:
        - Input: ``(..., n_mels, time)``
        - Output: ``(..., n_stft, time)``
    """

    def __init__(self, n_stft: int, n_mels: int = 128, sample_rate: int = 16000,
                 f_min: float = 0.0, f_max: float | None = None, norm: str | None = None,
                 mel_scale: str = "htk", driver: str = "gels") -> None:
        super().__init__()
        self.n_mels = n_mels
        self.sample_rate = sample_rate
        self.f_max = f_max or float(sample_rate // 2)
        self.f_min = f_min
        self.driver = driver
        if f_min > self.f_max:
            raise ValueError(f"Require f_min: {f_min} <= f_max: {self.f_max}")
        if driver not in _LSTSQ_DRIVERS:
            raise ValueError(f'driver must be one of ["gels", "gelsy", "gelsd", "gelss"]. Found '
                             f"{driver}.")
        fb = F.melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate,
                               norm, mel_scale)
        self.register_buffer("fb", fb)

    def forward(self, melspec: ember.Tensor) -> ember.Tensor:
        """
        Args:
            melspec (Tensor): a mel frequency spectrogram of dimension
                ``(..., n_mels, time)``.

        Returns:
            Tensor: linear scale spectrogram of size ``(..., freq, time)``.
        """
        if melspec.ndim < 2:
            raise ValueError(f"Expected a mel spectrogram of at least 2 dimensions, got "
                             f"{melspec.ndim}")
        shape = melspec.shape
        n_mels, time = shape[-2], shape[-1]
        if self.n_mels != n_mels:
            raise ValueError(f"Expected an input with {self.n_mels} mel bins. Found: {n_mels}")
        freq = self.fb.shape[0]
        packed = _pack(melspec, 2)
        fb_t = self.fb.transpose(-1, -2)[None].expand(packed.shape[0], n_mels, freq)
        solution = ember.linalg.lstsq(fb_t, packed, driver=self.driver).solution
        return ember.relu(solution).reshape(*shape[:-2], freq, time)


class MelSpectrogram(nn.Module):
    r"""Create a mel spectrogram for a raw audio signal: :class:`Spectrogram` followed by
    :class:`MelScale`.

    Args:
        sample_rate (int, optional): sample rate of audio signal. Default: ``16000``.
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins. Default: ``400``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 2``.
        f_min (float, optional): minimum frequency. Default: ``0.``.
        f_max (float or None, optional): maximum frequency. Default: ``None``.
        pad (int, optional): two sided padding of signal. Default: ``0``.
        n_mels (int, optional): number of mel filterbanks. Default: ``128``.
        window_fn (Callable[..., Tensor], optional): the window function.
            Default: ``ember.hann_window``.
        power (float, optional): exponent for the magnitude spectrogram. Default: ``2``.
        normalized (bool, optional): whether to normalize by magnitude after stft.
            Default: ``False``.
        wkwargs (dict or None, optional): arguments for the window function.
        center (bool, optional): pad the waveform on both sides. Default: ``True``.
        pad_mode (str, optional): the padding of ``center``. Default: ``"reflect"``.
        onesided: deprecated and unused.
        norm (str or None, optional): ``"slaney"`` for area-normalized mel weights.
            Default: ``None``.
        mel_scale (str, optional): scale to use: ``"htk"`` or ``"slaney"``.
            Default: ``"htk"``.

    Shape:
        - Input: ``(..., time)``
        - Output: ``(..., n_mels, frames)``

    Examples::

        >>> transform = transforms.MelSpectrogram(16000)
        >>> mel_specgram = transform(waveform)  # (channel, n_mels, time)
    """

    def __init__(self, sample_rate: int = 16000, n_fft: int = 400,
                 win_length: int | None = None, hop_length: int | None = None,
                 f_min: float = 0.0, f_max: float | None = None, pad: int = 0,
                 n_mels: int = 128,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 power: float = 2.0, normalized: bool = False, wkwargs: dict | None = None,
                 center: bool = True, pad_mode: str = "reflect", onesided: bool | None = None,
                 norm: str | None = None, mel_scale: str = "htk") -> None:
        super().__init__()
        if onesided is not None:
            warnings.warn("Argument 'onesided' has been deprecated and has no influence on the "
                          "behavior of this module.", stacklevel=2)
        self.sample_rate = sample_rate
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.pad = pad
        self.power = power
        self.normalized = normalized
        self.n_mels = n_mels
        self.f_max = f_max
        self.f_min = f_min
        self.spectrogram = Spectrogram(n_fft=self.n_fft, win_length=self.win_length,
                                       hop_length=self.hop_length, pad=self.pad,
                                       window_fn=window_fn, power=self.power,
                                       normalized=self.normalized, wkwargs=wkwargs,
                                       center=center, pad_mode=pad_mode, onesided=True)
        self.mel_scale = MelScale(self.n_mels, self.sample_rate, self.f_min, self.f_max,
                                  self.n_fft // 2 + 1, norm, mel_scale)

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: mel frequency spectrogram of size ``(..., n_mels, time)``.
        """
        return self.mel_scale(self.spectrogram(waveform))


class MFCC(nn.Module):
    r"""Create the mel-frequency cepstrum coefficients from an audio signal: by default the
    DCT of the decibel-scaled mel spectrogram (as librosa), not the textbook log.

    Args:
        sample_rate (int, optional): sample rate of audio signal. Default: ``16000``.
        n_mfcc (int, optional): number of mfc coefficients to retain. Default: ``40``.
        dct_type (int, optional): type of DCT to use (only 2). Default: ``2``.
        norm (str, optional): norm to use. Default: ``"ortho"``.
        log_mels (bool, optional): use log-mel spectrograms instead of db-scaled.
            Default: ``False``.
        melkwargs (dict or None, optional): arguments for :class:`MelSpectrogram`.

    Shape:
        - Input: ``(..., time)``
        - Output: ``(..., n_mfcc, frames)``

    Examples::

        >>> transform = transforms.MFCC(sample_rate=16000, n_mfcc=13,
        ...     melkwargs={"n_fft": 400, "hop_length": 160, "n_mels": 23, "center": False})
        >>> mfcc = transform(waveform)
    """

    def __init__(self, sample_rate: int = 16000, n_mfcc: int = 40, dct_type: int = 2,
                 norm: str = "ortho", log_mels: bool = False,
                 melkwargs: dict | None = None) -> None:
        super().__init__()
        if dct_type != 2:
            raise ValueError(f"DCT type not supported: {dct_type}")
        self.sample_rate = sample_rate
        self.n_mfcc = n_mfcc
        self.dct_type = dct_type
        self.norm = norm
        self.top_db = 80.0
        self.amplitude_to_DB = AmplitudeToDB("power", self.top_db)
        self.MelSpectrogram = MelSpectrogram(sample_rate=self.sample_rate, **(melkwargs or {}))
        if self.n_mfcc > self.MelSpectrogram.n_mels:
            raise ValueError("Cannot select more MFCC coefficients than # mel bins")
        self.register_buffer("dct_mat", F.create_dct(self.n_mfcc, self.MelSpectrogram.n_mels,
                                                     self.norm))
        self.log_mels = log_mels

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: specgram_mel_db of size ``(..., n_mfcc, time)``.
        """
        mel_specgram = self.MelSpectrogram(waveform)
        if self.log_mels:
            mel_specgram = ember.log(mel_specgram + 1e-6)
        else:
            mel_specgram = self.amplitude_to_DB(mel_specgram)
        return _apply_bank(mel_specgram, self.dct_mat)


class LFCC(nn.Module):
    r"""Create the linear-frequency cepstrum coefficients from an audio signal: the DCT of
    the decibel-scaled, linearly filtered spectrogram.

    Args:
        sample_rate (int, optional): sample rate of audio signal. Default: ``16000``.
        n_filter (int, optional): number of linear filters to apply. Default: ``128``.
        f_min (float, optional): minimum frequency. Default: ``0.``.
        f_max (float or None, optional): maximum frequency. Default: ``sample_rate // 2``.
        n_lfcc (int, optional): number of lfc coefficients to retain. Default: ``40``.
        dct_type (int, optional): type of DCT to use (only 2). Default: ``2``.
        norm (str, optional): norm to use. Default: ``"ortho"``.
        log_lf (bool, optional): use log-lf spectrograms instead of db-scaled.
            Default: ``False``.
        speckwargs (dict or None, optional): arguments for :class:`Spectrogram`.

    Shape:
        - Input: ``(..., time)``
        - Output: ``(..., n_lfcc, frames)``
    """

    def __init__(self, sample_rate: int = 16000, n_filter: int = 128, f_min: float = 0.0,
                 f_max: float | None = None, n_lfcc: int = 40, dct_type: int = 2,
                 norm: str = "ortho", log_lf: bool = False,
                 speckwargs: dict | None = None) -> None:
        super().__init__()
        if dct_type != 2:
            raise ValueError(f"DCT type not supported: {dct_type}")
        self.sample_rate = sample_rate
        self.f_min = f_min
        self.f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.n_filter = n_filter
        self.n_lfcc = n_lfcc
        self.dct_type = dct_type
        self.norm = norm
        self.top_db = 80.0
        self.amplitude_to_DB = AmplitudeToDB("power", self.top_db)
        self.Spectrogram = Spectrogram(**(speckwargs or {}))
        if self.n_lfcc > self.Spectrogram.n_fft:
            raise ValueError("Cannot select more LFCC coefficients than # fft bins")
        self.register_buffer("filter_mat", F.linear_fbanks(
            n_freqs=self.Spectrogram.n_fft // 2 + 1, f_min=self.f_min, f_max=self.f_max,
            n_filter=self.n_filter, sample_rate=self.sample_rate))
        self.register_buffer("dct_mat", F.create_dct(self.n_lfcc, self.n_filter, self.norm))
        self.log_lf = log_lf

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: linear frequency cepstral coefficients of size ``(..., n_lfcc, time)``.
        """
        specgram = self.Spectrogram(waveform)
        specgram = _apply_bank(specgram, self.filter_mat)
        if self.log_lf:
            specgram = ember.log(specgram + 1e-6)
        else:
            specgram = self.amplitude_to_DB(specgram)
        return _apply_bank(specgram, self.dct_mat)


class TimeStretch(nn.Module):
    r"""Stretch an STFT in time without modifying pitch for a given rate (the phase
    vocoder), as proposed in SpecAugment.

    Args:
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``n_fft // 2``, where ``n_fft == (n_freq - 1) * 2``.
        n_freq (int, optional): number of filter banks from stft. Default: ``201``.
        fixed_rate (float or None, optional): rate to speed up or slow down by; if ``None``,
            the rate must be passed to ``forward``. Default: ``None``.

    Examples::

        >>> spectrogram = transforms.Spectrogram(power=None)
        >>> stretch = transforms.TimeStretch()
        >>> stretched = stretch(spectrogram(waveform), 1.2)
    """

    def __init__(self, hop_length: int | None = None, n_freq: int = 201,
                 fixed_rate: float | None = None) -> None:
        super().__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.register_buffer("phase_advance",
                             ember.linspace(0, math.pi * hop_length, n_freq)[..., None])

    def forward(self, complex_specgrams: ember.Tensor, overriding_rate: float | None = None
                ) -> ember.Tensor:
        """
        Args:
            complex_specgrams (Tensor): a tensor of dimension ``(..., freq, num_frame)`` with
                complex dtype.
            overriding_rate (float or None, optional): speed up to apply to this batch; if
                ``None``, ``fixed_rate`` is used.

        Returns:
            Tensor: stretched spectrogram with ``ceil(num_frame / rate)`` frames.
        """
        if not complex_specgrams.is_complex():
            warnings.warn("The input to TimeStretch must be complex type. Providing non-complex "
                          "tensor produces invalid results.", stacklevel=2)
        if overriding_rate is None:
            if self.fixed_rate is None:
                raise ValueError("If no fixed_rate is specified, must pass a valid rate to the "
                                 "forward method.")
            rate = self.fixed_rate
        else:
            rate = overriding_rate
        return F.phase_vocoder(complex_specgrams, rate, self.phase_advance)


class SpectralCentroid(nn.Module):
    r"""Compute the spectral centroid for each channel along the time axis.

    Args:
        sample_rate (int): sample rate of audio signal.
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins. Default: ``400``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 2``.
        pad (int, optional): two sided padding of signal. Default: ``0``.
        window_fn (Callable[..., Tensor], optional): the window function.
            Default: ``ember.hann_window``.
        wkwargs (dict or None, optional): arguments for the window function.

    Shape:
        - Input: ``(..., time)``
        - Output: ``(..., frames)``
    """

    def __init__(self, sample_rate: int, n_fft: int = 400, win_length: int | None = None,
                 hop_length: int | None = None, pad: int = 0,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 wkwargs: dict | None = None) -> None:
        super().__init__()
        self.sample_rate = sample_rate
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad = pad

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: spectral centroid of size ``(..., time)``.
        """
        return F.spectral_centroid(waveform, self.sample_rate, self.pad, self.window,
                                   self.n_fft, self.hop_length, self.win_length)


class PitchShift(nn.Module):
    r"""Shift the pitch of a waveform by ``n_steps`` steps.

    The resampling kernel is computed once in float32 and registered as the ``kernel``
    buffer: the name and the values of the parameter that torchaudio materialises lazily
    from a float32 input. An input of another floating dtype gets a kernel computed in that
    dtype, as torchaudio's does.

    Args:
        sample_rate (int): sample rate of the waveform.
        n_steps (int): the (fractional) steps to shift the waveform.
        bins_per_octave (int, optional): the number of steps per octave. Default: ``12``.
        n_fft (int, optional): size of FFT, creates ``n_fft // 2 + 1`` bins.
            Default: ``512``.
        win_length (int or None, optional): window size. Default: ``n_fft``.
        hop_length (int or None, optional): length of hop between STFT windows.
            Default: ``win_length // 4``.
        window_fn (Callable[..., Tensor], optional): the window function.
            Default: ``ember.hann_window``.
        wkwargs (dict or None, optional): arguments for the window function.

    Examples::

        >>> transform = transforms.PitchShift(16000, 4)
        >>> waveform_shift = transform(waveform)  # (channel, time)
    """

    def __init__(self, sample_rate: int, n_steps: float, bins_per_octave: int = 12,
                 n_fft: int = 512, win_length: int | None = None,
                 hop_length: int | None = None,
                 window_fn: Callable[..., ember.Tensor] = ember.hann_window,
                 wkwargs: dict | None = None) -> None:
        super().__init__()
        self.n_steps = n_steps
        self.bins_per_octave = bins_per_octave
        self.sample_rate = sample_rate
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 4
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        rate = 2.0 ** (-float(n_steps) / bins_per_octave)
        self.orig_freq = int(sample_rate / rate)
        self.gcd = math.gcd(int(self.orig_freq), int(sample_rate))
        if self.orig_freq != sample_rate:
            kernel, self.width = _sinc_resample_kernel(self.orig_freq, sample_rate, self.gcd, 6,
                                                       0.99, "sinc_interp_hann", None,
                                                       "float32")
            self.register_buffer("kernel", ember.from_numpy(kernel))

    def _kernel_for(self, waveform: ember.Tensor) -> ember.Tensor:
        if waveform.dtype == self.kernel.dtype:
            return self.kernel
        np_dtype = str(waveform.dtype).removeprefix("ember.")
        kernel, _ = _sinc_resample_kernel(self.orig_freq, self.sample_rate, self.gcd, 6, 0.99,
                                          "sinc_interp_hann", None, np_dtype)
        return ember.from_numpy(kernel).to(self.kernel.device)

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(..., time)``.

        Returns:
            Tensor: the pitch-shifted audio of shape ``(..., time)``.
        """
        shape = waveform.shape
        stretched = _stretch_waveform(waveform, self.n_steps, self.bins_per_octave, self.n_fft,
                                      self.win_length, self.hop_length, self.window)
        if self.orig_freq != self.sample_rate:
            shifted = _apply_sinc_resample_kernel(stretched, self.orig_freq, self.sample_rate,
                                                  self.gcd, self._kernel_for(stretched),
                                                  self.width)
        else:
            shifted = stretched
        return _fix_waveform_shape(shifted, shape)


class FFTConvolve(nn.Module):
    r"""Convolve inputs along their last dimension using FFT (see
    :func:`emberaudio.functional.fftconvolve`).

    Args:
        mode (str, optional): ``"full"``, ``"valid"`` or ``"same"``. Default: ``"full"``.
    """

    def __init__(self, mode: str = "full") -> None:
        if mode not in _CONVOLVE_MODES:
            raise ValueError(f"Unrecognized mode value '{mode}'. Please specify one of "
                             f"{_CONVOLVE_MODES}.")
        super().__init__()
        self.mode = mode

    def forward(self, x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): first convolution operand, ``(..., N)``.
            y (Tensor): second convolution operand, ``(..., M)``.

        Returns:
            Tensor: result of convolving ``x`` and ``y``, ``(..., L)``.
        """
        return F.fftconvolve(x, y, mode=self.mode)


class Vad(nn.Module):
    r"""Voice Activity Detector, similar to SoX's ``vad``: trims silence and quiet
    background sounds from the front of recordings of speech. See
    :func:`emberaudio.functional.vad` for the arguments.

    Examples::

        >>> transform = transforms.Vad(sample_rate=16000, trigger_level=7.5)
        >>> front_trimmed = transform(waveform)
    """

    def __init__(self, sample_rate: int, trigger_level: float = 7.0, trigger_time: float = 0.25,
                 search_time: float = 1.0, allowed_gap: float = 0.25,
                 pre_trigger_time: float = 0.0, boot_time: float = 0.35,
                 noise_up_time: float = 0.1, noise_down_time: float = 0.01,
                 noise_reduction_amount: float = 1.35, measure_freq: float = 20.0,
                 measure_duration: float | None = None, measure_smooth_time: float = 0.4,
                 hp_filter_freq: float = 50.0, lp_filter_freq: float = 6000.0,
                 hp_lifter_freq: float = 150.0, lp_lifter_freq: float = 2000.0) -> None:
        super().__init__()
        self.sample_rate = sample_rate
        self.trigger_level = trigger_level
        self.trigger_time = trigger_time
        self.search_time = search_time
        self.allowed_gap = allowed_gap
        self.pre_trigger_time = pre_trigger_time
        self.boot_time = boot_time
        self.noise_up_time = noise_up_time
        self.noise_down_time = noise_down_time
        self.noise_reduction_amount = noise_reduction_amount
        self.measure_freq = measure_freq
        self.measure_duration = measure_duration
        self.measure_smooth_time = measure_smooth_time
        self.hp_filter_freq = hp_filter_freq
        self.lp_filter_freq = lp_filter_freq
        self.hp_lifter_freq = hp_lifter_freq
        self.lp_lifter_freq = lp_lifter_freq

    def forward(self, waveform: ember.Tensor) -> ember.Tensor:
        """
        Args:
            waveform (Tensor): tensor of audio of dimension ``(channels, time)`` or
                ``(time)``.

        Returns:
            Tensor: the waveform trimmed at the front.
        """
        return F.vad(waveform, self.sample_rate, self.trigger_level, self.trigger_time,
                     self.search_time, self.allowed_gap, self.pre_trigger_time, self.boot_time,
                     self.noise_up_time, self.noise_down_time, self.noise_reduction_amount,
                     self.measure_freq, self.measure_duration, self.measure_smooth_time,
                     self.hp_filter_freq, self.lp_filter_freq, self.hp_lifter_freq,
                     self.lp_lifter_freq)
