"""The SQUIM objective bundle: the pretrained :class:`~emberaudio.models.SquimObjective`."""

from __future__ import annotations

from dataclasses import dataclass

from emberaudio.models import SquimObjective, squim_objective_base
from emberaudio.pipelines._utils import _download_asset, _load_state_dict

__all__ = ["SquimObjectiveBundle"]


@dataclass
class SquimObjectiveBundle:
    """A pretrained :class:`~emberaudio.models.SquimObjective` (reference-free STOI, PESQ
    and SI-SDR estimates) and the sample rate it was trained at.

    Example::

        >>> bundle = emberaudio.pipelines.SQUIM_OBJECTIVE
        >>> model = bundle.get_model()
        >>> waveform = emberaudio.functional.resample(waveform, sample_rate, bundle.sample_rate)
        >>> stoi, pesq, si_sdr = model(waveform)
    """

    _path: str
    _sample_rate: float

    def get_model(self) -> SquimObjective:
        """Builds :func:`~emberaudio.models.squim_objective_base` and loads the pretrained
        weights (downloaded once into ``<hub dir>/torchaudio/models``)."""
        model = squim_objective_base()
        model.load_state_dict(_load_state_dict(_download_asset(f"models/{self._path}")))
        return model.eval()

    @property
    def sample_rate(self) -> float:
        """Sample rate of the audio the model was trained on."""
        return self._sample_rate


SQUIM_OBJECTIVE = SquimObjectiveBundle("squim_objective_dns2020.pth", _sample_rate=16000)
SQUIM_OBJECTIVE.__doc__ = """SquimObjective trained on the DNS 2020 dataset (weights under
CC BY 4.0); the model is :func:`~emberaudio.models.squim_objective_base`. See
:class:`SquimObjectiveBundle` for the usage."""
