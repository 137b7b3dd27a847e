"""Distributed communication (torch.distributed) on MPI.

ember's CPU backend is MPI (Open MPI through mpi4py: ``pip install 'ember[distributed]'``);
``backend='gloo'``, the name PyTorch programs use for the CPU, runs on it too. The ranks are
the processes that the launcher started::

    python -m ember.distributed.run --nproc-per-node 2 train.py

and every operation waits at most the group's timeout (``init_process_group(timeout=...)``)
before it raises :class:`DistBackendError`; a rank that dies of an exception makes the ranks
waiting for it raise at once. See docs/distributed.md.

Example::

    >>> import ember.distributed as dist
    >>> dist.init_process_group("gloo")
    >>> t = ember.ones(3) * dist.get_rank()
    >>> dist.all_reduce(t)
"""

from __future__ import annotations

from ember.distributed import distributed_c10d
from ember.distributed._collectives import *  # noqa: F403
from ember.distributed._collectives import __all__ as _collectives_all
from ember.distributed._debug import *  # noqa: F403
from ember.distributed._debug import __all__ as _debug_all
from ember.distributed._grad_bucket import GradBucket  # DDP's comm hooks (dist-ddp)
from ember.distributed._object_collectives import *  # noqa: F403
from ember.distributed._object_collectives import __all__ as _objects_all
from ember.distributed._p2p import *  # noqa: F403
from ember.distributed._p2p import __all__ as _p2p_all
from ember.distributed._store import *  # noqa: F403
from ember.distributed._store import __all__ as _stores
from ember.distributed._types import *  # noqa: F403
from ember.distributed._types import __all__ as _types_all
from ember.distributed._work import Work  # noqa: F401 - in __all__ (_moved)
from ember.distributed.device_mesh import DeviceMesh, init_device_mesh
from ember.distributed.distributed_c10d import *  # noqa: F403
from ember.distributed.distributed_c10d import __all__ as _c10d_all

# PyTorch's module path: torch.distributed.distributed_c10d.all_reduce & co.
_moved = [*_collectives_all, *_p2p_all, *_objects_all, *_types_all, *_stores, *_debug_all,
          "Work"]
for _name in _moved:
    setattr(distributed_c10d, _name, globals()[_name])
del _name

__all__ = [*_c10d_all, *_moved, "DeviceMesh", "init_device_mesh", "GradBucket"]
del _moved
