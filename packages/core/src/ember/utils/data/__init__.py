"""Data loading, as ``torch.utils.data``: datasets, samplers, collation and the
``DataLoader`` with worker processes whose batches travel through shared memory."""

from ember.utils.data._collate import default_collate, default_convert
from ember.utils.data._worker import WorkerInfo, get_worker_info  # noqa: F401
from ember.utils.data.dataloader import DataLoader, _DatasetKind
from ember.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ember.utils.data.distributed import DistributedSampler
from ember.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "_DatasetKind",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]

from ember.utils.data import _datapipes  # noqa: E402
from ember.utils.data._datapipes import *  # noqa: E402,F403

__all__ += _datapipes.__all__
