"""Batches of texts of similar length: less padding, faster epochs."""

import ember
from ember.utils.data import Sampler

__all__ = ["BucketBatchSampler"]


class BucketBatchSampler(Sampler):
    r"""Yield batches of indices whose texts have similar lengths.

    The indices are shuffled, cut into buckets of ``batch_size * bucket_size_multiplier``,
    each bucket is sorted by length and cut into batches, and the batches are shuffled: an
    epoch sees every index once, in batches that need little padding.

    Args:
        lengths (sequence of int): the length of each item.
        batch_size (int): the size of a batch.
        bucket_size_multiplier (int): batches per bucket. Default: 100.
        shuffle (bool): shuffle indices and batches; otherwise buckets follow the order of
            the items and batches the order of the buckets. Default: ``True``.
        drop_last (bool): leave out the smaller last batch of each bucket. Default: ``False``.
        generator (ember.Generator, optional): the random numbers.

    Examples::

        >>> sampler = BucketBatchSampler([len(t) for t in texts], batch_size=32)
        >>> loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)
    """

    def __init__(self, lengths, batch_size, bucket_size_multiplier=100, shuffle=True,
                 drop_last=False, generator=None):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if not isinstance(bucket_size_multiplier, int) or bucket_size_multiplier <= 0:
            raise ValueError("bucket_size_multiplier should be a positive integer, got "
                             f"{bucket_size_multiplier!r}")
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.bucket_size = batch_size * bucket_size_multiplier
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.generator = generator

    def _permutation(self, n):
        return ember.randperm(n, generator=self.generator).tolist()

    def __iter__(self):
        n = len(self.lengths)
        order = self._permutation(n) if self.shuffle else list(range(n))
        batches = []
        for start in range(0, n, self.bucket_size):
            bucket = sorted(order[start:start + self.bucket_size],
                            key=lambda i: self.lengths[i])
            for b in range(0, len(bucket), self.batch_size):
                batch = bucket[b:b + self.batch_size]
                if len(batch) < self.batch_size and self.drop_last:
                    continue
                batches.append(batch)
        if self.shuffle and batches:
            batches = [batches[i] for i in self._permutation(len(batches))]
        return iter(batches)

    def __len__(self):
        n = len(self.lengths)
        full, rest = divmod(n, self.bucket_size)
        per_bucket = self.bucket_size // self.batch_size
        if self.drop_last:
            return full * per_bucket + rest // self.batch_size
        return full * per_bucket + -(-rest // self.batch_size)
