"""Hogwild training: several processes update one shared model with SGD, without locks.

The model's parameters are moved to shared memory (``model.share_memory()``) and the
model is passed to worker processes started with ``ember.multiprocessing``; each worker
runs its own optimizer on its own mini-batches and writes straight into the shared
parameters (Recht et al., 2011). The main process does not train: it watches the shared
model's loss on the full data set while the workers run, and prints the curve.

The code is what it would be with PyTorch: replace ``ember`` by ``torch``.

    python examples/hogwild.py                      # 4 processes, spawn start method
    python examples/hogwild.py --processes 2 --steps 500 --start-method fork
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ember
import ember.multiprocessing as mp
from ember import nn


class Regressor(nn.Module):
    """A small MLP: 16 -> 32 -> 1."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def make_data(n=4096, seed=0):
    """y = sin(x . w1) + 0.5 (x . w2), with a little noise."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 16)).astype(np.float32)
    w1, w2 = rng.standard_normal((2, 16, 1)).astype(np.float32) / 4
    y = np.sin(x @ w1) + 0.5 * (x @ w2) + 0.01 * rng.standard_normal((n, 1))
    return ember.from_numpy(x), ember.from_numpy(y.astype(np.float32))


def train(rank, model, x, y, steps, batch_size, lr):
    """One Hogwild worker: SGD on random mini-batches, straight into the shared model."""
    ember.manual_seed(1000 + rank)
    optimizer = ember.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (batch_size,))
        loss = loss_fn(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def full_loss(model, x, y) -> float:
    with ember.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--steps", type=int, default=400, help="SGD steps per process")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--start-method", default="spawn", choices=["spawn", "fork"])
    parser.add_argument("--every", type=float, default=0.1, help="seconds between readings")
    args = parser.parse_args(argv)

    ember.manual_seed(0)
    x, y = make_data()
    x.share_memory_()
    y.share_memory_()
    model = Regressor()
    model.share_memory()  # the workers write into these very parameters

    ctx = mp.get_context(args.start_method)
    procs = [ctx.Process(target=train, args=(rank, model, x, y, args.steps, args.batch_size,
                                             args.lr))
             for rank in range(args.processes)]
    t0 = time.perf_counter()
    curve = [(0.0, full_loss(model, x, y))]
    for p in procs:
        p.start()
    while any(p.is_alive() for p in procs):
        time.sleep(args.every)
        curve.append((time.perf_counter() - t0, full_loss(model, x, y)))
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        raise SystemExit(f"a worker failed: exit codes {[p.exitcode for p in procs]}")
    curve.append((time.perf_counter() - t0, full_loss(model, x, y)))

    print(f"Hogwild: {args.processes} processes x {args.steps} SGD steps "
          f"({args.start_method}), loss of the shared model on {x.shape[0]} samples:")
    top = max(loss for _, loss in curve)
    shown = [c for i, c in enumerate(curve)  # readings where the loss moved
             if i in (0, len(curve) - 1) or c[1] != curve[i - 1][1]]
    for t, loss in shown:
        bar = "#" * max(1, round(50 * loss / top))
        print(f"  {t:6.2f} s  {loss:8.5f}  {bar}")
    print(f"loss {curve[0][1]:.5f} -> {curve[-1][1]:.5f}")


if __name__ == "__main__":
    main()
