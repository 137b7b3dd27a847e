"""The workloads, each written once against the common PyTorch API.

Every function takes the library module (``ember`` or ``torch``; ``numpy``/``cupy`` where a
baseline runs the same code) and the device ("cpu" or "cuda"), does its setup, and returns
the zero-argument callable that is timed. Nothing here imports torch or ember: the harness
passes them in, and a fresh subprocess measuring one library imports only that one.

Inputs come from NumPy's generator with a fixed seed and enter each library through
``lib.tensor``, so that both libraries see the same numbers.

The workloads of features that have not landed in ember yet (nn, optim, DataLoader) are
written here already; their ``requires`` keeps them "not available" until ember has the API.
"""

from __future__ import annotations

import math

import numpy as np

from .registry import Target, Workload, add, workload

F32 = np.float32

PER_OP = "per-op"
THROUGHPUT = "throughput"
FOOTPRINT = "footprint"
NN = "nn"
SEQUENCE = "sequence"
OPTIM = "optim"
DATA = "data"

FAST = Target("time ember/torch", "<=", 0.5)  # issue 3's per-op targets
NEAR_NUMPY = Target("throughput ember/numpy", ">=", 0.95)  # issue 3: the wrapper vanishes


# --- helpers -----------------------------------------------------------------------------

def is_array_library(lib) -> bool:
    return lib.__name__ in ("numpy", "cupy")


def tensor(lib, array, device="cpu", requires_grad=False):
    """``array`` (NumPy) as a tensor of ``lib`` on ``device``; an array for NumPy/CuPy."""
    if is_array_library(lib):
        return lib.asarray(array)
    return lib.tensor(array, device=device, requires_grad=requires_grad)


def _rng():
    return np.random.default_rng(0)


def _pair(lib, device, n):
    rng = _rng()
    return (tensor(lib, rng.uniform(0.5, 1.5, n).astype(F32), device),
            tensor(lib, rng.uniform(0.5, 1.5, n).astype(F32), device))


# --- (1) per-op overhead: issue 3 (a) ------------------------------------------------------

_TINY = dict(group=PER_OP, source="#3", targets=(FAST,), repeats=25, budget_s=10.0)


@workload("op_add", title="a + b, 16 float32, no grad", baseline=True, **_TINY)
def op_add(lib, device):
    a, b = _pair(lib, device, 16)
    return lambda: a + b


@workload("op_add_function", title="add(a, b), 16 float32, no grad", baseline=True,
          requires=("add",), **_TINY)
def op_add_function(lib, device):
    a, b = _pair(lib, device, 16)
    add_ = lib.add
    return lambda: add_(a, b)


def _exp_baseline(xp, device):
    """NumPy arrays have no exp method."""
    a, _ = _pair(xp, device, 16)
    exp = xp.exp
    return lambda: exp(a)


@workload("op_exp_method", title="a.exp(), 16 float32, no grad", requires=("Tensor.exp",),
          baseline=True, baseline_fn=_exp_baseline, baseline_label="exp(a)", **_TINY)
def op_exp_method(lib, device):
    a, _ = _pair(lib, device, 16)
    return lambda: a.exp()


# --- (2) a 10-op chain with autograd: issue 3 (b) ------------------------------------------

def _chain10_by_hand(xp, device):
    """The same chain with its backward written out by hand: the floor for autograd."""
    rng = _rng()
    x = xp.asarray(rng.uniform(0.5, 1.5, 16).astype(F32))
    w = xp.asarray(rng.uniform(0.5, 1.5, 16).astype(F32))
    seed = xp.ones(16, F32)

    def step():
        h3 = xp.tanh(x * w + w)
        h5 = 1 / (1 + xp.exp(-(h3 - x)))
        h8 = xp.exp(-(h5 * x))
        h10 = xp.tanh(h8 / w)
        d9 = seed * (1 - h10 * h10)
        d8 = d9 / w
        dw = -d9 * h8 / (w * w)
        d6 = -(d8 * h8)
        dx = d6 * h5
        d4 = d6 * x * h5 * (1 - h5)
        dx = dx - d4
        d2 = d4 * (1 - h3 * h3)
        dw = dw + d2 + d2 * x
        dx = dx + d2 * w
        return dx, dw

    return step


