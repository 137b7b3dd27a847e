"""ember.compile: capture with ember.fx, guards and recompiles, fused C kernels (forward and
backward), the disk cache, fallback to eager, and PyTorch's calling conventions."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._dynamo.exc import InvalidBackend, Unsupported
from ember._inductor import codecache


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    # one cache per test session: kernels compile once, tests do not touch ~/.cache
    d = tmp_path_factory.getbasetemp() / "ember-compile-cache"
    monkeypatch.setenv("EMBER_CACHE_DIR", str(d))
    yield


def _rand(*shape, dtype=np.float32, low=-1.5, high=1.5, seed=0, grad=True):
    rng = np.random.default_rng(seed + sum(shape))
    return ember.tensor(rng.uniform(low, high, shape).astype(dtype), requires_grad=grad)


def _leaves(*ts):
    return [t.detach().clone().requires_grad_(t.requires_grad) for t in ts]


def _check_same(fn, compiled, *inputs, atol=1e-5, rtol=1e-5, seed_grad=True):
    """compiled(*inputs) equals fn(*inputs), and so do the gradients of every input."""
    a = _leaves(*inputs)
    b = _leaves(*inputs)
    out_c = compiled(*a)
    out_e = fn(*b)
    outs_c = out_c if isinstance(out_c, tuple) else (out_c,)
    outs_e = out_e if isinstance(out_e, tuple) else (out_e,)
    for oc, oe in zip(outs_c, outs_e):
        np.testing.assert_allclose(oc.detach().numpy(), oe.detach().numpy(), atol=atol, rtol=rtol)
    if seed_grad:
        rng = np.random.default_rng(1)
        seeds = [ember.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype))
                 for o in outs_e]
        sum((oc * s).sum() for oc, s in zip(outs_c, seeds)).backward()
        sum((oe * s).sum() for oe, s in zip(outs_e, seeds)).backward()
        for ta, tb in zip(a, b):
            if tb.requires_grad:
                np.testing.assert_allclose(ta.grad.numpy(), tb.grad.numpy(), atol=atol, rtol=rtol)
    return out_c


def chain10(x, w):
    h = x * w
    h = h + w
    h = h.tanh()
    h = h - x
    h = h.sigmoid()
    h = h * x
    h = -h
    h = h.exp()
    h = h / w
    return h.tanh()


# --- results equal eager ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chain_is_one_kernel_with_eager_results_and_grads(dtype):
    cf = ember.compile(chain10)
    x, w = _rand(7, 5, dtype=dtype), _rand(7, 5, dtype=dtype, low=0.5, seed=3)
    for _ in range(2):  # the first call compiles, the second runs the compiled graph
        _check_same(chain10, cf, x, w, atol=1e-6 if dtype == np.float64 else 1e-5)
    (entry,) = cf.entries
    assert len(entry.kernels) == 1
    assert entry.kernels[0].ops == ["mul", "add", "tanh", "sub", "sigmoid", "mul_1", "neg",
                                    "exp", "truediv", "tanh_1"]
    assert "fused_" in entry.code
    y = cf(x, w)
    assert type(y.grad_fn).__name__ == entry.kernels[0].name


UNARY = [
    ("exp", lambda x: x.exp()), ("log", lambda x: (x.abs() + 0.5).log()),
    ("tanh", lambda x: ember.tanh(x)), ("sigmoid", lambda x: ember.sigmoid(x)),
    ("relu", lambda x: F.relu(x)), ("sin", lambda x: ember.sin(x)), ("cos", lambda x: x.cos()),
    ("sqrt", lambda x: (x * x + 0.1).sqrt()), ("rsqrt", lambda x: ember.rsqrt(x * x + 0.1)),
    ("abs", lambda x: ember.abs(x)), ("reciprocal", lambda x: (x * x + 0.5).reciprocal()),
    ("square", lambda x: ember.square(x)), ("silu", lambda x: F.silu(x)),
    ("gelu", lambda x: F.gelu(x)), ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)), ("clamp", lambda x: x.clamp(-0.5, 0.7)),
    ("clamp_min", lambda x: ember.clamp(x, min=-0.2)), ("pow2", lambda x: x ** 2),
    ("pow3", lambda x: x.pow(3)), ("pow_half", lambda x: (x * x + 0.2) ** 0.5),
    ("rsub", lambda x: 2.0 - x), ("rdiv", lambda x: 1.0 / (x * x + 1.0)),
    ("scaled_add", lambda x: ember.add(x, x * 3, alpha=0.5)),
    ("scaled_sub", lambda x: ember.sub(x, x.exp(), alpha=2)), ("neg", lambda x: -x * 1.5),
]


@pytest.mark.parametrize("name,fn", UNARY, ids=[u[0] for u in UNARY])
def test_each_pointwise_rule_matches_eager(name, fn):
    def f(x):
        return fn(x) * 1.25 + 0.5
    cf = ember.compile(f)
    x = _rand(6, 9, seed=11)
    _check_same(f, cf, x)
    assert cf.entries[0].kernels, f"{name} fused nothing"


def test_activation_modules_fuse():
    model = nn.Sequential(nn.GELU(), nn.Tanh(), nn.LeakyReLU(0.3), nn.SiLU(), nn.Sigmoid(),
                          nn.ReLU(), nn.GELU(approximate="tanh"))
    opt = ember.compile(model)
    _check_same(model, opt, _rand(3, 4))
    (k,) = opt._ember_compiled.entries[0].kernels
    assert len(k.ops) == 7


def test_gradients_are_gradcheck_right_in_float64():
    def f(x, w):
        return (F.gelu(x) * w.sigmoid() + ember.tanh(x - w)) / (1.0 + w * w)

    cf = ember.compile(f)
    x, w = _rand(4, 3, dtype=np.float64), _rand(4, 3, dtype=np.float64, seed=5)
    cf(x, w)
    assert ember.autograd.gradcheck(cf, (x, w))
    assert all(e.kernels for e in cf.entries)


def test_broadcast_inputs_and_their_gradients():
    def f(x, b, col, s):
        return ((x + b) * col).tanh() * s + (x * 2.0).sigmoid()

    cf = ember.compile(f)
    x, b, col, s = _rand(4, 5, 6), _rand(6, seed=1), _rand(4, 1, 1, seed=2), _rand(seed=3)
    out = _check_same(f, cf, x, b, col, s)
    assert tuple(out.shape) == (4, 5, 6)
    mid = _rand(5, 1, seed=4)  # a middle block of the domain
    _check_same(lambda x, m: (x * m).exp(), ember.compile(lambda x, m: (x * m).exp()), x, mid)


def test_trailing_sum_and_mean_over_the_last_dim_fuse():
    def f(x, b):
        h = (x * b).tanh()
        return h.sum(-1), ember.mean(h * h + 1.0, dim=-1, keepdim=True), (x.exp() - b).sum(dim=1)

    cf = ember.compile(f)
    x, b = _rand(4, 7), _rand(7, seed=1)
    for _ in range(2):
        outs = _check_same(f, cf, x, b)
    assert [tuple(o.shape) for o in outs] == [(4,), (4, 1), (4,)]
    tails = [k.ops[-1] for k in cf.entries[0].kernels]
    assert tails == ["sum_1", "mean", "sum_2"]
    row = ember.compile(lambda v: (v * 2.0).exp().sum(-1))
    v = _rand(9)
    np.testing.assert_allclose(row(v).detach().numpy(), (v * 2.0).exp().sum(-1).detach().numpy(),
                               rtol=1e-6)


def test_reductions_over_leading_dims_stay_eager():
    def f(x):
        return x.tanh().sum(0) + x.exp().mean(dim=(0,))

    cf = ember.compile(f)
    x = _rand(3, 5)
    for _ in range(2):
        _check_same(f, cf, x)
    assert all(not k.ops[-1].startswith(("sum", "mean")) for k in cf.entries[0].kernels)


def test_full_and_multi_dim_trailing_reductions_fuse():
    def f(x, w):
        h = (x * w).tanh()
        return ((h - x).square().mean(), (h + 1.0).sum(dim=(-2, -1), keepdim=True),
                ember.sum(x.exp() * w, (1, 2)))

    cf = ember.compile(f)
    x, w = _rand(6, 5, 7), _rand(5, 7, seed=1)
    for _ in range(2):  # the first call is the traced (eager) run; the second the kernels
        outs = _check_same(f, cf, x, w, rtol=2e-5)
    assert [tuple(o.shape) for o in outs] == [(), (6, 1, 1), (6,)]
    assert sorted(k.ops[-1].split("_")[0] for k in cf.entries[0].kernels) == \
        ["mean", "sum", "sum"]
    # a long float32 row accumulates in double: as close to float64 as eager's float32 sum
    big = _rand(1 << 18, grad=False, low=0.0, high=1.0)
    full = ember.compile(lambda v: (v * 3.0 + 1.0).sum())
    full(big)
    want = (big.double() * 3.0 + 1.0).sum().item()
    assert abs(full(big).item() - want) <= abs((big * 3.0 + 1.0).sum().item() - want) + 0.5


def test_broadcast_that_is_not_one_block_stays_eager():
    def f(a, b):
        return (a * b).exp()

    cf = ember.compile(f)
    a, b = _rand(4, 1, 6), _rand(1, 5, 1, seed=1)
    _check_same(f, cf, a, b)


def test_mlp_module_is_an_optimized_module():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 3))
    opt = ember.compile(model)
    assert opt._orig_mod is model
    assert type(opt).__name__ == "OptimizedModule"
    assert list(opt.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    assert [p is q for p, q in zip(opt.parameters(), model.parameters())] == [True] * 6
    x = _rand(5, 8, grad=False)
    for _ in range(2):
        yc, ye = opt(x), model(x)
        np.testing.assert_allclose(yc.detach().numpy(), ye.detach().numpy(), atol=1e-6)
        gc = ember.autograd.grad(yc.square().sum(), list(model.parameters()))
        ge = ember.autograd.grad(ye.square().sum(), list(model.parameters()))
        for a, b in zip(gc, ge):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
    assert opt._ember_compiled.entries[0].kernels  # GELU and ReLU were compiled
    assert opt._modules['_orig_mod'] is model


class Block(nn.Module):
    """A GPT-style decoder block, its GELU written out as minGPT's."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        mask = ember.ones(t, t).tril().view(1, 1, t, t)
        att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        h = self.fc(self.ln2(x))
        inner = math.sqrt(2.0 / math.pi) * (h + 0.044715 * ember.pow(h, 3.0))
        h = 0.5 * h * (1.0 + ember.tanh(inner))
        return x + self.out(h)


