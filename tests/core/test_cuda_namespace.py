"""ember.cuda and ember.accelerator: PyTorch's answers without a GPU, and the GPU paths through
the CUDA seam, run against the stand-in for CuPy with two "GPUs" (tests/core/_fake_cupy.py)."""

import warnings

import _fake_cupy
import numpy as np
import pytest

import ember
from ember._backend import backend_for_device


def _has_cupy():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


no_cupy = pytest.mark.skipif(_has_cupy(), reason="CuPy is installed")


# -- without CuPy: PyTorch's CPU-build answers -----------------------------------------------

@no_cupy
def test_availability_without_cuda():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert ember.cuda.is_initialized() is False
    assert ember.cuda.default_generators == ()
    assert ember.cuda.get_arch_list() == [] and ember.cuda.get_gencode_flags() == ""
    assert ember.cuda.is_bf16_supported() is False and ember.cuda.is_tf32_supported() is False
    assert ember.backends.cuda.is_built() is False
    assert ember.accelerator.is_available() is False
    assert ember.accelerator.device_count() == 0
    assert ember.accelerator.current_accelerator() is None


@no_cupy
def test_harmless_calls_without_cuda():
    ember.manual_seed(3)
    before = ember.rand(3)
    ember.manual_seed(3)
    for call in (lambda: ember.cuda.manual_seed(0), lambda: ember.cuda.manual_seed_all(1),
                 ember.cuda.seed, ember.cuda.seed_all, ember.cuda.empty_cache,
                 lambda: ember.cuda.set_rng_state(ember.zeros(3, dtype=ember.uint8)),
                 lambda: ember.cuda.set_rng_state_all([]), lambda: ember.cuda.set_device(-1)):
        assert call() is None
    np.testing.assert_array_equal(ember.rand(3).numpy(), before.numpy())  # CPU stream untouched
    assert ember.cuda.get_rng_state_all() == []
    assert ember.cuda.memory_allocated() == 0 and ember.cuda.max_memory_allocated() == 0
    assert ember.cuda.memory_reserved(0) == 0 and ember.cuda.max_memory_reserved() == 0
    assert ember.cuda.memory_stats() == {} and ember.cuda.memory_stats_as_nested_dict() == {}
    assert ember.cuda.host_memory_stats() == {}
    assert ember.cuda.is_current_stream_capturing() is False
    with ember.cuda.device(-1), ember.cuda.device_of(ember.zeros(1)), ember.cuda.stream(None):
        pass
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert ember.cuda.memory_cached() == 0


@no_cupy
@pytest.mark.parametrize("call", [
    ember.cuda.current_device, ember.cuda.synchronize, ember.cuda.get_device_name,
    ember.cuda.get_device_properties, ember.cuda.get_device_capability, ember.cuda.mem_get_info,
    ember.cuda.init, ember.cuda.initial_seed, ember.cuda.get_rng_state, ember.cuda.ipc_collect,
    ember.cuda.cudart, ember.cuda.current_stream, ember.cuda.default_stream,
    ember.cuda.reset_peak_memory_stats, ember.cuda.memory_summary, ember.cuda.get_sync_debug_mode,
    lambda: ember.cuda.set_device(0), lambda: ember.cuda.can_device_access_peer(0, 1),
    lambda: ember.cuda.set_per_process_memory_fraction(0.5),
    lambda: ember.cuda.caching_allocator_alloc(16), ember.cuda.CUDAGraph, ember.cuda.MemPool,
])
def test_calls_that_need_a_gpu_raise_assertion_error(call):
    with pytest.raises(AssertionError, match="without CUDA support"):
        call()


@no_cupy
def test_streams_events_and_device_context_raise_runtime_error():
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        ember.cuda.Stream()
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        ember.cuda.Event()
    with pytest.raises(AssertionError):
        with ember.cuda.device(0):
            pass
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.set_device("cpu")
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        ember.cuda.nvtx.range_push("x")
    for fn in (ember.accelerator.synchronize, ember.accelerator.current_device_index,
               ember.accelerator.memory_allocated, ember.accelerator.empty_cache):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            fn()
    with pytest.raises(ModuleNotFoundError, match="nvidia-ml-py"):
        ember.cuda.utilization()
    assert "pynvml" in ember.cuda.list_gpu_processes() or "GPU" in ember.cuda.list_gpu_processes()


