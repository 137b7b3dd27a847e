"""DistributedSampler against PyTorch's: without shuffling the index streams are equal; with
shuffling both samplers turn the same permutation into the same per-rank streams (padding,
drop_last, striding), checked by handing PyTorch's sampler ember's permutation.

ember's random streams are NumPy's, not PyTorch's, so ``randperm`` of the same seed differs
between the two libraries and so do shuffled streams of the same seed.
"""

from __future__ import annotations

import pytest

import ember
from ember.utils.data.distributed import DistributedSampler

torch = pytest.importorskip("torch")
import torch.utils.data.distributed as torch_distributed  # noqa: E402


def _ember_randperm(n, generator=None):
    """ember's permutation for the seed of a torch generator (what ember's sampler draws)."""
    g = ember.Generator()
    g.manual_seed(generator.initial_seed())
    return torch.tensor(ember.randperm(n, generator=g).tolist(), dtype=torch.int64)


@pytest.mark.parametrize("length", [0, 1, 7, 10, 33])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [False, True])
def test_index_streams_equal_torch(length, replicas, shuffle, drop_last, monkeypatch):
    monkeypatch.setattr(torch_distributed.torch, "randperm", _ember_randperm)
    data = list(range(length))
    for rank in range(replicas):
        for seed in (0, 1234):
            ours = DistributedSampler(data, replicas, rank, shuffle=shuffle, seed=seed,
                                      drop_last=drop_last)
            theirs = torch_distributed.DistributedSampler(
                data, replicas, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
            for epoch in (0, 1, 5):
                ours.set_epoch(epoch)
                theirs.set_epoch(epoch)
                assert list(ours) == list(theirs), (rank, seed, epoch)
                assert len(ours) == len(theirs)
