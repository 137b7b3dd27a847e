"""Model families at three sizes (issue 24): a ratio per family and size, so that a cliff at
one size is not hidden by a single shape.

Each family (MLP, LeNet-style CNN, small ResNet, LSTM and GRU language models, Transformer
encoder, GPT-style decoder) has a ``small``, a ``medium`` and a ``large`` shape. Where
workloads.py has a workload of the family already (``mlp_sgd``, ``lenet5_adam``,
``lstm2_lm``, ``transformer_encoder``), that one is the medium size and keeps its name;
the others are registered here as ``FAMILY_SIZE`` (``gpt_medium``). Every one has ``family``
and ``size`` set, so that ``run.py --workloads gpt`` selects a family and ``--sizes small``
a size, and carries issue 24's targets (``size_targets``) with its peak RSS measured. The
large shapes are sized to take well under a few seconds per training step on 2 cores.

``gpt_medium`` is the minGPT character model of the issue: 2 layers, 4 heads, 64 wide,
block 64, batch 32, a 65-character vocabulary, AdamW, with its causal self-attention,
GELU, pre-LayerNorm blocks and the output head tied to the token embedding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .registry import workload
from .workloads import (
    _LENET,
    _MLP,
    _RNN_LM,
    _TRANSFORMER,
    F32,
    NN,
    SEQUENCE,
    _labels,
    _rng,
    _train_step,
    cifar_resnet,
    lenet_step,
    mlp_step,
    rnn_lm_step,
    size_targets,
    tensor,
    transformer_step,
)

SIZES = ("small", "medium", "large")

# Per size: how many samples, how long each may take, and the whole row's time budget.
_TIMING = {
    "small": dict(repeats=15, budget_s=10.0, block_s=0.1),
    "medium": dict(repeats=11, budget_s=20.0, block_s=0.05),
    "large": dict(repeats=5, budget_s=25.0, block_s=0.0),
}


def _register(family: str, group: str, requires: tuple[str, ...], title: str, sizes: dict,
              build):
    """Register ``build(lib, device, **shape)`` as ``{family}_{size}`` for each ``size:
    shape`` of ``sizes``; ``title`` is formatted with the shape."""
    for size, shape in sizes.items():
        def fn(lib, device, _shape=shape):
            return build(lib, device, **_shape)

        fn.__name__ = fn.__qualname__ = f"{family}_{size}"
        workload(f"{family}_{size}", group=group, source="#24", family=family, size=size,
                 title=title.format(**shape), targets=size_targets(size), requires=requires,
                 peak_rss=True, **_TIMING[size])(fn)


_register("mlp", NN, _MLP, "MLP 784-{widths[0]}-{widths[1]}-10, batch {batch}, SGD step", {
    "small": dict(widths=(64, 64), batch=8),
    "large": dict(widths=(1024, 1024), batch=256),
}, mlp_step)

_register("lenet", NN, _LENET,
          "LeNet-style CNN, conv {c1}-{c2}, fc {f1}-{f2}, 1x28x28, batch {batch}, Adam step", {
              "small": dict(c1=6, c2=16, f1=120, f2=84, batch=8),
              "large": dict(c1=32, c2=64, f1=512, f2=256, batch=128),
          }, lenet_step)


# --- small ResNet ------------------------------------------------------------------------------

def resnet_step(lib, device, width, image, batch):
    nn = lib.nn
    lib.manual_seed(0)
    model = cifar_resnet(nn, (width, 2 * width, 4 * width), 1).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = tensor(lib, _rng().standard_normal((batch, 3, image, image), F32), device)
    return _train_step(model, optimizer, nn.CrossEntropyLoss(), x,
                       _labels(lib, device, batch, 10))


_register("resnet", NN, ("manual_seed", "nn.Module", "nn.Sequential", "nn.Conv2d",
                         "nn.BatchNorm2d", "nn.ReLU", "nn.AdaptiveAvgPool2d", "nn.Flatten",
                         "nn.Linear", "nn.CrossEntropyLoss", "optim.SGD"),
          "small ResNet, 3 stages from {width} channels, 3x{image}x{image}, batch {batch}, "
          "SGD-momentum step", {
              "small": dict(width=8, image=16, batch=8),
              "medium": dict(width=16, image=32, batch=32),
              "large": dict(width=32, image=32, batch=32),
          }, resnet_step)


# --- LSTM and GRU language models (the LSTM's medium size: lstm2_lm) ---------------------------

_RNN_TITLE = "2-layer {cell} LM, vocab {vocab}, {width} wide, seq {seq}, batch {batch}, SGD step"
_RNN_SMALL = dict(vocab=1000, width=64, seq=35, batch=8)
_RNN_MEDIUM = dict(vocab=10000, width=256, seq=35, batch=20)  # lstm2_lm's
_RNN_LARGE = dict(vocab=10000, width=512, seq=35, batch=32)

_register("lstm_lm", SEQUENCE, _RNN_LM + ("nn.LSTM",), _RNN_TITLE, {
    "small": dict(cell="LSTM", **_RNN_SMALL),
    "large": dict(cell="LSTM", **_RNN_LARGE),
}, rnn_lm_step)

_register("gru_lm", SEQUENCE, _RNN_LM + ("nn.GRU",), _RNN_TITLE, {
    "small": dict(cell="GRU", **_RNN_SMALL),
    "medium": dict(cell="GRU", **_RNN_MEDIUM),
    "large": dict(cell="GRU", **_RNN_LARGE),
}, rnn_lm_step)


# --- Transformer encoder (medium: transformer_encoder) -----------------------------------------

_register("transformer", SEQUENCE, _TRANSFORMER,
          "TransformerEncoder 2x({width}, {heads} heads, ff {ff}), seq {seq}, batch {batch}, "
          "SGD step", {
              "small": dict(width=64, heads=4, ff=256, seq=32, batch=8),
              "large": dict(width=512, heads=8, ff=2048, seq=128, batch=16),
          }, transformer_step)


# --- GPT-style decoder -------------------------------------------------------------------------

@dataclass(frozen=True)
class GPTConfig:
    vocab: int
    block: int
    layers: int
    heads: int
    width: int


def gpt(nn, F, config: GPTConfig):
    """A GPT-style decoder as minGPT/nanoGPT write it: token and position embeddings,
    pre-LayerNorm blocks of causal self-attention (one packed q/k/v projection, then
    ``scaled_dot_product_attention(is_causal=True)``) and a GELU MLP, a final LayerNorm and
    an output head whose weight is the token embedding's."""

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(config.width, 3 * config.width)
            self.c_proj = nn.Linear(config.width, config.width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(c, dim=2)
            heads = config.heads
            q = q.view(b, t, heads, c // heads).transpose(1, 2)
            k = k.view(b, t, heads, c // heads).transpose(1, 2)
            v = v.view(b, t, heads, c // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(config.width)
            self.mlp = nn.Sequential(nn.Linear(config.width, 4 * config.width), nn.GELU(),
                                     nn.Linear(4 * config.width, config.width))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(config.vocab, config.width)
            self.wpe = nn.Embedding(config.block, config.width)
            self.blocks = nn.ModuleList(Block() for _ in range(config.layers))
            self.ln_f = nn.LayerNorm(config.width)
            self.lm_head = nn.Linear(config.width, config.vocab, bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying

        def forward(self, idx, pos):
            x = self.wte(idx) + self.wpe(pos)
            for block in self.blocks:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    return GPT()


def _adamw_groups(model):
    """minGPT's two parameter groups: weight decay on the matrices of the Linear layers only
    (not on biases, LayerNorm weights or embeddings)."""
    decay, no_decay = [], []
    seen = set()
    for module_name, module in model.named_modules():
        for name, p in module.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            is_linear = type(module).__name__ == "Linear" and name == "weight"
            tied = module_name == "lm_head"  # the token embedding's weight, already seen
            (decay if is_linear and not tied else no_decay).append(p)
    return [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]


def gpt_step(lib, device, vocab, block, layers, heads, width, batch):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = gpt(nn, F, GPTConfig(vocab, block, layers, heads, width)).to(device)
    optimizer = lib.optim.AdamW(_adamw_groups(model), lr=3e-4, betas=(0.9, 0.95))
    rng = _rng()
    idx = tensor(lib, rng.integers(0, vocab, (batch, block)), device)
    targets = tensor(lib, rng.integers(0, vocab, (batch, block)), device)
    pos = tensor(lib, np.arange(block), device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = model(idx, pos)
        loss = F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        loss.backward()
        optimizer.step()

    return step


_register("gpt", SEQUENCE,
          ("manual_seed", "nn.Module", "nn.ModuleList", "nn.Embedding", "nn.LayerNorm",
           "nn.GELU", "nn.Linear", "nn.functional.scaled_dot_product_attention",
           "nn.functional.cross_entropy", "optim.AdamW"),
          "GPT decoder {layers}x({width}, {heads} heads), block {block}, vocab {vocab}, "
          "batch {batch}, AdamW step", {
              "small": dict(vocab=65, block=32, layers=2, heads=2, width=32, batch=8),
              "medium": dict(vocab=65, block=64, layers=2, heads=4, width=64, batch=32),
              "large": dict(vocab=65, block=128, layers=4, heads=8, width=256, batch=16),
          }, gpt_step)
