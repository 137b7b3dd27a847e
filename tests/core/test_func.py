"""ember.func: the transforms against closed forms, NumPy and finite differences (float64)."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember import func as F


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def numeric_jacobian(f, x, eps=1e-6):
    """d f(x) / d x by central differences: shape f(x).shape + x.shape."""
    x0 = x.numpy().copy()
    out0 = f(t64(x0)).numpy()
    jac = np.zeros(out0.shape + x0.shape)
    for idx in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        jac[(...,) + idx] = (f(t64(xp)).numpy() - f(t64(xm)).numpy()) / (2 * eps)
    return jac


X = np.array([0.3, -1.2, 2.0])


# ----------------------------------------------------------------------------
# grad

def test_grad_closed_form():
    g = F.grad(lambda x: (x.sin() * x).sum())(t64(X))
    np.testing.assert_allclose(g.numpy(), np.sin(X) + X * np.cos(X), rtol=1e-12)
    assert not g.requires_grad


def test_grad_argnums_pytree_and_kwargs():
    def f(p, x, *, scale):
        return ((p["w"] * x).sum() + p["b"] ** 2) * scale
    p = {"w": t64([1.0, 2.0, 3.0]), "b": t64(0.5)}
    g = F.grad(f)(p, t64(X), scale=2.0)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"].numpy(), 2 * X)
    np.testing.assert_allclose(g["b"].numpy(), 2.0)
    gp, gx = F.grad(f, argnums=(0, 1))(p, t64(X), scale=1.0)
    np.testing.assert_allclose(gx.numpy(), [1.0, 2.0, 3.0])
    gx = F.grad(f, argnums=-2)(p, t64(X), scale=1.0)
    np.testing.assert_allclose(gx["w"].numpy(), X)


def test_grad_has_aux_and_grad_and_value():
    def f(x):
        y = (x ** 2).sum()
        return y, {"y": y, "x2": x * 2}
    g, aux = F.grad(f, has_aux=True)(t64(X))
    np.testing.assert_allclose(g.numpy(), 2 * X)
    np.testing.assert_allclose(aux["x2"].numpy(), 2 * X)
    g, (v, aux) = F.grad_and_value(f, has_aux=True)(t64(X))
    np.testing.assert_allclose(v.numpy(), (X ** 2).sum())
    g, v = F.grad_and_value(lambda x: x.exp().sum())(t64(X))
    np.testing.assert_allclose(g.numpy(), np.exp(X))
    assert not v.requires_grad


def test_grad_errors():
    with pytest.raises(RuntimeError, match="to return a scalar Tensor, got tensor with 1 dims"):
        F.grad(lambda x: x * 2)(t64(X))
    with pytest.raises(RuntimeError, match="to return a Tensor, got"):
        F.grad(lambda x: 3.0)(t64(X))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        F.grad(lambda x: x.sum(), has_aux=True)(t64(X))
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        F.grad(lambda x: x.sum(), argnums=2)(t64(X))
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        F.grad(lambda x, y: x.sum(), argnums=(0, 0))(t64(X), t64(X))
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        F.grad(lambda x: x.sum(), argnums=())(t64(X))
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor"):
        F.grad(lambda x: x)(2.0)


def test_nested_grad_and_perturbation_confusion():
    x = t64(0.7)
    np.testing.assert_allclose(F.grad(F.grad(ember.sin))(x).item(), -np.sin(0.7))
    np.testing.assert_allclose(F.grad(F.grad(F.grad(ember.sin)))(x).item(), -np.cos(0.7))
    # d/dx [ d/dy (x * y) at y = x ] = d/dx x = 1 (not 2)
    assert F.grad(lambda x: F.grad(lambda y: x * y)(x))(x).item() == 1.0


def test_grad_composes_with_outer_autograd():
    w = t64([1.0, 2.0, 3.0], requires_grad=True)
    g = F.grad(lambda x: (w * x ** 2).sum())(t64(X))      # 2 w x
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * X)
    with ember.no_grad():                                  # grad ignores an outer no_grad
        g = F.grad(lambda x: (x ** 3).sum())(t64(X))
    np.testing.assert_allclose(g.numpy(), 3 * X ** 2)


# ----------------------------------------------------------------------------
# vjp, jvp, linearize

def test_vjp_structures_and_reuse():
    def f(x, y):
        return {"a": x * y, "b": (x ** 2).sum()}
    x, y = t64(X), t64([2.0, 3.0, 4.0])
    out, vjp_fn = F.vjp(f, x, y)
    np.testing.assert_allclose(out["a"].numpy(), X * [2, 3, 4])
    ct = {"a": t64([1.0, 1.0, 1.0]), "b": t64(2.0)}
    for _ in range(2):                                     # callable more than once
        gx, gy = vjp_fn(ct)
        np.testing.assert_allclose(gx.numpy(), [2, 3, 4] + 4 * X)
        np.testing.assert_allclose(gy.numpy(), X)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn((ct["a"], ct["b"]))
    out, vjp_fn, aux = F.vjp(lambda x: (x.exp(), x.sum()), x, has_aux=True)
    assert aux.item() == pytest.approx(X.sum())
    with pytest.raises(RuntimeError, match="must be floating-point or complex"):
        F.vjp(lambda x: x.argmax(), x)


def test_jvp_and_linearize():
    A = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])

    def f(x):
        return ember.tensor(A) @ x.sin()
    v = np.array([1.0, 0.5, -2.0])
    out, tangent = F.jvp(f, (t64(X),), (t64(v),))
    np.testing.assert_allclose(out.numpy(), A @ np.sin(X))
    np.testing.assert_allclose(tangent.numpy(), A @ (np.cos(X) * v), rtol=1e-12)
    out, jvp_fn = F.linearize(f, t64(X))
    np.testing.assert_allclose(jvp_fn(t64(v)).numpy(), A @ (np.cos(X) * v), rtol=1e-12)
    np.testing.assert_allclose(jvp_fn(t64(2 * v)).numpy(), 2 * A @ (np.cos(X) * v), rtol=1e-12)
    # several primals, an output that does not depend on them, aux
    out, tan, aux = F.jvp(lambda x, y: ((x * y, ember.ones(2, dtype=ember.float64)), "aux"),
                          (t64(X), t64(v)), (t64(v), t64(X)), has_aux=True)
    np.testing.assert_allclose(tan[0].numpy(), v * v + X * X)   # x dy + y dx
    np.testing.assert_array_equal(tan[1].numpy(), 0.0)
    assert aux == "aux"
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        F.jvp(lambda x: ember.ones(2), (t64(X),), (t64(v),), strict=True)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(f, t64(X), t64(v))
    with pytest.raises(RuntimeError, match="same python structure"):
        F.jvp(f, (t64(X),), (t64(v), t64(v)))


# ----------------------------------------------------------------------------
# Jacobians and the Hessian

def fn_mixed(x):
    return ember.stack([x[0] * x[1], x[1].exp() - x[2], (x ** 2).sum()])


@pytest.mark.parametrize("jac", [F.jacrev, F.jacfwd])
def test_jacobians_vs_finite_differences(jac):
    x = t64(X)
    np.testing.assert_allclose(jac(fn_mixed)(x).numpy(), numeric_jacobian(fn_mixed, x),
                               rtol=1e-7, atol=1e-8)
    m = np.arange(6.0).reshape(2, 3) / 3

    def g(x):
        return (x * ember.tensor(m)).tanh()
    got = jac(g)(t64(m))
    assert got.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(got.numpy(), numeric_jacobian(g, t64(m)), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("jac", [F.jacrev, F.jacfwd])
def test_jacobians_argnums_outputs_and_aux(jac):
    def f(x, y):
        return (x * y).sum(), x.exp(), y
    x, y = t64(X), t64([1.0, 2.0])
    j = jac(f, argnums=(0, 1))(x, t64(X))
    assert len(j) == 3 and len(j[0]) == 2
    np.testing.assert_allclose(j[0][0].numpy(), X)
    np.testing.assert_allclose(j[1][0].numpy(), np.diag(np.exp(X)))
    np.testing.assert_array_equal(j[1][1].numpy(), np.zeros((3, 3)))
    np.testing.assert_array_equal(j[2][1].numpy(), np.eye(3))
    jx, aux = jac(lambda x: (x ** 3, x.sum()), has_aux=True)(x)
    np.testing.assert_allclose(jx.numpy(), np.diag(3 * X ** 2))
    assert aux.item() == pytest.approx(X.sum())
    del y


def test_jacobian_checks():
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        F.jacrev(ember.sin, chunk_size=0)
    np.testing.assert_allclose(F.jacrev(ember.sin, chunk_size=2)(t64(X)).numpy(),
                               np.diag(np.cos(X)))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        F.jacfwd(ember.sin, randomness="sometimes")
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        F.jacfwd(lambda x: x * ember.rand(3, dtype=ember.float64))(t64(X))
    F.jacfwd(lambda x: x * ember.rand(3, dtype=ember.float64), randomness="different")(t64(X))


def test_hessian_and_composition():
    def f(x):
        return (x[0] ** 2 * x[1] + x[2].sin() * x[0]).sum()
    x = X
    expected = np.array([[2 * x[1], 2 * x[0], np.cos(x[2])],
                         [2 * x[0], 0.0, 0.0],
                         [np.cos(x[2]), 0.0, -x[0] * np.sin(x[2])]])
    np.testing.assert_allclose(F.hessian(f)(t64(x)).numpy(), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(F.jacrev(F.jacrev(f))(t64(x)).numpy(), expected, rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(F.jacfwd(F.grad(f))(t64(x)).numpy(), expected, rtol=1e-12,
                               atol=1e-14)


# ----------------------------------------------------------------------------
# vmap

def test_vmap_in_out_dims():
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(4.0)
    np.testing.assert_allclose(ember.vmap(ember.dot)(t64(a), t64(a)).numpy(), (a * a).sum(1))
    np.testing.assert_allclose(ember.vmap(ember.dot, in_dims=(0, None))(t64(a), t64(b)).numpy(),
                               a @ b)
    np.testing.assert_allclose(ember.vmap(lambda x: x * 2, in_dims=1)(t64(a)).numpy(), a.T * 2)
    np.testing.assert_allclose(ember.vmap(lambda x: x * 2, in_dims=-1, out_dims=1)(t64(a)).numpy(),
                               a * 2)
    out = ember.vmap(lambda x: (x.sum(), x * 0 + 1), out_dims=(0, 1))(t64(a))
    np.testing.assert_allclose(out[0].numpy(), a.sum(1))
    assert out[1].shape == (4, 3)
    # nested vmap: an outer product
    outer = ember.vmap(ember.vmap(ember.mul, in_dims=(None, 0)), in_dims=(0, None))
    np.testing.assert_allclose(outer(t64(b), t64(b)).numpy(), np.outer(b, b))


def test_vmap_pytrees_kwargs_and_unbatched_outputs():
    def f(d, scale=1.0):
        return {"s": (d["x"] * d["y"]).sum() * scale, "const": 7}
    d = {"x": t64(np.ones((2, 3))), "y": t64(np.arange(6.0).reshape(2, 3))}
    out = ember.vmap(f, out_dims={"s": 0, "const": None})(d, scale=2.0)
    np.testing.assert_allclose(out["s"].numpy(), [6.0, 24.0])
    assert out["const"] == 7
    # in_dims as a nested structure with None for one leaf
    out = ember.vmap(lambda d: d["x"] + d["y"], in_dims=({"x": 0, "y": None},))(
        {"x": t64(np.ones((2, 3))), "y": t64([1.0, 2.0, 3.0])})
    np.testing.assert_allclose(out.numpy(), 1 + np.array([[1, 2, 3], [1, 2, 3]]))
    w = t64([1.0, 2.0])
    assert ember.vmap(lambda x: w, out_dims=None)(t64(np.ones((3, 1)))) is w


def test_vmap_errors():
    with pytest.raises(ValueError, match="Expected all tensors to have the same size"):
        ember.vmap(ember.add)(t64(np.ones(2)), t64(np.ones(3)))
    with pytest.raises(ValueError, match="expected in_dim to satisfy -1 <= in_dim < 1"):
        ember.vmap(ember.sin, in_dims=1)(t64(np.ones(2)))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        ember.vmap(lambda x, n: x * n)(t64(np.ones(2)), 3)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        ember.vmap(ember.add, in_dims=(0,))(t64(np.ones(2)), t64(np.ones(2)))
    with pytest.raises(ValueError, match="got no inputs"):
        ember.vmap(lambda: ember.ones(1))()
    with pytest.raises(ValueError, match="at least one Tensor to vmap over"):
        ember.vmap(lambda x: x, in_dims=(None,))(t64(np.ones(2)))
    with pytest.raises(ValueError, match="must only return Tensors"):
        ember.vmap(lambda x: 3)(t64(np.ones(2)))
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        ember.vmap(lambda x: x * 2, out_dims=None)(t64([1.0, 2.0]))
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        ember.vmap(ember.sin, chunk_size=0)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ember.vmap(ember.sin, randomness="maybe")


def test_vmap_randomness():
    x = t64(np.zeros((4, 3)))
    with pytest.raises(RuntimeError, match="called random operation"):
        ember.vmap(lambda x: x + ember.rand(3, dtype=ember.float64))(x)
    same = ember.vmap(lambda x: x + ember.rand(3, dtype=ember.float64), randomness="same")(x)
    assert np.all(same.numpy() == same.numpy()[0])
    diff = ember.vmap(lambda x: x + ember.rand(3, dtype=ember.float64),
                      randomness="different")(x)
    assert len({tuple(r) for r in diff.numpy()}) == 4
    ember.manual_seed(3)
    a = ember.vmap(lambda x: x + ember.rand(3, dtype=ember.float64), randomness="same",
                   chunk_size=2)(x)
    ember.manual_seed(3)
    np.testing.assert_array_equal(a.numpy()[0], ember.rand(3, dtype=ember.float64).numpy())


def test_vmap_empty_batch_and_autograd_through_vmap():
    out = ember.vmap(lambda x: x.sum(0, keepdim=True) * 2)(t64(np.zeros((0, 3))))
    assert out.shape == (0, 1)
    w = t64([1.0, 2.0, 3.0], requires_grad=True)
    y = ember.vmap(lambda x: (x * w).sum())(t64(np.arange(6.0).reshape(2, 3)))
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 5.0, 7.0])


def test_per_sample_gradients_with_functional_call():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = ember.randn(5, 3, dtype=ember.float64)
    t = ember.randn(5, 1, dtype=ember.float64)

    def loss(p, xi, ti):
        out = F.functional_call(model, p, (xi.unsqueeze(0),))
        return ((out - ti.unsqueeze(0)) ** 2).mean()
    per_sample = ember.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, t)
    for i in range(5):
        model.zero_grad()
        ((model(x[i:i + 1]) - t[i:i + 1]) ** 2).mean().backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(per_sample[k][i].numpy(), p.grad.numpy(), rtol=1e-12)


# ----------------------------------------------------------------------------
# functional_call, stack_module_state, replace_all_batch_norm_modules_

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight
        self.register_buffer("shift", ember.zeros(2))

    def forward(self, x):
        return self.b(self.a(x)) + self.shift


def test_functional_call_tied_strict_and_restore():
    m = Tied()
    orig = m.a.weight
    w = ember.eye(2) * 2
    x = ember.tensor([[1.0, 1.0]])
    np.testing.assert_allclose(F.functional_call(m, {"a.weight": w}, x).numpy(), [[4.0, 4.0]])
    assert m.a.weight is orig and m.b.weight is orig
    got = F.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    np.testing.assert_allclose(got.detach().numpy(), (x @ w.T @ orig.T).detach().numpy(),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        F.functional_call(m, {"a.weight": w, "b.weight": w * 2}, x)
    got = F.functional_call(m, ({"a.weight": w}, {"shift": ember.ones(2)}), x)
    np.testing.assert_allclose(got.numpy(), [[5.0, 5.0]])
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        F.functional_call(m, ({"shift": w}, {"shift": w}), x)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): 'shift'"):
        F.functional_call(m, {"a.weight": w}, x, strict=True)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'c'"):
        F.functional_call(m, {"a.weight": w, "shift": w[0], "c": w}, x, strict=True)

    class Boom(nn.Linear):
        def forward(self, x):
            raise KeyError("boom")
    b = Boom(2, 2)
    wb = b.weight
    with pytest.raises(KeyError):
        F.functional_call(b, {"weight": w}, x)
    assert b.weight is wb
    with pytest.warns(FutureWarning):
        got = nn.utils.stateless.functional_call(m, {"a.weight": w}, x)
    np.testing.assert_allclose(got.numpy(), [[4.0, 4.0]])


def test_stack_module_state_and_ensemble():
    ember.manual_seed(1)
    models = [nn.Linear(3, 2).double() for _ in range(4)]
    params, buffers = F.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf
    assert params["weight"].requires_grad and buffers == {}
    x = ember.randn(5, 3, dtype=ember.float64)
    out = ember.vmap(lambda p: F.functional_call(models[0], p, (x,)))(params)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        F.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        F.stack_module_state([nn.Linear(1, 1), nn.Conv1d(1, 1, 1)])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        F.stack_module_state([nn.Linear(1, 1), nn.Linear(1, 1).eval()])
    ms = [nn.Linear(1, 1), nn.Linear(1, 1)]
    ms[1].weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected weight from each model to have the same"):
        F.stack_module_state(ms)


def test_replace_all_batch_norm_modules():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert F.replace_all_batch_norm_modules_(m) is m
    bn = m[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    x = ember.tensor([[1.0, 2.0], [3.0, 5.0]])
    bn.eval()
    y = bn(x).detach().numpy()                     # batch statistics even in eval mode
    z = (x.numpy() - x.numpy().mean(0)) / np.sqrt(x.numpy().var(0) + bn.eps)
    np.testing.assert_allclose(y, z * bn.weight.detach().numpy() + bn.bias.detach().numpy(),
                               rtol=1e-5)


# ----------------------------------------------------------------------------
# functionalize, debug_unwrap, rearrange

def test_functionalize():
    def f(x):
        x.add_(1)
        y = x.view(-1)
        return y
    x = ember.zeros(2, 2)
    out = F.functionalize(f)(x)
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 2)))   # the mutation is written back
    np.testing.assert_array_equal(out.numpy(), np.ones(4))
    out = F.functionalize(f, remove="mutations_and_views")(x)
    assert out._base is None
    with pytest.raises(RuntimeError, match="received invalid argument for remove"):
        F.functionalize(f, remove="views")
    assert F.debug_unwrap(x) is x


@pytest.mark.parametrize("pattern,kw,ref", [
    ("b c h w -> b h w c", {}, lambda a: a.transpose(0, 2, 3, 1)),
    ("b c h w -> b (c h w)", {}, lambda a: a.reshape(2, -1)),
    ("b c h w -> (b c) h w", {}, lambda a: a.reshape(6, 4, 5)),
    ("b c (h1 h2) w -> b h1 h2 c w", {"h1": 2}, lambda a: a.reshape(2, 3, 2, 2, 5)
     .transpose(0, 2, 3, 1, 4)),
    ("b ... w -> w b ...", {}, lambda a: a.transpose(3, 0, 1, 2)),
    ("b c h w -> b 1 (w h c)", {}, lambda a: a.transpose(0, 3, 2, 1).reshape(2, 1, -1)),
    ("b c h w -> b () c h w", {}, lambda a: a[:, None]),
    ("b ... -> (...) b", {}, lambda a: a.reshape(2, -1).T),
])
def test_rearrange(pattern, kw, ref):
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(F.rearrange(ember.tensor(a), pattern, **kw).numpy(), ref(a))


def test_rearrange_errors_and_lists():
    a = ember.zeros(2, 3)
    assert F.rearrange([a, a, a], "n b c -> b c n").shape == (2, 3, 3)
    for pattern, err in [("b c", "single '->'"), ("b c -> b", "only on one side"),
                         ("b c -> b c ...", "Ellipsis found in right side"),
                         ("b 2 -> b", "unnamed axes of size 1"),
                         ("(b c -> b c", "Imbalanced")]:
        with pytest.raises(ValueError, match=err):
            F.rearrange(a, pattern)
    with pytest.raises(TypeError, match="must be integers"):
        F.rearrange(a, "(b x) c -> b x c", x=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.rearrange(a, "b c -> c b")
