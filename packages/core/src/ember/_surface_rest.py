"""Top-level names of ``torch`` that are no math op: the exception classes
``AcceleratorError`` / ``OutOfMemoryError``, ``GradScaler``, ``meshgrid``, ``cond``,
SyncBatchNorm's kernels (``batch_norm_stats`` & co.), ``is_distributed``, ``resize_as_``,
``to_dlpack``, ``thread_safe_generator``, ``hash_tensor`` and ``FatalError``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ember.amp.grad_scaler import GradScaler
from ember.cuda import AcceleratorError, OutOfMemoryError

__all__ = [
    "AcceleratorError", "OutOfMemoryError", "GradScaler", "meshgrid", "cond",
    "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts", "batch_norm_update_stats",
    "batch_norm_backward_reduce", "batch_norm_backward_elemt", "is_distributed",
    "resize_as_", "to_dlpack", "thread_safe_generator", "hash_tensor", "FatalError",
]


class FatalError(Exception):
    """An unrecoverable internal error (PyTorch raises it for fatal C++ errors)."""


def meshgrid(*tensors, indexing: str | None = None):
    """Coordinate grids of the 1-D ``tensors``: output ``i`` repeats ``tensors[i]`` along
    its own dimension (``indexing="ij"``, matrix indexing) or with the first two dimensions
    swapped (``indexing="xy"``, Cartesian indexing).

    Args:
        tensors (list of Tensor): 0-D or 1-D tensors (or one list of them).
        indexing (str, optional): ``"ij"`` or ``"xy"``. Without it PyTorch warns and uses
            ``"ij"``; so does ember.

    Returns:
        seq (sequence of Tensors): views of the inputs, each of shape
        ``(len(t0), len(t1), ...)`` (``"xy"``: the first two swapped).

    Examples::

        >>> gx, gy = ember.meshgrid(ember.tensor([1, 2, 3]), ember.tensor([4, 5]),
        ...                         indexing="ij")
        >>> gx.shape
        ember.Size([3, 2])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", "
                         f"but received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t.shape[0] for t in flat]
    out = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = shape[i]
        out.append(t.reshape(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    PyTorch's ``torch.cond`` captures both branches for ``torch.compile`` / export; ember
    has no graph capture yet, so the branch ``pred`` picks runs eagerly (what ``torch.cond``
    does in eager mode), with autograd through it as usual.

    Args:
        pred (bool or Tensor): a Python bool/number or a one-element tensor.
        true_fn (Callable): called when ``pred`` is true.
        false_fn (Callable): called when ``pred`` is false.
        operands (tuple or list): the arguments of either branch.

    Examples::

        >>> x = ember.tensor([1.0, -2.0])
        >>> ember.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))
    """
    from ember._tensor import Tensor

    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return (true_fn if pred else false_fn)(*operands)


# ---------------------------------------------------------------------------
# SyncBatchNorm's kernels: the statistics of one process's batch, combining those of all
# processes, and the two halves of the backward pass. Channels are dimension 1.

def _red_dims(x):
    return [0] + list(range(2, x.dim()))


def _per_channel(v, x):
    return v.reshape([1, -1] + [1] * (x.dim() - 2))


def batch_norm_stats(input, eps: float):
    """The per-channel mean and ``1 / sqrt(var + eps)`` (biased variance) of ``input``
    over every dimension but 1: ``(mean, invstd)``, each of shape ``(C,)``."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        dims = _red_dims(input)
        mean = input.mean(dims)
        var = ((input - _per_channel(mean, input)) ** 2).mean(dims)
        return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps: float, *, out=None):
    """``(input - mean) * invstd * weight + bias`` per channel (``weight``/``bias`` may be
    None)."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        y = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
        if weight is not None:
            y = y * _per_channel(weight, input)
        if bias is not None:
            y = y + _per_channel(bias, input)
        if out is not None:
            return out.copy_(y)
        return y


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum: float, eps: float, counts):
    """Combine the per-process statistics ``mean``/``invstd`` (shape ``(world, C)``) of
    batches of ``counts`` elements per channel into the global ``(mean, invstd)``; updates
    ``running_mean``/``running_var`` (unbiased) in place with ``momentum`` when given."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        counts = counts.to(mean.dtype).reshape(-1, 1)
        n = counts.sum()
        gmean = (mean * counts).sum(0) / n
        var_i = 1.0 / (invstd * invstd) - eps
        var = (counts * (var_i + (mean - gmean) ** 2)).sum(0) / n
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(gmean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        return gmean, (var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum: float,
                            eps: float, count: int):
    """:func:`batch_norm_gather_stats_with_counts` with ``count`` elements in every
    process's batch."""
    from ember._ops.creation import full

    counts = full((mean.shape[0],), float(count), dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum: float):
    """The per-channel ``(mean, var)`` of ``input`` (biased variance); updates
    ``running_mean`` and ``running_var`` (with the unbiased variance) in place."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        dims = _red_dims(input)
        mean = input.mean(dims)
        var = ((input - _per_channel(mean, input)) ** 2).mean(dims)
        n = input.numel() // max(input.shape[1], 1)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / max(n - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g: bool,
                               weight_g: bool, bias_g: bool):
    """The per-channel reductions of batch norm's backward: ``(sum_dy, sum_dy_xmu,
    grad_weight, grad_bias)``, with ``sum_dy = sum(grad_out)`` and ``sum_dy_xmu =
    sum(grad_out * (input - mean))`` (None unless ``input_g``), ``grad_weight =
    sum_dy_xmu * invstd`` (None unless ``weight_g``) and ``grad_bias = sum_dy`` (None unless
    ``bias_g``)."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        dims = _red_dims(input)
        sum_dy = grad_out.sum(dims)
        sum_dy_xmu = (grad_out * (input - _per_channel(mean, input))).sum(dims)
        return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
                sum_dy_xmu * invstd if weight_g else None, sum_dy if bias_g else None)


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input gradient of batch norm from the global reductions: ``(grad_out - sum_dy / N
    - (input - mean) * invstd**2 * sum_dy_xmu / N) * invstd * weight`` with ``N =
    count.sum()``."""
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        n = count.to(mean.dtype).sum()

        def ch(v):
            return _per_channel(v, input)

        g = grad_out - ch(sum_dy / n) - (input - ch(mean)) * ch(invstd * invstd * sum_dy_xmu / n)
        scale = invstd if weight is None else invstd * weight
        return g * ch(scale)


def is_distributed(input, /) -> bool:
    """False: ember's tensors are local (PyTorch's legacy ``is_distributed`` answers False for
    every dense tensor too)."""
    return False


def resize_as_(input, the_template, *, memory_format=None):
    """``input.resize_(the_template.shape)`` (see :meth:`ember.Tensor.resize_`)."""
    return input.resize_as_(the_template, memory_format=memory_format)


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (shared, not copied), for
    ``from_dlpack`` of another library."""
    return tensor.__dlpack__()


