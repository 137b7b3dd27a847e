"""``DistributedDataParallel``: it needs ember.distributed, which is not there yet."""

from __future__ import annotations

from ember.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes (``torch.nn.parallel.DistributedDataParallel``).

    Not available yet: it comes with ``ember.distributed`` (collectives on MPI and NCCL,
    the distributed issue). Making one raises ``RuntimeError``; for one process with
    several GPUs, :class:`ember.nn.DataParallel` works now.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None,
                 batched_grad_copy=False, forward_sync_buffers=None):
        raise RuntimeError(
            "ember.nn.parallel.DistributedDataParallel is not available yet: it comes with "
            "ember.distributed (the distributed issue). For several GPUs in one process use "
            "ember.nn.DataParallel.")
