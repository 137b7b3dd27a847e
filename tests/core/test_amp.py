"""ember.amp: autocast really casts the ops PyTorch casts (checked against NumPy with
ml_dtypes' bfloat16), keeps float32 gradients, and GradScaler's dynamic loss scaling."""

import pickle

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

ml_dtypes = pytest.importorskip("ml_dtypes")
bf16 = ml_dtypes.bfloat16


def _round(a):
    return a.astype(bf16).astype(np.float32)


def test_autocast_state():
    assert not ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled()
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.get_autocast_dtype("cuda") == ember.float16
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and ember.is_autocast_cpu_enabled()
        assert not ember.is_autocast_enabled()  # no argument: CUDA, as in PyTorch
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
        assert ember.is_autocast_enabled("cpu")
    assert not ember.is_autocast_enabled("cpu")
    assert ember.amp.is_autocast_available("cpu") and not ember.amp.is_autocast_available("xpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ember.autocast("xyz")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with ember.autocast("cpu", dtype=ember.float32):
            assert not ember.is_autocast_enabled("cpu")


def test_autocast_cuda_without_a_gpu_warns_and_does_nothing():
    if ember.cuda.is_available():
        pytest.skip("a GPU is there")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with ember.autocast("cuda"):
            assert not ember.is_autocast_enabled("cuda")


def test_lower_precision_ops_match_bfloat16_products():
    rng = np.random.default_rng(0)
    xa, wa, ba = (rng.standard_normal(s).astype(np.float32) for s in ((5, 7), (3, 7), (3,)))
    x, w, b = ember.tensor(xa), ember.tensor(wa), ember.tensor(ba)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        y = F.linear(x, w, b)
        m = x @ w.T
        mm = x.mm(w.T)
        s = x + 1.0          # not an autocast op
        d = ember.tensor(xa.astype(np.float64)) @ ember.tensor(wa.T.astype(np.float64))
    assert y.dtype == m.dtype == mm.dtype == ember.bfloat16
    assert s.dtype == ember.float32 and d.dtype == ember.float64  # float64 is left alone
    want = (_round(xa) @ _round(wa).T + _round(ba)).astype(bf16)
    np.testing.assert_allclose(y.float().numpy(), want.astype(np.float32), rtol=1e-2, atol=1e-2)
    want_m = (_round(xa) @ _round(wa).T).astype(bf16).astype(np.float32)
    np.testing.assert_array_equal(m.float().numpy(), want_m)
    np.testing.assert_array_equal(mm.float().numpy(), want_m)


def test_modules_and_convolutions_are_cast():
    ember.manual_seed(0)
    conv, lin = nn.Conv2d(2, 3, 3), nn.Linear(4, 2)
    with ember.autocast("cpu"):
        c = conv(ember.randn(1, 2, 5, 5))
        t = nn.ConvTranspose1d(2, 2, 3)(ember.randn(1, 2, 4))
        y = lin(ember.randn(2, 4))
        loss = F.cross_entropy(y, ember.tensor([0, 1]))   # an fp32 op: bfloat16 in, float32 out
        mse = F.mse_loss(y, ember.zeros(2, 2))
    assert c.dtype == t.dtype == y.dtype == ember.bfloat16
    assert loss.dtype == mse.dtype == ember.float32
    loss.backward()
    assert lin.weight.grad.dtype == ember.float32 and lin.bias.grad.dtype == ember.float32


def test_gradients_flow_to_float32_parameters():
    rng = np.random.default_rng(1)
    xa, wa = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(
        np.float32)
    w = ember.tensor(wa, requires_grad=True)
    with ember.autocast("cpu"):
        y = F.linear(ember.tensor(xa), w)
    y.float().sum().backward()
    assert w.grad.dtype == ember.float32
    # d/dW sum(x W^T) = ones^T x, computed from the bfloat16-rounded x, rounded to bfloat16
    want = (np.ones((4, 2), np.float32).T @ _round(xa)).astype(bf16).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-2)


def test_weight_casts_are_cached_in_a_region():
    from ember.amp import autocast_mode

    lin = nn.Linear(3, 3)
    with ember.autocast("cpu"):
        lin(ember.ones(1, 3))
        lin(ember.ones(1, 3))
        assert id(lin.weight) in autocast_mode._state.cache
        n = len(autocast_mode._state.cache)
        lin(ember.ones(1, 3))
        assert len(autocast_mode._state.cache) == n
    assert autocast_mode._state.cache == {}
    with ember.autocast("cpu", cache_enabled=False):
        lin(ember.ones(1, 3))
        assert autocast_mode._state.cache == {}


def test_autocast_as_decorator_and_custom_fwd():
    @ember.autocast("cpu")
    def f(x):
        return x @ x

    assert f(ember.ones(2, 2)).dtype == ember.bfloat16

    class Double(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, x):
            ctx.inner = ember.is_autocast_enabled("cpu")
            return x @ x

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g

    with ember.autocast("cpu"):
        out = Double.apply(ember.ones(2, 2, dtype=ember.bfloat16))
    assert out.dtype == ember.float32


# -- GradScaler -----------------------------------------------------------------------------------

def _model_and_opt():
    ember.manual_seed(0)
    model = nn.Linear(3, 1)
    return model, ember.optim.SGD(model.parameters(), lr=0.1)


def test_grad_scaler_scales_unscales_and_steps():
    model, opt = _model_and_opt()
    scaler = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    w0 = model.weight.detach().clone()
    loss = model(ember.ones(2, 3)).sum()
    scaled = scaler.scale(loss)
    np.testing.assert_allclose(scaled.item(), 8.0 * loss.item(), rtol=1e-6)
    scaled.backward()
    np.testing.assert_allclose(model.weight.grad.numpy(), np.full((1, 3), 16.0))
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.numpy(), np.full((1, 3), 2.0))
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    np.testing.assert_allclose(model.weight.detach().numpy(), w0.numpy() - 0.2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 1
    for _ in range(1):
        opt.zero_grad()
        scaler.scale(model(ember.ones(1, 3)).sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 16.0  # grew after growth_interval good steps


def test_grad_scaler_skips_steps_with_inf_and_backs_off():
    model, opt = _model_and_opt()
    scaler = ember.amp.GradScaler("cpu", init_scale=4.0)
    w0 = model.weight.detach().clone()
    scaler.scale(model(ember.ones(1, 3)).sum()).backward()
    model.weight.grad.data[0, 0] = float("inf")
    assert scaler.step(opt) is None
    np.testing.assert_array_equal(model.weight.detach().numpy(), w0.numpy())
    scaler.update()
    assert scaler.get_scale() == 2.0
    assert scaler.state_dict() == {"scale": 2.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2000, "_growth_tracker": 0}
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 2.0
    assert pickle.loads(pickle.dumps(scaler)).get_scale() == 2.0
    scaler.update(new_scale=ember.tensor(64.0))
    assert scaler.get_scale() == 64.0


def test_grad_scaler_disabled_and_errors():
    model, opt = _model_and_opt()
    off = ember.amp.GradScaler("cpu", enabled=False)
    loss = model(ember.ones(1, 3)).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    loss.backward()
    off.step(opt)
    off.update()
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        ember.amp.GradScaler("cpu").load_state_dict({})
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        ember.amp.GradScaler("cpu").step(opt)
    if not ember.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not ember.amp.GradScaler().is_enabled()
    s = ember.amp.GradScaler("cpu")
    s.scale(ember.ones(1))
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0.0)
