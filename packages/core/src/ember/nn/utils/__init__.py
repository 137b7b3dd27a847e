"""``ember.nn.utils``: gradient clipping, parameter/vector conversion and
parametrizations (``parametrize``, ``parametrizations``)."""

from ember.nn.utils import (
    parametrizations,
    parametrize,
    rnn,  # noqa: F401
    stateless,  # noqa: F401
)
from ember.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
    "vector_to_parameters",
]
