"""ember: a deep-learning framework with PyTorch's API on NumPy and CuPy.

``import ember`` where you wrote ``import torch``: tensors, tape-based autograd, and
(as they land) nn, optim and data loading, with a Cython core.
"""

from __future__ import annotations

from ember import _backend as _backend_module
from ember import _dtype as _dtype_module
from ember import _ops, autograd, random
from ember._backend import _malloc
from ember._C import _core as _core
from ember._device import device
from ember._dtype import (
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from ember._ops._registry import get_op as _get_op
from ember._ops.complex_ops import *  # noqa: F403
from ember._ops.conversion import *  # noqa: F403
from ember._ops.creation import *  # noqa: F403
from ember._ops.cumulative import *  # noqa: F403
from ember._ops.elementwise import *  # noqa: F403
from ember._ops.indexing import *  # noqa: F403
from ember._ops.join import *  # noqa: F403
from ember._ops.linalg import *  # noqa: F403
from ember._ops.matrix import *  # noqa: F403
from ember._ops.random import *  # noqa: F403
from ember._ops.reduction import *  # noqa: F403
from ember._ops.scatter import *  # noqa: F403
from ember._ops.shape import *  # noqa: F403
from ember._ops.sort import *  # noqa: F403
from ember._ops.special import *  # noqa: F403
from ember._ops.spectral import *  # noqa: F403
from ember._tensor import Size, Tensor, _install_methods
from ember._tensor_str import set_printoptions
from ember._version import __version__
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

_malloc.tune()  # NOTE [ malloc and page faults ]
_install_methods()  # the core ops' methods; again below once nn.functional has registered
# The compiled fast paths, from the op registry: + - * / and the unary ops whose node has a
# fast_path (ember._ops.unary); they fall back to the registered Python functions.
_core.set_binary_ops(*[(_get_op(f"ember.{name}").nodes[0], _get_op(f"ember.{name}").function)
                       for name in ("add", "sub", "mul", "div")])
_core.set_unary_ops({
    name: (op.nodes[0], op.function, *op.nodes[0].fast_path)
    for name in _core.UNARY_FAST_PATH for op in [_get_op(f"ember.{name}")]
})
# The compiled function forms of the hottest ops (they fall back to the Python ones).
add, sub, mul, div = _core.add, _core.sub, _core.mul, _core.div
exp, log, tanh, sigmoid, neg, relu = _core.exp, _core.log, _core.tanh, _core.sigmoid, \
    _core.neg, _core.relu
sqrt, abs, sin, cos = _core.sqrt, _core.abs, _core.sin, _core.cos  # noqa: A001
_core.set_helpers(_ops.reduction.sum_to, lambda dt: dt.kind in "fc", _ops.creation.zeros_like)
_core.set_device_check(_backend_module.check_same_device)


__all__ = [
    "Size", "Tensor", "autograd", "random", "device", "enable_grad", "inference_mode", "is_complex",
    "is_floating_point", "is_grad_enabled", "is_inference_mode_enabled", "is_tensor",
    "no_grad", "numel", "set_grad_enabled", "set_printoptions", "__version__",
    # dtypes
    "bool", "can_cast", "cdouble", "cfloat", "complex64", "complex128", "double", "dtype",
    "finfo", "float", "float16", "float32", "float64", "get_default_dtype", "half", "iinfo",
    "int", "int8", "int16", "int32", "int64", "long", "promote_types", "result_type",
    "set_default_dtype", "short", "uint8",
]
for _family in _ops.FAMILIES:
    __all__ += _family.__all__


from ember import distributions, fft, linalg, nn, optim, serialization, special, utils  # noqa: E402,E501
from ember.serialization import load, save  # noqa: E402

_install_methods()  # nn.functional's ops (softmax, log_softmax, ...) are registered now

__all__ += ["distributions", "fft", "linalg", "nn", "optim", "serialization", "special", "utils",
            "load", "save"]


def __getattr__(name):
    # ember.multiprocessing loads on first use (it registers the shared-memory tensor
    # reducer with multiprocessing's pickler; ember.utils.data imports it too).
    if name == "multiprocessing":
        import importlib

        return importlib.import_module("ember.multiprocessing")
    raise AttributeError(f"module 'ember' has no attribute '{name}'")

# The public surface (issue 15): each part adds its imports and __all__ entries under its own
# marker, so that parts landing in parallel do not touch the same lines.
# -- surface: math ops --
from ember._ops.calculus import *  # noqa: E402,F403
from ember._ops.distance import *  # noqa: E402,F403
from ember._ops.index_reduce import *  # noqa: E402,F403
from ember._ops.inplace_functions import *  # noqa: E402,F403 - after _install_methods
from ember._ops.pointwise import *  # noqa: E402,F403
from ember._ops.predicates import *  # noqa: E402,F403
from ember._ops.predicates import TENSOR_METHODS as _predicate_methods  # noqa: E402
from ember._ops.statistics import *  # noqa: E402,F403
from ember._ops.structure import *  # noqa: E402,F403
from ember.nn.functional import pdist  # noqa: E402 - torch.pdist is F.pdist

for _name, _fn in _predicate_methods.items():
    setattr(Tensor, _name, _fn)
__all__ += ["pdist", *_ops.predicates.__all__, *_ops.inplace_functions.__all__]

# -- surface: views, copies, scatters, nn.functional aliases, dtypes, legacy types --
# -- surface: cuda, accelerator, backends, amp, threads, hub --
# -- surface: func, checkpoint, autograd.graph --
# -- surface: nn and optim --
# -- end of the surface markers --

if hasattr(_dtype_module, "bfloat16"):  # with the optional ml_dtypes package
    bfloat16 = _dtype_module.bfloat16
    __all__ += ["bfloat16"]


def is_tensor(obj) -> bool:
    """True if ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


def numel(input) -> int:
    return input.numel()


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()
