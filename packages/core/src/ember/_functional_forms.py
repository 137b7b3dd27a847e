"""PyTorch's top-level forms of the nn.functional ops (``torch.conv2d``, ``torch.dropout``,
``torch.batch_norm``, ``torch.native_layer_norm``, ...).

NOTE [ Top-level functional forms ]
``torch.<op>`` is the ATen operator, and its argument list is ATen's, not
``torch.nn.functional``'s: no defaults for ``dropout(input, p, train)``, the weight before
the running statistics in ``batch_norm``, integer reductions (0: none, 1: mean, 2: sum)
in the losses, ``native_*`` returning the saved statistics as well. Each function here takes
that argument list and calls the one implementation in :mod:`ember.nn.functional` (the ops
and their gradients are defined and registered there), so the two forms cannot drift.
Where the two lists agree the function *is* ``nn.functional``'s.
"""

from __future__ import annotations

import builtins

import ember
import ember.nn.functional as F
from ember._ops._util import TensorBase

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_",
    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu",
    "celu_", "channel_shuffle", "native_channel_shuffle", "constant_pad_nd", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "conv_tbc", "cosine_embedding_loss", "cosine_similarity",
    "pairwise_distance", "ctc_loss", "dropout", "dropout_", "embedding", "embedding_bag",
    "embedding_renorm_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
    "feature_dropout_", "group_norm", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
    "affine_grid_generator", "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div",
    "layer_norm", "log_softmax", "softmax", "margin_ranking_loss", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "native_batch_norm",
    "native_layer_norm", "native_group_norm", "native_dropout", "pixel_shuffle",
    "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu_", "rms_norm", "rrelu", "rrelu_",
    "selu", "selu_", "threshold", "threshold_", "triplet_margin_loss", "norm_except_dim",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r) -> str:
    """ATen's integer reduction as nn.functional's name."""
    if isinstance(r, str) and r in _REDUCTIONS.values():
        return r
    try:
        return _REDUCTIONS[int(r)]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{r} is not a valid value for reduction") from None


def _stride(stride, kernel_size):
    """ATen's empty stride list means the kernel size."""
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel_size
    return stride


# ---------------------------------------------------------------------------
# the same argument lists as nn.functional: the same functions

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = \
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
bilinear, cosine_similarity, pairwise_distance = F.bilinear, F.cosine_similarity, \
    F.pairwise_distance
pixel_shuffle, pixel_unshuffle, channel_shuffle = F.pixel_shuffle, F.pixel_unshuffle, \
    F.channel_shuffle
prelu, relu_, hardshrink, adaptive_avg_pool1d = F.prelu, F.relu_, F.hardshrink, \
    F.adaptive_avg_pool1d
celu_, selu_, threshold_ = F.celu_, F.selu_, F.threshold_


def native_channel_shuffle(input, groups):
    """native_channel_shuffle(input, groups) -> Tensor

    :func:`ember.channel_shuffle` (PyTorch's kernel-level name)."""
    return F.channel_shuffle(input, groups)


# ---------------------------------------------------------------------------
# activations

def celu(input, alpha=1.0):
    """celu(input, alpha=1.0) -> Tensor

    ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``, elementwise."""
    return F.celu(input, alpha)


def selu(input):
    """selu(input) -> Tensor

    The scaled exponential linear unit (see :func:`ember.nn.functional.selu`)."""
    return F.selu(input)


def threshold(input, threshold, value):
    """threshold(input, threshold, value) -> Tensor

    ``input`` where it is greater than ``threshold``, ``value`` elsewhere."""
    return F.threshold(input, threshold, value)


