"""The main job (train_mnist.py's digit classifier) trained data-parallel on several processes.

Each rank trains a replica of the ConvNet on its share of every batch (DistributedSampler
splits the data, DistributedDataParallel averages the gradients), so the replicas stay equal;
rank 0 evaluates, prints and saves the weights. Start it through the launcher:

    python -m ember.distributed.run --nproc-per-node 2 examples/mnist_ddp.py
    python -m ember.distributed.run --nproc-per-node 2 examples/mnist_ddp.py --mnist ~/data/mnist

(``mpiexec -n 2 python examples/mnist_ddp.py`` works too). ``--batch-size`` is the global
batch: each of the N ranks takes ``batch_size / N`` of it, so the learning rate of the
single-process job still fits. The same program runs under ``torchrun`` after changing
``ember`` to ``torch``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digits import load_mnist, synthetic_digits  # noqa: E402
from train_mnist import ConvNet, accuracy, progress  # noqa: E402

import ember  # noqa: E402
import ember.distributed as dist  # noqa: E402
from ember import nn  # noqa: E402
from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from ember.utils.data import DataLoader, TensorDataset  # noqa: E402
from ember.utils.data.distributed import DistributedSampler  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mnist", metavar="DIR", help="directory with MNIST IDX files")
    p.add_argument("--train-size", type=int, default=12000)
    p.add_argument("--test-size", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64, help="the global batch size")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=None,
                   help="stop each epoch after this many steps (a quick check)")
    p.add_argument("--save", metavar="FILE", default="mnist_convnet_ddp.pt",
                   help="where rank 0 saves the trained weights (default: %(default)s)")
    p.add_argument("--no-save", action="store_true", help="do not save the trained weights")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)

    dist.init_process_group("gloo")      # ranks from the launcher (mpiexec underneath)
    rank, world = dist.get_rank(), dist.get_world_size()
    is_main = rank == 0
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by the {world} ranks")

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
    mean, std = xtr.mean(), xtr.std()
    x_train = ember.from_numpy(((xtr - mean) / std)[:, None].astype(np.float32))
    x_test = ember.from_numpy(((xte - mean) / std)[:, None].astype(np.float32))
    y_train, y_test = ember.from_numpy(ytr), ember.from_numpy(yte)
    if is_main:
        print(f"data: {source}: {len(xtr)} training and {len(xte)} test images, "
              f"{world} ranks of {args.batch_size // world} per batch "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)

    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.seed, drop_last=True)
    loader = DataLoader(train, batch_size=args.batch_size // world, sampler=sampler)

    ember.manual_seed(args.seed)
    model = DDP(ConvNet())          # rank 0's initial weights reach every rank
    optimizer = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()

    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        t_epoch = time.perf_counter()
        sampler.set_epoch(epoch)           # a new shuffle each epoch, the same on all ranks
        total, batches = 0.0, 0
        steps = list(loader) if args.max_steps is None else list(loader)[:args.max_steps]
        for xb, yb in progress(steps, f"epoch {epoch}/{args.epochs}",
                               args.no_progress or not is_main):
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()                 # gradients averaged over the ranks here
            optimizer.step()
            total += loss.item()
            batches += 1
        scheduler.step()
        # the mean training loss over all ranks, for the log
        mean_loss = ember.tensor([total / max(batches, 1)])
        dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)
        if is_main:
            acc = accuracy(model.module, x_test, y_test)
            print(f"epoch {epoch}: loss {mean_loss.item():.4f}  test accuracy {acc:.2%}  "
                  f"({time.perf_counter() - t_epoch:.1f} s)", flush=True)
    if is_main:
        print(f"done in {time.perf_counter() - t0:.1f} s: held-out accuracy {acc:.2%}",
              flush=True)
        if args.save and not args.no_save:
            # rank 0 saves the plain module's weights (no "module." prefix)
            ember.save(model.module.state_dict(), args.save)
            print(f"weights saved to {Path(args.save).resolve()}", flush=True)
    dist.barrier()                          # nobody reads the file before it is written
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