def test_error_types():
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.cuda.CudaError, RuntimeError)
    ember.cuda.check_error(0)
    with pytest.raises(ember.cuda.CudaError) as info:
        ember.cuda.check_error(2)
    assert info.value.code == 2
    assert ember.cuda.cudaStatus.SUCCESS == 0 and ember.cuda.cudaStatus.ERROR_NOT_READY == 34


# -- with two (stand-in) GPUs: through the CUDA seam -----------------------------------------

@pytest.fixture
def gpus():
    with _fake_cupy.installed() as cp:
        yield cp


def test_availability_and_current_device(gpus):
    assert ember.cuda.is_available() and ember.cuda.device_count() == 2
    assert ember.backends.cuda.is_built()
    assert ember.cuda.current_device() == 0
    ember.cuda.set_device(1)
    assert ember.cuda.current_device() == 1
    assert ember.zeros(2, device="cuda").device == ember.device("cuda", 1)  # "cuda" = current
    ember.cuda.set_device("cuda:0")
    with ember.cuda.device(1):
        assert ember.cuda.current_device() == 1
        with ember.cuda.device_of(ember.zeros(1, device="cuda:0")):
            assert ember.cuda.current_device() == 0
        assert ember.cuda.current_device() == 1
    assert ember.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.cuda.set_device(5)
    assert ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.current_device_index() == 0
    with ember.accelerator.device_index(1):
        assert ember.accelerator.current_device_index() == 1
    assert ember.cuda.is_initialized()


def test_properties_and_memory_info(gpus):
    p = ember.cuda.get_device_properties(1)
    assert p.name == "Fake GPU 1" and (p.major, p.minor) == (8, 0)
    assert p.total_memory == 16 * 2**30 and p.multi_processor_count == 108
    assert "Fake GPU 1" in repr(p)
    assert ember.cuda.get_device_name("cuda:1") == "Fake GPU 1"
    assert ember.cuda.get_device_capability() == (8, 0)
    assert ember.cuda.get_arch_list() == ["sm_80"]
    assert ember.cuda.mem_get_info(1) == (10 * 2**30 + 1, 16 * 2**30)
    assert ember.accelerator.get_memory_info(0) == (10 * 2**30, 16 * 2**30)
    assert ember.cuda.can_device_access_peer(0, 1) and not ember.cuda.can_device_access_peer(0, 0)


def test_synchronize_goes_to_the_devices_backend(gpus):
    ember.cuda.synchronize(1)
    ember.cuda.synchronize()
    ember.accelerator.synchronize("cuda:1")
    assert _fake_cupy.calls == [("synchronize", 1), ("synchronize", 0), ("synchronize", 1)]


def test_memory_statistics_and_peaks(gpus):
    _fake_cupy._Pool.used[0] = 4096
    assert ember.cuda.memory_allocated(0) == 4096 == backend_for_device("cuda:0").memory_stats()[
        "allocated_bytes.all.current"]
    assert ember.cuda.memory_reserved(0) == 4096 + 1024
    _fake_cupy._Pool.used[0] = 100
    assert ember.cuda.memory_allocated(0) == 100
    assert ember.cuda.max_memory_allocated(0) == 4096     # the peak seen
    stats = ember.cuda.memory_stats(0)
    assert stats["allocated_bytes.all.peak"] == 4096
    assert ember.cuda.memory_stats_as_nested_dict(0)["allocated_bytes"]["all"]["peak"] == 4096
    ember.cuda.reset_peak_memory_stats(0)
    assert ember.cuda.max_memory_allocated(0) == 100
    assert "Allocated memory" in ember.cuda.memory_summary(0)
    ember.cuda.empty_cache()
    assert ("free_all_blocks",) in _fake_cupy.calls
    ember.cuda.set_per_process_memory_fraction(0.5, 0)
    assert ember.cuda.get_per_process_memory_fraction(0) == 0.5
    with pytest.raises(ValueError, match="Allowed range"):
        ember.cuda.set_per_process_memory_fraction(1.5)
    ptr = ember.cuda.caching_allocator_alloc(64)
    ember.cuda.caching_allocator_delete(ptr)
    with pytest.raises(RuntimeError, match="not allocated"):
        ember.cuda.caching_allocator_delete(ptr)
    with ember.cuda.caching_allocator_disabled():
        pass
    assert ("set_allocator", False) in _fake_cupy.calls and ("set_allocator", True) in \
        _fake_cupy.calls
    assert ember.accelerator.memory_allocated(0) == ember.cuda.memory_allocated(0)