def test_transformer_block_forward_and_parameter_grads():
    ember.manual_seed(0)
    block = Block()
    opt = ember.compile(block)
    x = _rand(2, 5, 16, grad=True)
    for _ in range(2):
        xc, xe = _leaves(x, x)
        yc, ye = opt(xc), block(xe)
        np.testing.assert_allclose(yc.detach().numpy(), ye.detach().numpy(), atol=1e-5)
        params = list(block.parameters())
        gc = ember.autograd.grad((yc * yc).sum(), params + [xc])
        ge = ember.autograd.grad((ye * ye).sum(), params + [xe])
        for a, b in zip(gc, ge):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=2e-4, rtol=1e-4)
    kernels = opt._ember_compiled.entries[0].kernels
    gelu = [k for k in kernels if len(k.ops) >= 8]
    assert gelu, [k.ops for k in kernels]  # the written-out GELU is one kernel


def test_double_backward_through_a_kernel():
    def f(x):
        return (x.sin() * x).exp()

    cf = ember.compile(f)
    x = _rand(5, dtype=np.float64)
    cf(x)
    xa, xb = _leaves(x, x)
    (ga,) = ember.autograd.grad(cf(xa).sum(), xa, create_graph=True)
    (gb,) = ember.autograd.grad(f(xb).sum(), xb, create_graph=True)
    np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=1e-12)
    (gga,) = ember.autograd.grad(ga.sum(), xa)
    (ggb,) = ember.autograd.grad(gb.sum(), xb)
    np.testing.assert_allclose(gga.numpy(), ggb.numpy(), rtol=1e-10)


