"""ember.fx against torch.fx: the same models written both ways trace to the same nodes and
printed code, run to the same numbers, and ShapeProp records the same metadata."""

import inspect
import math
import operator

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def models(lib):
    """The test models, written once against ``lib`` (torch or ember)."""
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(lib.tanh(self.fc1(x))).softmax(-1)

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(lib.relu(self.conv2(x)), (2, 2))
            x = x.view(x.size(0), -1)
            x = F.dropout(F.relu(self.fc1(x)), p=0.1, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(4, 8, 3, 2, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(8)
            self.downsample = nn.Sequential(nn.Conv2d(4, 8, 1, 2, bias=False),
                                            nn.BatchNorm2d(8))

        def forward(self, x):
            identity = self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    class Encoder(nn.Module):
        def __init__(self, d=16, h=4):
            super().__init__()
            self.h = h
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.n1 = nn.LayerNorm(d)
            self.register_buffer("mask", lib.triu(lib.ones(6, 6), 1).bool())
            self.ff = nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q = q.view(b, t, self.h, d // self.h).transpose(1, 2)
            k = k.view(b, t, self.h, -1).transpose(1, 2)
            v = v.reshape(b, t, self.h, -1).permute(0, 2, 1, 3)
            att = lib.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.h)
            att = att.masked_fill(self.mask, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).contiguous().view(b, t, d)
            x = self.n1(x + self.proj(y))
            return x + self.ff(x) * 0.5, lib.cat([x, x], dim=0)[::2, 1:, ...].sum(dim=(0, 1))

    def fn(x, y):
        a = x[:, 1:] * 2 - y.t()[0]
        n = a.shape[1]
        return (-a).abs().pow(2).sum(dim=1, keepdim=True) / n, lib.stack([a, a]).max(0)[0]

    return {"mlp": (MLP, (3, 8)), "lenet": (LeNet, (2, 1, 28, 28)),
            "block": (Block, (2, 4, 8, 8)), "encoder": (Encoder, (2, 6, 16)),
            "fn": (fn, None)}


TORCH, EMBER = models(torch), models(ember)


def copy_weights(tm, em):
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd)


def target_name(n):
    """The printed target of a node, in ember's spelling."""
    if isinstance(n.target, str):
        return n.target
    if getattr(n.target, "__module__", "") == "_operator":
        return f"operator.{n.target.__name__}"
    return n._pretty_print_target(n.target).replace("torch.", "ember.")


def defaults_of(n):
    """The defaults of a call_function target, from ember's function of the same name
    (torch's C builtins and dispatch wrappers have no signature)."""
    path = target_name(n)
    obj = ember
    for part in path.split(".")[1:] if path.startswith("ember.") else ["<none>"]:
        obj = getattr(obj, part, None)
    try:
        sig = inspect.signature(obj if obj is not None and obj is not ember else n.target)
    except (TypeError, ValueError):
        return {}
    return {k: p.default for k, p in sig.parameters.items() if p.default is not p.empty}


def node_list(gm, lib):
    """(op, name, target, args, kwargs) of each node; kwargs that only repeat a default are
    dropped (torch's __torch_function__ passes every argument of a Python function on)."""
    out = []
    for n in gm.graph.nodes:
        kwargs = dict(n.kwargs)
        if n.op == "call_function":
            d = defaults_of(n)
            kwargs = {k: v for k, v in kwargs.items()
                      if not (k in d and d[k] == v and type(d[k]) is type(v))}
        args = lib.fx.node.map_arg(n.args, lambda a: f"%{a.name}")
        kw = lib.fx.node.map_arg(kwargs, lambda a: f"%{a.name}")
        out.append((n.op, n.name, target_name(n), repr(args).replace("torch.", "ember."),
                    repr(kw)))
    return out


@pytest.mark.parametrize("name", list(TORCH))
def test_same_nodes_and_numbers_as_torch_fx(name):
    (tmake, shape), (emake, _) = TORCH[name], EMBER[name]
    torch.manual_seed(0)
    if shape is None:
        troot, eroot = tmake, emake
    else:
        troot, eroot = tmake().eval(), emake().eval()
        copy_weights(troot, eroot)
    tgm, egm = torch.fx.symbolic_trace(troot), ember.fx.symbolic_trace(eroot)
    assert node_list(egm, ember) == node_list(tgm, torch)
    # the printed code is torch's with ``torch`` spelt ``ember`` (default kwargs aside)
    eline = [ln for ln in egm.code.splitlines() if "(" not in ln or "self." in ln]
    tline = [ln.replace("torch.", "ember.") for ln in tgm.code.splitlines()
             if "(" not in ln or "self." in ln]
    assert eline == tline
    if shape is None:
        x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        y = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
        targs, eargs = (torch.tensor(x), torch.tensor(y)), (ember.tensor(x), ember.tensor(y))
    else:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        targs, eargs = (torch.tensor(x),), (ember.tensor(x),)
    tout, eout = tgm(*targs), egm(*eargs)
    tout = tout if isinstance(tout, tuple) else (tout,)
    eout = eout if isinstance(eout, tuple) else (eout,)
    for a, b in zip(eout, tout):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_shape_prop_metadata_matches_torch():
    (tmake, shape), (emake, _) = TORCH["block"], EMBER["block"]
    troot, eroot = tmake().eval(), emake().eval()
    copy_weights(troot, eroot)
    tgm, egm = torch.fx.symbolic_trace(troot), ember.fx.symbolic_trace(eroot)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp

    from ember.fx.passes.shape_prop import ShapeProp as EShapeProp

    TShapeProp(tgm).propagate(torch.tensor(x))
    EShapeProp(egm).propagate(ember.tensor(x))
    for tn, en in zip(tgm.graph.nodes, egm.graph.nodes):
        tm, em = tn.meta["tensor_meta"], en.meta["tensor_meta"]
        assert tuple(em.shape) == tuple(tm.shape), en.name
        assert str(em.dtype).split(".")[-1] == str(tm.dtype).split(".")[-1]
        assert em.requires_grad == tm.requires_grad, en.name
        assert em.stride == tm.stride, en.name
        assert str(em.memory_format).split(".")[-1] == str(tm.memory_format).split(".")[-1]
        assert em.is_quantized == tm.is_quantized and em.qparams == tm.qparams
        assert en.meta["type"].__name__ == tn.meta["type"].__name__


def test_errors_match_torch():
    def branch(x):
        if x.sum() > 0:
            return x
        return x

    def loop(x):
        return [v for v in x]

    for f, exc in [(branch, "TraceError"), (loop, "TraceError"),
                   (lambda x: len(x), "RuntimeError")]:
        with pytest.raises(Exception) as te:
            torch.fx.symbolic_trace(f)
        with pytest.raises(Exception) as ee:
            ember.fx.symbolic_trace(f)
        assert type(te.value).__name__ == type(ee.value).__name__ == exc
        assert issubclass(type(ee.value), type(te.value).__mro__[1]) or exc == "RuntimeError"
        assert str(ee.value).split(".")[0] == str(te.value).split(".")[0]


def test_concrete_args_graph_matches_torch():
    def f(x, flag):
        if flag:
            return x + 1
        return x - 1

    tgm = torch.fx.symbolic_trace(f, concrete_args={"flag": True})
    egm = ember.fx.symbolic_trace(f, concrete_args={"flag": True})
    assert [(n.op, n.name) for n in egm.graph.nodes] == [(n.op, n.name) for n in tgm.graph.nodes]
    eq = [n for n in egm.graph.nodes if n.target is operator.eq]
    assert eq and eq[0].args[1] is True
    assert tgm.code.replace("torch._assert", "ember.fx._symbolic_trace._assert") == egm.code


def test_graph_str_and_format_node_match_torch():
    (tmake, _), (emake, _) = TORCH["mlp"], EMBER["mlp"]
    tgm, egm = torch.fx.symbolic_trace(tmake()), ember.fx.symbolic_trace(emake())
    assert str(egm.graph) == str(tgm.graph).replace("torch.", "ember.")
    tp = tgm.print_readable(print_output=False).replace("torch.", "ember.")
    ep = egm.print_readable(print_output=False)
    assert ep.strip() == tp.strip()
