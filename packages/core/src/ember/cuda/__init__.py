"""``ember.cuda``: CUDA devices, as ``torch.cuda``: availability, the current device, device
properties, seeding, streams and events, memory statistics.

ember runs on NVIDIA GPUs through CuPy (``pip install ember[cuda12]`` or ``ember[cuda13]``);
every call here goes through the CUDA backends of the device seam (``ember._backend.cupy``).
On a machine without a GPU the answers are PyTorch's (NOTE [ ember.cuda without a GPU ] in
``ember.cuda._utils``)::

    >>> device = "cuda" if ember.cuda.is_available() else "cpu"
    >>> model = model.to(device)
"""

from __future__ import annotations

import typing

from ember._backend import backend_for_device as _backend_for_device
from ember._backend import cupy as _seam
from ember._backend._base import all_backends as _all_backends
from ember.cuda import amp, graphs, memory, nvtx, profiler, random, streams
from ember.cuda._utils import get_device_index as _get_device_index
from ember.cuda._utils import lazy_init as _lazy_init
from ember.cuda.graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from ember.cuda.memory import (
    CUDAPluggableAllocator,
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    caching_allocator_disabled,
    caching_allocator_enable,
    change_current_allocator,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    list_gpu_processes,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)
from ember.cuda.random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from ember.cuda.streams import Event, ExternalStream, Stream

__all__ = [
    "AcceleratorError", "CUDAGraph", "CUDAPluggableAllocator", "CudaError",
    "DeferredCudaCallError", "Event", "ExternalStream", "GreenContext", "MemPool",
    "OutOfMemoryError", "Stream", "StreamContext", "amp", "caching_allocator_alloc",
    "caching_allocator_delete", "caching_allocator_disabled", "caching_allocator_enable",
    "can_device_access_peer", "change_current_allocator", "check_error", "clock_rate",
    "cudaStatus", "cudart", "current_blas_handle", "current_device", "current_solver_handle",
    "current_stream", "default_generators", "default_stream", "device", "device_count",
    "device_memory_used", "device_of", "empty_cache", "get_allocator_backend", "get_arch_list",
    "get_device_capability", "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all",
    "get_stream_from_external", "get_sync_debug_mode", "graph", "graph_pool_handle", "graphs",
    "has_half", "has_magma", "host_memory_stats", "host_memory_stats_as_nested_dict", "init",
    "initial_seed", "ipc_collect", "is_available", "is_bf16_supported",
    "is_current_stream_capturing", "is_initialized", "is_tf32_supported", "list_gpu_processes",
    "make_graphed_callables", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "max_memory_cached", "max_memory_reserved", "mem_get_info", "memory", "memory_allocated",
    "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "memory_usage", "nvtx", "power_draw",
    "profiler",
    "random", "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_host_memory_stats",
    "reset_peak_memory_stats", "seed", "seed_all", "set_device",
    "set_per_process_memory_fraction", "set_rng_state", "set_rng_state_all", "set_stream",
    "set_sync_debug_mode", "stream", "streams", "synchronize", "temperature", "utilization",
    "use_mem_pool",
]

has_half = True
has_magma = False


class CudaError(RuntimeError):
    """A CUDA runtime error (``code`` is the ``cudaError_t``)."""

    def __init__(self, code: int) -> None:
        self.code = code
        try:
            msg = _seam.module().cuda.runtime.getErrorString(code)
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        except Exception:  # noqa: BLE001 - no CuPy: the code alone
            msg = "CUDA error"
        super().__init__(f"{msg} ({code})")


class DeferredCudaCallError(Exception):
    """An error in a CUDA call queued before CUDA was initialized."""


class OutOfMemoryError(RuntimeError):
    """A GPU ran out of memory (``torch.cuda.OutOfMemoryError``)."""


class AcceleratorError(RuntimeError):
    """An error reported by the accelerator's runtime (``torch.AcceleratorError``)."""


class cudaStatus:  # noqa: N801 - PyTorch's name
    """The CUDA status codes PyTorch names."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class GreenContext:
    """CUDA green contexts (GPU partitions by SM count). CuPy does not expose them, so ember
    cannot make one: :meth:`create` raises ``RuntimeError``."""

    @staticmethod
    def create(num_sms: int, device_id: int = 0) -> GreenContext:
        _lazy_init()
        raise RuntimeError("ember.cuda.GreenContext: CuPy does not expose CUDA green contexts")


def is_available() -> bool:
    """True if ember can use a CUDA GPU (CuPy installed and at least one GPU)."""
    return _seam.device_count() > 0


def device_count() -> int:
    """The number of CUDA GPUs (0 without CuPy or a GPU)."""
    return _seam.device_count()


def is_initialized() -> bool:
    """True once a GPU's backend has been made in this process."""
    return any(b.type == "cuda" for b in _all_backends())