@workload(
    "chain10_grad", group=PER_OP, source="#3", targets=(FAST,), repeats=25, budget_s=15.0,
    title="10-op chain, 16 float32, requires_grad, forward + backward",
    per=10, per_label="op", baseline=True, baseline_fn=_chain10_by_hand,
    baseline_label="the chain and its backward written out by hand",
    requires=("Tensor.backward", "Tensor.exp", "Tensor.tanh", "Tensor.sigmoid",
              "Tensor.__neg__", "Tensor.__truediv__", "Tensor.__sub__"),
)
def chain10_grad(lib, device):
    rng = _rng()
    x = tensor(lib, rng.uniform(0.5, 1.5, 16).astype(F32), device, requires_grad=True)
    w = tensor(lib, rng.uniform(0.5, 1.5, 16).astype(F32), device, requires_grad=True)
    seed = tensor(lib, np.ones(16, F32), device)

    def step():
        h = x * w  # 1 mul
        h = h + w  # 2 add
        h = h.tanh()  # 3
        h = h - x  # 4 sub
        h = h.sigmoid()  # 5
        h = h * x  # 6 mul
        h = -h  # 7 neg
        h = h.exp()  # 8
        h = h / w  # 9 div
        h = h.tanh()  # 10
        h.backward(seed)
        x.grad = None  # as optimizer.zero_grad(set_to_none=True) does
        w.grad = None

    return step


# --- (3) large elementwise throughput --------------------------------------------------------

N_LARGE = 4 * 1024 * 1024


def _bandwidth_extra(arrays: int):
    """Effective bandwidth of an elementwise op moving ``arrays`` float32 arrays of N_LARGE."""
    moved = arrays * N_LARGE * 4

    def extra(medians, machine):
        rates = {name: moved / t / 1e9 for name, t in medians.items()}
        note = "effective GB/s " + ", ".join(f"{k} {v:.1f}" for k, v in rates.items())
        copy = machine.get("copy_bandwidth_gbs")
        if copy:
            note += (f"; memory bandwidth (NumPy copy of 128 MiB) {copy:.1f} GB/s"
                     f" = {100 * max(rates.values()) / copy:.0f}% of it for the best here")
            if max(rates.values()) > copy:
                note += (f" (above 100%: part of the {moved / 2**20:.0f} MiB stays in the "
                         f"caches, L3 {machine.get('l3_cache') or '?'})")
        return {"gb_per_s": rates, "bytes_moved": moved}, [note]

    return extra


_LARGE = dict(group=THROUGHPUT, source="#3", targets=(NEAR_NUMPY,), baseline=True,
              peak_rss=True, repeats=25, budget_s=15.0, block_s=0.1)


@workload("add_4M", title="a + b, 4M float32", extra=_bandwidth_extra(3), **_LARGE)
def add_4m(lib, device):
    a, b = _pair(lib, device, N_LARGE)
    return lambda: a + b


@workload("mul_4M", title="a * b, 4M float32", extra=_bandwidth_extra(3), **_LARGE)
def mul_4m(lib, device):
    a, b = _pair(lib, device, N_LARGE)
    return lambda: a * b


# --- (4) matmul ----------------------------------------------------------------------------

N_MATMUL = 1024


def _gflops_extra(medians, machine):
    flops = 2 * N_MATMUL**3
    rates = {name: flops / t / 1e9 for name, t in medians.items()}
    note = "GFLOP/s " + ", ".join(f"{k} {v:.1f}" for k, v in rates.items())
    for base in ("numpy", "cupy"):
        if base in rates:
            note += f" ({base}: the BLAS rate that {base} reaches here)"
    return {"gflop_per_s": rates}, [note]


@workload("matmul_1024", title="a @ b, 1024x1024 float32", extra=_gflops_extra, **_LARGE)
def matmul_1024(lib, device):
    rng = _rng()
    a = tensor(lib, rng.standard_normal((N_MATMUL, N_MATMUL), F32), device)
    b = tensor(lib, rng.standard_normal((N_MATMUL, N_MATMUL), F32), device)
    return lambda: a @ b


