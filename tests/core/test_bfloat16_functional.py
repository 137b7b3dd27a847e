"""bfloat16 inputs of the functional ops that compute in float32 (NOTE [ bfloat16 through
float32 ] in ember/nn/_functional/_low_precision.py): the result is the float32 op's,
rounded to bfloat16; gradients flow back in bfloat16; running statistics are updated."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F

pytest.importorskip("ml_dtypes")

X = ember.tensor(np.random.default_rng(3).standard_normal((2, 4, 3, 2)).astype(np.float32))

OPS = {
    "threshold": lambda x: F.threshold(x, 0.1, -1.0), "elu": F.elu, "selu": F.selu,
    "celu": F.celu, "leaky_relu": F.leaky_relu, "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu, "mish": F.mish,
    "softplus": F.softplus, "logsigmoid": F.logsigmoid, "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid, "hardshrink": F.hardshrink, "softshrink": F.softshrink,
    "glu": lambda x: F.glu(x, 1), "softmax": lambda x: F.softmax(x, 1),
    "log_softmax": lambda x: F.log_softmax(x, -1), "softmin": lambda x: F.softmin(x, 2),
    "normalize": F.normalize, "prelu": lambda x: F.prelu(x, ember.full((4,), 0.2)),
    "layer_norm": lambda x: F.layer_norm(x, (3, 2)),
    "group_norm": lambda x: F.group_norm(x, 2),
    "rms_norm": lambda x: F.rms_norm(x, (2,)),
    "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
    "instance_norm": lambda x: F.instance_norm(x),
    "dropout_eval": lambda x: F.dropout(x, 0.5, training=False),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_result_is_the_float32_op_rounded(name):
    fn = OPS[name]
    xb = X.bfloat16()
    got = fn(xb)
    assert got.dtype is ember.bfloat16
    expected = fn(xb.float()).bfloat16()
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


@pytest.mark.parametrize("name", ["gelu", "softmax", "layer_norm", "batch_norm", "silu"])
def test_gradients_reach_bfloat16_inputs(name):
    xb = X.bfloat16().requires_grad_()
    OPS[name](xb).float().square().sum().backward()
    assert xb.grad.dtype is ember.bfloat16
    x32 = xb.detach().float().requires_grad_()
    OPS[name](x32).bfloat16().float().square().sum().backward()
    np.testing.assert_allclose(xb.grad.float().numpy(), x32.grad.bfloat16().float().numpy(),
                               rtol=2e-2, atol=2e-2)


def test_batch_norm_updates_bfloat16_running_statistics():
    bn = ember.nn.BatchNorm2d(4).bfloat16()
    out = bn(X.bfloat16())
    assert out.dtype is ember.bfloat16 and bn.running_mean.dtype is ember.bfloat16
    mean = X.numpy().astype(np.float64).mean((0, 2, 3))
    np.testing.assert_allclose(bn.running_mean.float().numpy(), 0.1 * mean, rtol=2e-2,
                               atol=1e-3)
    assert int(bn.num_batches_tracked) == 1


def test_inplace_and_explicit_dtype():
    xb = X.bfloat16()
    y = xb.clone()
    r = F.elu(y, inplace=True)
    assert r is y and y.dtype is ember.bfloat16
    np.testing.assert_array_equal(y.float().numpy(), F.elu(xb).float().numpy())
    assert F.softmax(xb, 1, dtype=ember.float32).dtype is ember.float32  # as asked


def test_other_dtypes_are_untouched():
    for dt in (ember.float16, ember.float32, ember.float64):
        assert F.gelu(X.to(dt)).dtype is dt and F.layer_norm(X.to(dt), (2,)).dtype is dt
    with pytest.raises(NotImplementedError):
        F.gelu(ember.ones(2, dtype=ember.int64))


def test_autocast_convnet_step_runs():
    # conv (autocast: bfloat16) -> batch norm -> relu -> pooling -> linear, trained a step
    model = ember.nn.Sequential(
        ember.nn.Conv2d(4, 6, 3, padding=1), ember.nn.BatchNorm2d(6), ember.nn.ReLU(),
        ember.nn.AdaptiveAvgPool2d(1), ember.nn.Flatten(), ember.nn.Dropout(0.1),
        ember.nn.Linear(6, 3), ember.nn.LayerNorm(3), ember.nn.GELU())
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = model(X)
        loss = F.cross_entropy(out, ember.tensor([0, 2]))
    assert out.dtype is ember.bfloat16 and loss.dtype is ember.float32
    loss.backward()
    assert all(p.grad is not None and p.grad.dtype is ember.float32
               for p in model.parameters())
    opt.step()