def init() -> None:
    """Initialize CUDA: make the current GPU's backend (raises without a GPU)."""
    _lazy_init()
    _backend_for_device("cuda")


def current_device() -> int:
    """The index of the current CUDA device."""
    _lazy_init()
    return _seam.current_index()


def set_device(device: typing.Any) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or an ``ember.device``) the current device;
    a negative index does nothing."""
    index = _get_device_index(device)
    if index >= 0:
        _lazy_init()
        _seam.set_current_index(index)


class device:  # noqa: N801 - PyTorch's name
    """Context manager that makes ``device`` the current CUDA device inside it.

    Args:
        device (ember.device or int or str): the device; a negative index or None does
            nothing.
    """

    def __init__(self, device: typing.Any):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return self
        _lazy_init()
        self.prev_idx = _seam.current_index()
        if self.prev_idx != self.idx:
            _seam.set_current_index(self.idx)
        return self

    def __exit__(self, *exc) -> bool:
        if self.idx >= 0 and self.prev_idx != self.idx:
            _seam.set_current_index(self.prev_idx)
        return False


class device_of(device):  # noqa: N801 - PyTorch's name
    """Context manager that makes the device of tensor ``obj`` current (nothing for a CPU
    tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device: typing.Any = None) -> None:
    """Wait for all work queued on a CUDA device (the current one by default)."""
    _lazy_init()
    _backend_for_device(f"cuda:{_get_device_index(device)}").synchronize()


def _properties(device) -> dict:
    _lazy_init()
    return _seam.device_properties(_get_device_index(device))


class _CudaDeviceProperties:
    """The properties of a CUDA device (``torch.cuda.get_device_properties``)."""

    def __init__(self, props: dict):
        name = props.get("name", b"")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major = int(props.get("major", 0))
        self.minor = int(props.get("minor", 0))
        self.total_memory = int(props.get("totalGlobalMem", 0))
        self.multi_processor_count = int(props.get("multiProcessorCount", 0))
        self.is_integrated = int(props.get("integrated", 0))
        self.is_multi_gpu_board = int(props.get("isMultiGpuBoard", 0))
        self.max_threads_per_multi_processor = int(props.get("maxThreadsPerMultiProcessor", 0))
        self.warp_size = int(props.get("warpSize", 32))
        self.L2_cache_size = int(props.get("l2CacheSize", 0))

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device: typing.Any = None) -> _CudaDeviceProperties:
    """The properties of a CUDA device: ``name``, ``major``, ``minor``, ``total_memory``,
    ``multi_processor_count``, ..."""
    return _CudaDeviceProperties(_properties(device))


def get_device_name(device: typing.Any = None) -> str:
    """The name of a CUDA device (the current one by default)."""
    return get_device_properties(device).name


def get_device_capability(device: typing.Any = None) -> tuple[int, int]:
    """The (major, minor) compute capability of a CUDA device."""
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list() -> list[str]:
    """The architectures ember's CUDA kernels are built for. CuPy compiles its kernels at run
    time for the GPU it finds, so this is that GPU's ``sm_XY`` ([] without a GPU)."""
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def get_gencode_flags() -> str:
    """The NVCC gencode flags of :func:`get_arch_list` ('' without a GPU)."""
    return " ".join(f"-gencode compute=compute_{a[3:]},code={a}" for a in get_arch_list())


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: CuPy has no bfloat16 arrays, so ember cannot keep bfloat16 tensors on a GPU."""
    return False


def is_tf32_supported() -> bool:
    """False: ember's CUDA matrix products run in the tensors' dtype (no TF32 kernels)."""
    return False


def can_device_access_peer(device: typing.Any, peer_device: typing.Any) -> bool:
    """True if GPU ``device`` can read GPU ``peer_device``'s memory directly."""
    _lazy_init()
    a, b = _get_device_index(device), _get_device_index(peer_device)
    n = device_count()
    if not (0 <= a < n and 0 <= b < n):
        raise AssertionError("Invalid device id")
    return bool(_seam.module().cuda.runtime.deviceCanAccessPeer(a, b))


def check_error(res: int) -> None:
    """Raise :class:`CudaError` if ``res`` (a ``cudaError_t``) is not success."""
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)


def cudart():
    """The CUDA runtime module (CuPy's ``cupy.cuda.runtime``)."""
    _lazy_init()
    return _seam.module().cuda.runtime


def current_blas_handle() -> int:
    """The cuBLAS handle of the current device."""
    _lazy_init()
    return _seam.module().cuda.device.get_cublas_handle()


def current_solver_handle() -> int:
    """The cuSOLVER handle of the current device."""
    _lazy_init()
    return _seam.module().cuda.device.get_cusolver_handle()


def ipc_collect() -> None:
    """Free the GPU memory of tensors shared with other processes once they are released.
    ember shares CUDA tensors through CuPy, which holds no such memory: nothing to free."""
    _lazy_init()


