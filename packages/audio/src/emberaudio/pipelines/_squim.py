"""The SQUIM bundles: the pretrained :class:`~emberaudio.models.SquimObjective` and
:class:`~emberaudio.models.SquimSubjective`."""

from __future__ import annotations

from dataclasses import dataclass

from emberaudio.models import (
    SquimObjective,
    SquimSubjective,
    squim_objective_base,
    squim_subjective_base,
)
from emberaudio.pipelines._utils import _pretrained_model

__all__ = ["SquimObjectiveBundle", "SquimSubjectiveBundle"]


@dataclass
class _SquimBundle:
    """What the SQUIM bundles share: the checkpoint's file under ``models/`` and the sample
    rate."""

    _path: str
    _sample_rate: float

    def _pretrained(self, model):
        """``model`` with the weights of the bundle's file (downloaded once into
        ``<hub dir>/torchaudio/models``)."""
        return _pretrained_model(model, f"models/{self._path}")

    @property
    def sample_rate(self) -> float:
        """Sample rate of the audio the model was trained on."""
        return self._sample_rate


@dataclass
class SquimObjectiveBundle(_SquimBundle):
    """A pretrained :class:`~emberaudio.models.SquimObjective` (reference-free STOI, PESQ
    and SI-SDR estimates) and the sample rate it was trained at.

    Example::

        >>> bundle = emberaudio.pipelines.SQUIM_OBJECTIVE
        >>> model = bundle.get_model()
        >>> waveform = emberaudio.functional.resample(waveform, sample_rate, bundle.sample_rate)
        >>> stoi, pesq, si_sdr = model(waveform)
    """

    def get_model(self) -> SquimObjective:
        """Builds :func:`~emberaudio.models.squim_objective_base` and loads the pretrained
        weights (downloaded once into ``<hub dir>/torchaudio/models``)."""
        return self._pretrained(squim_objective_base())


SQUIM_OBJECTIVE = SquimObjectiveBundle("squim_objective_dns2020.pth", _sample_rate=16000)
SQUIM_OBJECTIVE.__doc__ = """SquimObjective trained on the DNS 2020 dataset (weights under
CC BY 4.0); the model is :func:`~emberaudio.models.squim_objective_base`. See
:class:`SquimObjectiveBundle` for the usage."""


@dataclass
class SquimSubjectiveBundle(_SquimBundle):
    """A pretrained :class:`~emberaudio.models.SquimSubjective` (a reference-free MOS
    estimate, given any clean reference recording) and the sample rate it was trained at.

    Example::

        >>> bundle = emberaudio.pipelines.SQUIM_SUBJECTIVE
        >>> model = bundle.get_model()
        >>> waveform = emberaudio.functional.resample(waveform, sample_rate, bundle.sample_rate)
        >>> reference = emberaudio.functional.resample(reference, sample_rate,
        ...                                             bundle.sample_rate)
        >>> mos = model(waveform, reference)
    """

    def get_model(self) -> SquimSubjective:
        """Builds :func:`~emberaudio.models.squim_subjective_base` and loads the pretrained
        weights (downloaded once into ``<hub dir>/torchaudio/models``)."""
        return self._pretrained(squim_subjective_base())


SQUIM_SUBJECTIVE = SquimSubjectiveBundle("squim_subjective_bvcc_daps.pth", _sample_rate=16000)
SQUIM_SUBJECTIVE.__doc__ = """SquimSubjective trained on the BVCC and DAPS datasets (weights
under CC BY-NC 4.0); the model is :func:`~emberaudio.models.squim_subjective_base`. See
:class:`SquimSubjectiveBundle` for the usage."""
