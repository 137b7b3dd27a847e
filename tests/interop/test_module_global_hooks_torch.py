"""The global module hooks of nn.modules.module (backward and registration) against torch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(lib):
    mm = lib.nn.modules.module
    calls = []
    lib.manual_seed(0)
    h1 = mm.register_module_full_backward_pre_hook(
        lambda m, go: calls.append(("pre", type(m).__name__, len(go))))
    h2 = mm.register_module_full_backward_hook(
        lambda m, gi, go: calls.append(("bw", type(m).__name__, len(gi), len(go))))
    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
    with torch.no_grad() if lib is torch else ember.no_grad():
        net[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        net[0].bias.zero_()
    x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    net(x).sum().backward()
    h1.remove()
    h2.remove()
    net(x).sum().backward()  # removed: no more calls
    return calls, x.grad.numpy()


def test_global_backward_hooks_match_torch():
    ours, g1 = _run(ember)
    theirs, g2 = _run(torch)
    assert ours == theirs
    np.testing.assert_allclose(g1, g2, rtol=1e-6)


def _registrations(lib):
    mm = lib.nn.modules.module
    seen = []

    def on_param(m, name, p):
        seen.append(("param", type(m).__name__, name))

    def on_buffer(m, name, b):
        seen.append(("buffer", type(m).__name__, name))
        return b * 0 if b is not None else None  # a replacement is registered

    def on_module(m, name, sub):
        seen.append(("module", type(m).__name__, name))

    hs = [mm.register_module_parameter_registration_hook(on_param),
          mm.register_module_buffer_registration_hook(on_buffer),
          mm.register_module_module_registration_hook(on_module)]
    try:
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        net.extra = lib.nn.Identity()
        net.register_buffer("scale", lib.ones(2))
    finally:
        for h in hs:
            h.remove()
    lib.nn.Linear(1, 1)  # after removal: nothing
    return seen, net.scale.numpy(), net[1].running_var.numpy()


def test_global_registration_hooks_match_torch():
    ours = _registrations(ember)
    theirs = _registrations(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])


@pytest.mark.parametrize("kwargs", [
    None, {}, {"device": "cpu"}, {"dtype": "f", "factory_kwargs": {"device": "cpu"}},
    {"memory_format": 1, "device": "cpu", "dtype": 2},
])
def test_factory_kwargs_as_torch(kwargs):
    assert ember.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)


@pytest.mark.parametrize("kwargs", [{"bogus": 1}, {"device": "cpu",
                                                   "factory_kwargs": {"device": "cpu"}}])
def test_factory_kwargs_errors_as_torch(kwargs):
    with pytest.raises(TypeError) as theirs:
        torch.nn.factory_kwargs(kwargs)
    with pytest.raises(TypeError) as ours:
        ember.nn.factory_kwargs(kwargs)
    assert str(ours.value) == str(theirs.value)


def test_chalf_refuses_clearly():
    with pytest.raises(TypeError, match="complex32"):
        ember.ones(2).chalf()
    assert torch.ones(2).chalf().dtype == torch.complex32  # what ember cannot give


def test_slice_inverse_as_torch():
    x, ex = torch.arange(12.).reshape(3, 4), ember.arange(12.).reshape(3, 4)
    for d, a, b in ((1, 1, 3), (0, 1, 3), (1, 0, 4)):
        want = torch.slice_inverse(x.narrow(d, a, b - a), x, d, a, b)
        got = ember.slice_inverse(ex.narrow(d, a, b - a), ex, d, a, b)
        assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("index", [
    (range(1, 2),), (slice(None), range(2)), (range(0),), (range(1), range(2)),
    (Ellipsis, range(3, 0, -1)),
])
def test_a_range_indexes_as_torch(index):
    x, t = ember.arange(24.).reshape(2, 3, 4), torch.arange(24.).reshape(2, 3, 4)
    np.testing.assert_array_equal(x[index].numpy(), t[index].numpy())
    x[index] = -1.0
    t[index] = -1.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_shapes_as_torch_size_everywhere():
    S, TS = ember.Size([4, 6]), torch.Size([4, 6])
    x, t = ember.arange(24.), torch.arange(24.)
    for fn in (lambda L, x, S: x.reshape(S), lambda L, x, S: x.view(S),
               lambda L, x, S: x.new_zeros(S), lambda L, x, S: x.new_full(S, 1.0),
               lambda L, x, S: L.zeros(S), lambda L, x, S: L.full(S, 2.0),
               lambda L, x, S: L.broadcast_to(L.ones(6), S),
               lambda L, x, S: L.ones(1, 6).expand(S), lambda L, x, S: L.ones(2).tile(S),
               lambda L, x, S: L.ones(2).repeat(S), lambda L, x, S: L.randn(S)):
        assert tuple(fn(ember, x, S).shape) == tuple(fn(torch, t, TS).shape)
