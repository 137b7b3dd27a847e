"""The Module system, containers, nn.init and nn.utils against torch 2.13, side by side.

The same module trees are built in both libraries (from tiny modules defined here, so
this runs whatever layers exist): reprs, names, state_dict keys, error messages and hook
arguments are compared; state_dicts travel from torch to ember with strict=True and back;
parametrized modules (weight_norm, spectral_norm) give torch's values. Skipped as a whole
when torch is not installed.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402

LIBS = {"torch": (torch, tnn), "ember": (ember, enn)}


def define(lib, nn):
    """The test modules, defined the same way for each library."""

    class Lin(nn.Module):
        def __init__(self, i, o, bias=True):
            super().__init__()
            self.in_features, self.out_features = i, o
            self.weight = nn.Parameter(lib.empty(o, i))
            self.bias = nn.Parameter(lib.empty(o)) if bias else None
            nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                nn.init.uniform_(self.bias, -1 / math.sqrt(i), 1 / math.sqrt(i))

        def forward(self, x):
            y = x @ self.weight.T
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return (f"in_features={self.in_features}, out_features={self.out_features}, "
                    f"bias={self.bias is not None}")

    class Norm(nn.Module):
        """Has a persistent and a non-persistent buffer and a two-line extra_repr."""

        def __init__(self, n):
            super().__init__()
            self.register_buffer("running_mean", lib.zeros(n))
            self.register_buffer("count", lib.tensor(0, dtype=lib.int64))
            self.register_buffer("scratch", lib.ones(n), persistent=False)
            self.scale = nn.Parameter(lib.ones(n))

        def forward(self, x):
            return (x - self.running_mean) * self.scale

        def extra_repr(self):
            return "n=?\nsecond line"

    class Two(nn.Module):
        """Several inputs (one a number) and outputs, for the backward hooks."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.tensor([2.0, -1.0, 0.5]))

        def forward(self, x, k, y):
            return (x * self.w).sin() * k + y * y, (x * y).sum()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(OrderedDict([
                ("fc1", Lin(4, 6)), ("norm", Norm(6)), ("flat", nn.Flatten(0)),
                ("unflat", nn.Unflatten(0, (2, 6)))]))
            self.blocks = nn.ModuleList([Lin(6, 6), Lin(6, 6), nn.Sequential(Lin(6, 3, False))])
            self.heads = nn.ModuleDict({"b": Lin(3, 2), "a": Lin(3, 1)})
            self.plist = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3, 2))])
            self.pdict = nn.ParameterDict({"y": lib.ones(1), "x": lib.zeros(2, 1, 3)})
            self.shared = self.blocks[0]

        def forward(self, x):
            x = self.features(x)
            for b in self.blocks:
                x = b(x)
            return self.heads["b"](x).sum() + self.heads["a"](x).sum() + self.plist[0].sum()

    return {"Lin": Lin, "Norm": Norm, "Two": Two, "Net": Net}


MODELS = {name: define(*LIBS[name]) for name in LIBS}


def same_text(t: str, e: str):
    # legacy type names (``torch.FloatTensor``) are torch's in both, as programs compare them
    assert e.replace("torch.", "ember.") == t.replace("torch", "ember")


