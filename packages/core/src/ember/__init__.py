"""ember: a deep-learning framework with PyTorch's API on NumPy and CuPy.

``import ember`` where you wrote ``import torch``: tensors, tape-based autograd, and
(as they land) nn, optim and data loading, with a Cython core.
"""

from ember import _backend as _backend_module
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
# bfloat16 (ml_dtypes, NumPy kind "V") is a floating dtype too: autocast differentiates through it
_core.set_helpers(_ops.reduction.sum_to, lambda dt: dt.kind in "fc" or dt.name == "bfloat16",
                  _ops.creation.zeros_like)
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
    # ember.distributed and ember.futures load on use too (torch imports them eagerly)
    if name in ("multiprocessing", "testing", "distributed", "futures"):
        import importlib

        return importlib.import_module(f"ember.{name}")
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
from ember import _functional_forms, _legacy, _misc, _rnn_forms  # noqa: E402
from ember._dtype import (  # noqa: E402
    bfloat16,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    uint16,
    uint32,
    uint64,
)
from ember._functional_forms import *  # noqa: E402,F403
from ember._legacy import *  # noqa: E402,F403
from ember._misc import *  # noqa: E402,F403
from ember._ops import view_copy as _view_copy  # noqa: E402
from ember._ops._registry import register_family as _register_family  # noqa: E402
from ember._ops.view_copy import *  # noqa: E402,F403
from ember._rnn_forms import *  # noqa: E402,F403

_register_family(_view_copy, "ember")
_install_methods()
_legacy.install(Tensor)
__all__ += ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
            "uint16", "uint32", "uint64"]
__all__ += _view_copy.__all__ + _functional_forms.__all__ + _rnn_forms.__all__ + \
    _legacy.__all__ + _misc.__all__
# -- surface: cuda, accelerator, backends, amp, threads, hub --
from ember import (  # noqa: E402
    _tensor_device_attrs,  # noqa: E402
    accelerator,
    amp,
    backends,
    cpu,
    cuda,
    fx,
    onnx,
)
from ember._compile import compile  # noqa: A004,E402
from ember._device_modules import get_device_module, is_vulkan_available  # noqa: E402
from ember._flags import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_warn_always,
    use_deterministic_algorithms,
)
from ember._streams import Event, Stream  # noqa: E402
from ember._threads import (  # noqa: E402
    get_num_interop_threads,
    get_num_threads,
    init_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from ember.amp import autocast_mode as _autocast_mode  # noqa: E402
from ember.amp.autocast_mode import (  # noqa: E402
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    get_autocast_ipu_dtype,
    get_autocast_xla_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    is_autocast_ipu_enabled,
    is_autocast_xla_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
    set_autocast_ipu_dtype,
    set_autocast_ipu_enabled,
    set_autocast_xla_dtype,
    set_autocast_xla_enabled,
)
from ember.nn import parallel as _nn_parallel  # noqa: E402,F401 - ember.nn.parallel

_tensor_device_attrs.install(Tensor)   # is_meta, is_mps, ..., pin_memory, record_stream
_autocast_mode.install()               # NOTE [ How autocast casts ]: after nn.functional
nn.DataParallel = nn.parallel.DataParallel
has_lapack = True    # NumPy's LAPACK
has_spectral = True  # NumPy's FFT
__all__ += [
    "accelerator", "amp", "backends", "cpu", "cuda", "fx", "onnx", "compile",
    "get_device_module", "is_vulkan_available", "Event", "Stream",
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
    "get_float32_matmul_precision", "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled", "set_deterministic_debug_mode", "set_float32_matmul_precision",
    "set_flush_denormal", "set_warn_always", "use_deterministic_algorithms",
    "get_num_interop_threads", "get_num_threads", "init_num_threads",
    "set_num_interop_threads", "set_num_threads", "autocast", "autocast_decrement_nesting",
    "autocast_increment_nesting", "clear_autocast_cache", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype",
    "get_autocast_xla_dtype", "is_autocast_available", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled", "is_autocast_ipu_enabled",
    "is_autocast_xla_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype", "set_autocast_ipu_dtype", "set_autocast_ipu_enabled",
    "set_autocast_xla_dtype", "set_autocast_xla_enabled", "has_lapack", "has_spectral",
]
_getattr_before_runtime_surface = __getattr__


def __getattr__(name):  # noqa: F811 - chains the one above
    # ember.hub loads on first use (urllib costs import time); the build queries that look
    # at loaded libraries are computed when asked for; has_cuda & co. warn as in PyTorch.
    if name == "hub":
        import importlib

        return importlib.import_module("ember.hub")
    if name == "has_openmp":
        return backends.openmp.is_available()
    if name == "has_mkl":
        return backends.mkl.is_available()
    deprecated = {"has_cuda": ("backends.cuda.is_built()", backends.cuda.is_built),
                  "has_cudnn": ("backends.cudnn.is_available()", backends.cudnn.is_available),
                  "has_mps": ("backends.mps.is_built()", backends.mps.is_built),
                  "has_mkldnn": ("backends.mkldnn.is_available()",
                                 backends.mkldnn.is_available)}
    if name in deprecated:
        import warnings

        use, fn = deprecated[name]
        warnings.warn(f"'{name}' is deprecated, please use 'ember.{use}'", UserWarning,
                      stacklevel=2)
        return fn()
    return _getattr_before_runtime_surface(name)
# -- surface: func, checkpoint, autograd.graph --
from ember import func  # noqa: E402
from ember._autograd_flags import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_inference,
    set_anomaly_enabled,
)
from ember.func import vmap  # noqa: E402

__all__ += ["func", "vmap", "is_inference", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
            "set_anomaly_enabled"]
# -- surface: nn and optim --
# -- surface: rest (exceptions, SyncBatchNorm kernels, meshgrid, cond, Tensor leftovers) --
from ember import _archive, _lowrank, _shell_dtypes, _surface_rest, _sym, _tensor_rest  # noqa: E402,E501
from ember._archive import *  # noqa: E402,F403
from ember._dtype import float8_e8m0fnu  # noqa: E402
from ember._lowrank import *  # noqa: E402,F403
from ember._shell_dtypes import *  # noqa: E402,F403
from ember._surface_rest import *  # noqa: E402,F403
from ember._sym import *  # noqa: E402,F403

_tensor_rest.install(Tensor)
__all__ += _surface_rest.__all__ + _lowrank.__all__ + _sym.__all__ + _archive.__all__ + \
    _shell_dtypes.__all__ + ["float8_e8m0fnu"]
# -- end of the surface markers --

def is_tensor(obj, /) -> bool:
    """True if ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


def numel(input) -> int:
    return input.numel()


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()