def thread_safe_generator():
    """The random generator for the current DataLoader worker thread, or None outside one.

    PyTorch's DataLoader can run workers as threads, each with its own generator; ember's
    workers are processes (or the main process), where this returns None, so that random
    functions use the global generator (seeded per worker process), as in PyTorch.
    """
    return None


def hash_tensor(input, dim=None, *, keepdim: bool = False, mode: int = 0, out=None):
    """The xor of all elements of ``input`` (over ``dim`` if given), each upcast to 64 bits
    (float64, int64 or uint64) and read as ``uint64``: a ``uint64`` tensor.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimensions to reduce (all if None).
        keepdim (bool): keep the reduced dimensions as size 1.
        mode (int): the hash; only 0 (xor reduction) exists, as in PyTorch.
    """
    from ember._ops.creation import tensor as make

    if mode != 0:
        raise RuntimeError(f"hash_tensor only supports mode=0 (xor reduction), got {mode}")
    data = input.detach().cpu().numpy()
    if data.dtype.kind == "f" or data.dtype.kind == "V":
        wide = data.astype(np.float64)
    elif data.dtype.kind in "ib":
        wide = data.astype(np.int64)
    elif data.dtype.kind == "u":
        wide = data.astype(np.uint64)
    else:
        raise RuntimeError(f"hash_tensor: unsupported dtype {input.dtype}")
    bits = np.ascontiguousarray(wide).view(np.uint64)
    if dim is None:
        axes = tuple(range(bits.ndim))
    else:
        axes = tuple(d % max(bits.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim))
    res = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if bits.ndim else bits
    from ember._dtype import uint64

    result = make(np.asarray(res, dtype=np.uint64), dtype=uint64, device=input.device)
    if out is not None:
        return out.copy_(result)
    return result