def to_numpy(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def copy_torch_to_ember(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def nets():
    torch.manual_seed(0)
    return MODELS["torch"]["Net"](), MODELS["ember"]["Net"]()


# -- structure ------------------------------------------------------------------------------
def test_repr_names_and_keys():
    tm, em = nets()
    same_text(repr(tm), repr(em))
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(em, method)()] == [n for n, _ in getattr(tm, method)()]
    assert ([n for n, _ in em.named_parameters(remove_duplicate=False)]
            == [n for n, _ in tm.named_parameters(remove_duplicate=False)])
    assert ([n for n, _ in em.named_modules(remove_duplicate=False)]
            == [n for n, _ in tm.named_modules(remove_duplicate=False)])
    assert list(em.state_dict()) == list(tm.state_dict())
    assert dict(em.state_dict()._metadata) == dict(tm.state_dict()._metadata)
    for name in ("features", "blocks", "heads", "plist", "pdict", "shared", "training"):
        assert name in dir(em)
    assert [k for k in dir(em) if not k.startswith("_")] == [
        k for k in dir(tm) if not k.startswith("_") and k in dir(em)]


def test_container_reprs():
    for build in (
        lambda lib, nn, m: nn.ModuleList([m["Lin"](1, 1), m["Lin"](1, 1), m["Lin"](1, 2)]),
        lambda lib, nn, m: nn.Sequential(nn.Sequential(nn.Sequential(m["Norm"](2)))),
        lambda lib, nn, m: nn.ParameterList([lib.ones(2, 3, dtype=lib.float64), "s"]),
        lambda lib, nn, m: nn.ParameterDict({"q": lib.ones(2), "a": nn.Parameter(lib.ones(1))}),
        lambda lib, nn, m: nn.Sequential(),
        lambda lib, nn, m: nn.Unflatten(-1, lib.Size([2, 3])),
    ):
        same_text(repr(build(torch, tnn, MODELS["torch"])),
                  repr(build(ember, enn, MODELS["ember"])))


# -- state dicts --------------------------------------------------------------------------------
def test_state_dict_torch_to_ember_and_back():
    tm, em = nets()
    with torch.no_grad():
        tm.features.norm.running_mean.normal_()
        tm.features.norm.count.fill_(7)
    result = em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (k, t), (k2, e) in zip(tm.state_dict().items(), em.state_dict().items(), strict=True):
        assert k == k2 and str(t.dtype).split(".")[1] == str(e.dtype).split(".")[1]
        np.testing.assert_array_equal(t.numpy(), e.numpy())
    # the torch tensors themselves are accepted too
    em2 = MODELS["ember"]["Net"]()
    em2.load_state_dict(tm.state_dict())
    np.testing.assert_array_equal(em2.blocks[1].weight.detach().numpy(),
                                  tm.blocks[1].weight.detach().numpy())
    # and back
    tm2 = MODELS["torch"]["Net"]()
    tm2.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in
                         em.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(to_numpy(em(ember.tensor(x))), to_numpy(tm2(torch.tensor(x))),
                               rtol=1e-5)


def test_load_state_dict_messages():
    results = {}
    for name, (lib, _) in LIBS.items():
        m = MODELS[name]["Net"]()
        sd = m.state_dict()
        sd.pop("heads.a.bias")
        sd["blocks.0.weight"] = lib.zeros(2, 2)
        sd["features.norm.scratch"] = lib.ones(6)  # non-persistent: unexpected
        sd["nothing.here"] = lib.ones(1)
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd)
        results[name] = [str(info.value)]
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd, strict=False)
        results[name].append(str(info.value))
        del sd["blocks.0.weight"]
        r = m.load_state_dict(sd, strict=False)
        results[name].append((r.missing_keys, r.unexpected_keys))
    for t, e in zip(results["torch"], results["ember"], strict=True):
        same_text(str(t), str(e))


def test_load_state_dict_result_repr():
    reprs = []
    for name, (lib, _) in LIBS.items():
        m = MODELS[name]["Lin"](2, 2)
        reprs.append(repr(m.load_state_dict({"weight": lib.ones(2, 2), "x": lib.ones(1)},
                                            strict=False)))
    same_text(*reprs)


