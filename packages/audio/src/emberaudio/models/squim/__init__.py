"""SQUIM: speech quality and intelligibility estimates."""

from emberaudio.models.squim.objective import (
    SquimObjective,
    squim_objective_base,
    squim_objective_model,
)

__all__ = ["SquimObjective", "squim_objective_base", "squim_objective_model"]
