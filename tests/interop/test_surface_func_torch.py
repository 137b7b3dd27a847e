"""ember.func, ember.utils.checkpoint and ember.autograd.graph against torch 2.13: names,
signatures, numbers (float64) and errors."""

import inspect
import warnings

import numpy as np
import pytest

import ember
import ember.autograd.graph as eg
import ember.func as ef
import ember.nn as enn
import ember.utils.checkpoint as ec

torch = pytest.importorskip("torch")
import torch.autograd.graph as tg  # noqa: E402
import torch.func as tf  # noqa: E402
import torch.utils.checkpoint as tc  # noqa: E402

# Public names ember leaves out, with the reason (kept short; the report explains them).
MISSING = {
    "torch.utils.checkpoint": {
        "SAC_IGNORED_OPS": "a set of torch.ops overloads",
    },
    "torch.autograd": {
        "NestedIOFunction": "legacy instance-style Function",
    },
}


def _public(mod):
    return set(getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")])


@pytest.mark.parametrize("theirs,mine", [(tf, ef), (tc, ec), (tg, eg), (torch.autograd,
                                                                         ember.autograd)],
                         ids=["func", "checkpoint", "autograd.graph", "autograd"])
def test_every_public_name_is_there(theirs, mine):
    missing = {n for n in _public(theirs) if not hasattr(mine, n)}
    assert missing == set(MISSING.get(theirs.__name__, {})), theirs.__name__
    assert set(MISSING.get(theirs.__name__, {})) <= _public(theirs)


def test_top_level_and_tensor_names():
    for name in ("vmap", "is_inference", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
                 "set_anomaly_enabled"):
        assert hasattr(ember, name), name
    for name in ("is_inference", "register_post_accumulate_grad_hook"):
        assert hasattr(ember.Tensor, name), name
    assert hasattr(ember.nn.utils.stateless, "functional_call")


def _params(fn):
    target = fn.__init__ if inspect.isclass(fn) else fn
    out = []
    for p in inspect.signature(target).parameters.values():
        d = p.default
        if callable(d) and not isinstance(d, type):
            d = d.__name__
        out.append((p.name, p.kind, None if d is inspect.Parameter.empty else repr(d)))
    return out


SIGNATURES = (
    [(tf, ef, n) for n in tf.__all__]
    + [(tc, ec, n) for n in tc.__all__ if n not in MISSING["torch.utils.checkpoint"]
       and n not in ("CheckpointPolicy", "SAC_IGNORED_OPS", "CheckpointError", "GraphExecGroup",
                     "DefaultDeviceType", "CheckpointFunction")]
    + [(tg, eg, n) for n in tg.__all__ if n not in ("Node", "GradientEdge")]
    + [(torch.nn.utils.stateless, ember.nn.utils.stateless, "functional_call")]
    + [(torch.autograd, ember.autograd, n) for n in ("set_multithreading_enabled",
                                                     "enforce_grad_layout_policy")]
    + [(torch, ember, "vmap")])


@pytest.mark.parametrize("theirs,mine,name", SIGNATURES,
                         ids=[f"{t.__name__}.{n}" for t, _, n in SIGNATURES])
def test_signatures(theirs, mine, name):
    assert _params(getattr(mine, name)) == _params(getattr(theirs, name))


def test_gradient_edge_fields_and_post_accumulate_signature():
    assert eg.GradientEdge._fields == tg.GradientEdge._fields
    assert (list(inspect.signature(ember.Tensor.register_post_accumulate_grad_hook).parameters)
            == ["self", "hook"])
    assert [p.name for p in ec.CheckpointPolicy] == [p.name for p in tc.CheckpointPolicy]


# ----------------------------------------------------------------------------
# numbers

def E(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def to_np(x):
    if isinstance(x, (tuple, list)):
        return [to_np(v) for v in x]
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    return x.detach().numpy()


def assert_tree_close(a, b, rtol=1e-12, atol=1e-13):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_tree_close(x, y, rtol, atol)
    elif isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            assert_tree_close(a[k], b[k], rtol, atol)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def f_lib(lib):
    def f(x, y):
        return ((x.sin() * y).tanh() + x * x.exp()).sum() + (y ** 3).sum() * x[0]
    return f


def g_lib(lib):
    def g(x, y):
        return (x[:, None] * y[None, :]).sin(), (x ** 2).sum()
    return g


XA = np.array([0.3, -0.7, 1.1])
YA = np.array([0.9, 0.2, -0.4])


@pytest.mark.parametrize("transform,kwargs", [
    ("grad", {}), ("grad", {"argnums": (0, 1)}), ("grad", {"argnums": 1}),
    ("jacrev", {}), ("jacrev", {"argnums": (0, 1)}), ("jacfwd", {}),
    ("jacfwd", {"argnums": (0, 1)}), ("hessian", {}), ("hessian", {"argnums": (0, 1)}),
])
def test_transforms_match_torch(transform, kwargs):
    for fn in (f_lib, g_lib):
        if transform in ("grad", "hessian") and fn is g_lib:
            continue
        mine = getattr(ef, transform)(fn(ember), **kwargs)(E(XA), E(YA))
        theirs = getattr(tf, transform)(fn(torch), **kwargs)(T(XA), T(YA))
        assert_tree_close(to_np(mine), to_np(theirs))


def test_composed_transforms_match_torch():
    def f(x):
        return (x.sin() * x.cos() * x).sum()
    for compose in (lambda m: m.jacrev(m.jacrev(f)), lambda m: m.vmap(m.grad(f)),
                    lambda m: m.jacfwd(m.grad(f)), lambda m: m.vmap(m.jacrev(f))):
        x = np.linspace(-1, 1, 6).reshape(2, 3)
        mine = compose(ef)(E(x))
        theirs = compose(tf)(T(x))
        assert_tree_close(to_np(mine), to_np(theirs))


def test_vjp_jvp_linearize_match_torch():
    ct = (np.arange(9.0).reshape(3, 3) / 9, np.array(0.7))
    tan = (np.array([1.0, -0.5, 0.25]), np.array([0.5, 0.5, -1.0]))
    out_e, fn_e = ef.vjp(g_lib(ember), E(XA), E(YA))
    out_t, fn_t = tf.vjp(g_lib(torch), T(XA), T(YA))
    assert_tree_close(to_np(out_e), to_np(out_t))
    assert_tree_close(to_np(fn_e((E(ct[0]), E(ct[1])))), to_np(fn_t((T(ct[0]), T(ct[1])))))
    je = ef.jvp(g_lib(ember), (E(XA), E(YA)), (E(tan[0]), E(tan[1])))
    jt = tf.jvp(g_lib(torch), (T(XA), T(YA)), (T(tan[0]), T(tan[1])))
    assert_tree_close(to_np(je), to_np(jt))
    _, le = ef.linearize(lambda x: g_lib(ember)(x, E(YA)), E(XA))
    _, lt = tf.linearize(lambda x: g_lib(torch)(x, T(YA)), T(XA))
    assert_tree_close(to_np(le(E(tan[0]))), to_np(lt(T(tan[0]))))


def test_vmap_dims_match_torch():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(8.0).reshape(4, 2)
    cases = [
        (lambda m: m.vmap(lambda x, y: x @ y, in_dims=(0, None))),
        (lambda m: m.vmap(lambda x, y: x @ y, in_dims=(1, None), out_dims=2)),
        (lambda m: m.vmap(lambda x, y: (x.sum(0), y * 2), in_dims=(2, 1), out_dims=(0, 1))),
        (lambda m: m.vmap(m.vmap(lambda x, y: x.sum() * y, in_dims=(0, None)),
                          in_dims=(0, None))),
    ]
    for make in cases:
        mine = make(ef)(E(a), E(b) if make is not cases[2] else E(np.ones((3, 4))))
        theirs = make(tf)(T(a), T(b) if make is not cases[2] else T(np.ones((3, 4))))
        assert_tree_close(to_np(mine), to_np(theirs))


def _mlp(lib, seed=0):
    rng = np.random.default_rng(seed)
    nn = lib.nn
    m = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()
    with (torch.no_grad() if lib is torch else ember.no_grad()):
        for p in m.parameters():
            p.copy_((T if lib is torch else E)(rng.standard_normal(tuple(p.shape))))
    return m


def test_per_sample_grads_and_ensembles_match_torch():
    x = np.random.default_rng(1).standard_normal((4, 3))
    t = np.random.default_rng(2).standard_normal((4, 2))

    def per_sample(lib, fn):
        model = _mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, ti):
            out = fn.functional_call(model, p, (xi.unsqueeze(0),))
            return ((out - ti.unsqueeze(0)) ** 2).sum()
        conv = T if lib is torch else E
        return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, conv(x), conv(t))
    assert_tree_close(to_np(per_sample(ember, ef)), to_np(per_sample(torch, tf)))

    def ensemble(lib, fn):
        models = [_mlp(lib, seed=s) for s in range(3)]
        params, buffers = fn.stack_module_state(models)
        conv = T if lib is torch else E
        return fn.vmap(lambda p, b: fn.functional_call(models[0], (p, b), (conv(x),)))(
            params, buffers)
    assert_tree_close(to_np(ensemble(ember, ef)), to_np(ensemble(torch, tf)))