# --- (5), (6) import time and installed size: measured by run.py ------------------------------

add(Workload("import", group=FOOTPRINT, kind="import", source="#3", cpu_only=True,
             title="import time in a fresh interpreter", targets=(
                 Target("time ember/torch", "<=", 0.2),), repeats=10))
add(Workload("installed_size", group=FOOTPRINT, kind="size", cpu_only=True, source="#9",
             title="installed size: ember + numpy vs torch"))


# --- nn (issue 4) ----------------------------------------------------------------------------

def _train_step(model, optimizer, loss_fn, x, y):
    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


def _labels(lib, device, n, classes, seed=1):
    return tensor(lib, np.random.default_rng(seed).integers(0, classes, n), device)


def size_targets(size: str) -> tuple[Target, ...]:
    """Issue 24's targets for a model family at ``size``: ember/torch time <= 0.8 for the
    small shapes (where a lean framework's lower overhead should show), <= 1.0 for the
    medium and large ones; peak RSS <= 1.0x torch's everywhere."""
    return (Target("time ember/torch", "<=", 0.8 if size == "small" else 1.0),
            Target("peak RSS ember/torch", "<=", 1.0))


# The model families (MLP, LeNet-style CNN, LSTM LM, Transformer encoder) are built by one
# function of their shape; the workloads below are their medium sizes, workloads_families.py
# registers the small and large ones (and the families that have no workload here).

_MLP = ("manual_seed", "nn.Sequential", "nn.Linear", "nn.ReLU", "nn.CrossEntropyLoss",
        "optim.SGD")


def mlp_step(lib, device, widths, batch):
    """An MLP 784-widths-10 with ReLUs, SGD."""
    nn = lib.nn
    lib.manual_seed(0)
    layers, cin = [], 784
    for width in widths:
        layers += [nn.Linear(cin, width), nn.ReLU()]
        cin = width
    model = nn.Sequential(*layers, nn.Linear(cin, 10)).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    x = tensor(lib, _rng().standard_normal((batch, 784), F32), device)
    return _train_step(model, optimizer, lib.nn.CrossEntropyLoss(), x,
                       _labels(lib, device, batch, 10))


@workload(
    "mlp_sgd", group=NN, source="#24", targets=size_targets("medium"), family="mlp",
    size="medium", peak_rss=True,
    title="MLP 784-512-256-10, batch 128, SGD step", repeats=25, budget_s=20.0, block_s=0.1,
    requires=_MLP,
)
def mlp_sgd(lib, device):
    return mlp_step(lib, device, (512, 256), 128)


_LENET = ("manual_seed", "nn.Sequential", "nn.Conv2d", "nn.MaxPool2d", "nn.Flatten",
          "nn.Linear", "nn.ReLU", "nn.CrossEntropyLoss", "optim.Adam")


