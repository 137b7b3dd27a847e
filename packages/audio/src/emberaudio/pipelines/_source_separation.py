"""Source separation bundles: a pretrained separation model and its sample rate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ember import nn
from emberaudio.models import conv_tasnet_base
from emberaudio.pipelines._utils import _download_asset, _load_state_dict

__all__ = ["SourceSeparationBundle"]


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
        model = self._model_factory_func()
        model.load_state_dict(_load_state_dict(_download_asset(self._model_path)))
        return model.eval()


CONVTASNET_BASE_LIBRI2MIX = SourceSeparationBundle(
    _model_path="models/conv_tasnet_base_libri2mix.pt",
    _model_factory_func=partial(conv_tasnet_base, num_sources=2), _sample_rate=8000)
CONVTASNET_BASE_LIBRI2MIX.__doc__ = """ConvTasNet (:func:`~emberaudio.models.conv_tasnet_base`,
two sources) trained on Libri2Mix at 8 kHz. See :class:`SourceSeparationBundle`."""
