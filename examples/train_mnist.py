"""Train a small convolutional digit classifier with ember and report held-out accuracy.

By default it trains on digits the script draws itself (see digits.py: no download);
``--mnist DIR`` trains on the real MNIST IDX files in DIR instead.

The network is a LeNet-style CNN from ``ember.nn`` (two 5x5 convolutions with max pooling,
then two linear layers), trained with ``ember.optim.SGD`` with momentum on cross-entropy.
The code is what it would be with PyTorch: replace ``ember`` by ``torch``.

    python examples/train_mnist.py               # synthetic digits, about a minute on 2 cores
                                                 # (saves the weights to mnist_convnet.pt)
    python examples/train_mnist.py --mnist ~/data/mnist --train-size 60000 --test-size 10000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digits import load_mnist, synthetic_digits  # noqa: E402

import ember  # noqa: E402
from ember import nn  # noqa: E402


class ConvNet(nn.Module):
    """1x28x28 -> conv 5x5 (8) -> pool -> conv 5x5 (16) -> pool -> 128 -> 10."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def progress(steps, desc, disable=False):
    """The steps, with a tqdm progress bar where tqdm is installed (else a line per quarter)."""
    if disable:
        return steps
    try:
        from tqdm import tqdm
    except ImportError:
        return _quarters(steps, desc)
    return tqdm(steps, desc=desc, unit="batch", leave=False)


def _quarters(steps, desc):
    n = len(steps)
    for k, step in enumerate(steps, 1):
        yield step
        if k * 4 // n != (k - 1) * 4 // n and k != n:
            print(f"{desc}: {k}/{n} batches", flush=True)


def accuracy(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with ember.no_grad():
        for i in range(0, len(x), batch):
            correct += int((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    model.train()
    return correct / len(x)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mnist", metavar="DIR", help="directory with MNIST IDX files")
    p.add_argument("--train-size", type=int, default=12000,
                   help="training images to use (all of them if larger than the set)")
    p.add_argument("--test-size", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", metavar="FILE", default="mnist_convnet.pt",
                   help="where to save the trained weights (ember.save; default: %(default)s)")
    p.add_argument("--no-save", action="store_true", help="do not save the trained weights")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    if args.mnist:
        xtr, ytr, xte, yte = load_mnist(args.mnist)
        xtr, ytr = xtr[:args.train_size], ytr[:args.train_size]
        xte, yte = xte[:args.test_size], yte[:args.test_size]
        source = f"MNIST from {args.mnist}"
    else:
        xtr, ytr = synthetic_digits(args.train_size, seed=args.seed)
        xte, yte = synthetic_digits(args.test_size, seed=args.seed + 1)
        source = "synthetic digits (examples/digits.py)"
    # standardize with the training set's statistics; images as N x 1 x 28 x 28
    mean, std = xtr.mean(), xtr.std()
    x_train = ember.from_numpy(((xtr - mean) / std)[:, None].astype(np.float32))
    x_test = ember.from_numpy(((xte - mean) / std)[:, None].astype(np.float32))
    y_train, y_test = ember.from_numpy(ytr), ember.from_numpy(yte)
    print(f"data: {source}: {len(xtr)} training and {len(xte)} test images "
          f"({time.perf_counter() - t0:.1f} s)")

    ember.manual_seed(args.seed)
    model = ConvNet()
    optimizer = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    gen = ember.Generator().manual_seed(args.seed)

    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        t_epoch = time.perf_counter()
        order = ember.randperm(len(x_train), generator=gen)
        total, batches = 0.0, 0
        steps = range(0, len(order), args.batch_size)
        for i in progress(steps, f"epoch {epoch}/{args.epochs}", args.no_progress):
            idx = order[i:i + args.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        scheduler.step()
        acc = accuracy(model, x_test, y_test)
        print(f"epoch {epoch}: loss {total / batches:.4f}  test accuracy {acc:.2%}  "
              f"({time.perf_counter() - t_epoch:.1f} s)")
    print(f"done in {time.perf_counter() - t0:.1f} s: held-out accuracy {acc:.2%}")
    if args.save and not args.no_save:
        ember.save(model.state_dict(), args.save)
        print(f"weights saved to {Path(args.save).resolve()}")
    return acc


if __name__ == "__main__":
    main()
