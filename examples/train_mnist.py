"""Train a digit classifier with ember and report held-out accuracy.

By default it trains on digits the script draws itself (see digits.py: no download);
``--mnist DIR`` trains on the real MNIST IDX files in DIR instead.

The model is a two-layer perceptron written directly with ember tensors and autograd,
trained with hand-written SGD with momentum; it becomes a small CNN built from
``ember.nn`` once that lands.

    python examples/train_mnist.py               # synthetic digits, ~1 minute on 2 cores
    python examples/train_mnist.py --mnist ~/data/mnist
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digits import load_mnist, synthetic_digits  # noqa: E402

import ember  # noqa: E402


def init_params(sizes, gen):
    """Weights with PyTorch's nn.Linear default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / math.sqrt(fan_in)
        w = (ember.rand(fan_in, fan_out, generator=gen) * 2 - 1) * bound
        b = (ember.rand(fan_out, generator=gen) * 2 - 1) * bound
        params += [w.requires_grad_(), b.requires_grad_()]
    return params


def forward(params, x):
    """Logits of the perceptron: linear layers with ReLU between them."""
    n = len(params) // 2
    for i in range(n):
        x = x @ params[2 * i] + params[2 * i + 1]
        if i < n - 1:
            x = x.relu()
    return x


def cross_entropy(logits, labels):
    """Mean negative log-likelihood of ``labels`` under softmax(logits)."""
    picked = logits.gather(1, labels.unsqueeze(1)).squeeze(1)
    return (logits.logsumexp(1) - picked).mean()


def accuracy(params, x, y, batch=1000):
    correct = 0
    with ember.no_grad():
        for i in range(0, len(x), batch):
            pred = forward(params, x[i:i + batch]).argmax(1)
            correct += int((pred == y[i:i + batch]).sum())
    return correct / len(x)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mnist", metavar="DIR", help="directory with MNIST IDX files")
    p.add_argument("--train-size", type=int, default=12000)
    p.add_argument("--test-size", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    if args.mnist:
        xtr, ytr, xte, yte = load_mnist(args.mnist)
        source = f"MNIST from {args.mnist}"
    else:
        xtr, ytr = synthetic_digits(args.train_size, seed=args.seed)
        xte, yte = synthetic_digits(args.test_size, seed=args.seed + 1)
        source = "synthetic digits (examples/digits.py)"
    # standardize with the training set's statistics, flatten to vectors
    mean, std = xtr.mean(), xtr.std()
    x_train = ember.from_numpy(((xtr - mean) / std).reshape(len(xtr), -1).astype(np.float32))
    x_test = ember.from_numpy(((xte - mean) / std).reshape(len(xte), -1).astype(np.float32))
    y_train, y_test = ember.from_numpy(ytr), ember.from_numpy(yte)
    print(f"data: {source}: {len(xtr)} training and {len(xte)} test images "
          f"({time.perf_counter() - t0:.1f} s)")

    gen = ember.Generator().manual_seed(args.seed)
    params = init_params([x_train.shape[1], args.hidden, 10], gen)
    velocity = [ember.zeros_like(q) for q in params]

    for epoch in range(1, args.epochs + 1):
        t_epoch = time.perf_counter()
        order = ember.randperm(len(x_train), generator=gen)
        total, batches = 0.0, 0
        for i in range(0, len(order), args.batch_size):
            idx = order[i:i + args.batch_size]
            loss = cross_entropy(forward(params, x_train[idx]), y_train[idx])
            loss.backward()
            with ember.no_grad():
                for q, v in zip(params, velocity):
                    v.mul_(args.momentum).add_(q.grad)
                    q.sub_(args.lr * v)
                    q.grad = None
            total += loss.item()
            batches += 1
        acc = accuracy(params, x_test, y_test)
        print(f"epoch {epoch}: loss {total / batches:.4f}  test accuracy {acc:.2%}  "
              f"({time.perf_counter() - t_epoch:.1f} s)")
    print(f"done in {time.perf_counter() - t0:.1f} s: held-out accuracy {acc:.2%}")
    return acc


if __name__ == "__main__":
    main()
