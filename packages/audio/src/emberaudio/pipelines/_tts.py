"""Text-to-speech bundles: a text processor (characters, or phonemes through
DeepPhonemizer), a pretrained :class:`~emberaudio.models.Tacotron2`, and a vocoder (WaveRNN
or Griffin-Lim) from mel spectrograms to waveforms."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import ember
from ember import nn
from emberaudio.functional import mu_law_decoding
from emberaudio.models import Tacotron2, WaveRNN
from emberaudio.pipelines._utils import _download_checkpoint, _load_state_dict
from emberaudio.transforms import GriffinLim, InverseMelScale

__all__ = ["Tacotron2TTSBundle"]

_BASE_URL = "https://download.pytorch.org/torchaudio/models"
_PHONEMIZER_URL = "https://public-asai-dl-models.s3.eu-central-1.amazonaws.com/DeepPhonemizer"

_PUNCTUATION = ("_", "-", "!", "'", "(", ")", ",", ".", ":", ";", "?", " ")
_CHARS = _PUNCTUATION + tuple("abcdefghijklmnopqrstuvwxyz")
_STRESSED = ("AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH",
             "UW")
_PLAIN = ("B", "CH", "D", "DH", "F", "G", "HH", "JH", "K", "L", "M", "N", "NG", "P", "R", "S",
          "SH", "T", "TH", "V", "W", "Y", "Z", "ZH")
# The CMUDict phones in alphabetical order, each vowel with its three stress marks after it.
_PHONES = _PUNCTUATION + tuple(sorted(
    [p for v in _STRESSED for p in (v, v + "0", v + "1", v + "2")] + list(_PLAIN)))


def _to_tensor(indices: list[list[int]]) -> tuple[ember.Tensor, ember.Tensor]:
    lengths = ember.tensor([len(i) for i in indices], dtype=ember.int32)
    values = nn.utils.rnn.pad_sequence([ember.tensor(i, dtype=ember.int64) for i in indices],
                                       batch_first=True)
    return values, lengths


class Tacotron2TTSBundle(ABC):
    """The parts of text-to-speech with a pretrained Tacotron2: a text processor, the
    Tacotron2 model and a vocoder.

    Use the instances of this module (``TACOTRON2_WAVERNN_PHONE_LJSPEECH``...), not this
    class.

    Example::

        >>> bundle = emberaudio.pipelines.TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH
        >>> processor = bundle.get_text_processor()
        >>> tacotron2 = bundle.get_tacotron2()
        >>> vocoder = bundle.get_vocoder()
        >>> with ember.no_grad():
        ...     tokens, lengths = processor("Hello world!")
        ...     spec, spec_lengths, _ = tacotron2.infer(tokens, lengths)
        ...     waveforms, lengths = vocoder(spec, spec_lengths)
    """

    class TextProcessor(ABC):
        """Interface of the text processor: text (or a list of texts) to padded token
        indices ``(batch, max length)`` and their lengths ``(batch,)``."""

        @property
        @abstractmethod
        def tokens(self) -> tuple[str, ...]:
            """The tokens, in the order of their indices."""

        @abstractmethod
        def __call__(self, texts) -> tuple[ember.Tensor, ember.Tensor]:
            ...

    class Vocoder(ABC):
        """Interface of the vocoder: mel spectrograms ``(batch, n_mels, time)`` (natural
        log) and their lengths to waveforms ``(batch, samples)`` and lengths."""

        @property
        @abstractmethod
        def sample_rate(self) -> float:
            """Sample rate of the generated waveforms."""

        @abstractmethod
        def __call__(self, specgrams, lengths=None):
            ...

    @abstractmethod
    def get_text_processor(self, *, dl_kwargs: dict | None = None) -> TextProcessor:
        """The text processor."""

    @abstractmethod
    def get_vocoder(self, *, dl_kwargs: dict | None = None) -> Vocoder:
        """The vocoder (pretrained weights downloaded once when it has any)."""

    @abstractmethod
    def get_tacotron2(self, *, dl_kwargs: dict | None = None) -> Tacotron2:
        """The pretrained Tacotron2, in evaluation mode (downloaded once)."""


class _EnglishCharProcessor(Tacotron2TTSBundle.TextProcessor):
    def __init__(self) -> None:
        self._tokens = _CHARS
        self._mapping = {s: i for i, s in enumerate(self._tokens)}

    @property
    def tokens(self):
        return self._tokens

    def __call__(self, texts):
        if isinstance(texts, str):
            texts = [texts]
        return _to_tensor([[self._mapping[c] for c in t.lower() if c in self._mapping]
                           for t in texts])


def _load_phonemizer(file: str, dl_kwargs: dict | None):
    try:
        from dp.phonemizer import Phonemizer
    except ImportError:
        raise RuntimeError("DeepPhonemizer is not installed. Please install it.") from None
    logger = logging.getLogger("dp")
    level = logger.level
    logger.setLevel(logging.INFO)  # DeepPhonemizer logs at DEBUG by default
    try:
        path = _download_checkpoint(f"{_PHONEMIZER_URL}/{file}", dl_kwargs)
        return Phonemizer.from_checkpoint(str(path))
    finally:
        logger.setLevel(level)


class _EnglishPhoneProcessor(Tacotron2TTSBundle.TextProcessor):
    def __init__(self, *, dl_kwargs: dict | None = None) -> None:
        self._tokens = _PHONES
        self._mapping = {p: i for i, p in enumerate(self._tokens)}
        self._phonemizer = _load_phonemizer("en_us_cmudict_forward.pt", dl_kwargs)
        self._pattern = r"(\[[A-Z]+?\]|[_!'(),.:;? -])"

    @property
    def tokens(self):
        return self._tokens

    def __call__(self, texts):
        if isinstance(texts, str):
            texts = [texts]
        indices = []
        for phones in self._phonemizer(texts, lang="en_us"):
            # "[F][UW][B][AA][R]!" -> F UW B AA R !
            found = [re.sub(r"[\[\]]", "", p) for p in re.findall(self._pattern, phones)]
            indices.append([self._mapping[p] for p in found])
        return _to_tensor(indices)


def _unnormalize_waveform(waveform: ember.Tensor, bits: int) -> ember.Tensor:
    """[-1, 1] to the classes [0, 2 ** bits - 1]."""
    waveform = (ember.clamp(waveform, -1, 1) + 1.0) * (2 ** bits - 1) / 2
    return ember.clamp(waveform, 0, 2 ** bits - 1).int()


class _WaveRNNVocoder(nn.Module, Tacotron2TTSBundle.Vocoder):
    def __init__(self, model: WaveRNN, min_level_db: float | None = -100) -> None:
        super().__init__()
        self._sample_rate = 22050
        self._model = model
        self._min_level_db = min_level_db

    @property
    def sample_rate(self):
        return self._sample_rate

    def forward(self, mel_spec, lengths=None):
        mel_spec = 20 * ember.log10(ember.clamp(ember.exp(mel_spec), min=1e-5))
        if self._min_level_db is not None:
            mel_spec = ember.clamp((self._min_level_db - mel_spec) / self._min_level_db,
                                   min=0, max=1)
        waveform, lengths = self._model.infer(mel_spec, lengths)
        waveform = _unnormalize_waveform(waveform, self._model.n_bits)
        waveform = mu_law_decoding(waveform, self._model.n_classes)
        return waveform.squeeze(1), lengths


class _GriffinLimVocoder(nn.Module, Tacotron2TTSBundle.Vocoder):
    def __init__(self) -> None:
        super().__init__()
        self._sample_rate = 22050
        self._inv_mel = InverseMelScale(n_stft=1024 // 2 + 1, n_mels=80,
                                        sample_rate=self._sample_rate, f_min=0.0,
                                        f_max=8000.0, mel_scale="slaney", norm="slaney")
        self._griffin_lim = GriffinLim(n_fft=1024, power=1, hop_length=256, win_length=1024)

    @property
    def sample_rate(self):
        return self._sample_rate

    def forward(self, mel_spec, lengths=None):
        spec = self._inv_mel(ember.exp(mel_spec).detach())
        return self._griffin_lim(spec.detach()), lengths


def _taco_params(n_symbols: int) -> dict[str, Any]:
    return {"mask_padding": False, "n_mels": 80, "n_frames_per_step": 1,
            "symbol_embedding_dim": 512, "encoder_embedding_dim": 512,
            "encoder_n_convolution": 3, "encoder_kernel_size": 5, "decoder_rnn_dim": 1024,
            "decoder_max_step": 2000, "decoder_dropout": 0.1, "decoder_early_stopping": True,
            "attention_rnn_dim": 1024, "attention_hidden_dim": 128,
            "attention_location_n_filter": 32, "attention_location_kernel_size": 31,
            "attention_dropout": 0.1, "prenet_dim": 256, "postnet_n_convolution": 5,
            "postnet_kernel_size": 5, "postnet_embedding_dim": 512, "gate_threshold": 0.5,
            "n_symbol": n_symbols}


_WAVERNN_PARAMS = {"upsample_scales": [5, 5, 11], "n_classes": 2 ** 8, "hop_length": 275,
                   "n_res_block": 10, "n_rnn": 512, "n_fc": 512, "kernel_size": 5,
                   "n_freq": 80, "n_hidden": 128, "n_output": 128}


def _load(model: nn.Module, path: str, dl_kwargs: dict | None) -> nn.Module:
    url = f"{_BASE_URL}/{path}"
    model.load_state_dict(_load_state_dict(_download_checkpoint(url, dl_kwargs)))
    return model.eval()


@dataclass
class _Tacotron2Bundle(Tacotron2TTSBundle):
    _tacotron2_path: str
    _tacotron2_params: dict[str, Any]
    _phonemes: bool = False
    _wavernn_path: str | None = None
    _wavernn_params: dict[str, Any] | None = None

    def get_text_processor(self, *, dl_kwargs=None):
        if self._phonemes:
            return _EnglishPhoneProcessor(dl_kwargs=dl_kwargs)
        return _EnglishCharProcessor()

    def get_tacotron2(self, *, dl_kwargs=None):
        return _load(Tacotron2(**self._tacotron2_params), self._tacotron2_path, dl_kwargs)

    def get_vocoder(self, *, dl_kwargs=None):
        if self._wavernn_path is None:
            return _GriffinLimVocoder()
        return _WaveRNNVocoder(_load(WaveRNN(**self._wavernn_params), self._wavernn_path,
                                     dl_kwargs))


TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH = _Tacotron2Bundle(
    "tacotron2_english_characters_1500_epochs_ljspeech.pth", _taco_params(len(_CHARS)))
TACOTRON2_GRIFFINLIM_PHONE_LJSPEECH = _Tacotron2Bundle(
    "tacotron2_english_phonemes_1500_epochs_ljspeech.pth", _taco_params(len(_PHONES)),
    _phonemes=True)
TACOTRON2_WAVERNN_CHAR_LJSPEECH = _Tacotron2Bundle(
    "tacotron2_english_characters_1500_epochs_wavernn_ljspeech.pth",
    _taco_params(len(_CHARS)), _wavernn_path="wavernn_10k_epochs_8bits_ljspeech.pth",
    _wavernn_params=_WAVERNN_PARAMS)
TACOTRON2_WAVERNN_PHONE_LJSPEECH = _Tacotron2Bundle(
    "tacotron2_english_phonemes_1500_epochs_wavernn_ljspeech.pth",
    _taco_params(len(_PHONES)), _phonemes=True,
    _wavernn_path="wavernn_10k_epochs_8bits_ljspeech.pth", _wavernn_params=_WAVERNN_PARAMS)

for _bundle, _text, _vocoder in [
        (TACOTRON2_GRIFFINLIM_CHAR_LJSPEECH, "characters", "Griffin-Lim"),
        (TACOTRON2_GRIFFINLIM_PHONE_LJSPEECH, "phonemes (DeepPhonemizer, CMUDict)",
         "Griffin-Lim"),
        (TACOTRON2_WAVERNN_CHAR_LJSPEECH, "characters", "WaveRNN (8 bits, 10k epochs)"),
        (TACOTRON2_WAVERNN_PHONE_LJSPEECH, "phonemes (DeepPhonemizer, CMUDict)",
         "WaveRNN (8 bits, 10k epochs)")]:
    _bundle.__doc__ = (f"Text-to-speech from {_text}: Tacotron2 trained on LJSpeech for 1,500 "
                       f"epochs, {_vocoder} vocoder, 22,050 Hz. See "
                       ":class:`Tacotron2TTSBundle` for the usage.")