def rrelu(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """rrelu(input, lower=1/8, upper=1/3, training=False, generator=None) -> Tensor

    The randomized leaky ReLU: in training, negative entries are multiplied by slopes drawn
    uniformly from ``[lower, upper]`` (from ``generator`` if given); otherwise by their mean.
    """
    if not training or generator is None:
        return F.rrelu(input, lower, upper, training)
    slopes = ember.empty_like(input.detach()).uniform_(lower, upper, generator=generator)
    return ember.where(input >= 0, input, input * slopes)


def rrelu_(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """rrelu_(input, lower=1/8, upper=1/3, training=False, generator=None) -> Tensor

    In-place :func:`rrelu`; returns ``input``."""
    if not training or generator is None:
        return F.rrelu_(input, lower, upper, training)
    return input.copy_(rrelu(input.detach(), lower, upper, training, generator))


def softmax(input, dim, dtype=None):
    """softmax(input, dim, dtype=None) -> Tensor

    ``exp(x) / sum(exp(x))`` along ``dim`` (computed in ``dtype`` if given)."""
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    """log_softmax(input, dim, dtype=None) -> Tensor

    ``log(softmax(x))`` along ``dim``, computed stably (in ``dtype`` if given)."""
    return F.log_softmax(input, dim, dtype=dtype)


# ---------------------------------------------------------------------------
# dropout

def dropout(input, p, train):
    """dropout(input, p, train) -> Tensor

    Zero each entry with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``train``; otherwise ``input`` itself."""
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    """dropout_(input, p, train) -> Tensor

    In-place :func:`dropout`; returns ``input``."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """alpha_dropout(input, p, train) -> Tensor

    Alpha dropout (see :func:`ember.nn.functional.alpha_dropout`) when ``train``."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """alpha_dropout_(input, p, train) -> Tensor

    In-place :func:`alpha_dropout`; returns ``input``."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """feature_alpha_dropout(input, p, train) -> Tensor

    Alpha dropout of whole channels (dim 1) when ``train``."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """feature_alpha_dropout_(input, p, train) -> Tensor

    In-place :func:`feature_alpha_dropout`; returns ``input``."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_mask(input, p):
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = ember.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    return keep if p == 1 else keep / (1 - p)


def _check_p(p):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def feature_dropout(input, p, train):
    """feature_dropout(input, p, train) -> Tensor

    When ``train``, zero whole channels (dim 1 of a tensor of at least 2 dims) with
    probability ``p`` and scale the others by ``1 / (1 - p)``."""
    _check_p(p)
    if not train or p == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return input * _feature_mask(input, p)


def feature_dropout_(input, p, train):
    """feature_dropout_(input, p, train) -> Tensor

    In-place :func:`feature_dropout`; returns ``input``."""
    _check_p(p)
    if not train or p == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return input.mul_(_feature_mask(input, p))


def native_dropout(input, p, train):
    """native_dropout(input, p, train) -> (Tensor, Tensor)

    ``(output, mask)``: the dropout of ``input`` and the boolean mask of the entries kept.
    ``train=None`` counts as training; with ``train=False`` the output is a copy of
    ``input`` and the mask all True."""
    _check_p(p)
    if train is False:
        return input.clone(), ember.ones(input.shape, dtype=ember.bool, device=input.device)
    keep = ember.empty(input.shape, dtype=ember.bool, device=input.device).bernoulli_(1 - p)
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep * scale, keep


# ---------------------------------------------------------------------------
# convolution and pooling

def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups) -> Tensor

    The 1-D, 2-D or 3-D convolution (or, with ``transposed``, transposed convolution) that
    the weight's number of dims asks for."""
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got {n + 2}-D")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):
    """conv_tbc(input, weight, bias, pad=0) -> Tensor

    A 1-D convolution in time-batch-channel layout: ``input`` is ``(T, B, C_in)``,
    ``weight`` ``(K, C_in, C_out)``, ``bias`` ``(C_out,)``; the result ``(T', B, C_out)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
    count_include_pad=True) -> Tensor

    1-D average pooling; an empty ``stride`` means ``kernel_size``."""
    return F.avg_pool1d(input, kernel_size, _stride(stride, kernel_size), padding, ceil_mode,
                        count_include_pad)


def adaptive_max_pool1d(input, output_size):
    """adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)

    1-D adaptive max pooling: ``(values, indices)``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False)
    -> Tensor

    1-D max pooling; an empty ``stride`` means ``kernel_size``."""
    return F.max_pool1d(input, kernel_size, _stride(stride, kernel_size), padding, dilation,
                        ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
    ceil_mode=False) -> (Tensor, Tensor)

    :func:`max_pool1d` with the indices of the maxima."""
    return F.max_pool1d(input, kernel_size, _stride(stride, kernel_size), padding, dilation,
                        ceil_mode, return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False)
    -> Tensor

    2-D max pooling; an empty ``stride`` means ``kernel_size``."""
    return F.max_pool2d(input, kernel_size, _stride(stride, kernel_size), padding, dilation,
                        ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False)
    -> Tensor

    3-D max pooling; an empty ``stride`` means ``kernel_size``."""
    return F.max_pool3d(input, kernel_size, _stride(stride, kernel_size), padding, dilation,
                        ceil_mode)


def constant_pad_nd(input, pad, value=0):
    """constant_pad_nd(input, pad, value=0) -> Tensor

    ``input`` padded with ``value``: ``pad`` lists (before, after) amounts from the last
    dim backwards; negative amounts crop."""
    return F.pad(input, tuple(pad), "constant", value)


# ---------------------------------------------------------------------------
# grid sampling

_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    :func:`ember.nn.functional.grid_sample` with integer modes: interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection."""
    try:
        mode = _INTERP[int(interpolation_mode)]
        pad = _PADDING[int(padding_mode)]
    except (KeyError, TypeError, ValueError):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode} "
                           f"or padding mode {padding_mode}") from None
    return F.grid_sample(input, grid, mode, pad, bool(align_corners))