def test_rearrange_matches_torch():
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    for pattern, kw in [("b c h w -> b (h w) c", {}), ("b c (h1 h2) w -> (b h1) c h2 w",
                                                         {"h2": 2}),
                        ("b ... w -> w (...) b", {}), ("b c h w -> b 1 c () h w", {})]:
        np.testing.assert_array_equal(ef.rearrange(E(a), pattern, **kw).numpy(),
                                      tf.rearrange(T(a), pattern, **kw).numpy())


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gradients_match_torch(reentrant):
    x = np.random.default_rng(3).standard_normal((4, 3))
    results = []
    for lib, mod in ((ember, ec), (torch, tc)):
        model = _mlp(lib)
        xi = (T if lib is torch else E)(x).requires_grad_()
        out = mod.checkpoint_sequential(model, 2, xi, use_reentrant=reentrant)
        out2 = mod.checkpoint(lambda z: (z * z).sum(), out, use_reentrant=reentrant)
        out2.backward()
        results.append([xi.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    assert_tree_close(*results)


def test_saved_tensor_hooks_and_multi_grad_hook_match_torch():
    got = []
    for lib, g in ((ember, eg), (torch, tg)):
        conv = T if lib is torch else E
        a, b, c = (conv(XA).requires_grad_() for _ in range(3))
        calls = []
        g.register_multi_grad_hook((a, b, c), lambda grads, calls=calls: calls.append(
            [None if v is None else v.numpy().copy() for v in grads]))
        with g.save_on_cpu():
            y = (a.sin() * b).sum()
        y.backward()
        got.append((calls[0][:2], calls[0][2] is None, a.grad.numpy(), len(calls)))
    (ge, ne, ae, ce), (gt, nt, at, ct) = got
    assert_tree_close(ge, gt)
    assert ne == nt and ce == ct
    np.testing.assert_allclose(ae, at, rtol=1e-13)


def test_errors_match_torch():
    def both(call_e, call_t):
        with pytest.raises(Exception) as ee:
            call_e()
        with pytest.raises(Exception) as et:
            call_t()
        assert type(ee.value) is type(et.value)
        return str(ee.value), str(et.value)
    me, mt = both(lambda: ef.grad(lambda x: x * 2)(E(XA)),
                  lambda: tf.grad(lambda x: x * 2)(T(XA)))
    assert me == mt
    me, mt = both(lambda: ef.vmap(ember.add)(E(np.ones(2)), E(np.ones(3))),
                  lambda: tf.vmap(torch.add)(T(np.ones(2)), T(np.ones(3))))
    assert me == mt
    both(lambda: ef.jacrev(ember.sin, chunk_size=0), lambda: tf.jacrev(torch.sin, chunk_size=0))
    both(lambda: ef.stack_module_state([]), lambda: tf.stack_module_state([]))
    both(lambda: ef.vmap(ember.sin, randomness="x"), lambda: tf.vmap(torch.sin, randomness="x"))
    me, mt = both(lambda: ef.vmap(lambda x: 3)(E(np.ones(2))),
                  lambda: tf.vmap(lambda x: 3)(T(np.ones(2))))
    assert me == mt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda: eg.get_gradient_edge(E(XA)), lambda: tg.get_gradient_edge(T(XA)))
        both(lambda: ec.checkpoint(ember.sin, E(XA), use_reentrant=True, foo=1),
             lambda: tc.checkpoint(torch.sin, T(XA), use_reentrant=True, foo=1))
    m_e, m_t = enn.Linear(2, 2), torch.nn.Linear(2, 2)
    me, mt = both(lambda: ef.functional_call(m_e, {"weight": ember.ones(2, 2)}, ember.ones(1, 2),
                                             strict=True),
                  lambda: tf.functional_call(m_t, {"weight": torch.ones(2, 2)}, torch.ones(1, 2),
                                             strict=True))
    assert me == mt


def test_multi_grad_hook_on_non_leaves_matches_torch():
    logs = []
    for lib, g in ((ember, eg), (torch, tg)):
        x = lib.ones(3, requires_grad=True)
        a, b, c = x * 2, x * 3, x * 4
        log = []
        g.register_multi_grad_hook((a, b, c), lambda gs, log=log: log.append(
            [None if v is None else v.tolist() for v in gs]))
        (a * b).sum().backward(retain_graph=True)
        lib.autograd.grad((b * 5).sum(), x, retain_graph=True)
        lib.autograd.grad((a + c).sum(), a)
        g.register_multi_grad_hook((a, b), lambda v, log=log: log.append(v.tolist()), mode="any")
        (a * b).sum().backward()
        logs.append(log)
    assert logs[0] == logs[1]
