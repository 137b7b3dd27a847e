"""BatchNorm's running statistics against PyTorch over many steps: the batch mean and
variance are summed in double (two passes) and the unbiased variance is rounded once into
the buffers, so after hundreds of updates ember's buffers stay within float32 rounding of
PyTorch's and of a float64 reference."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _batches(steps, shape, seed=0):
    rng = np.random.default_rng(seed)
    for t in range(steps):
        # activations with a large common offset and a drifting scale: the case where
        # one-pass float32 sums lose digits
        scale = 0.5 + 0.4 * np.sin(t / 7)
        yield (rng.standard_normal(shape) * scale + 40.0 + t / 50).astype(np.float32)


@pytest.mark.parametrize(("shape", "momentum"), [((16, 8, 12, 12), 0.1), ((64, 24), 0.1),
                                               ((4, 6, 300), None)])
def test_running_stats_drift(shape, momentum):
    steps = 150
    cls = "BatchNorm2d" if len(shape) == 4 else "BatchNorm1d"
    e = getattr(ember.nn, cls)(shape[1], momentum=momentum)
    t = getattr(torch.nn, cls)(shape[1], momentum=momentum)
    ref = getattr(torch.nn, cls)(shape[1], momentum=momentum).double()
    for x in _batches(steps, shape):
        e(ember.tensor(x))
        t(torch.tensor(x))
        ref(torch.tensor(x.astype(np.float64)))
    for name in ("running_mean", "running_var"):
        want = getattr(ref, name).numpy()
        got_e = getattr(e, name).numpy().astype(np.float64)
        got_t = getattr(t, name).detach().numpy().astype(np.float64)
        err_e = np.max(np.abs(got_e - want) / np.abs(want))
        err_t = np.max(np.abs(got_t - want) / np.abs(want))
        # float32 buffers updated 150 times: a few ulps of float32 at most, and no
        # further from the float64 reference than PyTorch's (half an ulp of margin)
        assert err_e < 5e-7, (name, err_e)
        assert err_e <= err_t + 6e-8, (name, err_e, err_t)
        np.testing.assert_allclose(got_e, got_t, rtol=1e-6)
    assert int(e.num_batches_tracked) == int(t.num_batches_tracked) == steps


def test_conv_net_sgd_running_stats():
    # 15 SGD steps of a small conv net from the same weights: the running statistics
    # follow PyTorch's closely (SGD does not amplify rounding as Adam does on the biases
    # that a following batch norm makes gradient-free)
    def make(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    torch.manual_seed(0)
    tm = make(torch)
    em = make(ember)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    to = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    eo = ember.optim.SGD(em.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(1)
    for _ in range(15):
        x = (rng.standard_normal((8, 3, 8, 8)) * 2 + 1).astype(np.float32)
        y = rng.integers(0, 4, 8)
        for m, o, lib in ((tm, to, torch), (em, eo, ember)):
            o.zero_grad()
            lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y)).backward()
            o.step()
    for name in ("1.running_var", "4.running_var", "1.running_mean", "4.running_mean"):
        want = tm.state_dict()[name].numpy()
        got = em.state_dict()[name].numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_conv_net_adam_running_stats():
    # the case: 20 Adam steps of a conv net with batch norms. The biases of the
    # convolutions before a batch norm have no gradient in exact arithmetic, so Adam
    # moves them by rounding noise and the running means differ between any two float32
    # libraries; the running variances must follow PyTorch's closely (they differed by
    # ~2e-4 relative on 32x32 inputs while Adam formed 1 - beta2 in float32, ~3e-5 now)
    def make(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                             nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    torch.manual_seed(0)
    tm = make(torch)
    em = make(ember)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    to = torch.optim.Adam(tm.parameters(), 1e-3)
    eo = ember.optim.Adam(em.parameters(), 1e-3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.standard_normal((16, 3, 16, 16)).astype(np.float32) * 2 + 1
        y = rng.integers(0, 10, 16)
        for m, o, lib in ((tm, to, torch), (em, eo, ember)):
            o.zero_grad()
            lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y)).backward()
            o.step()
    for name in ("1.running_var", "4.running_var"):
        want = tm.state_dict()[name].numpy()
        got = em.state_dict()[name].numpy()
        rel = np.abs(got - want).max() / np.abs(want).max()
        assert rel < 1e-5, (name, rel)


@pytest.mark.parametrize(("name", "kwargs"), [
    ("Adam", {}), ("AdamW", {"weight_decay": 0.1}), ("Adam", {"amsgrad": True}),
    ("NAdam", {}), ("RAdam", {}), ("Adamax", {}), ("RMSprop", {"alpha": 0.999}),
    ("RMSprop", {"centered": True, "momentum": 0.5}), ("Adadelta", {"rho": 0.999})])
def test_moment_averages_like_torch(name, kwargs):
    # the averaging weights 1 - beta are formed in double and rounded once, as PyTorch's
    # (formed in float32, 1 - 0.999f is 1.0000467e-3: the second moments, and so every
    # Adam step, were off by ~1e-5 relative, which Adam's normalization then amplifies)
    rng = np.random.default_rng(0)
    grads = rng.standard_normal((12, 64)).astype(np.float32)
    w0 = rng.standard_normal(64).astype(np.float32)
    results = []
    for lib in (torch, ember):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.01, **kwargs)
        for g in grads:
            w.grad = lib.tensor(g)
            opt.step()
        results.append(w.detach().numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)
