"""Automatic mixed precision: ``ember.autocast`` and its state, as ``torch.amp.autocast_mode``.

NOTE [ How autocast casts ]
Inside ``with ember.autocast(device_type, dtype=...):`` the ops PyTorch runs in lower
precision on that device type (its "lower_precision_fp" list: matrix products, linear,
convolutions, prelu, scaled_dot_product_attention) cast their floating-point tensor
arguments of that device to the autocast dtype (float64 tensors are left alone, as in
PyTorch), and the ops PyTorch runs in float32 (its "fp32" list: the losses, ``prod``,
``cdist``, ``trace``, ...; on CUDA also ``exp``, ``log``, ``softmax``, norms, ...) cast
lower-precision arguments up to float32. Other ops run in the dtypes they are given.

The casts are ordinary differentiable ``Tensor.to`` calls, so gradients reach float32
parameters in float32. NumPy has no bfloat16 BLAS (ml_dtypes' bfloat16 matmul returns
float32), so on the CPU a lower-precision op runs on its inputs rounded to the autocast dtype
and held in float32, and its float32 result is rounded to the autocast dtype: what a
bfloat16 GEMM or convolution with float32 accumulation (PyTorch's oneDNN kernels) computes,
up to the order of the sums; the output's dtype is the autocast dtype, as in PyTorch, and
the input gradients are rounded to it on the way back, as PyTorch's are. On CUDA the ops
run in the autocast dtype itself (CuPy's float16 products accumulate in float32). With
``cache_enabled`` (the default) the cast of a leaf tensor that requires grad (a weight) is
made once per outermost autocast region and reused.

Where it happens: the registered op's public function and its Tensor methods are replaced,
in the op registry, by a wrapper that checks one thread-local flag when autocast is off
(:func:`install`, called once from ``ember/__init__.py``). Ops reached by a direct call
from inside ember that bypasses the public function are not cast: ``nn.MultiheadAttention``
(its projections run in float32; PyTorch's return bfloat16 under CPU autocast) and the
recurrent layers (ember's RNN/GRU/LSTM run in their parameters' dtype; measured with torch
2.13 on this CPU: its RNN returns bfloat16, its GRU float32, its LSTM fails in oneDNN).
The activations, softmax, dropout and normalization ops take an autocast op's bfloat16
output through float32 and round their result to bfloat16, as PyTorch's CPU kernels do
(NOTE [ bfloat16 through float32 ] in ``ember.nn._functional._low_precision``).
"""

from __future__ import annotations

import functools
import threading
import warnings
from typing import Any

__all__ = [
    "autocast", "is_autocast_available", "custom_fwd", "custom_bwd", "install",
    "get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled", "set_autocast_enabled",
    "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype", "is_autocast_ipu_enabled", "set_autocast_ipu_enabled",
    "get_autocast_xla_dtype", "set_autocast_xla_dtype", "is_autocast_xla_enabled",
    "set_autocast_xla_enabled",
]

# PyTorch's device types (torch.device accepts these names); autocast runs on cpu and cuda.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")
_AUTOCAST_DEVICES = ("cpu", "cuda")


class _State(threading.local):
    def __init__(self):
        self.enabled = {}      # device type -> bool
        self.dtype = {}        # device type -> ember dtype (set lazily: needs ember._dtype)
        self.any_enabled = False
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}        # id(leaf) -> (leaf, cast)
        self.running = False   # inside a cast op: nested ops are not cast again


_state = _State()


def _default_dtype(device_type: str):
    from ember import _dtype

    if device_type == "cpu":
        return _dtype.bfloat16
    return _dtype.float16


def _check_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start "
                           f"of device string: {device_type}")
    return device_type


def _refresh() -> None:
    _state.any_enabled = any(_state.enabled.values())


def is_autocast_available(device_type: str) -> bool:
    """True if autocast runs on ``device_type`` (``"cpu"`` and ``"cuda"`` in ember)."""
    return _check_device_type(device_type) in _AUTOCAST_DEVICES


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on the CPU, float16 on
    CUDA by default)."""
    _check_device_type(device_type)
    return _state.dtype.get(device_type) or _default_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast casts to on ``device_type``."""
    _check_device_type(device_type)
    _state.dtype[device_type] = dtype


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """True inside an enabled autocast region of ``device_type`` (CUDA when None, as
    PyTorch's ``is_autocast_enabled()``)."""
    return _state.enabled.get("cuda" if device_type is None else
                              _check_device_type(device_type), False)


def set_autocast_enabled(device_type, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type``; ``set_autocast_enabled(enabled)`` is
    PyTorch's older form, for CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[_check_device_type(device_type)] = bool(enabled)
    _refresh()


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    set_autocast_enabled("cpu", enabled)


def get_autocast_ipu_dtype():
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype) -> None:
    set_autocast_dtype("ipu", dtype)


def is_autocast_ipu_enabled() -> bool:
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled: bool) -> None:
    set_autocast_enabled("ipu", enabled)


def get_autocast_xla_dtype():
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype) -> None:
    set_autocast_dtype("xla", dtype)


