"""``ember.nn.parallel``: data parallelism over the devices there are, as
``torch.nn.parallel``: :class:`DataParallel` and its pieces (:func:`replicate`,
:func:`scatter`, :func:`parallel_apply`, :func:`gather`, :func:`data_parallel`).

:class:`DistributedDataParallel` comes with ``ember.distributed`` (the distributed issue);
until then making one raises ``RuntimeError`` saying so.
"""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel
from ember.nn.parallel.distributed import DistributedDataParallel
from ember.nn.parallel.parallel_apply import parallel_apply
from ember.nn.parallel.replicate import replicate
from ember.nn.parallel.scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel",
           "DataParallel", "DistributedDataParallel"]