def test_special_values_non_contiguous_and_empty_inputs():
    def f(x):
        return F.relu(x) * 2.0 + x.exp()

    cf = ember.compile(f, dynamic=False)
    x = ember.tensor([[float("nan"), float("inf"), -float("inf")], [0.0, -1.0, 2.0]])
    np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    base = _rand(3, 4, grad=False)
    xt = base.t()  # a transposed view: the kernel reads it through a contiguous copy
    cf2 = ember.compile(f)
    np.testing.assert_allclose(cf2(xt).numpy(), f(xt).numpy(), rtol=1e-6)
    np.testing.assert_allclose(cf2(xt).numpy(), f(xt).numpy(), rtol=1e-6)
    empty = ember.zeros(0, 3)
    assert tuple(ember.compile(f)(empty).shape) == (0, 3)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # eager sigmoid on NaN
def test_special_values_through_the_vectorized_loop():
    def f(x):
        return (F.relu(x) + x.tanh() + (x * 0.5).exp() + x.sigmoid()).sin()

    cf = ember.compile(f)
    x = _rand(257, grad=False)  # whole SIMD vectors and a remainder
    x[3], x[40], x[41], x[200] = float("nan"), float("inf"), -float("inf"), 0.0
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-6, atol=1e-6)
    assert np.isnan(cf(x).numpy()[[3, 40]]).all()


