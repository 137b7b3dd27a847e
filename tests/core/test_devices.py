"""The device seam: backends per device, kernels by name, per-device generators.

The CPU parts run everywhere. The multi-GPU semantics run against a stand-in for CuPy with
two "devices" (tests/core/_fake_cupy.py), and again on real GPUs in the tests marked gpu.
"""

import _fake_cupy
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember._backend import Backend, _base, backend_for_device, backend_of, cpu, register_kernel

# -- the CPU backend -----------------------------------------------------------------------


def test_cpu_backend_is_a_device():
    assert backend_of(np.zeros(2)) is cpu
    assert backend_for_device("cpu") is cpu and backend_for_device(None) is cpu
    assert cpu.type == "cpu" and cpu.index is None and cpu.device == ember.device("cpu")
    assert cpu.xp is np
    assert ember.zeros(2).device == ember.device("cpu")
    assert backend_of(np.zeros(2).view(np.matrix)) is cpu  # a NumPy subclass


def test_cpu_default_generator_is_the_backends_and_streams_are_unchanged():
    assert cpu.default_generator is ember.default_generator
    ember.manual_seed(1234)
    got = ember.rand(5).numpy()
    want = np.random.Generator(np.random.PCG64(1234)).random(5, dtype=np.float32)
    np.testing.assert_array_equal(got, want)
    ember.manual_seed(7)
    got = ember.randn(4, dtype=ember.float64).numpy()
    np.testing.assert_array_equal(got, np.random.Generator(np.random.PCG64(7)).standard_normal(4))


def test_cpu_memory_stats_synchronize_and_context():
    assert cpu.memory_stats() == {}
    assert cpu.synchronize() is None
    with cpu.context():
        assert ember.zeros(1).device == ember.device("cpu")


def test_cpu_workspace_is_reused_per_slot():
    a = cpu.workspace((4, 4), np.float32, 0)
    b = cpu.workspace((2, 8), np.float32, 0)
    c = cpu.workspace((4, 4), np.float32, 1)
    assert np.shares_memory(a, b) and not np.shares_memory(a, c)
    assert a.shape == (4, 4) and b.shape == (2, 8) and a.dtype == np.float32


def test_cuda_needs_cupy_or_a_gpu():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CuPy"):
        ember.zeros(2, device="cuda")
    g = ember.Generator(device="cuda")  # made without CuPy, as PyTorch lets one
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type"):
        ember.rand(2, generator=g)


# -- kernels by name -------------------------------------------------------------------------


@pytest.fixture
def kernel_table():
    saved = {k: {n: list(v) for n, v in t.items()} for k, t in _base._KERNELS.items()}
    yield
    for k, t in saved.items():
        _base._KERNELS[k].clear()
        _base._KERNELS[k].update(t)


def test_kernel_selection_by_dtype_and_layout(kernel_table):
    def generic(x):
        return "any"

    register_kernel("test_kernel", "any", generic)
    register_kernel("test_kernel", "cpu", lambda x: "cpu f32 contiguous", dtypes=[np.float32],
                    contiguous=True)

    @register_kernel("test_kernel", "cpu", dtypes=[np.float64])
    def cpu64(x):
        return "cpu f64"

    f32 = np.zeros((3, 4), np.float32)
    assert cpu.kernel("test_kernel", f32)(f32) == "cpu f32 contiguous"
    assert cpu.kernel("test_kernel", f32.T)(f32.T) == "any"   # not C-contiguous
    assert cpu.kernel("test_kernel", f32.astype(np.float64))(None) == "cpu f64"
    assert cpu.kernel("test_kernel", np.zeros(2, np.int64)) is generic
    assert cpu.kernel("test_kernel", f32, generic=True) is generic
    assert cpu.has_kernel("test_kernel", f32) and not cpu.has_kernel("test_kernel", f32.T)
    assert len(_base.kernel_entries("test_kernel")) == 3
    assert any(repr(e) == "<kernel 'test_kernel' for cpu (float32, C-contiguous)>"
               for e in _base.kernel_entries("test_kernel"))
    with pytest.raises(NotImplementedError, match="no kernel 'missing_kernel' on cpu"):
        cpu.kernel("missing_kernel", f32)
    with pytest.raises(ValueError, match="unknown device type"):
        register_kernel("x", "tpu", generic)


def test_compiled_cpu_kernels_are_registered_with_array_module_fallbacks():
    for name in ("im2col", "col2im", "max_pool", "avg_pool", "avg_pool_backward",
                 "scatter_add_planes", "cross_entropy_forward", "batch_norm_forward",
                 "layer_norm_backward", "group_norm_forward", "adam_step", "sgd_step",
                 "index_add_rows"):
        kinds = {e.device_type for e in _base.kernel_entries(name)}
        assert kinds == {"cpu", "any"} or (name == "index_add_rows" and "cpu" in kinds), name
    x = np.zeros((2, 3, 4), np.float32)
    assert cpu.kernel("batch_norm_forward", x).__name__ == "batch_norm_forward"  # compiled
    assert cpu.kernel("batch_norm_forward", x.astype(np.float16)).__name__ == \
        "_batch_norm_forward"  # the xp implementation


