"""embertext.data.BucketBatchSampler."""

import pytest

import ember
from ember.utils.data import DataLoader
from embertext.data import BucketBatchSampler


def test_every_index_once_and_sorted_buckets():
    lengths = [(i * 37) % 101 for i in range(1000)]
    sampler = BucketBatchSampler(lengths, batch_size=16, bucket_size_multiplier=4,
                                 generator=ember.Generator().manual_seed(0))
    batches = list(sampler)
    assert len(batches) == len(sampler)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    # Within a bucket of 64 random items, a batch of 16 spans a quarter of the lengths.
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches)
    assert spread / len(batches) < 40
    again = BucketBatchSampler(lengths, batch_size=16, bucket_size_multiplier=4,
                               generator=ember.Generator().manual_seed(0))
    assert list(again) == batches


def test_no_shuffle_and_drop_last():
    lengths = [5, 1, 4, 2, 3, 9, 7]
    sampler = BucketBatchSampler(lengths, batch_size=2, bucket_size_multiplier=2,
                                 shuffle=False)
    assert list(sampler) == [[1, 3], [2, 0], [4, 6], [5]]
    assert len(sampler) == 4
    dropped = BucketBatchSampler(lengths, batch_size=2, bucket_size_multiplier=2,
                                 shuffle=False, drop_last=True)
    assert list(dropped) == [[1, 3], [2, 0], [4, 6]] and len(dropped) == 3
    assert list(BucketBatchSampler([], 4)) == [] and len(BucketBatchSampler([], 4)) == 0
    with pytest.raises(ValueError, match="batch_size"):
        BucketBatchSampler(lengths, 0)


def test_with_a_data_loader():
    texts = [[1] * n for n in (3, 1, 2, 5, 4, 1)]
    loader = DataLoader(texts, batch_sampler=BucketBatchSampler([len(t) for t in texts], 2),
                        collate_fn=lambda batch: [len(t) for t in batch])
    assert sorted(n for batch in loader for n in batch) == [1, 1, 2, 3, 4, 5]
