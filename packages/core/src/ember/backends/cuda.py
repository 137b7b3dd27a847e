"""``ember.backends.cuda``: PyTorch's CUDA switches: ``matmul.allow_tf32`` and the reduced
precision reductions (kept in ``ember._flags.FLAGS`` for the CUDA backend: CuPy's matrix
products run in the tensors' dtype, so they change no result today), the attention backend
switches, and :func:`is_built`.
"""

from __future__ import annotations

import contextlib

from ember._flags import FLAGS

__all__ = ["is_built", "matmul", "cuBLASModule", "preferred_linalg_library",
           "preferred_blas_library", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "enable_math_sdp",
           "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed",
           "is_flash_attention_available", "sdp_kernel", "SDPAParams", "can_use_flash_attention",
           "can_use_efficient_attention", "can_use_cudnn_attention", "is_ck_sdpa_available",
           "preferred_rocm_fa_library"]


def is_built() -> bool:
    """True if ember can run on CUDA here: CuPy is installed (PyTorch: built with CUDA)."""
    from ember._backend import cupy

    return cupy.installed()


class cuBLASModule:  # noqa: N801 - PyTorch's name
    """``ember.backends.cuda.matmul``: the cuBLAS switches."""

    _KEYS = {"allow_tf32": "matmul_allow_tf32",
             "allow_fp16_reduced_precision_reduction":
                 "matmul_allow_fp16_reduced_precision_reduction",
             "allow_bf16_reduced_precision_reduction":
                 "matmul_allow_bf16_reduced_precision_reduction",
             "allow_fp16_accumulation": "matmul_allow_fp16_accumulation"}

    def __getattr__(self, name):
        if name in self._KEYS:
            return FLAGS[self._KEYS[name]]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._KEYS:
            raise AttributeError(f"Unknown attribute {name}")
        FLAGS[self._KEYS[name]] = value
        if name == "allow_tf32":
            FLAGS["float32_matmul_precision"] = "high" if value else "highest"


matmul = cuBLASModule()

_linalg = ["default"]
_blas = ["default"]


def preferred_linalg_library(backend=None):
    """The linear-algebra library preference of CUDA ops (``"default"``, ``"cusolver"``,
    ``"magma"``); ember's GPU linear algebra is CuPy's (cuSOLVER) whatever is set."""
    if backend is not None:
        if backend not in ("default", "cusolver", "magma"):
            raise RuntimeError(f"Unknown input value {backend!r}. Choose from: default, "
                               "cusolver, magma.")
        _linalg[0] = backend
    return _linalg[0]


def preferred_blas_library(backend=None):
    """The BLAS library preference of CUDA ops (``"default"``, ``"cublas"``,
    ``"cublaslt"``); ember's GPU products are CuPy's (cuBLAS) whatever is set."""
    if backend is not None:
        if backend not in ("default", "cublas", "cublaslt", "ck"):
            raise RuntimeError(f"Unknown input value {backend!r}. Choose from: default, "
                               "cublas, cublaslt, ck.")
        _blas[0] = backend
    return _blas[0]


# scaled_dot_product_attention's backends: ember has one implementation (the math one),
# so the switches are recorded and the math backend always runs.
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
        "fp16_bf16_reduction_math": False}