def test_openmp_chunks_cover_every_element():
    from ember._inductor import codegen

    n = codegen._PARALLEL_MIN + 3  # parallel, with a short last chunk
    cf = ember.compile(chain10, options={"openmp": True})
    x, w = _rand(n, low=0.5), _rand(n, seed=1, low=0.5)
    _check_same(chain10, cf, x, w)
    assert "omp parallel for" in cf.entries[0].kernels[0].source


def test_in_place_change_of_a_saved_input_is_caught():
    def f(x, w):
        return (x * w).tanh()

    cf = ember.compile(f)
    x, w = _rand(4), _rand(4, seed=2, grad=False)
    cf(x, w)
    w2 = w.clone()
    y = cf(x, w2)
    w2.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_no_grad_calls_record_nothing():
    cf = ember.compile(chain10)
    x, w = _rand(3), _rand(3, seed=1, low=0.5)
    with ember.no_grad():
        y = cf(x, w)
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_allclose(y.numpy(), chain10(x, w).detach().numpy(), rtol=1e-6)


# --- guards and recompiles ----------------------------------------------------------------

def test_guards_on_shape_dtype_requires_grad_and_grad_mode():
    cf = ember.compile(chain10, dynamic=False)
    x, w = _rand(4), _rand(4, seed=1, low=0.5)
    cf(x, w)
    cf(x, w)
    assert cf.compile_count == 1
    cf(_rand(5), _rand(5, seed=1, low=0.5))  # shape
    assert cf.compile_count == 2
    cf(_rand(4, dtype=np.float64), _rand(4, dtype=np.float64, seed=1, low=0.5))  # dtype
    assert cf.compile_count == 3
    cf(x.detach(), w.detach())  # requires_grad
    assert cf.compile_count == 4
    with ember.no_grad():  # grad mode
        cf(x, w)
    assert cf.compile_count == 5
    cf(x, w)
    assert cf.compile_count == 5 and cf.recompiles == 4


