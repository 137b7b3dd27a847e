"""Memory: a training loop keeps a flat number of live tensors and a flat RSS, the
graph makes no reference cycles, and saved tensors are freed after backward unless
``retain_graph=True``."""

from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np
import pytest

import ember


def _live_tensors() -> int:
    # type(), not isinstance(): some objects (torch modules) answer __class__ lookups noisily
    return sum(1 for o in gc.get_objects() if issubclass(type(o), ember.Tensor))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _ScaledTanh(ember.autograd.Function):
    """A custom op in the loop, so that Function nodes are covered too."""

    @staticmethod
    def forward(ctx, x, scale):
        y = ember.from_numpy(np.tanh(x.detach().numpy()) * scale)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (ctx.scale - y * y / ctx.scale), None


def _make_model(seed=0):
    rng = np.random.default_rng(seed)
    # activations of 256 x 64 float32 (64 KiB): a leak of one per step is 64 MiB
    w1 = ember.tensor(rng.standard_normal((16, 64)) * 0.1, dtype=ember.float32,
                      requires_grad=True)
    b1 = ember.zeros(64, requires_grad=True)
    w2 = ember.tensor(rng.standard_normal((64, 1)) * 0.1, dtype=ember.float32,
                      requires_grad=True)
    x = ember.tensor(rng.standard_normal((256, 16)), dtype=ember.float32)
    y = ember.tensor(rng.standard_normal((256, 1)), dtype=ember.float32)
    params = [w1, b1, w2]

    def step():
        h = _ScaledTanh.apply(x.matmul(w1) + b1, 1.5)
        h = (h * h.sigmoid()).relu()
        loss = ((h.matmul(w2) - y) ** 2).mean()
        loss.backward()
        with ember.no_grad():
            for p in params:
                p.sub_(p.grad * 0.05)
                p.grad = None
        return float(loss)

    return step


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_training_loop_is_flat_in_tensors_and_rss():
    step = _make_model()
    for _ in range(50):     # warm up caches and allocator pools
        step()
    gc.collect()
    tensors0, rss0 = _live_tensors(), _rss_bytes()
    losses = [step() for _ in range(1000)]
    gc.collect()
    tensors1, rss1 = _live_tensors(), _rss_bytes()
    assert losses[-1] < losses[0]          # it trains
    assert tensors1 == tensors0
    # slack for the allocator's own variation; one leaked activation per step is 64 MiB
    assert rss1 - rss0 < 8 * 2 ** 20, f"RSS grew by {rss1 - rss0} bytes"


def test_training_loop_makes_no_reference_cycles():
    step = _make_model(1)
    step()
    gc.collect()
    gc.disable()
    try:
        for _ in range(200):
            step()
        collected = gc.collect()
    finally:
        gc.enable()
    assert collected == 0


def test_saved_tensors_freed_after_backward():
    x = ember.ones(4, requires_grad=True)
    h = x * 2
    out = h.sin().sum()         # SinBackward0 keeps h
    ref = weakref.ref(h)
    del h
    assert ref() is not None
    out.backward()
    assert ref() is None        # freed by reference counting, no gc needed


def test_retain_graph_keeps_saved_tensors_until_graph_dies():
    x = ember.ones(4, requires_grad=True)
    h = x * 2
    out = h.sin().sum()
    ref = weakref.ref(h)
    del h
    out.backward(retain_graph=True)
    assert ref() is not None
    out.backward()
    assert ref() is None


def test_graph_freed_with_its_output():
    x = ember.ones(4, requires_grad=True)
    h = x * 2
    out = (h.exp() * h).sum()
    node_ref = weakref.ref(out.grad_fn)
    h_ref = weakref.ref(h)
    del h, out
    assert node_ref() is None and h_ref() is None


def test_autograd_grad_frees_graph_and_custom_function_saved_tensors():
    x = ember.ones(3, requires_grad=True)
    y = _ScaledTanh.apply(x * 1, 2.0)
    data_ref = weakref.ref(y.grad_fn)
    (g,) = ember.autograd.grad(y.sum(), x)
    assert y.grad_fn._saved is None
    del y
    assert data_ref() is None
    assert g.shape == (3,)