_sync_debug_mode = [0]


def set_sync_debug_mode(debug_mode: int | str) -> None:
    """The debug mode of synchronizing CUDA operations (``"default"``/0, ``"warn"``/1,
    ``"error"``/2). ember records the mode; it does not report synchronizing calls yet."""
    _lazy_init()
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    _sync_debug_mode[0] = int(debug_mode)


def get_sync_debug_mode() -> int:
    """The debug mode set by :func:`set_sync_debug_mode`."""
    _lazy_init()
    return _sync_debug_mode[0]


# -- streams --------------------------------------------------------------------------------

def current_stream(device: typing.Any = None) -> Stream:
    """The current stream of a CUDA device."""
    _lazy_init()
    index = _get_device_index(device)
    with _backend_for_device(f"cuda:{index}").context():
        return Stream._wrap(_seam.module().cuda.get_current_stream(), index)


def default_stream(device: typing.Any = None) -> Stream:
    """The default (null) stream of a CUDA device."""
    _lazy_init()
    return Stream._wrap(_seam.module().cuda.Stream.null, _get_device_index(device))


def set_stream(stream: Stream):
    """Make ``stream`` the current stream of its device (None does nothing)."""
    if stream is None:
        return
    _lazy_init()
    stream._cupy_stream.use()


def get_stream_from_external(data_ptr: int, device: typing.Any = None) -> Stream:
    """A :class:`Stream` for a ``cudaStream_t`` made elsewhere (by address)."""
    return ExternalStream(data_ptr, device=device)


class StreamContext:
    """Context manager that makes ``stream`` current on its device inside it (None: nothing).

    Args:
        stream (Stream): the stream.
    """

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is None:
            return self
        _lazy_init()
        self._device = device(self.stream.device_index)
        self._device.__enter__()
        self._prev = _seam.module().cuda.get_current_stream()
        self.stream._cupy_stream.use()
        return self

    def __exit__(self, *exc) -> bool:
        if self.stream is not None:
            self._prev.use()
            self._device.__exit__(*exc)
        return False


def stream(stream: Stream | None) -> StreamContext:
    """``with ember.cuda.stream(s):`` runs the block with ``s`` as the current stream."""
    return StreamContext(stream)


# -- NVML: the driver's counters (nvidia-ml-py) ----------------------------------------------

def _nvml_handle(device):
    try:
        import pynvml
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "nvidia-ml-py does not seem to be installed or it can't be imported.") from None
    _lazy_init()
    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_get_device_index(device))


def utilization(device: typing.Any = None) -> int:
    """The percentage of time a kernel ran on the GPU over the last sample period (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetUtilizationRates(h).gpu


def memory_usage(device: typing.Any = None) -> int:
    """The percentage of time GPU memory was read or written over the last sample period."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetUtilizationRates(h).memory


def temperature(device: typing.Any = None) -> int:
    """The GPU's temperature in degrees Celsius (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetTemperature(h, 0)


def power_draw(device: typing.Any = None) -> int:
    """The GPU's power draw in milliwatts (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetPowerUsage(h)


def clock_rate(device: typing.Any = None) -> int:
    """The GPU's SM clock in MHz (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetClockInfo(h, 1)


def device_memory_used(device: typing.Any = None) -> int:
    """The GPU memory in use, in bytes, by all processes (NVML)."""
    nv, h = _nvml_handle(device)
    return nv.nvmlDeviceGetMemoryInfo(h).used


def __getattr__(name):
    if name == "default_generators":  # the GPUs' default generators, made on first use
        if not is_available():
            return ()
        return tuple(_backend_for_device(f"cuda:{i}").default_generator
                     for i in range(device_count()))
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


# the legacy CUDA tensor types and storages (ember.cuda.FloatTensor, ...)
from ember.cuda._legacy_types import (  # noqa: E402
    BFloat16Storage,
    BFloat16Tensor,
    BoolStorage,
    BoolTensor,
    ByteStorage,
    ByteTensor,
    CharStorage,
    CharTensor,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    DoubleTensor,
    FloatStorage,
    FloatTensor,
    HalfStorage,
    HalfTensor,
    IntStorage,
    IntTensor,
    LongStorage,
    LongTensor,
    ShortStorage,
    ShortTensor,
)

__all__ += ["BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage",
            "ByteTensor", "CharStorage", "CharTensor", "ComplexDoubleStorage",
            "ComplexFloatStorage", "DoubleStorage", "DoubleTensor", "FloatStorage",
            "FloatTensor", "HalfStorage", "HalfTensor", "IntStorage", "IntTensor",
            "LongStorage", "LongTensor", "ShortStorage", "ShortTensor"]

# typing and __future__ names used by the annotations above: not part of the public namespace
del annotations
