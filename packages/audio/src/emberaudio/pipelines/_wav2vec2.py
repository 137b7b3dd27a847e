"""wav2vec 2.0 / HuBERT / WavLM / XLS-R / MMS bundles: the architecture, the published
checkpoint, the sample rate and (for ASR) the label set of each pretrained model."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import ember
from ember import nn
from emberaudio import functional as F
from emberaudio.models import wav2vec2_model, wavlm_model
from emberaudio.pipelines._utils import _download_checkpoint, _load_state_dict

__all__ = ["Wav2Vec2ASRBundle", "Wav2Vec2Bundle", "Wav2Vec2FABundle"]

_URL_ROOT = "https://download.pytorch.org/torchaudio/models"


class _Wav2Vec2Model(nn.Module):
    """A :class:`~emberaudio.models.Wav2Vec2Model` with the extra steps some bundles need:
    a layer norm over each waveform, log-softmax, a zero "star" column."""

    def __init__(self, model: nn.Module, normalize_waveform: bool,
                 apply_log_softmax: bool = False, append_star: bool = False) -> None:
        super().__init__()
        self.model = model
        self.normalize_waveform = normalize_waveform
        self.apply_log_softmax = apply_log_softmax
        self.append_star = append_star

    def _normalize(self, waveforms):
        if self.normalize_waveform:
            return nn.functional.layer_norm(waveforms, tuple(waveforms.shape))
        return waveforms

    def forward(self, waveforms, lengths=None):
        output, lengths = self.model(self._normalize(waveforms), lengths)
        if self.apply_log_softmax:
            output = nn.functional.log_softmax(output, dim=-1)
        if self.append_star:
            star = ember.zeros(output.shape[0], output.shape[1], 1, dtype=output.dtype,
                               device=output.device)
            output = ember.cat((output, star), dim=-1)
        return output, lengths

    def extract_features(self, waveforms, lengths=None, num_layers=None):
        return self.model.extract_features(self._normalize(waveforms), lengths, num_layers)


def _legacy_weight_norm(state_dict: dict) -> dict:
    """Checkpoints saved with the old ``weight_norm`` name the positional convolution's
    magnitude and direction ``weight_g`` / ``weight_v``; the parametrization names them
    ``parametrizations.weight.original0`` / ``original1``."""
    renamed = {}
    for key, value in state_dict.items():
        for old, new in (("conv.weight_g", "conv.parametrizations.weight.original0"),
                         ("conv.weight_v", "conv.parametrizations.weight.original1")):
            if key.endswith(old):
                key = key[:-len(old)] + new
        renamed[key] = value
    return renamed


@dataclass
class Wav2Vec2Bundle:
    """A pretrained :class:`~emberaudio.models.Wav2Vec2Model`: the architecture, where its
    weights are and the sample rate it was trained on.

    Use the instances of this module (``HUBERT_BASE``, ``WAV2VEC2_BASE``...), not this class.

    Example::

        >>> bundle = emberaudio.pipelines.HUBERT_BASE
        >>> model = bundle.get_model()
        >>> waveform = emberaudio.functional.resample(waveform, sample_rate, bundle.sample_rate)
        >>> features, _ = model.extract_features(waveform)
    """

    _path: str
    _params: dict[str, Any]
    _sample_rate: float
    _normalize_waveform: bool
    _model_type: str

    @property
    def sample_rate(self) -> float:
        """Sample rate of the audio the model was trained on."""
        return self._sample_rate

    @property
    def _url(self) -> str:
        return self._path if self._path.startswith("https") else f"{_URL_ROOT}/{self._path}"

    def _get_state_dict(self, dl_kwargs):
        return _legacy_weight_norm(_load_state_dict(_download_checkpoint(self._url, dl_kwargs)))

    def _build(self):
        factories = {"Wav2Vec2": wav2vec2_model, "WavLM": wavlm_model}
        if self._model_type not in factories:
            raise ValueError(f"Supported model types are {tuple(factories)}. Found: "
                             f"{self._model_type}")
        return factories[self._model_type](**self._params)

    def get_model(self, *, dl_kwargs: dict | None = None) -> nn.Module:
        """Builds the model and loads the pretrained weights (downloaded once into ember's
        hub cache, ``<hub dir>/checkpoints``).

        Args:
            dl_kwargs (dict, optional): ``model_dir``, ``file_name``, ``progress``, and
                ``sha256`` (the file's expected SHA-256) for the download.

        Returns:
            nn.Module: the :class:`~emberaudio.models.Wav2Vec2Model`, in evaluation mode;
            bundles whose model expects layer-normed waveforms (the large and pre-norm
            ones) wrap it in a module that normalizes first.
        """
        model = self._build()
        model.load_state_dict(self._get_state_dict(dl_kwargs))
        if self._normalize_waveform:
            model = _Wav2Vec2Model(model, normalize_waveform=True)
        return model.eval()


@dataclass
class Wav2Vec2ASRBundle(Wav2Vec2Bundle):
    """A pretrained :class:`~emberaudio.models.Wav2Vec2Model` fine-tuned for CTC speech
    recognition, with its output labels.

    Example::

        >>> bundle = emberaudio.pipelines.WAV2VEC2_ASR_BASE_960H
        >>> model = bundle.get_model()
        >>> labels = bundle.get_labels()
        >>> emissions, _ = model(waveform)
    """

    _labels: tuple[str, ...]
    _remove_aux_axis: tuple[int, ...] = (1, 2, 3)

    def get_labels(self, *, blank: str = "-") -> tuple[str, ...]:
        """The output labels; the first is the blank.

        Args:
            blank (str, optional): the blank's symbol. (Default: ``"-"``)
        """
        return (blank, *self._labels)

    def _get_state_dict(self, dl_kwargs):
        state_dict = super()._get_state_dict(dl_kwargs)
        # fairseq's dictionaries reserve rows (<pad>, </s>, <unk>, and a few stray symbols)
        # that the CTC head never uses; the models have no such rows.
        for key in ("aux.weight", "aux.bias"):
            rows = state_dict[key]
            keep = [i for i in range(rows.shape[0]) if i not in self._remove_aux_axis]
            state_dict[key] = rows[ember.tensor(keep, dtype=ember.int64)].contiguous()
        return state_dict


@dataclass
class Wav2Vec2FABundle(Wav2Vec2ASRBundle):
    """A pretrained :class:`~emberaudio.models.Wav2Vec2Model` for forced alignment (its
    model returns log-probabilities), with a tokenizer and an aligner.

    Example::

        >>> bundle = emberaudio.pipelines.MMS_FA
        >>> model = bundle.get_model()
        >>> emission, _ = model(waveform)
        >>> tokens = bundle.get_tokenizer()(["hello", "world"])
        >>> spans = bundle.get_aligner()(emission[0], tokens)
    """

    class Tokenizer(ABC):
        """Interface of the tokenizer: a list of (normalized) words to lists of token
        indices."""

        @abstractmethod
        def __call__(self, transcript: list[str]) -> list[list[int]]:
            ...

    class Aligner(ABC):
        """Interface of the aligner: an emission ``(time, labels)`` in log domain and the
        tokenized transcript to the :class:`~emberaudio.functional.TokenSpan` s of each
        word."""

        @abstractmethod
        def __call__(self, emission: ember.Tensor, tokens: list[list[int]]) -> list[list]:
            ...

    def get_labels(self, star: str | None = "*", blank: str = "-") -> tuple[str, ...]:
        """The labels of the emission's last dimension: the blank first, the star (the
        extra column of ``get_model(with_star=True)``) last unless ``star`` is None."""
        labels = super().get_labels(blank=blank)
        return labels if star is None else (*labels, star)

    def get_model(self, with_star: bool = True, *, dl_kwargs: dict | None = None
                  ) -> nn.Module:
        """Builds the model (log-softmax outputs; with ``with_star``, one more zero
        column for the star token) and loads the pretrained weights."""
        model = self._build()
        model.load_state_dict(self._get_state_dict(dl_kwargs))
        return _Wav2Vec2Model(model, normalize_waveform=self._normalize_waveform,
                              apply_log_softmax=True, append_star=with_star).eval()

    def get_dict(self, star: str | None = "*", blank: str = "-") -> dict[str, int]:
        """The map from label to its index in the emission."""
        return {k: i for i, k in enumerate(self.get_labels(star=star, blank=blank))}

    def get_tokenizer(self) -> Tokenizer:
        """A tokenizer from words to token indices (:meth:`get_dict`)."""
        return _Tokenizer(self.get_dict())

    def get_aligner(self) -> Aligner:
        """An aligner (CTC forced alignment, blank 0)."""
        return _Aligner(blank=0)


class _Tokenizer(Wav2Vec2FABundle.Tokenizer):
    """Characters of each (normalized) word to label indices."""

    def __init__(self, dictionary: dict[str, int]) -> None:
        self.dictionary = dictionary

    def __call__(self, transcript: list[str]) -> list[list[int]]:
        try:
            return [[self.dictionary[c] for c in word] for word in transcript]
        except KeyError as error:
            raise ValueError(f"{error.args[0]!r} is not in the dictionary; normalize the "
                             "transcript first (lower case, the labels' alphabet)") from None


class _Aligner(Wav2Vec2FABundle.Aligner):
    """CTC forced alignment of token sequences to an emission, as token spans per word."""

    def __init__(self, blank: int) -> None:
        self.blank = blank

    def __call__(self, emission: ember.Tensor, tokens: list[list[int]]) -> list[list]:
        if emission.ndim != 2:
            raise ValueError(f"The input emission must be 2D. Found: {tuple(emission.shape)}")
        flat = [t for word in tokens for t in word]
        targets = ember.tensor([flat], dtype=ember.int32, device=emission.device)
        aligned, scores = F.forced_align(emission.unsqueeze(0), targets, blank=self.blank)
        spans = F.merge_tokens(aligned[0], scores[0].exp())
        out, start = [], 0
        for word in tokens:
            out.append(spans[start:start + len(word)])
            start += len(word)
        return out


# -- the architectures and the published checkpoints ----------------------------------------

_CONV = [(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2
# (extractor_mode, extractor_conv_bias, embed_dim, num_layers, num_heads, ff_features,
#  layer_norm_first)
_BASE = ("group_norm", False, 768, 12, 12, 3072, False)
_LARGE = ("group_norm", False, 1024, 24, 16, 4096, False)
_LARGE_LV60K = ("layer_norm", True, 1024, 24, 16, 4096, True)
_HUBERT_LARGE = ("layer_norm", False, 1024, 24, 16, 4096, True)
_HUBERT_XLARGE = ("layer_norm", False, 1280, 48, 16, 5120, True)
_XLSR_1B = ("layer_norm", True, 1280, 48, 16, 5120, True)
_XLSR_2B = ("layer_norm", True, 1920, 48, 16, 7680, True)


def _params(arch, dropouts, aux_num_out=None, wavlm=False):
    mode, bias, dim, layers, heads, ff, norm_first = arch
    projection, attention, ff_interm, dropout, layer_drop = dropouts
    params = {
        "extractor_mode": mode, "extractor_conv_layer_config": list(_CONV),
        "extractor_conv_bias": bias, "encoder_embed_dim": dim,
        "encoder_projection_dropout": projection, "encoder_pos_conv_kernel": 128,
        "encoder_pos_conv_groups": 16, "encoder_num_layers": layers,
        "encoder_num_heads": heads, "encoder_attention_dropout": attention,
        "encoder_ff_interm_features": ff, "encoder_ff_interm_dropout": ff_interm,
        "encoder_dropout": dropout, "encoder_layer_norm_first": norm_first,
        "encoder_layer_drop": layer_drop, "aux_num_out": aux_num_out}
    if wavlm:
        params["encoder_max_distance"] = 800
        params["encoder_num_buckets"] = 320
    return params


_EN = tuple("|ETAONIHSRDLUMWCFGYPBVK'XJQZ")
_DE = tuple("|enirstadhulgcmobwfkzpvüäöjßyxq")
_VP_EN = tuple("|etoiansrhldcumpfgwybvkxjqz")
_ES = tuple("|eaosnrildctupmbqygvhófíájzñéxúkwü")
_FR = tuple("|esnitraouldcpmévqfgbhxàjèyêzôkçœûùîâwïëüæ")
_IT = tuple("|eiaontrlscdupmgvhzfbqàèùéòìkyxwjóíï")
_MMS = tuple("aienoutsrmkldghybpwcvjzf'qx")

_NO_DROP = (0.0, 0.0, 0.0, 0.0, 0.0)
_FT_DROP = (0.0, 0.0, 0.1, 0.0, 0.1)  # the fine-tuned HuBERT / VoxPopuli / MMS models


def _w2v(path, arch, dropouts, normalize, aux=None):
    return Wav2Vec2Bundle(path, _params(arch, dropouts, aux), _sample_rate=16000,
                          _normalize_waveform=normalize, _model_type="Wav2Vec2")


def _asr(path, arch, dropouts, normalize, labels, remove=(1, 2, 3)):
    return Wav2Vec2ASRBundle(path, _params(arch, dropouts, len(labels) + 1),
                             _sample_rate=16000, _normalize_waveform=normalize,
                             _model_type="Wav2Vec2", _labels=labels, _remove_aux_axis=remove)


def _wavlm(path, arch, normalize):
    return Wav2Vec2Bundle(path, _params(arch, (0.1, 0.1, 0.0, 0.1, 0.05), wavlm=True),
                          _sample_rate=16000, _normalize_waveform=normalize,
                          _model_type="WavLM")


_BASE_DROP = (0.1, 0.1, 0.0, 0.1, 0.05)
_LARGE_DROP = (0.1, 0.1, 0.0, 0.0, 0.2)
_LV60K_DROP = (0.1, 0.1, 0.0, 0.0, 0.0)
_XLSR_DROP = (0.1, 0.0, 0.0, 0.0, 0.0)

WAV2VEC2_BASE = _w2v("wav2vec2_fairseq_base_ls960.pth", _BASE, _BASE_DROP, False)
WAV2VEC2_ASR_BASE_10M = _asr("wav2vec2_fairseq_base_ls960_asr_ll10m.pth", _BASE, _BASE_DROP,
                             False, _EN)
WAV2VEC2_ASR_BASE_100H = _asr("wav2vec2_fairseq_base_ls960_asr_ls100.pth", _BASE, _BASE_DROP,
                              False, _EN)
WAV2VEC2_ASR_BASE_960H = _asr("wav2vec2_fairseq_base_ls960_asr_ls960.pth", _BASE, _BASE_DROP,
                              False, _EN)
WAV2VEC2_LARGE = _w2v("wav2vec2_fairseq_large_ls960.pth", _LARGE, _LARGE_DROP, False)
WAV2VEC2_ASR_LARGE_10M = _asr("wav2vec2_fairseq_large_ls960_asr_ll10m.pth", _LARGE,
                              _LARGE_DROP, False, _EN)
WAV2VEC2_ASR_LARGE_100H = _asr("wav2vec2_fairseq_large_ls960_asr_ls100.pth", _LARGE,
                               _LARGE_DROP, False, _EN)
WAV2VEC2_ASR_LARGE_960H = _asr("wav2vec2_fairseq_large_ls960_asr_ls960.pth", _LARGE,
                               _LARGE_DROP, False, _EN)
WAV2VEC2_LARGE_LV60K = _w2v("wav2vec2_fairseq_large_lv60k.pth", _LARGE_LV60K, _LV60K_DROP, True)
WAV2VEC2_ASR_LARGE_LV60K_10M = _asr("wav2vec2_fairseq_large_lv60k_asr_ll10m.pth", _LARGE_LV60K,
                                    _LV60K_DROP, True, _EN)
WAV2VEC2_ASR_LARGE_LV60K_100H = _asr("wav2vec2_fairseq_large_lv60k_asr_ls100.pth",
                                     _LARGE_LV60K, _LV60K_DROP, True, _EN)
WAV2VEC2_ASR_LARGE_LV60K_960H = _asr("wav2vec2_fairseq_large_lv60k_asr_ls960.pth",
                                     _LARGE_LV60K, _LV60K_DROP, True, _EN)
WAV2VEC2_XLSR53 = _w2v("wav2vec2_fairseq_large_xlsr53.pth", _LARGE_LV60K, _NO_DROP, True)
WAV2VEC2_XLSR_300M = _w2v("wav2vec2_xlsr_300m.pth", _LARGE_LV60K, _NO_DROP, True)
WAV2VEC2_XLSR_1B = _w2v("wav2vec2_xlsr_1b.pth", _XLSR_1B, _XLSR_DROP, True)
WAV2VEC2_XLSR_2B = _w2v("wav2vec2_xlsr_2b.pth", _XLSR_2B, _XLSR_DROP, True)
HUBERT_BASE = _w2v("hubert_fairseq_base_ls960.pth", _BASE, _BASE_DROP, False)
HUBERT_LARGE = _w2v("hubert_fairseq_large_ll60k.pth", _HUBERT_LARGE, _NO_DROP, True)
HUBERT_XLARGE = _w2v("hubert_fairseq_xlarge_ll60k.pth", _HUBERT_XLARGE, _NO_DROP, True)
HUBERT_ASR_LARGE = _asr("hubert_fairseq_large_ll60k_asr_ls960.pth", _HUBERT_LARGE, _FT_DROP,
                        True, _EN)
HUBERT_ASR_XLARGE = _asr("hubert_fairseq_xlarge_ll60k_asr_ls960.pth", _HUBERT_XLARGE, _FT_DROP,
                         True, _EN)
VOXPOPULI_ASR_BASE_10K_DE = _asr("wav2vec2_voxpopuli_base_10k_asr_de.pt", _BASE, _FT_DROP,
                                 False, _DE, remove=(1, 2, 3, 35))
VOXPOPULI_ASR_BASE_10K_EN = _asr("wav2vec2_voxpopuli_base_10k_asr_en.pt", _BASE, _FT_DROP,
                                 False, _VP_EN, remove=(1, 2, 3, 31))
VOXPOPULI_ASR_BASE_10K_ES = _asr("wav2vec2_voxpopuli_base_10k_asr_es.pt", _BASE, _FT_DROP,
                                 False, _ES, remove=(1, 2, 3, 35))
VOXPOPULI_ASR_BASE_10K_FR = _asr("wav2vec2_voxpopuli_base_10k_asr_fr.pt", _BASE, _FT_DROP,
                                 False, _FR)
VOXPOPULI_ASR_BASE_10K_IT = _asr("wav2vec2_voxpopuli_base_10k_asr_it.pt", _BASE, _FT_DROP,
                                 False, _IT)
WAVLM_BASE = _wavlm("wavlm_base.pth", _BASE, False)
WAVLM_BASE_PLUS = _wavlm("wavlm_base_plus.pth", _BASE, False)
WAVLM_LARGE = _wavlm("wavlm_large.pth", ("layer_norm", False, 1024, 24, 16, 4096, True), True)
MMS_FA = Wav2Vec2FABundle(
    "https://dl.fbaipublicfiles.com/mms/torchaudio/ctc_alignment_mling_uroman/model.pt",
    _params(_LARGE_LV60K, _FT_DROP, len(_MMS) + 1), _sample_rate=16000,
    _normalize_waveform=True, _model_type="Wav2Vec2", _labels=_MMS)

_BUNDLES = {
    "WAV2VEC2_BASE": "wav2vec 2.0 (base), pre-trained on LibriSpeech 960 h, not fine-tuned",
    "WAV2VEC2_ASR_BASE_10M": "wav2vec 2.0 (base) fine-tuned for ASR on Libri-Light 10 min",
    "WAV2VEC2_ASR_BASE_100H": "wav2vec 2.0 (base) fine-tuned for ASR on LibriSpeech 100 h",
    "WAV2VEC2_ASR_BASE_960H": "wav2vec 2.0 (base) fine-tuned for ASR on LibriSpeech 960 h",
    "WAV2VEC2_LARGE": "wav2vec 2.0 (large), pre-trained on LibriSpeech 960 h",
    "WAV2VEC2_ASR_LARGE_10M": "wav2vec 2.0 (large) fine-tuned on Libri-Light 10 min",
    "WAV2VEC2_ASR_LARGE_100H": "wav2vec 2.0 (large) fine-tuned on LibriSpeech 100 h",
    "WAV2VEC2_ASR_LARGE_960H": "wav2vec 2.0 (large) fine-tuned on LibriSpeech 960 h",
    "WAV2VEC2_LARGE_LV60K": "wav2vec 2.0 (large-lv60k), pre-trained on Libri-Light 60k h",
    "WAV2VEC2_ASR_LARGE_LV60K_10M": "wav2vec 2.0 (large-lv60k) fine-tuned on 10 min",
    "WAV2VEC2_ASR_LARGE_LV60K_100H": "wav2vec 2.0 (large-lv60k) fine-tuned on 100 h",
    "WAV2VEC2_ASR_LARGE_LV60K_960H": "wav2vec 2.0 (large-lv60k) fine-tuned on 960 h",
    "WAV2VEC2_XLSR53": "XLSR-53, pre-trained on 56k h in 53 languages",
    "WAV2VEC2_XLSR_300M": "XLS-R with 300M parameters, pre-trained in 128 languages",
    "WAV2VEC2_XLSR_1B": "XLS-R with 1B parameters, pre-trained in 128 languages",
    "WAV2VEC2_XLSR_2B": "XLS-R with 2B parameters, pre-trained in 128 languages",
    "HUBERT_BASE": "HuBERT (base), pre-trained on LibriSpeech 960 h",
    "HUBERT_LARGE": "HuBERT (large), pre-trained on Libri-Light 60k h",
    "HUBERT_XLARGE": "HuBERT (extra large), pre-trained on Libri-Light 60k h",
    "HUBERT_ASR_LARGE": "HuBERT (large) fine-tuned for ASR on LibriSpeech 960 h",
    "HUBERT_ASR_XLARGE": "HuBERT (extra large) fine-tuned for ASR on LibriSpeech 960 h",
    "VOXPOPULI_ASR_BASE_10K_DE": "wav2vec 2.0 (base), VoxPopuli 10k, fine-tuned on German",
    "VOXPOPULI_ASR_BASE_10K_EN": "wav2vec 2.0 (base), VoxPopuli 10k, fine-tuned on English",
    "VOXPOPULI_ASR_BASE_10K_ES": "wav2vec 2.0 (base), VoxPopuli 10k, fine-tuned on Spanish",
    "VOXPOPULI_ASR_BASE_10K_FR": "wav2vec 2.0 (base), VoxPopuli 10k, fine-tuned on French",
    "VOXPOPULI_ASR_BASE_10K_IT": "wav2vec 2.0 (base), VoxPopuli 10k, fine-tuned on Italian",
    "WAVLM_BASE": "WavLM (base), pre-trained on LibriSpeech 960 h",
    "WAVLM_BASE_PLUS": "WavLM (base+), pre-trained on 94k h",
    "WAVLM_LARGE": "WavLM (large), pre-trained on 94k h",
    "MMS_FA": "MMS forced-alignment model, trained on 31k h in 1,130 languages",
}

for _name, _doc in _BUNDLES.items():
    globals()[_name].__doc__ = (f"{_doc}.\n\nSee :class:`{type(globals()[_name]).__name__}` for "
                                "the usage.")