def lenet_step(lib, device, c1, c2, f1, f2, batch):
    """A LeNet-style CNN on 1x28x28: conv 5x5 (c1, padded) - pool - conv 5x5 (c2) - pool -
    fc f1 - fc f2 - 10, ReLUs, Adam."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(c2 * 5 * 5, f1), nn.ReLU(), nn.Linear(f1, f2), nn.ReLU(), nn.Linear(f2, 10),
    ).to(device)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = tensor(lib, _rng().standard_normal((batch, 1, 28, 28), F32), device)
    return _train_step(model, optimizer, nn.CrossEntropyLoss(), x,
                       _labels(lib, device, batch, 10))


@workload(
    "lenet5_adam", group=NN, source="#24", targets=size_targets("medium"), family="lenet",
    size="medium", peak_rss=True,
    title="LeNet-5, 1x28x28, batch 64, Adam step", repeats=20, budget_s=25.0, block_s=0.1,
    requires=_LENET,
)
def lenet5_adam(lib, device):
    return lenet_step(lib, device, 6, 16, 120, 84, 64)


def cifar_resnet(nn, widths, blocks):
    """A ResNet for 3x32x32 inputs: a 3x3 stem of ``widths[0]`` channels, then one stage per
    width (stride 1 for the first, 2 after) of ``blocks`` basic blocks with BatchNorm, global
    average pooling and 10 classes."""

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    cin = widths[0]
    layers = [nn.Conv2d(3, cin, 3, padding=1, bias=False), nn.BatchNorm2d(cin), nn.ReLU()]
    for i, cout in enumerate(widths):
        for block in range(blocks):
            layers.append(BasicBlock(cin, cout, 2 if i > 0 and block == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 10)]
    return nn.Sequential(*layers)


def resnet18_cifar(nn):
    """ResNet-18 for 3x32x32 inputs: basic blocks 64-128-256-512 with BatchNorm, 10 classes."""
    return cifar_resnet(nn, (64, 128, 256, 512), 2)


@workload(
    "resnet18_sgd", group=NN, source="#4", peak_rss=True,
    targets=(Target("time ember/torch", "<=", 1.5), Target("peak RSS ember/torch", "<=", 1.2)),
    title="ResNet-18-style, 3x32x32, batch 32, SGD-momentum step",
    repeats=5, budget_s=60.0, block_s=0.0,
    requires=("manual_seed", "nn.Module", "nn.Sequential", "nn.Conv2d", "nn.BatchNorm2d",
              "nn.ReLU", "nn.AdaptiveAvgPool2d", "nn.Flatten", "nn.Linear",
              "nn.CrossEntropyLoss", "optim.SGD"),
)
def resnet18_sgd(lib, device):
    nn = lib.nn
    lib.manual_seed(0)
    model = resnet18_cifar(nn).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = tensor(lib, _rng().standard_normal((32, 3, 32, 32), F32), device)
    return _train_step(model, optimizer, nn.CrossEntropyLoss(), x, _labels(lib, device, 32, 10))


# --- sequences (issue 5) ---------------------------------------------------------------------

_RNN_LM = ("manual_seed", "nn.Module", "nn.Embedding", "nn.Linear", "nn.CrossEntropyLoss",
           "optim.SGD")


def rnn_lm_step(lib, device, cell, vocab, width, seq, batch):
    """A word-level language model: embedding, a 2-layer ``cell`` (``"LSTM"`` or ``"GRU"``)
    as wide as the embedding, a linear decoder to the vocabulary; SGD."""
    nn = lib.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, width)
            self.rnn = getattr(nn, cell)(width, width, num_layers=2)
            self.decoder = nn.Linear(width, vocab)

        def forward(self, tokens):
            out, _ = self.rnn(self.embedding(tokens))
            return self.decoder(out).reshape(-1, vocab)

    lib.manual_seed(0)
    model = LanguageModel().to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    rng = _rng()
    tokens = tensor(lib, rng.integers(0, vocab, (seq, batch)), device)
    targets = tensor(lib, rng.integers(0, vocab, seq * batch), device)
    return _train_step(model, optimizer, nn.CrossEntropyLoss(), tokens, targets)


@workload(
    "lstm2_lm", group=SEQUENCE, source="#24", targets=size_targets("medium"), family="lstm_lm",
    size="medium", peak_rss=True,
    title="2-layer LSTM LM, vocab 10000, 256, seq 35, batch 20, SGD step",
    repeats=15, budget_s=30.0, block_s=0.0, requires=_RNN_LM + ("nn.LSTM",),
)
def lstm2_lm(lib, device):
    return rnn_lm_step(lib, device, "LSTM", 10000, 256, 35, 20)


_TRANSFORMER = ("manual_seed", "nn.TransformerEncoder", "nn.TransformerEncoderLayer",
                "nn.MSELoss", "optim.SGD")


def transformer_step(lib, device, width, heads, ff, seq, batch):
    """A 2-layer batch-first TransformerEncoder (post-norm, ReLU, dropout 0.1) regressing
    random targets with MSE; SGD."""
    nn = lib.nn
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=ff, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    rng = _rng()
    x = tensor(lib, rng.standard_normal((batch, seq, width), F32), device)
    y = tensor(lib, rng.standard_normal((batch, seq, width), F32), device)
    return _train_step(model, optimizer, nn.MSELoss(), x, y)


@workload(
    "transformer_encoder", group=SEQUENCE, source="#24", targets=size_targets("medium"),
    family="transformer", size="medium", peak_rss=True,
    title="TransformerEncoder 2x(256, 4 heads, ff 1024), seq 128, batch 16, SGD step",
    repeats=10, budget_s=40.0, block_s=0.0, requires=_TRANSFORMER,
)
def transformer_encoder(lib, device):
    return transformer_step(lib, device, 256, 4, 1024, 128, 16)


# --- optim (issue 6) -------------------------------------------------------------------------

def resnet18_parameter_shapes():
    """The shapes of torchvision's ResNet-18 parameters (ImageNet head): 62 tensors,
    11,689,512 floats."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            c = cin if block == 0 else cout
            shapes += [(cout, c, 3, 3), (cout,), (cout,), (cout, cout, 3, 3), (cout,), (cout,)]
            if block == 0 and (stride != 1 or c != cout):
                shapes += [(cout, c, 1, 1), (cout,), (cout,)]
        cin = cout
    return shapes + [(1000, 512), (1000,)]