def is_autocast_xla_enabled() -> bool:
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled: bool) -> None:
    set_autocast_enabled("xla", enabled)


def is_autocast_cache_enabled() -> bool:
    """True if casts of weights are cached inside autocast regions."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached casts of weights."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


class autocast:  # noqa: N801 - PyTorch's name
    """Run the region in mixed precision: the ops PyTorch autocasts run in ``dtype`` (see
    NOTE [ How autocast casts ] in ``ember.amp.autocast_mode``). A context manager or a
    decorator.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        dtype (ember.dtype, optional): the lower-precision dtype (bfloat16 on the CPU and
            float16 on CUDA by default; the CPU takes bfloat16 or float16).
        enabled (bool): whether autocast is on in the region. Default: True.
        cache_enabled (bool, optional): cache the casts of weights inside the region.
            Default: the global setting (True).

    Example::

        >>> with ember.autocast("cpu", dtype=ember.bfloat16):
        ...     y = model(x)           # linear/conv/matmul in bfloat16
        >>> y.dtype
        ember.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        from ember import _dtype

        _check_device_type(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else \
            cache_enabled
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {type(enabled).__name__}")
        if enabled and device_type not in _AUTOCAST_DEVICES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        if enabled and device_type == "cpu" and self.fast_dtype not in (
                _dtype.bfloat16, _dtype.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of ember.bfloat16, "
                          "ember.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        if enabled and device_type == "cuda":
            from ember.cuda import is_available

            if not is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", UserWarning,
                              stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (_dtype.float16, _dtype.bfloat16):
                raise RuntimeError("In CUDA autocast, but the target dtype is not supported. "
                                   "CUDA Autocast only supports dtypes of ember.float16 and "
                                   "ember.bfloat16 currently.")
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


# -- the casting wrappers ------------------------------------------------------------------

def _device_type_of(args, kwargs):
    from ember._C._core import TensorBase

    for a in args:
        if isinstance(a, TensorBase):
            return a.device.type
    for a in kwargs.values():
        if isinstance(a, TensorBase):
            return a.device.type
    return None


def _cast_lower(x, dtype, device_type, emulate: bool):
    """``x`` cast for a lower-precision op; with ``emulate`` (the CPU) the values are rounded
    to ``dtype`` and kept in float32 (NOTE [ How autocast casts ])."""
    from ember import _dtype
    from ember._C._core import TensorBase

    if isinstance(x, TensorBase):
        dt = x.dtype
        if not dt.is_floating_point or dt == _dtype.float64 or x.device.type != device_type:
            return x
        if dt == dtype and not emulate:
            return x
        cacheable = _state.cache_enabled and x.requires_grad and x.grad_fn is None
        if cacheable:
            hit = _state.cache.get(id(x))
            if hit is not None and hit[0] is x:
                return hit[1]
        out = x.to(dtype)
        if emulate:
            out = out.to(_dtype.float32)
        if cacheable:
            _state.cache[id(x)] = (x, out)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_cast_lower(v, dtype, device_type, emulate) for v in x)
    return x


def _round_output(out, dtype):
    from ember import _dtype
    from ember._C._core import TensorBase

    if isinstance(out, TensorBase):
        return out.to(dtype) if out.dtype == _dtype.float32 else out
    if isinstance(out, tuple):
        return tuple(_round_output(o, dtype) for o in out)
    return out


def _cast_fp32(x, device_type):
    from ember import _dtype
    from ember._C._core import TensorBase

    if isinstance(x, TensorBase):
        if x.dtype in (_dtype.float16, _dtype.bfloat16) and x.device.type == device_type:
            return x.to(_dtype.float32)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_cast_fp32(v, device_type) for v in x)
    return x


def _wrap(fn, policy: dict):
    """``fn`` casting its arguments inside autocast; ``policy`` maps a device type to
    ``"lower"`` or ``"fp32"``."""

    @functools.wraps(fn)
    def autocast_op(*args, **kwargs):
        if not _state.any_enabled or _state.running:
            return fn(*args, **kwargs)
        dev = _device_type_of(args, kwargs)
        how = policy.get(dev)
        if how is None or not _state.enabled.get(dev, False):
            return fn(*args, **kwargs)
        emulate = False
        if how == "lower":
            dtype = get_autocast_dtype(dev)
            emulate = dev == "cpu"
            args = tuple(_cast_lower(a, dtype, dev, emulate) for a in args)
            kwargs = {k: _cast_lower(v, dtype, dev, emulate) for k, v in kwargs.items()}
        else:
            args = tuple(_cast_fp32(a, dev) for a in args)
            kwargs = {k: _cast_fp32(v, dev) for k, v in kwargs.items()}
        _state.running = True
        try:
            out = fn(*args, **kwargs)
        finally:
            _state.running = False
        return _round_output(out, dtype) if emulate else out

    autocast_op.__autocast_policy__ = policy
    return autocast_op


