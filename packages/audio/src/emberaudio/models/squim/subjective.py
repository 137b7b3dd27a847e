"""SQUIM subjective: a MOS estimate of a waveform against any clean (non-matching) reference
(NORESQA-MOS, Manocha and Kumar, 2022; Kumar et al., 2023): wav2vec 2.0 features of both,
projected and compared by attention pooling; with torchaudio's module and parameter names."""

from __future__ import annotations

import ember
from ember import nn
from ember.nn import functional as F

__all__ = ["SquimSubjective", "squim_subjective_base", "squim_subjective_model"]


class AttPool(nn.Module):
    """Attention pooling over time: ``(batch, time, input_dim)`` to ``(batch, att_dim)``.

    Args:
        input_dim (int): feature dimension of the input.
        att_dim (int): dimension of the output.
    """

    def __init__(self, input_dim: int, att_dim: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(input_dim, 1)
        self.linear2 = nn.Linear(input_dim, att_dim)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        weights = F.softmax(self.linear1(x).transpose(2, 1), dim=2)  # (batch, 1, time)
        return self.linear2(ember.matmul(weights, x).squeeze(1))


class Predictor(nn.Module):
    """A score ``(batch,)`` from features ``(batch, time, input_dim)``: the expectation of
    ``att_dim`` evenly spaced values in [0, 4] under the softmax of the pooled features.

    Args:
        input_dim (int): feature dimension of the input.
        att_dim (int): number of score levels.
    """

    def __init__(self, input_dim: int, att_dim: int) -> None:
        super().__init__()
        self.att_pool_layer = AttPool(input_dim, att_dim)
        self.att_dim = att_dim

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        probs = F.softmax(self.att_pool_layer(x), dim=1)
        levels = ember.linspace(0, 4, steps=self.att_dim, device=x.device, dtype=probs.dtype)
        return (probs * levels).sum(dim=1)


class SquimSubjective(nn.Module):
    """Speech Quality and Intelligibility Measures (SQUIM), subjective: predicts the mean
    opinion score (MOS) of a waveform given a clean reference that need not match it.

    Args:
        ssl_model (nn.Module): the self-supervised feature model (a wav2vec 2.0 model; its
            ``extract_features`` gives the layers' outputs).
        projector (nn.Module): projects the last layer's features to a lower dimension.
        predictor (nn.Module): the score (difference to the reference's) from the projected
            reference and waveform features, concatenated.

    Example::

        >>> model = emberaudio.models.squim_subjective_base()
        >>> mos = model(waveform, reference)  # (batch,)
    """

    def __init__(self, ssl_model: nn.Module, projector: nn.Module,
                 predictor: nn.Module) -> None:
        super().__init__()
        self.ssl_model = ssl_model
        self.projector = projector
        self.predictor = predictor

    def _align_shapes(self, waveform: ember.Tensor,
                      reference: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        """The reference repeated (when shorter) and cut to the waveform's length."""
        length = waveform.shape[-1]
        if reference.shape[-1] < length:
            reference = ember.cat([reference] * (length // reference.shape[-1] + 1), dim=1)
        return waveform, reference[:, :length]

    def _features(self, waveform: ember.Tensor) -> ember.Tensor:
        return self.projector(self.ssl_model.extract_features(waveform)[0][-1])

    def forward(self, waveform: ember.Tensor, reference: ember.Tensor) -> ember.Tensor:
        """The MOS estimates.

        Args:
            waveform (Tensor): the speech to score, ``(batch, time)``.
            reference (Tensor): a clean, non-matching reference, ``(batch, time_ref)``.

        Returns:
            Tensor: ``(batch,)``.
        """
        for name, value in (("waveform", waveform), ("reference", reference)):
            if value.ndim != 2:
                raise ValueError(f"{name} must be 2D (batch, time), got shape "
                                 f"{tuple(value.shape)}")
        if reference.shape[-1] == 0:
            raise ValueError("reference must not be empty")
        waveform, reference = self._align_shapes(waveform, reference)
        both = ember.cat((self._features(reference), self._features(waveform)), dim=2)
        return 5 - self.predictor(both)  # the predictor gives the drop from the reference


def squim_subjective_model(ssl_type: str, feat_dim: int, proj_dim: int,
                           att_dim: int) -> SquimSubjective:
    """Builds a :class:`SquimSubjective`.

    Args:
        ssl_type (str): the feature model's builder in :mod:`emberaudio.models`
            (``"wav2vec2_base"`` or ``"wav2vec2_large"``).
        feat_dim (int): feature dimension of that model.
        proj_dim (int): output dimension of the projection.
        att_dim (int): number of score levels of the predictor.
    """
    from emberaudio import models

    builder = getattr(models, ssl_type, None) if isinstance(ssl_type, str) else None
    if builder is None:
        raise ValueError(f"ssl_type must name a builder in emberaudio.models such as "
                         f"'wav2vec2_base' or 'wav2vec2_large', got {ssl_type!r}")
    return SquimSubjective(builder(), nn.Linear(feat_dim, proj_dim),
                           Predictor(proj_dim * 2, att_dim))


def squim_subjective_base() -> SquimSubjective:
    """:func:`squim_subjective_model` with wav2vec 2.0 base features (768), a 32-dimensional
    projection and 5 score levels: the architecture of the published checkpoint."""
    return squim_subjective_model(ssl_type="wav2vec2_base", feat_dim=768, proj_dim=32,
                                  att_dim=5)