def enable_flash_sdp(enabled: bool):
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled: bool):
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled: bool):
    _sdp["math"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_cudnn_sdp(enabled: bool):
    _sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def allow_fp16_bf16_reduction_math_sdp(enabled: bool):
    _sdp["fp16_bf16_reduction_math"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _sdp["fp16_bf16_reduction_math"]


def is_flash_attention_available() -> bool:
    """False: ember has no flash-attention kernel."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True):
    """Deprecated context manager setting the attention backend switches inside it."""
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


class SDPAParams:
    """The arguments of one ``scaled_dot_product_attention`` call, for the ``can_use_*``
    queries."""

    def __init__(self, query, key, value, attn_mask=None, dropout=0.0, is_causal=False,
                 enable_gqa=False):
        self.query, self.key, self.value = query, key, value
        self.attn_mask, self.dropout, self.is_causal = attn_mask, dropout, is_causal
        self.enable_gqa = enable_gqa


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    """False: ember has no flash-attention kernel (it runs the math backend)."""
    return False


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    """False: ember has no memory-efficient attention kernel (it runs the math backend)."""
    return False


def can_use_cudnn_attention(params: SDPAParams, debug: bool = False) -> bool:
    """False: ember does not use cuDNN."""
    return False


def is_ck_sdpa_available() -> bool:
    """False: no ROCm Composable Kernel attention in ember."""
    return False


def preferred_rocm_fa_library(backend=None):
    """The ROCm flash-attention library preference: ``"default"`` (ember has no ROCm
    backend; the value is not used)."""
    return "default"


# -- cuBLAS workspaces and the cuFFT plan cache ---------------------------------------------

def _default_cublas_workspace() -> int:
    # CUBLAS_WORKSPACE_CONFIG=":SIZE_KiB:COUNT[:SIZE_KiB:COUNT...]", PyTorch's default
    # ":4096:2:16:8" (4096 KiB twice, 16 KiB eight times).
    import os

    spec = os.environ.get("CUBLAS_WORKSPACE_CONFIG", ":4096:2:16:8")
    parts = [p for p in spec.split(":") if p]
    try:
        return sum(int(parts[i]) * 1024 * int(parts[i + 1]) for i in range(0, len(parts), 2))
    except (ValueError, IndexError):
        return 4096 * 1024 * 2 + 16 * 1024 * 8


def _workspace(key, size, default):
    if size is not None:
        if int(size) < 0:
            raise RuntimeError(f"workspace size must be non-negative, got {size}")
        FLAGS[key] = int(size)
    return FLAGS.get(key, default())


def cublas_workspace_size(size: None | int = None) -> int:
    """Query or set the cuBLAS workspace size in bytes (default from
    ``CUBLAS_WORKSPACE_CONFIG``, PyTorch's default ``":4096:2:16:8"``). The value is kept
    in ``ember._flags.FLAGS`` for the CUDA backend; CuPy's cuBLAS handles manage their own
    workspace today, so it changes no result."""
    return _workspace("cublas_workspace_size", size, _default_cublas_workspace)


def cublaslt_workspace_size(size: None | int = None) -> int:
    """Query or set the cuBLASLt workspace size in bytes (default: ``CUBLASLT_WORKSPACE_SIZE``
    KiB, else the cuBLAS size: PyTorch's unified workspace). Recorded, as
    :func:`cublas_workspace_size`."""
    import os

    def default():
        env = os.environ.get("CUBLASLT_WORKSPACE_SIZE")
        return int(env) * 1024 if env and env.isdigit() else cublas_workspace_size()

    return _workspace("cublaslt_workspace_size", size, default)


def blas_workspace_size(size: None | int = None, backend=None) -> int:
    """Query or set the workspace size of ``backend`` (``"cublas"``, ``"cublaslt"``, or None
    for :func:`preferred_blas_library`, ``"default"`` meaning cuBLAS)."""
    name = preferred_blas_library() if backend is None else str(backend).lower()
    name = name.rsplit(".", 1)[-1]
    if name in ("cublaslt", "ck"):
        return cublaslt_workspace_size(size)
    if name in ("cublas", "default"):
        return cublas_workspace_size(size)
    raise RuntimeError(f"Unknown BLAS backend {backend!r}: choose cublas or cublaslt")


class cuFFTPlanCacheAttrContextProp:  # noqa: N801 - PyTorch's name
    """A property of a :class:`cuFFTPlanCache` read (and written) for its device index; a
    string setter is the error a write raises."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        if obj is None:
            return self
        return self.getter(obj.device_index)

    def __set__(self, obj, val):
        if isinstance(self.setter, str):
            raise RuntimeError(self.setter)
        self.setter(obj.device_index, val)


def _plan_cache(device_index):
    import cupy

    with cupy.cuda.Device(device_index):
        return cupy.fft.config.get_plan_cache()


class cuFFTPlanCache:  # noqa: N801 - PyTorch's name
    """The cuFFT plan cache of one GPU (CuPy's plan cache, which ember's GPU FFTs use):
    ``size`` (plans cached, read-only), ``max_size`` (capacity) and :meth:`clear`."""

    def __init__(self, device_index):
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(
        lambda i: _plan_cache(i).get_curr_size(),
        ".size is a read-only property showing the number of plans currently in the cache. "
        "To change the cache capacity, set cufft_plan_cache.max_size.")
    max_size = cuFFTPlanCacheAttrContextProp(
        lambda i: _plan_cache(i).get_size(), lambda i, v: _plan_cache(i).set_size(int(v)))

    def clear(self):
        """Drop every cached plan."""
        _plan_cache(self.device_index).clear()


class cuFFTPlanCacheManager:  # noqa: N801 - PyTorch's name
    """All GPUs' :class:`cuFFTPlanCache`: ``cufft_plan_cache[i]`` is device ``i``'s; its
    attributes used directly are the current device's."""

    __initialized = False

    def __init__(self):
        self.caches = []
        self.__initialized = True

    def __getitem__(self, device):
        from ember import cuda as _cuda

        index = device if isinstance(device, int) else getattr(device, "index", None)
        if isinstance(device, str):
            index = int(device.split(":")[1]) if ":" in device else _cuda.current_device()
        count = _cuda.device_count()
        if index is None or index < 0 or index >= count:
            raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < {count}, but "
                               f"got device with index {index}")
        if not self.caches:
            self.caches.extend(cuFFTPlanCache(i) for i in range(count))
        return self.caches[index]

    def __getattr__(self, name):
        from ember import cuda as _cuda

        return getattr(self[_cuda.current_device()], name)

    def __setattr__(self, name, value):
        if self.__initialized:
            from ember import cuda as _cuda

            return setattr(self[_cuda.current_device()], name, value)
        return super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()
__all__ += ["blas_workspace_size", "cublas_workspace_size", "cublaslt_workspace_size",
            "cuFFTPlanCache", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCacheManager",
            "cufft_plan_cache"]
