"""ember.nn.parallel: DataParallel runs the module on the CPU, and splits the batch over the two
GPUs of the CuPy stand-in (tests/core/_fake_cupy.py) with gradients reaching the module."""

import _fake_cupy
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.parallel import (
    DataParallel,
    DistributedDataParallel,
    data_parallel,
    gather,
    parallel_apply,
    replicate,
    scatter,
)


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_data_parallel_on_the_cpu_runs_the_module():
    if ember.cuda.is_available():
        pytest.skip("a GPU is there")
    model = _model()
    dp = DataParallel(model)
    assert dp.device_ids == [] and dp.module is model
    x = ember.randn(5, 4)
    np.testing.assert_array_equal(dp(x).detach().numpy(), model(x).detach().numpy())
    assert set(dp.state_dict()) == {"module." + k for k in model.state_dict()}
    assert nn.DataParallel is DataParallel
    np.testing.assert_array_equal(data_parallel(model, x).detach().numpy(),
                                  model(x).detach().numpy())


def test_distributed_data_parallel_needs_a_process_group():
    # the training itself is tested under mpiexec: tests/distributed/test_ddp.py
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(_model())


@pytest.fixture
def gpus():
    with _fake_cupy.installed() as cp:
        yield cp


def test_scatter_and_gather(gpus):
    x = ember.arange(10.0).reshape(5, 2)
    parts = scatter((x, "tag"), [0, 1])
    assert len(parts) == 2 and parts[0][1] == "tag"
    assert parts[0][0].device == ember.device("cuda", 0) and parts[1][0].shape == (2, 2)
    back = gather([p[0] for p in parts], -1)
    assert back.device == ember.device("cpu")
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    d = gather([{"a": ember.ones(1, device="cuda:0")}, {"a": ember.ones(1, device="cuda:1")}], 0)
    assert d["a"].shape == (2,) and d["a"].device == ember.device("cuda", 0)


def test_replicas_share_the_originals_gradients(gpus):
    model = _model().to("cuda:0")
    reps = replicate(model, [0, 1])
    assert [next(r.parameters()).device for r in reps] == [ember.device("cuda", 0),
                                                          ember.device("cuda", 1)]
    outs = parallel_apply(reps, [(ember.ones(1, 4, device="cuda:0"),),
                                 (ember.ones(1, 4, device="cuda:1"),)])
    (outs[0].sum() + outs[1].sum().to("cuda:0")).backward()
    assert model[0].weight.grad is not None
    single = _model().to("cuda:0")
    (2 * single(ember.ones(1, 4, device="cuda:0")).sum()).backward()
    np.testing.assert_allclose(model[0].weight.grad.cpu().numpy(),
                               single[0].weight.grad.cpu().numpy(), rtol=1e-6)


def test_data_parallel_over_two_gpus_matches_one_device(gpus):
    model = _model().to("cuda:0")
    reference = _model()
    dp = DataParallel(model)
    assert dp.device_ids == [0, 1] and dp.output_device == 0
    x = ember.randn(6, 4)
    out = dp(x.to("cuda:0"))
    assert out.device == ember.device("cuda", 0) and out.shape == (6, 2)
    want = reference(x)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    want.sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    got = data_parallel(model, x.to("cuda:0"), device_ids=[0, 1], output_device=1)
    assert got.device == ember.device("cuda", 1)
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers"):
        DataParallel(_model())(x.to("cuda:0"))
