"""SQUIM: speech quality and intelligibility estimates."""

from emberaudio.models.squim.objective import (
    SquimObjective,
    squim_objective_base,
    squim_objective_model,
)
from emberaudio.models.squim.subjective import (
    SquimSubjective,
    squim_subjective_base,
    squim_subjective_model,
)

__all__ = ["SquimObjective", "SquimSubjective", "squim_objective_base", "squim_objective_model",
           "squim_subjective_base", "squim_subjective_model"]