# -- several devices (a stand-in for CuPy with two GPUs) -----------------------------------------


@pytest.fixture
def gpus():
    with _fake_cupy.installed() as cp:
        yield cp


def _dev(t):
    return t._data.device.id


def test_one_backend_per_gpu(gpus):
    b0, b1 = backend_for_device("cuda:0"), backend_for_device("cuda:1")
    assert isinstance(b0, Backend) and b0 is not b1
    assert (b0.index, b1.index) == (0, 1) and b1.device == ember.device("cuda", 1)
    assert backend_for_device("cuda") is b0  # the current device
    assert backend_for_device(ember.device("cuda", 1)) is b1
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        backend_for_device("cuda:5")


def test_creation_keeps_the_index(gpus):
    for t in (ember.zeros(3, device="cuda:1"), ember.ones(2, 2, device="cuda:1"),
              ember.tensor([1.0, 2.0], device="cuda:1"), ember.arange(4, device="cuda:1"),
              ember.full((2,), 3.0, device=ember.device("cuda", 1)),
              ember.eye(2, device="cuda:1"), ember.empty(2, device="cuda:1")):
        assert t.device == ember.device("cuda", 1), t
        assert _dev(t) == 1
        assert t.is_cuda and not t.is_cpu and t.get_device() == 1


def test_to_another_gpu_copies_device_to_device(gpus):
    x = ember.tensor([1.0, 2.0, 3.0], device="cuda:0")
    y = x.to("cuda:1")
    assert y.device == ember.device("cuda", 1) and _dev(y) == 1
    assert _fake_cupy.copies["peer"] == 1
    np.testing.assert_array_equal(y.cpu().numpy(), [1.0, 2.0, 3.0])
    assert x.to("cuda:0") is x
    assert x.cuda(1).device == ember.device("cuda", 1)
    assert y.cpu().device == ember.device("cpu")


def test_module_to_keeps_the_index(gpus):
    m = nn.Linear(3, 2).to("cuda:1")
    assert {p.device for p in m.parameters()} == {ember.device("cuda", 1)}
    out = m(ember.ones(4, 3, device="cuda:1"))
    assert out.device == ember.device("cuda", 1) and _dev(out) == 1


def test_mixing_devices_is_refused(gpus):
    a = ember.ones(3, device="cuda:0")
    b = ember.ones(3, device="cuda:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                           "but found at least two devices, cuda:0 and cuda:1"):
        a + b
    with pytest.raises(RuntimeError, match="same device.*cuda:1 and cpu"):
        ember.mul(b, ember.ones(3))
    with pytest.raises(RuntimeError, match="same device"):
        a.add_(b)


def test_a_zero_dim_cpu_tensor_goes_with_any_device(gpus):
    # as in PyTorch: a 0-dim CPU tensor is a scalar to an op on another device
    y = ember.ones(3, device="cuda:1") * ember.tensor(2.0)
    assert y.device == ember.device("cuda", 1)
    np.testing.assert_array_equal(y.cpu().numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="same device"):
        ember.ones(3, device="cuda:1") * ember.ones(1)  # 1-dim: not a scalar


def test_memory_stats_per_gpu(gpus):
    stats = backend_for_device("cuda:1").memory_stats()
    assert set(stats) == {"allocated_bytes.all.current", "reserved_bytes.all.current"}


def test_ops_and_autograd_run_on_the_tensors_gpu(gpus):
    x = ember.tensor([1.0, -2.0, 3.0], device="cuda:1", requires_grad=True)
    y = (x * x).relu().sum()          # forward under device 1's context
    assert _dev(y) == 1 and gpus.cuda.runtime.getDevice() == 0
    y.backward()
    assert x.grad.device == ember.device("cuda", 1) and _dev(x.grad) == 1
    np.testing.assert_allclose(x.grad.cpu().numpy(), [2.0, -4.0, 6.0])


def test_per_device_generators(gpus):
    g0 = backend_for_device("cuda:0").default_generator
    g1 = backend_for_device("cuda:1").default_generator
    assert g0 is not g1 and g0 is not ember.default_generator
    assert g1.device == ember.device("cuda", 1)
    ember.manual_seed(3)
    a = ember.rand(4, device="cuda:1")
    assert a.device == ember.device("cuda", 1) and _dev(a) == 1
    ember.manual_seed(3)   # seeds every device's default generator
    np.testing.assert_array_equal(ember.rand(4, device="cuda:1").cpu().numpy(),
                                  a.cpu().numpy())
    g = ember.Generator(device="cuda:1").manual_seed(5)
    b = ember.randn(3, device="cuda:1", generator=g)
    assert _dev(b) == 1
    with pytest.raises(RuntimeError, match="cannot be saved or restored"):
        g.get_state()