def _grid_sampler_nd(n, input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != n + 2 or grid.dim() != n + 2:
        raise RuntimeError(
            f"grid_sampler(): expected {n + 2}D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
    -> Tensor

    :func:`grid_sampler` for a 4-D input."""
    return _grid_sampler_nd(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)
    -> Tensor

    :func:`grid_sampler` for a 5-D input."""
    return _grid_sampler_nd(3, input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    """affine_grid_generator(theta, size, align_corners) -> Tensor

    :func:`ember.nn.functional.affine_grid`."""
    return F.affine_grid(theta, list(size), align_corners=bool(align_corners))


# ---------------------------------------------------------------------------
# embeddings

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)
    -> Tensor

    The rows of ``weight`` at ``indices``; note ATen's order (the table first). A negative
    ``padding_idx`` means none."""
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
    sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None)
    -> (Tensor, Tensor, Tensor, Tensor)

    ``(output, offset2bag, bag_size, max_indices)``: the bags' sums (``mode=0``), means
    (1) or maxima (2) as :func:`ember.nn.functional.embedding_bag` computes them, and the
    bookkeeping PyTorch's CPU kernel returns with them: the bag of each index (empty for
    ``mode=0`` on float32 without ``per_sample_weights``), each bag's size (zeros for
    ``mode=0``), and for ``mode=2`` the row chosen
    for each output entry (otherwise ``bag_size`` again, zeros for ``mode=0``).
    """
    try:
        name = _BAG_MODES[int(mode)]
    except (KeyError, TypeError, ValueError):
        raise RuntimeError(f"embedding_bag: unknown mode {mode}") from None
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, name, sparse,
                          per_sample_weights, include_last_offset,
                          None if padding_idx is None or padding_idx < 0 else padding_idx)
    idx = indices.reshape(-1).long()
    offs = offsets.long().tolist()
    bags = len(offs) - 1 if include_last_offset else len(offs)
    ends = offs[1:bags + 1] + ([idx.numel()] if not include_last_offset else [])
    ends = ends[:bags]
    sizes = [e - s for s, e in zip(offs[:bags], ends, strict=True)]
    zeros = ember.zeros(bags, dtype=ember.int64)
    bag_of = ember.tensor([b for b, n in enumerate(sizes) for _ in range(n)], dtype=ember.int64)
    if name == "sum":  # PyTorch's float32 fast path leaves offset2bag empty
        fast = weight.dtype is ember.float32 and per_sample_weights is None
        return out, ember.zeros(0, dtype=ember.int64) if fast else bag_of, zeros, zeros.clone()
    bag_size = ember.tensor(sizes, dtype=ember.int64)
    if name == "mean":
        return out, bag_of, bag_size, bag_size.clone()
    rows = ember.zeros((bags, weight.shape[1]), dtype=ember.int64)
    w = weight.detach()
    for b, (s, n) in enumerate(zip(offs[:bags], sizes, strict=True)):
        if n:
            sel = idx[s:s + n]
            rows[b] = sel[w[sel].argmax(0)]
    return out, bag_of, bag_size, rows


def embedding_renorm_(input, indices, max_norm, norm_type):
    """embedding_renorm_(input, indices, max_norm, norm_type) -> Tensor

    Rescale, in place and outside autograd, the rows of ``input`` named in ``indices``
    whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``; returns ``input``."""
    with ember.no_grad():
        rows = ember.unique(indices.reshape(-1).long())
        norms = input[rows].norm(p=norm_type, dim=1, keepdim=True)
        scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7),
                            ember.ones_like(norms))
        input[rows] = input[rows] * scale
    return input


