"""ember.cuda on real GPUs (CuPy): run by `nox -s gpu`; skipped without CuPy and a GPU. The same
calls run everywhere against the stand-in for CuPy in test_cuda_namespace.py."""

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
if not cupy.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)


def test_device_queries():
    assert ember.cuda.is_available() and ember.cuda.device_count() >= 1
    assert ember.cuda.current_device() == 0
    p = ember.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.major >= 3 and ember.cuda.get_device_name(0) == p.name
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    assert ember.accelerator.current_accelerator() == ember.device("cuda")


def test_memory_counters_follow_allocations():
    ember.cuda.empty_cache()
    before = ember.cuda.memory_allocated()
    x = ember.zeros(1024, 1024, device="cuda")   # 4 MiB
    assert ember.cuda.memory_allocated() >= before + 4 * 2**20
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del x
    ember.cuda.empty_cache()
    assert ember.cuda.memory_allocated() == before


def test_synchronize_streams_and_event_timing():
    s = ember.cuda.Stream()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    with ember.cuda.stream(s):
        start.record()
        y = ember.randn(512, 512, device="cuda") @ ember.randn(512, 512, device="cuda")
        end.record()
    end.synchronize()
    ember.cuda.synchronize()
    assert s.query() and start.elapsed_time(end) >= 0.0
    assert y.shape == (512, 512)


def test_seeding_and_pinned_memory():
    ember.cuda.manual_seed(0)
    a = ember.rand(8, device="cuda").cpu().numpy()
    ember.cuda.manual_seed(0)
    np.testing.assert_array_equal(ember.rand(8, device="cuda").cpu().numpy(), a)
    p = ember.arange(6.0).pin_memory()
    assert p.is_pinned() and p.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    np.testing.assert_array_equal(p.to("cuda").cpu().numpy(), p.numpy())
