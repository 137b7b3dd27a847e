"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, parametrizations
(``parametrize``, ``parametrizations``), the older weight and spectral normalization,
conv/linear + batch norm fusion, weight memory formats, ``skip_init`` and ``stateless``."""

from ember.nn.utils import (
    clip_grad,  # noqa: F401
    convert_parameters,  # noqa: F401
    fusion,  # noqa: F401
    init,  # noqa: F401
    memory_format,  # noqa: F401
    parametrizations,
    parametrize,
    rnn,  # noqa: F401
    stateless,
)
from ember.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from ember.nn.utils.init import skip_init
from ember.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
    "fuse_linear_bn_weights", "get_total_norm", "parameters_to_vector", "parametrizations",
    "parametrize", "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init",
    "spectral_norm", "stateless", "vector_to_parameters", "weight_norm",
]