# ---------------------------------------------------------------------------
# normalization

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
    cudnn_enabled) -> Tensor

    Batch normalization over dim 1 (``cudnn_enabled`` is accepted and has no effect)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
    momentum, eps, cudnn_enabled) -> Tensor

    Instance normalization (``cudnn_enabled`` is accepted and has no effect)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
               cudnn_enable=True):
    """layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
    cudnn_enable=True) -> Tensor

    Layer normalization over the last dims ``normalized_shape``."""
    return F.layer_norm(input, tuple(_as_list(normalized_shape)), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True)
    -> Tensor

    Group normalization of the channels (dim 1) in ``num_groups`` groups."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor

    Root-mean-square normalization over the last dims ``normalized_shape``."""
    return F.rms_norm(input, tuple(_as_list(normalized_shape)), weight, eps)


def _as_list(shape):
    return [shape] if isinstance(shape, builtins.int) else list(shape)


def _stats_dtype(input):
    return ember.float32 if input.dtype in (ember.float16, ember.bfloat16) else input.dtype


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """native_batch_norm(input, weight, bias, running_mean, running_var, training,
    momentum, eps) -> (Tensor, Tensor, Tensor)

    ``(output, save_mean, save_invstd)``: batch normalization, and in training the batch
    mean and ``1 / sqrt(var + eps)`` per channel (biased variance); empty tensors in
    evaluation, as PyTorch's CPU kernel returns."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = ember.empty(0, dtype=_stats_dtype(input), device=input.device)
        return out, empty, empty.clone()
    dims = [0] + list(range(2, input.dim()))
    x = input.detach().to(_stats_dtype(input))
    mean = x.mean(dims)
    var = x.var(dims, correction=0)
    return out, mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """native_layer_norm(input, normalized_shape, weight, bias, eps)
    -> (Tensor, Tensor, Tensor)

    ``(output, mean, rstd)``: layer normalization, and the mean and ``1 / sqrt(var + eps)``
    of each normalized group, shaped like ``input`` with the normalized dims of size 1."""
    shape = tuple(_as_list(normalized_shape))
    out = F.layer_norm(input, shape, weight, bias, eps)
    dims = list(range(input.dim() - len(shape), input.dim()))
    x = input.detach().to(_stats_dtype(input))
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, keepdim=True, correction=0)
    return out, mean, (var + eps).rsqrt()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps)
    -> (Tensor, Tensor, Tensor)

    ``(output, mean, rstd)``: group normalization of ``input`` (``N`` samples, ``C``
    channels of ``HxW`` entries each) in ``group`` groups, and the ``(N, group)`` means and
    ``1 / sqrt(var + eps)``."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, got "
                           f"{input.numel()}")
    out = F.group_norm(input, group, weight, bias, eps)
    x = input.detach().to(_stats_dtype(input)).reshape(N, group, -1)
    mean = x.mean(2)
    var = x.var(2, correction=0)
    return out, mean, (var + eps).rsqrt()


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - PyTorch's argument name
    """norm_except_dim(v, pow=2, dim=0) -> Tensor

    The ``pow``-norm of ``v`` over every dim but ``dim``, shaped like ``v`` with the other
    dims of size 1 (weight normalization's norm); ``dim=-1``: the norm of all of ``v``."""
    if dim == -1:
        return v.norm(pow)
    d = dim % v.dim()
    dims = [i for i in range(v.dim()) if i != d]
    return v.norm(pow, dim=dims, keepdim=True) if dims else v.abs()


# ---------------------------------------------------------------------------
# losses (integer reductions)
#
# ATen's schemas say ``reduction=Mean`` (1), but torch 2.13's Python bindings of these
# top-level forms default to 0 (no reduction): ``torch.kl_div(a, b)`` is elementwise. The
# defaults here are what torch does.

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    """binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
    reduction=0) -> Tensor

    See :func:`ember.nn.functional.binary_cross_entropy_with_logits`; ``reduction`` is
    0 (none), 1 (mean) or 2 (sum)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0) -> Tensor

    See :func:`ember.nn.functional.cosine_embedding_loss` (integer ``reduction``)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """hinge_embedding_loss(input, target, margin=1.0, reduction=0) -> Tensor

    See :func:`ember.nn.functional.hinge_embedding_loss` (integer ``reduction``)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0) -> Tensor

    See :func:`ember.nn.functional.margin_ranking_loss` (integer ``reduction``)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    """kl_div(input, target, reduction=0, *, log_target=False) -> Tensor

    The pointwise Kullback-Leibler divergence of log-probabilities ``input`` from
    ``target``; ``reduction`` 0 (none), 1 (mean over all entries) or 2 (sum)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor

    See :func:`ember.nn.functional.poisson_nll_loss` (integer ``reduction``)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    """triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06,
    swap=False, reduction=0) -> Tensor

    See :func:`ember.nn.functional.triplet_margin_loss` (integer ``reduction``)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
    zero_infinity=False) -> Tensor

    The connectionist temporal classification loss (see
    :func:`ember.nn.functional.ctc_loss`); integer ``reduction``, and the lengths as lists or
    tensors."""
    if not isinstance(input_lengths, TensorBase):
        input_lengths = ember.tensor(list(input_lengths), dtype=ember.int64)
    if not isinstance(target_lengths, TensorBase):
        target_lengths = ember.tensor(list(target_lengths), dtype=ember.int64)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)

