"""The Emformer RNN-T speech recognition bundle: feature extraction (log-compressed,
normalized mel spectrograms), the beam-search decoder around the pretrained model, and the
SentencePiece token processor."""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import ember
from ember import nn
from emberaudio import transforms
from emberaudio.models import RNNT, RNNTBeamSearch, emformer_rnnt_base
from emberaudio.pipelines._utils import _download_asset, _pretrained_model

__all__ = ["RNNTBundle"]

# int16 full scale, squared (a power spectrogram), in decibels; the features are scaled by
# it so that a float waveform gives the magnitudes of the int16 audio the model learnt on.
_decibel = 2 * 20 * math.log10(32767)
_gain = pow(10, 0.05 * _decibel)


def _piecewise_linear_log(x: ember.Tensor) -> ember.Tensor:
    """``log(x)`` above e, then everything at or below e divided by e. The two steps run in
    this order, as in the features the model was trained on: a value in (e, e**e] is
    logged and then divided too."""
    x = ember.where(x > math.e, ember.log(ember.clamp(x, min=math.e)), x)
    return ember.where(x <= math.e, x / math.e, x)


class _GlobalStatsNormalization(nn.Module):
    """``(x - mean) * invstddev`` with the statistics of a JSON file."""

    def __init__(self, global_stats_path) -> None:
        super().__init__()
        with open(global_stats_path) as f:
            blob = json.load(f)
        self.register_buffer("mean", ember.tensor(blob["mean"]))
        self.register_buffer("invstddev", ember.tensor(blob["invstddev"]))

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        return (input - self.mean) * self.invstddev


class _Features(nn.Module):
    def __init__(self, mel: nn.Module, normalization: nn.Module, right_padding: int) -> None:
        super().__init__()
        self.mel = mel
        self.normalization = normalization
        self.right_padding = right_padding

    def forward(self, input: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        x = self.mel(input).transpose(1, 0)
        x = self.normalization(_piecewise_linear_log(x * _gain))
        if self.right_padding:
            x = nn.functional.pad(x, (0, 0, 0, self.right_padding))
        return x, ember.tensor([x.shape[0]])


class _SentencePieceTokenProcessor:
    def __init__(self, sp_model_path) -> None:
        try:
            import sentencepiece as spm
        except ImportError:
            raise RuntimeError("SentencePiece is not available. Please install it.") from None
        self.sp_model = spm.SentencePieceProcessor(model_file=str(sp_model_path))
        self.post_process_remove_list = {self.sp_model.unk_id(), self.sp_model.eos_id(),
                                         self.sp_model.pad_id()}

    def __call__(self, tokens: list[int], lstrip: bool = True) -> str:
        kept = [t for t in tokens[1:] if t not in self.post_process_remove_list]
        text = "".join(self.sp_model.id_to_piece(kept)).replace("\u2581", " ")
        return text.lstrip() if lstrip else text


@dataclass
class RNNTBundle:
    """The parts of speech recognition with a pretrained RNN-T: feature extractors
    (whole-utterance and streaming), the beam-search decoder and the token processor.

    Use the instances of this module (``EMFORMER_RNNT_BASE_LIBRISPEECH``), not this class.

    Example::

        >>> bundle = emberaudio.pipelines.EMFORMER_RNNT_BASE_LIBRISPEECH
        >>> feature_extractor = bundle.get_feature_extractor()
        >>> decoder = bundle.get_decoder()
        >>> token_processor = bundle.get_token_processor()
        >>> with ember.no_grad():
        ...     features, length = feature_extractor(waveform)
        ...     hypotheses = decoder(features, length, 10)
        >>> text = token_processor(hypotheses[0][0])
    """

    class FeatureExtractor(ABC):
        """Interface of the feature extractor: a waveform ``(time,)`` to features
        ``(frames, n_mels)`` and their length ``(1,)``."""

        @abstractmethod
        def __call__(self, input: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
            ...

    class TokenProcessor(ABC):
        """Interface of the token processor: token indices to text."""

        @abstractmethod
        def __call__(self, tokens: list[int], **kwargs) -> str:
            ...

    _rnnt_path: str
    _rnnt_factory_func: Callable[[], RNNT]
    _global_stats_path: str
    _sp_model_path: str
    _right_padding: int
    _blank: int
    _sample_rate: int
    _n_fft: int
    _n_mels: int
    _hop_length: int
    _segment_length: int
    _right_context_length: int

    @property
    def sample_rate(self) -> int:
        """Sample rate of the input waveforms."""
        return self._sample_rate

    @property
    def n_fft(self) -> int:
        """FFT size of the features."""
        return self._n_fft

    @property
    def n_mels(self) -> int:
        """Number of mel features."""
        return self._n_mels

    @property
    def hop_length(self) -> int:
        """Samples between successive frames."""
        return self._hop_length

    @property
    def segment_length(self) -> int:
        """Frames per streaming segment."""
        return self._segment_length

    @property
    def right_context_length(self) -> int:
        """Frames of right context after each segment."""
        return self._right_context_length

    def _get_model(self) -> RNNT:
        return _pretrained_model(self._rnnt_factory_func(), self._rnnt_path)

    def get_decoder(self) -> RNNTBeamSearch:
        """The beam-search decoder around the pretrained model (downloaded once)."""
        return RNNTBeamSearch(self._get_model(), self._blank)

    def _features(self, right_padding: int) -> _Features:
        mel = transforms.MelSpectrogram(sample_rate=self.sample_rate, n_fft=self.n_fft,
                                        n_mels=self.n_mels, hop_length=self.hop_length)
        stats = _GlobalStatsNormalization(_download_asset(self._global_stats_path))
        return _Features(mel, stats, right_padding)

    def get_feature_extractor(self) -> _Features:
        """The whole-utterance feature extractor (right-padded with the right context)."""
        return self._features(self._right_padding)

    def get_streaming_feature_extractor(self) -> _Features:
        """The feature extractor for streaming segments (no padding)."""
        return self._features(0)

    def get_token_processor(self) -> _SentencePieceTokenProcessor:
        """The SentencePiece token processor (needs the ``sentencepiece`` package)."""
        return _SentencePieceTokenProcessor(_download_asset(self._sp_model_path))


RNNTBundle.FeatureExtractor.register(_Features)
RNNTBundle.TokenProcessor.register(_SentencePieceTokenProcessor)

EMFORMER_RNNT_BASE_LIBRISPEECH = RNNTBundle(
    _rnnt_path="models/emformer_rnnt_base_librispeech.pt",
    _rnnt_factory_func=partial(emformer_rnnt_base, num_symbols=4097),
    _global_stats_path="pipeline-assets/global_stats_rnnt_librispeech.json",
    _sp_model_path="pipeline-assets/spm_bpe_4096_librispeech.model",
    _right_padding=4, _blank=4096, _sample_rate=16000, _n_fft=400, _n_mels=80,
    _hop_length=160, _segment_length=16, _right_context_length=4)
EMFORMER_RNNT_BASE_LIBRISPEECH.__doc__ = """Emformer RNN-T speech recognition (streaming and
not), trained on LibriSpeech; the model is :func:`~emberaudio.models.emformer_rnnt_base` with
4,097 symbols (a 4,096-piece SentencePiece vocabulary and the blank). See
:class:`RNNTBundle` for the usage."""
