"""``ember.distributed.algorithms``: the join context manager for uneven inputs, and DDP's
communication hooks (``ddp_comm_hooks``)."""

from ember.distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