def test_seeding_goes_to_each_gpus_default_generator(gpus):
    ember.cuda.manual_seed_all(5)
    gens = ember.cuda.default_generators
    assert len(gens) == 2 and all(g.initial_seed() == 5 for g in gens)
    assert gens[1] is backend_for_device("cuda:1").default_generator
    ember.cuda.set_device(1)
    ember.cuda.manual_seed(9)
    assert gens[1].initial_seed() == 9 and gens[0].initial_seed() == 5
    assert ember.cuda.initial_seed() == 9
    a = ember.rand(4, device="cuda:1")
    ember.cuda.manual_seed(9)
    np.testing.assert_array_equal(ember.rand(4, device="cuda:1").cpu().numpy(), a.cpu().numpy())
    with pytest.raises(RuntimeError, match="cannot be saved"):
        ember.cuda.get_rng_state(1)


def test_streams_and_events(gpus):
    with pytest.raises(RuntimeError, match="default priority only"):
        ember.cuda.Stream(priority=-1)
    s = ember.cuda.Stream(device=1)
    assert s.device == ember.device("cuda", 1) and s.query()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream(1) == s and ember.cuda.current_device() == 1
    assert ember.cuda.current_device() == 0 and ember.cuda.current_stream() != s
    s.synchronize()
    e = s.record_event()
    s2 = ember.cuda.Stream()
    s2.wait_event(e)
    s2.wait_stream(s)
    assert len(s2._cupy_stream.waited) == 2
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    start.record()
    end.record()
    end.synchronize()
    assert start.query() and start.elapsed_time(end) >= 0.0
    ext = ember.cuda.ExternalStream(1234)
    assert ext.cuda_stream == 1234
    g = ember.Stream("cuda:1")
    assert g.device_index == 1 and g.query()


def test_nvtx_and_graphs(gpus):
    ember.cuda.nvtx.range_push("step")
    ember.cuda.nvtx.mark("here")
    ember.cuda.nvtx.range_pop()
    with ember.cuda.nvtx.range("epoch {}", 3):
        pass
    assert _fake_cupy.calls == [("push", "step"), ("mark", "here"), ("pop",),
                                ("push", "epoch 3"), ("pop",)]
    assert ember.cuda.is_current_stream_capturing() is False
    with pytest.raises(RuntimeError, match="graph capture is not available"):
        ember.cuda.CUDAGraph()


def test_pin_memory(gpus):
    x = ember.arange(6.0).reshape(2, 3)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.pin_memory() is p
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert p.dtype == x.dtype and not np.shares_memory(p.numpy(), x.numpy())
    y = ember.zeros(2, device="cuda:0")
    y.record_stream(ember.cuda.current_stream())
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        x.record_stream(ember.cuda.current_stream())


@no_cupy
def test_pin_memory_without_a_gpu():
    x = ember.ones(3)
    assert x.is_pinned() is False
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        x.pin_memory()
    loader = ember.utils.data.DataLoader(ember.utils.data.TensorDataset(ember.ones(4, 2)),
                                         batch_size=2, pin_memory=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        batches = list(loader)
    assert len(batches) == 2 and any("pin_memory" in str(x.message) for x in w)


def test_tensor_attributes_of_other_backends_are_false():
    x = ember.ones(2)
    for name in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_nested",
                 "is_mkldnn", "is_vulkan", "is_ipu", "is_maia", "is_mtia"):
        assert getattr(x, name) is False, name


def test_generic_cpu_stream_and_event():
    s = ember.Stream()
    assert s.device_type == "cpu" and s.device_index == -1 and s.query()
    s.synchronize()
    a, b = ember.Event(enable_timing=True), ember.Event(enable_timing=True)
    a.record()
    b.record()
    assert 0.0 <= a.elapsed_time(b) < 1000.0
    with pytest.raises(ValueError, match="enable_timing"):
        ember.Event().elapsed_time(ember.Event())
    assert ember.cpu.current_stream() is ember.cpu.current_stream()
    assert ember.cpu.device_count() == 1 and ember.cpu.is_available()
    assert ember.cpu.current_device() == "cpu"
    assert ember.cpu.get_capabilities()["architecture"]
