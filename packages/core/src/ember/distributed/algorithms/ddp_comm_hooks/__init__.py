"""DDP communication hooks (``torch.distributed.algorithms.ddp_comm_hooks``): what
:meth:`DistributedDataParallel.register_comm_hook` can be given instead of the plain
all-reduce. ``default_hooks`` holds the all-reduce and the fp16 / bf16 compression hooks."""

from enum import Enum
from functools import partial

from ember.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["DDPCommHookType", "register_ddp_comm_hook", "default_hooks"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    """The built-in hooks by name, for :func:`register_ddp_comm_hook`."""

    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper,
                            comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper,
                            comm_hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model, state=None) -> None:
    """Register the built-in hook ``comm_hook_type`` on the DDP ``model``.

    Example::

        >>> register_ddp_comm_hook(DDPCommHookType.FP16_COMPRESS, ddp_model)
    """
    comm_hook_type.value(model=model, state=state)
