"""Source separation bundles: a pretrained separation model and its sample rate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ember import nn
from emberaudio.models import conv_tasnet_base, hdemucs_high
from emberaudio.pipelines._utils import _pretrained_model

__all__ = ["SourceSeparationBundle"]



def _hdemucs_high_musdb() -> nn.Module:
    """hdemucs_high for MUSDB's four sources (a new list for each model)."""
    return hdemucs_high(sources=["drums", "bass", "other", "vocals"])


@dataclass
class SourceSeparationBundle:
    """A pretrained source separation model and the sample rate it works at.

    Example::

        >>> model = emberaudio.pipelines.CONVTASNET_BASE_LIBRI2MIX.get_model()
        >>> estimated_sources = model(mixture.reshape(1, 1, -1))
    """

    _model_path: str
    _model_factory_func: Callable[[], nn.Module]
    _sample_rate: int

    @property
    def sample_rate(self) -> int:
        """Sample rate of the audio the model was trained on."""
        return self._sample_rate

    def get_model(self) -> nn.Module:
        """Builds the model and loads the pretrained weights (downloaded once into
        ``<hub dir>/torchaudio``)."""
        return _pretrained_model(self._model_factory_func(), self._model_path)


CONVTASNET_BASE_LIBRI2MIX = SourceSeparationBundle(
    _model_path="models/conv_tasnet_base_libri2mix.pt",
    _model_factory_func=partial(conv_tasnet_base, num_sources=2), _sample_rate=8000)
CONVTASNET_BASE_LIBRI2MIX.__doc__ = """ConvTasNet (:func:`~emberaudio.models.conv_tasnet_base`,
two sources) trained on Libri2Mix at 8 kHz. See :class:`SourceSeparationBundle`."""


HDEMUCS_HIGH_MUSDB_PLUS = SourceSeparationBundle(
    _model_path="models/hdemucs_high_trained.pt",
    _model_factory_func=_hdemucs_high_musdb, _sample_rate=44100)
HDEMUCS_HIGH_MUSDB_PLUS.__doc__ = """Hybrid Demucs (:func:`~emberaudio.models.hdemucs_high`,
sources drums, bass, other, vocals) trained on the training and test sets of MUSDB-HQ and 150
more songs, at 44.1 kHz. See :class:`SourceSeparationBundle`."""

HDEMUCS_HIGH_MUSDB = SourceSeparationBundle(
    _model_path="models/hdemucs_high_musdbhq_only.pt",
    _model_factory_func=_hdemucs_high_musdb, _sample_rate=44100)
HDEMUCS_HIGH_MUSDB.__doc__ = """Hybrid Demucs (:func:`~emberaudio.models.hdemucs_high`,
sources drums, bass, other, vocals) trained on the training set of MUSDB-HQ, at 44.1 kHz. See
:class:`SourceSeparationBundle`."""