# --- malloc tuning (NOTE [ malloc and page faults ]) ------------------------------------------
_FAULTS = """
import resource
import numpy as np
import ember
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def step():  # a step's activations: several arrays of 1-8 MB alive together, then freed
    keep = [np.ones(n) for n in (1 << 18, 1 << 19, 1 << 20, 3 << 18, 1 << 20, 1 << 17)]
    return sum(float(a[0]) for a in keep)
step()
before = faults()
for _ in range(20):
    step()
print(faults() - before)
"""


def _faults_of_repeated_arrays(env_extra):
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", _FAULTS], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_repeated_arrays_reuse_their_pages():
    # 20 steps of 30 MB of arrays: tens of thousands of page faults when glibc gives the
    # memory back at every free (measured: 36,000 untuned, 0 tuned)
    tuned = _faults_of_repeated_arrays({})
    untuned = _faults_of_repeated_arrays({"EMBER_MALLOC_TUNING": "0"})
    assert tuned < 2000, tuned
    assert untuned > 20000, untuned  # the test can tell the difference


def test_malloc_tuning_respects_the_user(monkeypatch):
    from ember._backend import _malloc

    monkeypatch.setattr(_malloc, "_done", False)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536")
    assert _malloc.tune() is False
    monkeypatch.setattr(_malloc, "_done", False)
    monkeypatch.delenv("GLIBC_TUNABLES")
    monkeypatch.setenv("EMBER_MALLOC_TUNING", "0")
    assert _malloc.tune() is False
    monkeypatch.setattr(_malloc, "_done", False)
    monkeypatch.delenv("EMBER_MALLOC_TUNING")
    assert _malloc.tune() is sys.platform.startswith("linux")
    assert _malloc.tune() is False  # once per process


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_conv_net_with_adam_is_flat_over_1000_steps():
    ember.manual_seed(0)
    model = ember.nn.Sequential(
        ember.nn.Conv2d(1, 4, 3, padding=1), ember.nn.BatchNorm2d(4), ember.nn.ReLU(),
        ember.nn.MaxPool2d(2), ember.nn.Flatten(), ember.nn.Linear(4 * 4 * 4, 3))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    x = ember.randn(8, 1, 8, 8)
    y = ember.tensor([0, 1, 2, 0, 1, 2, 0, 1])

    def step():
        opt.zero_grad()
        loss = ember.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return float(loss)

    for _ in range(50):
        step()
    gc.collect()
    tensors0, rss0 = _live_tensors(), _rss_bytes()
    losses = [step() for _ in range(1000)]
    gc.collect()
    tensors1, rss1 = _live_tensors(), _rss_bytes()
    assert losses[-1] < losses[0]
    assert tensors1 == tensors0
    assert rss1 - rss0 < 8 * 2 ** 20, f"RSS grew by {rss1 - rss0} bytes"


class _Squares(ember.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return ember.full((16,), float(i * i))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_dataloader_workers_over_many_epochs_leak_no_processes_or_memory():
    import multiprocessing

    loader = ember.utils.data.DataLoader(_Squares(), batch_size=8, num_workers=2)
    totals = []
    rss = []
    for epoch in range(12):
        totals.append(sum(float(b.sum()) for b in loader))
        if epoch in (2, 11):
            gc.collect()
            rss.append(_rss_bytes())
    assert len(set(totals)) == 1 and totals[0] == 16 * sum(i * i for i in range(64))
    assert not multiprocessing.active_children()
    assert rss[1] - rss[0] < 8 * 2 ** 20, f"RSS grew by {rss[1] - rss[0]} bytes"
    persistent = ember.utils.data.DataLoader(_Squares(), batch_size=8, num_workers=2,
                                             persistent_workers=True)
    for _ in range(12):
        assert sum(float(b.sum()) for b in persistent) == totals[0]
    del persistent
    gc.collect()
    assert not multiprocessing.active_children()
