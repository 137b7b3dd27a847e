"""The device seam on real GPUs (CuPy): run by `nox -s gpu`; skipped without CuPy and a GPU.
The same semantics run everywhere against a stand-in for CuPy in test_devices.py."""

import numpy as np
import pytest

import ember
from ember._backend import backend_for_device

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
if not cupy.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)


def _two_gpus():
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")


def test_cuda_tensor_keeps_its_index_and_values():
    t = ember.tensor([1.0, 2.0], device="cuda:0")
    assert t.device == ember.device("cuda", 0) and t.is_cuda
    assert isinstance(t._data, cupy.ndarray) and t._data.device.id == 0
    np.testing.assert_array_equal(t.cpu().numpy(), [1.0, 2.0])
    x = ember.ones(3, device="cuda", requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == ember.device("cuda", 0)
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [2.0, 2.0, 2.0])


def test_cpu_and_cuda_do_not_mix():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.ones(2, device="cuda") + ember.ones(2)


def test_gpu_generator_draws_on_the_gpu():
    ember.manual_seed(0)
    a = ember.rand(1000, device="cuda:0")
    assert isinstance(a._data, cupy.ndarray)
    assert 0.4 < float(a.mean()) < 0.6
    ember.manual_seed(0)
    np.testing.assert_array_equal(ember.rand(1000, device="cuda:0").cpu().numpy(),
                                  a.cpu().numpy())
    assert backend_for_device("cuda:0").default_generator.device == ember.device("cuda", 0)


def test_second_gpu():
    _two_gpus()
    t = ember.zeros(4, device="cuda:1")
    assert t._data.device.id == 1 and t.device == ember.device("cuda", 1)
    u = ember.arange(4.0, device="cuda:0").to("cuda:1")
    assert u._data.device.id == 1
    np.testing.assert_array_equal(u.cpu().numpy(), [0.0, 1.0, 2.0, 3.0])
    assert (t + u)._data.device.id == 1
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        ember.ones(4, device="cuda:0") + u
