"""Workloads of ``ember.compile`` (issue 23).

The compiled rows compile ember's side only where the row compares with PyTorch's eager
speed (the issue's targets are against torch eager, and against torch.compile in the
``_vs_compiled`` row, where both sides are compiled). The GPT rows time the same training
step eager and compiled, each against torch eager; the compiled row's baseline slot runs
ember's eager step, so its note gives compiled over eager ember from one interleaved run.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .registry import Target, workload
from .workloads import F32, _rng, tensor

COMPILE = "compile"


def _compiled(lib, fn, both: bool):
    """``fn`` compiled with ember.compile, and with torch.compile where ``both``."""
    if lib.__name__ == "ember" or both:
        return lib.compile(fn)
    return fn


def _chain10(x, w):
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


def _chain_step(lib, device, both: bool, n: int):
    rng = _rng()
    x = tensor(lib, rng.uniform(0.5, 1.5, n).astype(F32), device, requires_grad=True)
    w = tensor(lib, rng.uniform(0.5, 1.5, n).astype(F32), device, requires_grad=True)
    seed = tensor(lib, np.ones(n, F32), device)
    chain = _compiled(lib, _chain10, both)

    def step():
        chain(x, w).backward(seed)
        x.grad = None
        w.grad = None

    return step


_CHAIN = dict(group=COMPILE, source="#23", per=10, per_label="op", repeats=25, budget_s=20.0,
              requires=("compile", "Tensor.backward", "Tensor.tanh", "Tensor.sigmoid"),
              cpu_only=True)


@workload("compile_chain10_grad", title="10-op chain, 16 float32, forward + backward: "
          "ember.compile vs torch eager", targets=(Target("time ember/torch", "<=", 0.3),),
          **_CHAIN)
def compile_chain10_grad(lib, device):
    return _chain_step(lib, device, both=False, n=16)


@workload("compile_chain10_grad_vs_compiled", title="10-op chain, 16 float32, forward + "
          "backward: ember.compile vs torch.compile",
          targets=(Target("time ember/torch", "<=", 1.0),), **_CHAIN)
def compile_chain10_grad_vs_compiled(lib, device):
    return _chain_step(lib, device, both=True, n=16)


@workload("compile_chain10_grad_large", title="10-op chain, 2^20 float32, forward + "
          "backward: ember.compile vs torch.compile", **_CHAIN)
def compile_chain10_grad_large(lib, device):
    return _chain_step(lib, device, both=True, n=1 << 20)


def _gpt(lib, vocab=128, d=64, heads=4, layers=2, block=32):
    """A GPT-style decoder (minGPT's layout, its GELU written out as minGPT's NewGELU)."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("bias", lib.ones(block, block).tril().view(1, 1, block, block))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
            q = q.view(b, t, heads, c // heads).transpose(1, 2)
            k = k.view(b, t, heads, c // heads).transpose(1, 2)
            v = v.view(b, t, heads, c // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.c_proj(y)
            h = self.c_fc(self.ln_2(x))
            h = 0.5 * h * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi)
                                          * (h + 0.044715 * lib.pow(h, 3.0))))
            return x + self.mlp_proj(h)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx, pos):
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            return self.lm_head(self.ln_f(x)).view(-1, vocab)

    return GPT()


def _gpt_step(lib, device, compiled: bool):
    vocab, block, batch = 128, 32, 8
    lib.manual_seed(0)
    model = _gpt(lib, vocab=vocab, block=block).to(device)
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = _rng()
    idx = tensor(lib, rng.integers(0, vocab, (batch, block)), device)
    pos = tensor(lib, np.arange(block), device)
    targets = tensor(lib, rng.integers(0, vocab, batch * block), device)
    run = lib.compile(model) if compiled and lib.__name__ == "ember" else model
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(run(idx, pos), targets)
        loss.backward()
        optimizer.step()

    return step


_GPT = dict(group=COMPILE, source="#23", repeats=15, budget_s=30.0, block_s=0.0, cpu_only=True,
            requires=("compile", "manual_seed", "nn.LayerNorm", "nn.Embedding",
                      "nn.ModuleList", "optim.AdamW", "nn.CrossEntropyLoss"))


@workload("gpt_step_eager", title="GPT-style decoder 2x(64, 4 heads), seq 32, batch 8, "
          "AdamW step: ember eager vs torch eager", **_GPT)
def gpt_step_eager(lib, device):
    return _gpt_step(lib, device, compiled=False)


def _gpt_step_ember_eager(xp, device):
    """The baseline slot runs ember's eager step: ember.compile's row is then timed against
    eager ember in the same interleaved run (the harness imported ember already)."""
    return _gpt_step(sys.modules["ember"], device, compiled=False)


@workload("gpt_step_compiled", title="the same GPT step: ember.compile vs torch eager; "
          "the baseline is ember eager (ember/baseline: compiled over eager ember)",
          baseline=True, baseline_fn=_gpt_step_ember_eager,
          baseline_label="ember eager, the same step not compiled", **_GPT)
def gpt_step_compiled(lib, device):
    return _gpt_step(lib, device, compiled=True)


__all__ = ["compile_chain10_grad", "compile_chain10_grad_vs_compiled",
           "compile_chain10_grad_large", "gpt_step_eager", "gpt_step_compiled"]
