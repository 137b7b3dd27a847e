"""The default DDP communication hooks: all-reduce, and all-reduce of the gradients
compressed to float16 or bfloat16 (``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``).

Each hook is ``hook(process_group, bucket) -> Future[Tensor]``; ``process_group`` None means
the whole world. Register one with ``ddp.register_comm_hook(process_group, hook)``.
"""

from __future__ import annotations

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _group(process_group):
    from ember import distributed as dist

    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    """All-reduce ``tensor`` divided by the group's size (an average); a future of it."""
    from ember import distributed as dist

    group = _group(process_group)
    tensor.div_(group.size())     # divide first, against overflow in low precision
    return (dist.all_reduce(tensor, group=group, async_op=True).get_future()
            .then(lambda fut: fut.value()[0]))


def allreduce_hook(process_group, bucket):
    """Average the bucket's gradients with ``all_reduce``: the same result as DDP without a
    hook (a reference to start a hook of one's own from).

    Example::

        >>> ddp_model.register_comm_hook(process_group, allreduce_hook)
    """
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    from ember import distributed as dist

    group = _group(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        value = fut if hasattr(fut, "dtype") else fut.value()[0]
        buffer.copy_(value)       # back to the bucket's dtype, in place
        return buffer

    return dist.all_reduce(compressed, group=group, async_op=True).get_future().then(
        decompress)


def fp16_compress_hook(process_group, bucket):
    """Cast the bucket to ``float16``, divide by the group's size, all-reduce, and cast the
    result back to the bucket's dtype: half the bytes on the network, float16's precision
    (about 3 decimal digits) in the gradients.

    Example::

        >>> ddp_model.register_comm_hook(process_group, fp16_compress_hook)
    """
    from ember._dtype import float16

    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As :func:`fp16_compress_hook`, in ``bfloat16`` (float32's range, about 2 decimal
    digits).

    Example::

        >>> ddp_model.register_comm_hook(process_group, bf16_compress_hook)
    """
    from ember._dtype import bfloat16

    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer

        return fut.then(decompress)

    return wrapped


def fp16_compress_wrapper(hook):
    """Wrap ``hook`` so that it runs on the bucket cast to float16, its result cast back
    to the bucket's dtype (``fp16_compress_wrapper(allreduce_hook)`` is
    :func:`fp16_compress_hook`). Returns the wrapped hook.

    Example::

        >>> state = PowerSGDState(process_group=process_group)
        >>> ddp_model.register_comm_hook(state, fp16_compress_wrapper(powerSGD_hook))
    """
    from ember._dtype import float16

    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    """As :func:`fp16_compress_wrapper`, in bfloat16."""
    from ember._dtype import bfloat16

    return _compress_wrapper(bfloat16, hook)
