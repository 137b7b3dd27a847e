"""The autograd function of :class:`~ember.nn.SyncBatchNorm`: batch statistics over the
ranks of a process group (``torch.nn.modules._functions.SyncBatchNorm``).

# NOTE [ SyncBatchNorm's two exchanges ]
# Forward: each rank computes its per-channel mean and inverse standard deviation and its
# element count; one all_gather of [mean, invstd, count] lets every rank combine them into the
# statistics of the whole batch (the variances are combined with the means' spread, Chan's
# formula, rather than by summing raw squares). Backward: the per-channel sums of dy and of
# dy * (x - mean) are all-reduced, since every input's gradient depends on them over the whole
# batch. The weight and bias gradients stay local: DDP averages them like any other gradient.
"""

from __future__ import annotations

from ember.autograd.function import Function

__all__ = ["SyncBatchNorm"]


def _channel_view(t, ndim: int):
    """A (C,) tensor shaped to broadcast over (N, C, *)."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _reduce_dims(ndim: int) -> list[int]:
    return [0] + list(range(2, ndim))


class SyncBatchNorm(Function):
    """forward(input, weight, bias, running_mean, running_var, eps, momentum,
    process_group, world_size): batch norm with statistics over the whole group."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        from ember import distributed as dist
        from ember._ops.creation import full, zeros
        from ember._ops.join import cat, stack

        if not input.is_contiguous():
            input = input.contiguous()
        c = input.shape[1]
        nd = input.dim()
        dims = _reduce_dims(nd)
        count = input.numel() // c if c else 0
        if count > 0:
            mean = input.mean(dim=dims)
            var = ((input - _channel_view(mean, nd)) ** 2).mean(dim=dims)
            invstd = (var + eps).rsqrt()
            mine = cat([mean, invstd, full((1,), float(count), dtype=mean.dtype,
                                           device=mean.device)])
        else:
            mine = zeros(2 * c + 1, dtype=input.dtype, device=input.device)
        if count == 1 and world_size < 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(input.shape)}")
        gathered = [zeros(2 * c + 1, dtype=mine.dtype, device=mine.device)
                    for _ in range(world_size)]
        dist.all_gather(gathered, mine, group=process_group)
        allstats = stack(gathered)
        counts = allstats[:, 2 * c]
        keep = counts > 0
        allstats, counts = allstats[keep], counts[keep]
        means, invstds = allstats[:, :c], allstats[:, c:2 * c]
        total = counts.sum()
        n_total = int(total.item())
        if n_total <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(input.shape)}")
        w = (counts / total).unsqueeze(1)
        mean = (means * w).sum(0)
        local_var = invstds ** -2 - eps
        var = ((local_var + (means - mean) ** 2) * w).sum(0)
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n_total / (n_total - 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        out = (input - _channel_view(mean, nd)) * _channel_view(invstd, nd)
        if weight is not None:
            out = out * _channel_view(weight, nd)
        if bias is not None:
            out = out + _channel_view(bias, nd)
        ctx.save_for_backward(input, weight, mean, invstd)
        ctx.n_total = n_total
        ctx.process_group = process_group
        return out

    @staticmethod
    def backward(ctx, grad_output):
        from ember import distributed as dist
        from ember._ops.join import cat

        if not grad_output.is_contiguous():
            grad_output = grad_output.contiguous()
        input, weight, mean, invstd = ctx.saved_tensors
        nd = input.dim()
        c = input.shape[1]
        dims = _reduce_dims(nd)
        xmu = input - _channel_view(mean, nd)
        sum_dy = grad_output.sum(dim=dims)
        sum_dy_xmu = (grad_output * xmu).sum(dim=dims)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[1] and weight is not None:
            grad_weight = sum_dy_xmu * invstd
        if ctx.needs_input_grad[2]:
            grad_bias = sum_dy
        if ctx.needs_input_grad[0]:
            combined = cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(combined, group=ctx.process_group)
            mean_dy = _channel_view(combined[:c] / ctx.n_total, nd)
            mean_dy_xmu = _channel_view(combined[c:] / ctx.n_total, nd)
            inv = _channel_view(invstd, nd)
            scale = inv if weight is None else inv * _channel_view(weight, nd)
            grad_input = (grad_output - mean_dy - xmu * inv * inv * mean_dy_xmu) * scale
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None