# PyTorch's autocast lists (aten/src/ATen/autocast_mode.cpp), for the ops ember has.
_LOWER_BOTH = ["ember.matmul", "ember.mm", "ember.bmm", "ember.addmm", "ember.addbmm",
               "ember.baddbmm", "ember.nn.functional.linear", "ember.nn.functional.conv1d",
               "ember.nn.functional.conv2d", "ember.nn.functional.conv3d",
               "ember.nn.functional.conv_transpose1d", "ember.nn.functional.conv_transpose2d",
               "ember.nn.functional.conv_transpose3d", "ember.nn.functional.prelu",
               "ember.nn.functional.scaled_dot_product_attention"]
_LOWER_CUDA = ["ember.addmv", "ember.addr", "ember.mv", "ember.einsum", "ember.chain_matmul",
               "ember.linalg.multi_dot"]
_FP32_BOTH = ["ember.nn.functional." + n for n in (
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "ctc_loss")] + [
    "ember.prod", "ember.cdist", "ember.trace", "ember.quantile", "ember.nanquantile"]
_FP32_CPU = ["ember.inverse", "ember.cholesky", "ember.pinverse", "ember.polar",
             "ember.view_as_complex", "ember.stft"]
_FP32_CUDA = ["ember." + n for n in (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "cumprod", "cumsum", "dist", "renorm",
    "logsumexp", "norm")] + ["ember.nn.functional." + n for n in (
        "softplus", "layer_norm", "group_norm", "cosine_similarity", "softmax", "log_softmax",
        "pdist")]


def _policies() -> dict:
    table: dict = {}
    for names, dev, how in ((_LOWER_BOTH, "cpu", "lower"), (_LOWER_BOTH, "cuda", "lower"),
                            (_LOWER_CUDA, "cuda", "lower"), (_FP32_BOTH, "cpu", "fp32"),
                            (_FP32_BOTH, "cuda", "fp32"), (_FP32_CPU, "cpu", "fp32"),
                            (_FP32_CUDA, "cuda", "fp32")):
        for q in names:
            table.setdefault(q, {})[dev] = how
    return table


_installed: dict = {}   # qualname -> the op's function before install()


def install() -> None:
    """Wrap the autocast ops in the registry and their namespaces (idempotent). Aliases that
    share an op's function (``arccos`` of ``acos``) get the same wrapper, so they stay
    aliases."""
    import importlib

    from ember._ops._registry import registered_ops
    from ember._tensor import _install_methods

    ops = {op.qualname: op for op in registered_ops()}
    wrappers: dict = {}   # id(original callable) -> (original, wrapper)

    def wrapped(fn, policy):
        if id(fn) not in wrappers:
            wrappers[id(fn)] = (fn, _wrap(fn, policy))
        return wrappers[id(fn)][1]

    for qualname, policy in _policies().items():
        op = ops.get(qualname)
        if op is None or qualname in _installed:
            continue
        _installed[qualname] = op.function
        wrapped(op.function, policy)
        for f in op.methods.values():
            wrapped(f, policy)
    # every registry entry, namespace attribute and Tensor method holding an original
    for op in ops.values():
        if id(op.function) in wrappers and wrappers[id(op.function)][0] is op.function:
            old = op.function
            op.function = wrappers[id(old)][1]
            module = importlib.import_module(op.namespace)
            if getattr(module, op.name, None) is old:
                setattr(module, op.name, op.function)
        op.methods = {m: (wrappers[id(f)][1] if id(f) in wrappers and wrappers[id(f)][0] is f
                          else f) for m, f in op.methods.items()}
    # nn.functional's public module re-exports the functional family modules' names, and
    # modules hold functional ops as class attributes (Conv2d._fn = F.conv2d)
    F = importlib.import_module("ember.nn.functional")  # noqa: N806 - PyTorch's alias
    modules = importlib.import_module("ember.nn.modules")
    for name, value in list(vars(F).items()):
        if id(value) in wrappers and wrappers[id(value)][0] is value:
            setattr(F, name, wrappers[id(value)][1])
    for obj in vars(modules).values():
        if isinstance(obj, type):
            for attr, value in list(vars(obj).items()):
                if isinstance(value, staticmethod) and id(value.__func__) in wrappers and \
                        wrappers[id(value.__func__)][0] is value.__func__:
                    setattr(obj, attr, staticmethod(wrappers[id(value.__func__)][1]))
    _install_methods()


# -- custom autograd Functions under autocast ------------------------------------------------

def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for the ``forward`` of a custom :class:`ember.autograd.Function` run under
    autocast: with ``cast_inputs``, floating tensor arguments are cast to it and forward runs
    with autocast off; otherwise forward runs in the surrounding autocast state (which
    :func:`custom_bwd` then restores for backward).

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        cast_inputs (ember.dtype, optional): the dtype to run forward in.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_all(args, cast_inputs, device_type),
                           **_cast_all(kwargs, cast_inputs, device_type))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for the ``backward`` of a custom Function whose forward has
    :func:`custom_fwd`: backward runs in the autocast state forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


def _cast_all(value: Any, dtype, device_type):
    from ember._C._core import TensorBase

    if isinstance(value, TensorBase):
        if value.is_floating_point() and value.device.type == device_type and \
                value.dtype != dtype:
            return value.to(dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_all(v, dtype, device_type) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_all(v, dtype, device_type) for v in value)
    return value