def _parameters_with_grads(lib, device):
    rng = _rng()
    params = []
    for shape in resnet18_parameter_shapes():
        p = lib.nn.Parameter(tensor(lib, 0.01 * rng.standard_normal(shape, F32), device))
        p.grad = tensor(lib, 0.01 * rng.standard_normal(shape, F32), device)
        params.append(p)
    return params


_OPTIM = dict(group=OPTIM, source="#6", targets=(Target("time ember/torch", "<=", 1.0),),
              peak_rss=True, repeats=15, budget_s=20.0, block_s=0.0)
_PARAMS = sum(math.prod(s) for s in resnet18_parameter_shapes())


@workload("adam_11.7M", title=f"Adam step, ResNet-18 parameters ({_PARAMS:,} floats)",
          requires=("nn.Parameter", "optim.Adam"), **_OPTIM)
def adam_step(lib, device):
    optimizer = lib.optim.Adam(_parameters_with_grads(lib, device), lr=1e-3)
    return optimizer.step


@workload("sgd_momentum_11.7M",
          title=f"SGD-momentum step, ResNet-18 parameters ({_PARAMS:,} floats)",
          requires=("nn.Parameter", "optim.SGD"), **_OPTIM)
def sgd_momentum_step(lib, device):
    optimizer = lib.optim.SGD(_parameters_with_grads(lib, device), lr=0.01, momentum=0.9)
    return optimizer.step


# --- data (issue 7) --------------------------------------------------------------------------

class ItemDataset:
    """10,000 float32 3x32x32 items with a light per-item transform (normalisation).

    A map-style dataset needs only ``__getitem__`` and ``__len__`` in both libraries; a
    module-level class pickles, for worker processes that are spawned rather than forked.
    """

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return (self.images[i] - 0.5) / 0.25, self.labels[i]


def _loader_epoch(lib, workers):
    rng = _rng()
    images = tensor(lib, rng.random((10000, 3, 32, 32), F32))
    labels = tensor(lib, rng.integers(0, 10, 10000))
    loader = lib.utils.data.DataLoader(ItemDataset(images, labels), batch_size=64,
                                       shuffle=True, num_workers=workers)

    def epoch():
        for _batch in loader:
            pass

    return epoch


def _items_per_second(medians, machine):
    rates = {name: 10_000 / t for name, t in medians.items()}
    return {"items_per_s": rates}, [
        "one epoch of 10,000 items per call; items/s " + ", ".join(
            f"{name} {rate:,.0f}" for name, rate in rates.items())]


_DATA = dict(group=DATA, source="#7", targets=(Target("throughput ember/torch", ">=", 1.0),),
             cpu_only=True, requires=("manual_seed", "utils.data.DataLoader"), repeats=7,
             budget_s=30.0, block_s=0.0, extra=_items_per_second)


@workload("dataloader_0w", title="DataLoader, 10k 3x32x32 items, batch 64, 0 workers", **_DATA)
def dataloader_0w(lib, device):
    lib.manual_seed(0)
    return _loader_epoch(lib, 0)


@workload("dataloader_2w", title="DataLoader, 10k 3x32x32 items, batch 64, 2 workers", **_DATA)
def dataloader_2w(lib, device):
    lib.manual_seed(0)
    return _loader_epoch(lib, 2)