def test_training_flag_is_guarded():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Tanh())
    opt = ember.compile(model)
    x = _rand(8, 4, grad=False)
    opt(x)
    opt.eval()
    assert not model.training
    np.testing.assert_allclose(opt(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert opt._ember_compiled.compile_count == 2


def test_dynamic_true_serves_every_size():
    cf = ember.compile(lambda x, b: (x + b).tanh() * x, dynamic=True)
    for n in (3, 7, 1, 12):
        x, b = _rand(n, 5), _rand(5, seed=9)
        _check_same(lambda x, b: (x + b).tanh() * x, cf, x, b)
    # size 1 is its own guard set (broadcasting differs there), the rest share one graph
    assert cf.compile_count == 2
    assert all(e.dynamic for e in cf.entries)
    assert cf.entries[0].kernels[0].spec.domain is None


def test_dynamic_none_specialises_then_generalises():
    def f(x):
        return (x * 2.0).sigmoid()

    cf = ember.compile(f)  # dynamic=None
    cf(_rand(4, 3))
    assert not cf.entries[0].dynamic
    cf(_rand(6, 3))
    assert cf.entries[1].dynamic
    cf(_rand(9, 3))
    cf(_rand(11, 3))
    assert cf.compile_count == 2


def test_recompile_limit_then_eager_with_a_warning():
    def f(x):
        return x.exp() + 1.0

    cf = ember.compile(f, dynamic=False, recompile_limit=2)
    cf(_rand(2))
    cf(_rand(3))
    with pytest.warns(UserWarning, match="recompile_limit"):
        y = cf(_rand(4))
    np.testing.assert_allclose(y.detach().numpy(), f(_rand(4)).detach().numpy())
    assert cf.compile_count == 2
    assert any("recompile_limit" in r for r in cf.reasons)


# --- fallback --------------------------------------------------------------------------------

def data_dependent(x):
    if x.sum() > 0:
        return x.exp()
    return -x


def test_data_dependent_control_flow_runs_eagerly_with_the_reason(capsys, monkeypatch):
    from ember._dynamo import config

    monkeypatch.setattr(config, "debug", True)
    cf = ember.compile(data_dependent)
    x = _rand(4, low=0.1)
    np.testing.assert_allclose(cf(x).detach().numpy(), x.exp().detach().numpy())
    np.testing.assert_allclose(cf(-x).detach().numpy(), x.detach().numpy())
    assert cf.compile_count == 0
    assert "control flow" in cf.reasons[0]
    err = capsys.readouterr().err
    assert "[ember.compile]" in err and "runs eagerly" in err and "control flow" in err


def test_fullgraph_raises_naming_the_reason():
    cf = ember.compile(data_dependent, fullgraph=True)
    with pytest.raises(Unsupported, match="control flow"):
        cf(_rand(3))

    @ember.compile(fullgraph=True)
    def g(x):
        return x.tanh() * 3

    np.testing.assert_allclose(g(_rand(3)).detach().numpy(),
                               (_rand(3).tanh() * 3).detach().numpy())


def test_hooks_of_traced_through_modules_fall_back():
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    opt = ember.compile(model)
    x = _rand(2, 3, grad=False)
    np.testing.assert_allclose(opt(x).detach().numpy(), model(x).detach().numpy())
    assert len(seen) == 2 and "hooks on the module" in opt._ember_compiled.reasons[0]
    leaf = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    leaf[0].register_forward_hook(lambda m, args, out: seen.append("leaf"))
    opt2 = ember.compile(leaf)
    opt2(x)
    opt2(x)
    assert seen.count("leaf") == 2 and opt2._ember_compiled.compile_count == 1


def test_unsupported_ops_stay_eager_inside_the_graph():
    def f(x):
        y = x.cumsum(0) * 2.0
        return ember.where(y > 0, y, ember.zeros_like(y)).exp() + x.sort(dim=0).values

    cf = ember.compile(f)
    x = _rand(6, 2)
    _check_same(f, cf, x)
    assert cf.compile_count == 1 and not cf.reasons


@pytest.mark.parametrize("cc", ["/bin/false", "/nonexistent/cc"])
def test_a_failing_compiler_leaves_the_group_eager(monkeypatch, tmp_path, cc):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(codecache, "_compiler", lambda: cc)
    if cc == "/bin/false":
        monkeypatch.setattr(codecache, "_compiler_version", lambda cc: "false")
        monkeypatch.setattr(codecache, "_openmp_works", lambda cc: False)

    def f(x):
        return (x * 3.0).tanh()

    cf = ember.compile(f)
    x = _rand(5)
    _check_same(f, cf, x)
    assert cf.entries[0].kernels == []
    assert "left eager" in cf.reasons[0]
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".so"] == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_explain():
    out = ember._dynamo.explain(chain10)(_rand(3), _rand(3, seed=1, low=0.5))
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert len(out.kernels) == 1 and out.op_count == 10
    assert "Fused Kernels" in str(out)
    broken = ember._dynamo.explain(data_dependent)(_rand(3))
    assert broken.graph_count == 0 and broken.graph_break_count == 1
    assert "control flow" in broken.break_reasons[0]


# --- the kernels and the disk cache -----------------------------------------------------------

def test_kernel_source_and_library_are_inspectable():
    cf = ember.compile(chain10)
    cf(_rand(3), _rand(3, seed=1))
    (k,) = cf.entries[0].kernels
    assert "for (int64_t i = lo; i < hi; i++)" in k.source and "tanhf" in k.source
    assert os.path.exists(k.path)
    assert os.path.exists(k.path.split(".")[0] + ".c")
    assert os.path.dirname(k.path) == os.environ["EMBER_CACHE_DIR"]


_CHILD = textwrap.dedent("""
    import ember
    from ember._inductor import codecache
    def f(x, w):
        return ((x * w).sigmoid() - w).exp() * 0.731
    cf = ember.compile(f)
    x = ember.ones(5, requires_grad=True)
    cf(x, ember.ones(5)).sum().backward()
    print(codecache.counters["compiled"], codecache.counters["disk_hits"], float(x.grad[0]))
""")


def test_a_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path / "cache"))

    def child():
        r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                           env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    first, second = child(), child()
    assert first[0] == "1" and first[1] == "0"
    assert second[0] == "0" and second[1] == "1"
    assert first[2] == second[2]
    names = os.listdir(tmp_path / "cache")
    assert not [n for n in names if n.startswith(".tmp-")]