# -- hooks --------------------------------------------------------------------------------------
def test_backward_hooks_match_torch():
    logs = {}
    x0 = np.array([0.3, -1.2, 2.0])
    y0 = np.array([1.5, 0.2, -0.7])
    for name, (lib, _) in LIBS.items():
        m = MODELS[name]["Two"]().double()
        log = []

        def arr(gs):
            return [None if g is None else to_numpy(g) for g in gs]

        m.register_full_backward_pre_hook(lambda mod, go, log=log: log.append(("pre", arr(go))))
        m.register_full_backward_hook(
            lambda mod, gi, go, log=log: log.append(("hook", arr(gi), arr(go))))
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3, go[1]))
        x = lib.tensor(x0, requires_grad=True)
        y = lib.tensor(y0, requires_grad=True)
        a, b = m(x, 1.5, y)
        (a * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().add(b * 4).backward()
        log.append(("grads", arr([x.grad, y.grad, m.w.grad])))
        logs[name] = log
    assert [e[0] for e in logs["ember"]] == [e[0] for e in logs["torch"]]
    for t, e in zip(logs["torch"], logs["ember"], strict=True):
        for tg, eg in zip(t[1:], e[1:], strict=True):
            assert len(tg) == len(eg)
            for a, b in zip(tg, eg, strict=True):
                if a is None:
                    assert b is None
                else:
                    np.testing.assert_allclose(b, a, rtol=1e-12)


def test_forward_hook_arguments_match_torch():
    logs = {}
    for name, (lib, nn) in LIBS.items():
        m = MODELS[name]["Lin"](2, 2)
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
        log = []
        m.register_forward_pre_hook(lambda mod, args, log=log: log.append(("pre", len(args))))
        m.register_forward_pre_hook(lambda mod, args: args[0] * 2)
        m.register_forward_pre_hook(
            lambda mod, args, kw, log=log: log.append(("kw", sorted(kw))), with_kwargs=True)
        m.register_forward_hook(
            lambda mod, args, out, log=log: log.append(("post", out.tolist())))
        m.register_forward_hook(lambda mod, args, out: out + 1, prepend=True)
        log.append(("out", m(lib.ones(1, 2)).tolist()))
        logs[name] = log
    assert logs["ember"] == logs["torch"]


# -- parametrizations --------------------------------------------------------------------------
def test_weight_norm_matches_torch():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3))
    b0 = rng.standard_normal(4)
    x0 = rng.standard_normal((2, 3))
    for dim in (0, 1, None):
        res = {}
        for name, (lib, nn) in LIBS.items():
            m = MODELS[name]["Lin"](3, 4).double()
            with lib.no_grad():
                m.weight.copy_(lib.tensor(w0))
                m.bias.copy_(lib.tensor(b0))
            nn.utils.parametrizations.weight_norm(m, dim=dim)
            with lib.no_grad():
                m.parametrizations.weight.original0.mul_(1.5)
            out = m(lib.tensor(x0))
            out.pow(2).sum().backward()
            res[name] = [to_numpy(out), to_numpy(m.weight)] + [
                to_numpy(v) for v in m.state_dict().values()] + [
                to_numpy(p.grad) for p in m.parameters()]
            res[name + "keys"] = list(m.state_dict())
        assert res["emberkeys"] == res["torchkeys"]
        for t, e in zip(res["torch"], res["ember"], strict=True):
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_weight_norm_state_dict_from_torch():
    torch.manual_seed(0)
    tm = tnn.utils.parametrizations.weight_norm(MODELS["torch"]["Lin"](3, 4))
    em = enn.utils.parametrizations.weight_norm(MODELS["ember"]["Lin"](3, 4))
    copy_torch_to_ember(tm, em)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(to_numpy(em(ember.tensor(x))), to_numpy(tm(torch.tensor(x))),
                               rtol=1e-6)


@pytest.mark.parametrize("shape, dim", [((5, 4), None), ((3, 4, 2, 2), None),
                                        ((3, 4, 2, 2), 1), ((6,), None)])
def test_spectral_norm_matches_torch(shape, dim):
    """With torch's u and v (loaded through the state_dict), training and eval mode give
    torch's weights, updated vectors and gradients."""
    w0 = np.random.default_rng(1).standard_normal(shape)
    res = {}
    for name, (lib, nn) in LIBS.items():
        m = nn.Module()
        m.weight = nn.Parameter(lib.tensor(w0))
        nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2, dim=dim)
        res[name] = m
    tm, em = res["torch"], res["ember"]
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for mode in ("train", "eval"):
        getattr(tm, mode)()
        getattr(em, mode)()
        tw, ew = tm.weight, em.weight
        np.testing.assert_allclose(to_numpy(ew), to_numpy(tw), rtol=1e-10)
        for (k, t), e in zip(tm.state_dict().items(), em.state_dict().values(), strict=True):
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-14, err_msg=k)
        g = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        (tw * torch.tensor(g)).sum().backward()
        (ew * ember.tensor(g)).sum().backward()
        np.testing.assert_allclose(em.parametrizations.weight.original.grad.numpy(),
                                   tm.parametrizations.weight.original.grad.numpy(),
                                   rtol=1e-8, atol=1e-12)


