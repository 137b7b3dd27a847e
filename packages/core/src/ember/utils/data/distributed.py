"""``DistributedSampler``: each of ``num_replicas`` processes sees its own share of a
dataset (as ``torch.utils.data.distributed``).

NOTE [ DistributedSampler and ember.distributed ]
The sampler needs only the world size and the rank. Given them explicitly it works now;
left as None they are read from ``ember.distributed`` (``get_world_size``/``get_rank``),
which lands with the distributed work; until then that raises PyTorch's "Requires
distributed package to be available".
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ember.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


def _dist():
    try:
        from ember import distributed
    except ImportError:
        distributed = None
    if distributed is None or not getattr(distributed, "is_available", lambda: False)():
        raise RuntimeError("Requires distributed package to be available")
    return distributed


class DistributedSampler(Sampler):
    """Restricts sampling to the ``rank``-th of ``num_replicas`` shares of ``dataset``
    (padded by repeating indices so that every share has the same length, unless
    ``drop_last``); shuffled with ``seed + epoch`` (call :meth:`set_epoch` each epoch)."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _dist().get_world_size()
        if rank is None:
            rank = _dist().get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil(
                (len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator:
        if self.shuffle:
            import ember

            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which with ``seed`` decides the shuffle order."""
        self.epoch = epoch