def test_reset_forgets_graphs_and_reloads_kernels_from_disk(monkeypatch):
    from ember._dynamo import config

    def f(x):
        return (x * 1.7).sin().exp()

    cf = ember.compile(f)
    x = _rand(6)
    cf(x)
    assert cf.compile_count == 1
    ember._dynamo.reset()
    assert cf.entries == []
    before = dict(codecache.counters)
    _check_same(f, cf, x)
    assert codecache.counters["disk_hits"] == before["disk_hits"] + 1
    assert codecache.counters["compiled"] == before["compiled"]
    monkeypatch.setattr(config, "recompile_limit", 1)
    g = ember.compile(f, dynamic=False)
    g(x)
    with pytest.warns(UserWarning, match=r"recompile_limit \(1\)"):
        g(_rand(7))


def test_cache_dir_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "a"))
    assert codecache.cache_dir() == str(tmp_path / "a")
    monkeypatch.delenv("EMBER_CACHE_DIR")
    monkeypatch.setenv("EMBER_HOME", str(tmp_path / "h"))
    assert codecache.cache_dir() == str(tmp_path / "h" / "compile")
    monkeypatch.delenv("EMBER_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert codecache.cache_dir() == str(tmp_path / "x" / "ember" / "compile")


# --- PyTorch's calling conventions ------------------------------------------------------------

def test_disable_returns_the_model_itself():
    model = nn.Linear(3, 2)
    assert ember.compile(model, disable=True) is model
    assert ember.compile(chain10, disable=True) is chain10


def test_decorator_forms():
    @ember.compile
    def a(x):
        return x.tanh() + 1

    @ember.compile()
    def b(x):
        return x.tanh() + 2

    @ember.compile(dynamic=True, mode="max-autotune")
    def c(x, scale=2.0):
        return x.tanh() * scale

    x = _rand(4, grad=False)
    np.testing.assert_allclose(a(x).numpy(), (x.tanh() + 1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(b(x).numpy(), (x.tanh() + 2).numpy(), rtol=1e-6)
    np.testing.assert_allclose(c(x).numpy(), (x.tanh() * 2).numpy(), rtol=1e-6)
    np.testing.assert_allclose(c(x, scale=3.0).numpy(), (x.tanh() * 3).numpy(), rtol=1e-6)
    assert c.compile_count == 2  # a Python value is specialised on
    assert a.__name__ == "a" and a.__wrapped__ is not None


def test_backends():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append((gm, [tuple(t.shape) for t in example_inputs]))
        return gm.forward

    cf = ember.compile(chain10, backend=my_backend)
    x, w = _rand(3), _rand(3, seed=1)
    _check_same(chain10, cf, x, w)
    assert len(seen) == 1 and seen[0][1] == [(3,), (3,)]
    assert "tanh" in seen[0][0].code
    eager = ember.compile(chain10, backend="eager")
    _check_same(chain10, eager, x, w)
    assert eager.entries[0].kernels == []
    assert "inductor" in ember._dynamo.list_backends()


def test_bad_arguments():
    with pytest.raises(InvalidBackend, match="Invalid backend: 'nope'"):
        ember.compile(chain10, backend="nope")
    assert issubclass(InvalidBackend, RuntimeError)
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        ember.compile(chain10, mode="fast")
    with pytest.raises(RuntimeError, match="Unexpected optimization option nope"):
        ember.compile(chain10, options={"nope": 1})
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(chain10, mode="default", options={})
    with pytest.raises(RuntimeError, match="expected a callable"):
        ember.compile(3)
    with pytest.raises(ValueError, match="recompile_limit"):
        ember.compile(chain10, recompile_limit=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.compile(chain10, options={"max_autotune": True, "openmp": False})


def test_options_fuse_false_captures_without_kernels():
    cf = ember.compile(chain10, options={"fuse": False})
    _check_same(chain10, cf, _rand(3), _rand(3, seed=1))
    assert cf.compile_count == 1 and cf.entries[0].kernels == []


def test_user_errors_surface_as_in_eager():
    cf = ember.compile(lambda a, b: (a + b).exp())
    with pytest.raises(RuntimeError) as got:
        cf(_rand(3), _rand(4))
    with pytest.raises(RuntimeError) as want:
        (_rand(3) + _rand(4)).exp()
    assert str(got.value) == str(want.value)
    assert cf.entries == []


# --- Module.compile: in place -----------------------------------------------------------------
class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return (self.fc(x).tanh() * x).sigmoid()


def test_module_compile_in_place_keeps_type_keys_and_results():
    model = _Block()
    eager = _Block()
    eager.load_state_dict(model.state_dict())
    assert model.compile() is None
    assert type(model) is _Block and list(model.state_dict()) == ["fc.weight", "fc.bias"]
    _check_same(eager, model, _rand(3, 4))
    cf = model._compiled_call_impl
    assert cf.compile_count == 1 and cf.entries[0].kernels, "the chain was not fused"
    model(_rand(3, 4))
    assert cf.compile_count == 1  # the same guards: no recompile
    # gradients reach the module's own parameters
    model.zero_grad()
    model(_rand(3, 4)).sum().backward()
    assert model.fc.weight.grad is not None and model.fc.weight.grad.abs().sum().item() > 0


def test_module_compile_runs_hooks_added_before_and_after():
    model = _Block()
    seen = []
    model.register_forward_pre_hook(lambda m, args: seen.append("pre"))
    model.compile()
    x = _rand(2, 4, grad=False)
    out = model(x)
    model.register_forward_hook(lambda m, args, o: seen.append("post") or o * 2)
    out2 = model(x)
    assert seen == ["pre", "pre", "post"]
    np.testing.assert_allclose(out2.detach().numpy(), 2 * out.detach().numpy(), rtol=1e-6)
    cf = model._compiled_call_impl
    assert cf.compile_count == 1 and cf.reasons == []  # the hooks ran around the graph


def test_module_compile_arguments_and_fallback():
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    model.compile(dynamic=True, fullgraph=True, backend="eager")
    cf = model._compiled_call_impl
    assert cf.dynamic is True and cf.fullgraph is True
    x = _rand(5, 3, grad=False)
    np.testing.assert_allclose(model(x).detach().numpy(), model.forward(x).detach().numpy())
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        model.compile(mode="fast")
    with pytest.raises(TypeError, match="by keyword"):
        model.compile(True)

    class Branchy(nn.Module):
        def forward(self, x):
            return x.exp() if x.sum() > 0 else x.tanh()

    b = Branchy()
    b.compile()
    x = _rand(4, grad=False)
    np.testing.assert_allclose(b(x).detach().numpy(), Branchy()(x).detach().numpy())
    assert b._compiled_call_impl.reasons  # data-dependent control flow: eager, with the reason
    d = Branchy()
    d.compile(disable=True)
    np.testing.assert_allclose(d(x).detach().numpy(), Branchy()(x).detach().numpy())


def test_module_compile_is_dropped_by_copy_and_pickle():
    import copy
    import pickle

    model = _Block()
    model.compile()
    x = _rand(2, 4, grad=False)
    want = model(x).detach().numpy()
    for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert other._compiled_call_impl is None and "_compiled_call_impl" not in vars(other)
        np.testing.assert_allclose(other(x).detach().numpy(), want, rtol=1e-6)
    lstm = nn.LSTM(3, 4)  # a __getstate__ of its own
    lstm.compile()
    assert pickle.loads(pickle.dumps(lstm))._compiled_call_impl is None


def test_a_compiled_submodule_is_traced_through():
    inner = _Block()
    inner.compile()
    outer = nn.Sequential(inner, nn.ReLU())
    gm = ember.fx.symbolic_trace(outer)
    x = _rand(2, 4, grad=False)
    np.testing.assert_allclose(gm(x).detach().numpy(), outer(x).detach().numpy(), rtol=1e-6)
    assert inner._compiled_call_impl.compile_count <= 1


# --- tracing with values: sizes as Python ints in static graphs -------------------------------
class _TinyGPT(nn.Module):
    """minGPT's shape handling: sizes unpacked, asserted, used in view/arange; q, k, v split."""

    def __init__(self, vocab=11, width=16, heads=2, block=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(block, width)
        self.attn = nn.Linear(width, 3 * width)
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.heads, self.block = heads, block

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block, f"Cannot forward sequence of length {t}"
        x = self.wte(idx) + self.wpe(ember.arange(0, t, dtype=ember.long))
        B, T, C = x.size()
        q, k, v = self.attn(x).split(C, dim=2)
        q, k, v = (z.view(B, T, self.heads, C // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + y.transpose(1, 2).contiguous().view(B, T, C)
        if x.dim() != 3 or x.shape[-1] != C or len(x) != b:
            raise AssertionError("shapes")
        logits = self.head(self.ln(x).tanh())
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def test_sizes_used_as_python_ints_are_specialised():
    ember.manual_seed(0)
    model = _TinyGPT()
    opt = ember.compile(model)
    idx = ember.randint(0, 11, (3, 8))
    for _ in range(2):
        loss_c = opt(idx, idx)
        loss_c.backward()
        grads_c = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        loss_e = model(idx, idx)
        loss_e.backward()
        grads_e = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        np.testing.assert_allclose(loss_c.item(), loss_e.item(), rtol=1e-6)
        for gc, ge in zip(grads_c, grads_e):
            np.testing.assert_allclose(gc.numpy(), ge.numpy(), rtol=1e-5, atol=1e-6)
    cf = opt._ember_compiled
    assert cf.reasons == [] and cf.compile_count == 1 and cf.entries[0].kernels
    assert "view(3, 8, 2, 8)" in cf.entries[0].graph_module.code  # the sizes are constants
    # another length: dynamic=None tries a size-generic graph, then specialises again
    idx5 = ember.randint(0, 11, (3, 5))
    np.testing.assert_allclose(opt(idx5).detach().numpy(), model(idx5).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert cf.compile_count == 2 and all(not e.dynamic for e in cf.entries)
    # a size-generic graph cannot take sizes as constants: eager, with the reason
    dyn = ember.compile(_TinyGPT(), dynamic=True)
    dyn(idx)
    assert dyn._ember_compiled.compile_count == 0 and "TraceError" in dyn._ember_compiled.reasons[0]


def test_tracing_runs_the_first_call_once():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Tanh())
    eager = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Tanh())
    eager.load_state_dict(model.state_dict())
    opt = ember.compile(model)
    x = _rand(6, 4, grad=False)
    np.testing.assert_allclose(opt(x).detach().numpy(), eager(x).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # the running statistics moved once, as after one eager call
    np.testing.assert_allclose(model[1].running_mean.numpy(), eager[1].running_mean.numpy(),
                               rtol=1e-6)
    assert int(model[1].num_batches_tracked) == 1

    def counts_calls(x, log):
        log.append(1)
        return (x * 2).tanh()

    log = []
    f = ember.compile(counts_calls)
    f(_rand(3, grad=False), log)
    assert log == [1]


def test_control_flow_on_values_still_runs_eagerly():
    def f(x):
        return x.exp() if x.sum() > 0 else x.tanh()

    cf = ember.compile(f)
    x = _rand(4, grad=False)
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy())
    assert cf.compile_count == 0 and "control flow" in cf.reasons[0]


class _Top(nn.Module):
    """A forward that cannot be captured (control flow on a value) around capturable
    blocks, one of them in a ModuleList."""

    def __init__(self):
        super().__init__()
        self.first = _Block()
        self.rest = nn.ModuleList([_Block(), _Block()])

    def forward(self, x):
        if x.sum() > 0:
            x = self.first(x)
        for blk in self.rest:
            x = blk(x)
        return x


def test_a_forward_that_breaks_compiles_its_submodules():
    model = _Top()
    opt = ember.compile(model)
    x = _rand(3, 4, low=0.1, high=1.0)
    _check_same(model, opt, x)
    opt(x.detach())
    cf = opt._ember_compiled
    assert cf.compile_count == 0 and "control flow" in cf.reasons[0]
    units = cf._units()
    assert [u.__name__ for _, u in units] == ["_Top.first", "_Top.rest.0", "_Top.rest.1"]
    # first sees x with and without requires_grad; the others always get first's output
    assert [u.compile_count for _, u in units] == [2, 1, 1]
    assert all(e.kernels for _, u in units for e in u.entries)
    # installed for the compiled call only: the model called directly is eager
    assert not any("_compiled_call_impl" in vars(m) for m in model.modules())
    model(x.detach())
    assert [len(u.entries) for _, u in units] == [2, 1, 1]
    # a submodule compiled by the user keeps its own compiled call
    other = _Top()
    other.rest[0].compile()
    mine = other.rest[0]._compiled_call_impl
    ember.compile(other)(x.detach())
    assert other.rest[0]._compiled_call_impl is mine and mine.compile_count == 1