def test_parametrize_layout_matches_torch():
    texts = {}
    for name, (_, nn) in LIBS.items():
        class Sym(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        class Neg(nn.Module):
            def forward(self, X):
                return -X

            def right_inverse(self, X):
                return -X

        m = nn.Sequential(MODELS[name]["Lin"](3, 3), MODELS[name]["Norm"](3))
        nn.utils.parametrize.register_parametrization(m[0], "weight", Sym())
        nn.utils.parametrize.register_parametrization(m[0], "weight", Neg())
        nn.utils.parametrize.register_parametrization(m[1], "running_mean", Neg())
        texts[name] = (repr(m), list(m.state_dict()), [n for n, _ in m.named_parameters()],
                       [n for n, _ in m.named_buffers()], type(m[0]).__name__)
    same_text(str(texts["torch"]), str(texts["ember"]))


# -- init ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (2, 3, 4, 5), (6, 1, 1, 1, 2), (0, 3)])
def test_fans_match_torch(shape):
    assert (enn.init._calculate_fan_in_and_fan_out(ember.empty(shape))
            == tnn.init._calculate_fan_in_and_fan_out(torch.empty(shape)))
    for mode in ("fan_in", "fan_out"):
        assert (enn.init._calculate_correct_fan(ember.empty(shape), mode)
                == tnn.init._calculate_correct_fan(torch.empty(shape), mode))


def test_gains_match_torch():
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
        assert enn.init.calculate_gain(name) == tnn.init.calculate_gain(name)
    for param in (0.2, 1, 0, None):
        assert (enn.init.calculate_gain("leaky_relu", param)
                == tnn.init.calculate_gain("leaky_relu", param))


def test_deterministic_inits_match_torch():
    cases = [("eye_", (3, 5), ()), ("eye_", (4, 2), ()), ("dirac_", (6, 3, 3), ()),
             ("dirac_", (4, 4, 3, 3), (2,)), ("dirac_", (2, 2, 3, 3, 3), ()),
             ("constant_", (2, 3), (0.25,)), ("ones_", (2,), ()), ("zeros_", (2,), ())]
    for fn, shape, args in cases:
        t = getattr(tnn.init, fn)(torch.empty(shape), *args)
        e = getattr(enn.init, fn)(ember.empty(shape), *args)
        np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=fn)


@pytest.mark.parametrize("fn, kwargs", [
    ("uniform_", dict(a=-1.0, b=2.0)), ("normal_", dict(mean=1.0, std=2.0)),
    ("trunc_normal_", dict(std=0.5, a=-0.7, b=0.4)), ("trunc_normal_", dict(a=1.5, b=2.5)),
    ("xavier_uniform_", dict(gain=2.0)), ("xavier_normal_", dict()),
    ("kaiming_uniform_", dict(a=math.sqrt(5))),
    ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu")),
    ("orthogonal_", dict(gain=0.5)), ("sparse_", dict(sparsity=0.3, std=0.2)),
])
def test_random_inits_same_distribution_as_torch(fn, kwargs):
    """Two-sample Kolmogorov-Smirnov distance between 40,000 ember and torch samples."""
    torch.manual_seed(0)
    shape = (200, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(tnn.init, fn)(torch.empty(shape), **kwargs).numpy().ravel()
    e = getattr(enn.init, fn)(ember.empty(shape), generator=ember.Generator().manual_seed(0),
                              **kwargs).numpy().ravel()
    grid = np.sort(np.concatenate([t, e]))
    cdf_t = np.searchsorted(np.sort(t), grid, side="right") / t.size
    cdf_e = np.searchsorted(np.sort(e), grid, side="right") / e.size
    assert np.abs(cdf_t - cdf_e).max() < 0.015  # ~ the 99.9% KS critical value is 0.0138


# -- utils --------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.1, 1000.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), (2, 2, 2), ()]]
    res = {}
    for name, (lib, nn) in LIBS.items():
        ps = [nn.Parameter(lib.zeros(g.shape)) for g in grads]
        for p, g in zip(ps, grads, strict=True):
            p.grad = lib.tensor(g)
        total = nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        res[name] = [to_numpy(total)] + [to_numpy(p.grad) for p in ps]
    for t, e in zip(res["torch"], res["ember"], strict=True):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_vectors_match_torch():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,)]]
    res = {}
    for name, (lib, nn) in LIBS.items():
        ps = [nn.Parameter(lib.tensor(a)) for a in arrays]
        for p, a in zip(ps, arrays, strict=True):
            p.grad = lib.tensor(a * 3)
        nn.utils.clip_grad_value_(ps, 1.5)
        vec = nn.utils.parameters_to_vector(ps)
        nn.utils.vector_to_parameters(vec * 2, ps)
        res[name] = [to_numpy(p.grad) for p in ps] + [to_numpy(vec)] + [to_numpy(p) for p in ps]
    for t, e in zip(res["torch"], res["ember"], strict=True):
        np.testing.assert_array_equal(e, t)


def test_training_step_with_clipping_matches_torch():
    """A forward/backward/clip/SGD-by-hand step of the whole test network."""
    tm, em = nets()
    copy_torch_to_ember(tm, em)
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    for lib, nn, m in ((torch, tnn, tm), (ember, enn, em)):
        m.zero_grad()
        m(lib.tensor(x)).backward()
        nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        with lib.no_grad():
            for p in m.parameters():
                if p.grad is not None:
                    p.sub_(p.grad * 0.1)
    for (k, t), e in zip(tm.state_dict().items(), em.state_dict().values(), strict=True):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
