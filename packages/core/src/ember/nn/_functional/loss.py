"""Loss functions: the functional form of every loss of ``ember.nn``.

Cross-entropy with class indices is one fused node (log-softmax and NLL in one kernel
pass forward, ``softmax - onehot`` in one pass backward, see ``_norm_kernels``);
NLL, binary cross-entropy and CTC (``_ctc``) are dedicated nodes; the other losses are
written with ember ops, as PyTorch writes most of them, so their gradients (and
second derivatives) come from the ops'.

Every loss takes PyTorch's ``reduction`` ('none' | 'mean' | 'sum') and, where PyTorch
still does, the deprecated ``size_average``/``reduce`` pair, mapped with PyTorch's
warning.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ember._C._core import Node, is_grad_enabled
from ember._ops._util import apply, not_implemented, type_name, wrap, xp_of
from ember.nn._functional import _norm_kernels as K

__all__ = [
    "l1_loss", "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss", "huber_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
    "multi_margin_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "margin_ranking_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
]


# ---------------------------------------------------------------------------
# reductions, and the deprecated size_average/reduce arguments

def legacy_get_string(size_average, reduce, emit_warning=True) -> str:
    """The ``reduction`` that the deprecated ``size_average``/``reduce`` pair means."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def get_enum(reduction: str) -> str:
    """``reduction`` checked ('elementwise_mean' is the deprecated 'mean')."""
    if reduction in ("none", "mean", "sum"):
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=3)
        return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduction(size_average, reduce, reduction) -> str:
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean()


def _weighted_reduce(loss, weight, reduction, divide_by_weight):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if divide_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    if tuple(target.shape) == tuple(input.shape):
        return input, target
    from ember._ops.shape import broadcast_tensors

    return broadcast_tensors(input, target)


def _no_grad_arg(t, fn, name):
    """PyTorch's error for a tensor that requires grad in an argument with no gradient."""
    if t is not None and getattr(t, "requires_grad", False) and is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _where(cond, a, b):
    from ember._ops.elementwise import where

    return where(cond, a, b)


def _zeros_like(t):
    from ember._ops.creation import zeros_like

    return zeros_like(t)


# ---------------------------------------------------------------------------
# elementwise regression losses

def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """The mean (or sum) absolute difference of ``input`` and ``target``, optionally
    weighted elementwise.

    See :class:`~ember.nn.L1Loss` for details.
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        return _weighted_reduce((input - target).abs() * weight, weight, reduction, True)
    return _reduce((input - target).abs(), get_enum(reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """The mean (or sum) squared difference of ``input`` and ``target``, optionally
    weighted elementwise.

    See :class:`~ember.nn.MSELoss` for details.
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    d = input - target
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        return _weighted_reduce(d * d * weight, weight, reduction, True)
    return _reduce(d * d, get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``, with
    ``d = input - target``; ``beta=0`` is the L1 loss.

    See :class:`~ember.nn.SmoothL1Loss` for details.
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    reduction = get_enum(reduction)
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    z = (input - target).abs()
    return _reduce(_where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``,
    optionally weighted elementwise.

    See :class:`~ember.nn.HuberLoss` for details.
    """
    _warn_size(input, target)
    input, target = _broadcast(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    z = (input - target).abs()
    loss = _where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    if weight is None:
        return _reduce(loss, get_enum(reduction))
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _weighted_reduce(loss * weight, weight, reduction, False)


# ---------------------------------------------------------------------------
# cross-entropy and NLL with class indices

def _class_layout(input, target, weight, fn):
    """Check ``input``/``target`` as PyTorch's nll_loss_nd does; return
    ``(N, C, S, out_shape, target as an (N, S) int64 array, weight array or None)``."""
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.dim() else 0}).")
    kind = target._data.dtype
    if kind != np.int64 and kind != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{type_name(kind)}")
    if nd <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        C = input.shape[-1]
        N = input.shape[0] if nd == 2 else 1
        S = 1
        out_shape = (N,) if nd == 2 else tuple(target.shape)
    else:
        N, C = input.shape[0], input.shape[1]
        spatial = tuple(input.shape[2:])
        if tuple(target.shape[1:]) != spatial:
            if nd == 4:
                raise RuntimeError(f"size mismatch (got input: {_fmt(input.shape)} , target: "
                                   f"{_fmt(target.shape)}")
            raise RuntimeError(f"Expected target size {_fmt((N,) + spatial)}, got "
                               f"{_fmt(target.shape)}")
        S = math.prod(spatial)
        out_shape = (N,) + spatial
    if weight is not None and (weight.dim() != 1 or weight.numel() != C):
        if nd > 2:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                           f"classes but got weight tensor of shape: {_fmt(weight.shape)}")
    t = target._data
    xp = xp_of(t)
    t = xp.ascontiguousarray(t, dtype=np.int64).reshape(N, S)
    w = None
    if weight is not None:
        _no_grad_arg(weight, "nll_loss_forward", "weight")
        w = weight._data
        if w.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {type_name(input._data.dtype)} but found "
                               f"{type_name(w.dtype)}")
        w = xp.ascontiguousarray(w)
    return N, C, S, out_shape, t, w


class CrossEntropy(Node):
    """log_softmax + nll_loss with class indices (and label smoothing), fused: the
    forward keeps each row's log-sum-exp, the backward is ``softmax - onehot``
    scaled, in one pass each."""

    saves_inputs = (0,)

    def forward(self, x, target, weight, ignore_index, smoothing, reduction, layout):
        N, C, S, out_shape = layout
        xp = xp_of(x)
        x3 = (x if x.flags.c_contiguous else xp.ascontiguousarray(x)).reshape(N, C, S)
        loss, self.lse, total = K.cross_entropy_forward(x3, target, weight, ignore_index,
                                                        smoothing)
        self.target, self.weight, self.ignore_index = target, weight, ignore_index
        self.smoothing, self.reduction, self.layout, self.total = (smoothing, reduction,
                                                                   layout, total)
        if reduction == "none":
            return loss.reshape(out_shape)
        s = float(loss.sum(dtype=np.float64))
        if reduction == "mean":
            s = s / total if total else math.nan
        return xp.asarray(s, dtype=x.dtype)

    def backward(self, g):
        x, = self.saved_tensors
        if is_grad_enabled():
            return _cross_entropy_backward_graph(self, x, g)
        xp = xp_of(x._data)
        N, C, S, _ = self.layout
        x3 = (x._data if x._data.flags.c_contiguous
              else xp.ascontiguousarray(x._data)).reshape(N, C, S)
        grad, scale = None, 1.0
        if self.reduction == "none":
            grad = xp.ascontiguousarray(g._data, dtype=x3.dtype).reshape(N, S)
        else:
            scale = float(g._data)
            if self.reduction == "mean":
                scale = scale / self.total if self.total else math.nan
        dx = K.cross_entropy_backward(x3, self.target, self.weight, self.ignore_index,
                                      self.smoothing, self.lse, grad, scale)
        return wrap(dx.reshape(x.shape))


def _cross_entropy_backward_graph(node, x, g):
    """CrossEntropy's backward with ember ops, differentiable again."""
    N, C, S, _ = node.layout
    xp = xp_of(x._data)
    t = node.target
    valid = t != node.ignore_index
    tc = xp.where(valid, t, 0)
    dt = x._data.dtype
    wt = (node.weight[tc] if node.weight is not None else xp.ones(t.shape, dtype=dt))
    wt = xp.where(valid, wt, 0).astype(dt)[:, None, :]
    onehot = (xp.arange(C)[None, :, None] == tc[:, None, :]).astype(dt)
    x3 = x.reshape(N, C, S)
    p = (x3 - x3.logsumexp(1, keepdim=True)).exp()
    keep = 1.0 - node.smoothing
    dx = (p - wrap(onehot)) * wrap(keep * wt)
    if node.smoothing:
        wvec = node.weight if node.weight is not None else xp.ones(C, dtype=dt)
        share = node.smoothing / C
        dx = dx + (p * float(wvec.sum()) - wrap(wvec[None, :, None])) \
            * wrap(share * valid[:, None, :].astype(dt))
    if node.reduction == "none":
        g = g.reshape(N, 1, S)
    elif node.reduction == "mean":
        g = g / node.total if node.total else g * math.nan
    return (dx * g).reshape(tuple(x.shape))


class NLLLoss(Node):
    """The negative log-likelihood of class indices: ``-weight[t] * input[t]``, picked
    per row (N, C, S layout); its backward is :class:`NLLLossBackward`, the scatter."""

    def forward(self, x, target, weight, ignore_index, reduction, layout):
        N, C, S, out_shape = layout
        xp = xp_of(x)
        K.check_targets(target, C, ignore_index)
        self.target, self.weight, self.ignore_index = target, weight, ignore_index
        self.reduction, self.layout, self.in_shape = reduction, layout, x.shape
        valid = target != ignore_index
        tc = xp.where(valid, target, 0)
        wt = weight[tc] if weight is not None else xp.ones(target.shape, dtype=x.dtype)
        self.wt = xp.where(valid, wt, 0).astype(x.dtype)
        self.total = float(self.wt.sum(dtype=np.float64))
        self.tc = tc
        picked = xp.take_along_axis(x.reshape(N, C, S), tc[:, None, :], axis=1)[:, 0]
        # an ignored position adds 0 whatever it holds (0 * NaN would be NaN)
        loss = xp.where(valid, -picked * self.wt, 0).astype(x.dtype, copy=False)
        if reduction == "none":
            return loss.reshape(out_shape)
        s = float(loss.sum(dtype=np.float64))
        if reduction == "mean":
            s = s / self.total if self.total else math.nan
        return xp.asarray(s, dtype=x.dtype)

    def backward(self, g):
        return apply(NLLLossBackward, g, self)


class NLLLossBackward(Node):
    """The gradient of :class:`NLLLoss` w.r.t. its input: ``-weight[t] * g`` scattered
    to the targets' positions. Linear in ``g``; its own backward is NLLLoss again."""

    def forward(self, g, nll):
        self.nll = nll
        N, C, S, _ = nll.layout
        xp = xp_of(g)
        if nll.reduction == "none":
            gr = g.reshape(N, S)
        else:
            gr = g / nll.total if nll.reduction == "mean" and nll.total else \
                g * math.nan if nll.reduction == "mean" else g
        out = xp.zeros((N, C, S), dtype=nll.wt.dtype)
        xp.put_along_axis(out, nll.tc[:, None, :], (-nll.wt * gr)[:, None, :], axis=1)
        return out.reshape(nll.in_shape)

    def backward(self, gg):
        nll = self.nll
        return apply(NLLLoss, gg, nll.target, nll.weight, nll.ignore_index, nll.reduction,
                     nll.layout), None


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative log-likelihood loss of log-probabilities ``input`` (N, C, ...) and
    class indices ``target`` (N, ...).

    See :class:`~ember.nn.NLLLoss` for details.
    """
    reduction = get_enum(_reduction(size_average, reduce, reduction))
    N, C, S, out_shape, t, w = _class_layout(input, target, weight, "nll_loss")
    if input._data.dtype.kind != "f":
        raise not_implemented("nll_loss_out_frame", input._data.dtype)
    return apply(NLLLoss, input, t, w, int(ignore_index), reduction, (N, C, S, out_shape))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The cross-entropy of logits ``input`` (N, C, ...) and class indices (N, ...) or
    class probabilities (the shape of ``input``) ``target``; ``label_smoothing`` mixes
    the targets with the uniform distribution.

    With class indices this is one fused node: log-softmax and NLL in one pass.

    See :class:`~ember.nn.CrossEntropyLoss` for details.
    """
    reduction = get_enum(_reduction(size_average, reduce, reduction))
    if input._data.dtype.kind != "f":
        raise not_implemented("log_softmax_lastdim_kernel_impl" if input.dim() <= 2
                              else "log_softmax_kernel_impl", input._data.dtype)
    if tuple(input.shape) == tuple(target.shape):
        if target._data.dtype.kind != "f":
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {type_name(target._data.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    N, C, S, out_shape, t, w = _class_layout(input, target, weight, "cross_entropy")
    smoothing = float(label_smoothing) if label_smoothing > 0.0 else 0.0
    return apply(CrossEntropy, input, t, w, int(ignore_index), smoothing, reduction,
                 (N, C, S, out_shape))


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    from ember.nn._functional.activation import log_softmax

    class_dim = 0 if input.dim() == 1 else 1
    C = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != C):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {C} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{_fmt(weight.shape)}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / C
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape((-1,) + (1,) * (input.dim() - class_dim - 1))
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum() * math.nan
    return -prod.sum() / (input.numel() // C)


# ---------------------------------------------------------------------------
# binary cross-entropy

class BinaryCrossEntropy(Node):
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` elementwise, the logs clamped at
    -100; PyTorch's gradients (the input's divided by ``max(x * (1 - x), 1e-12)``)."""

    saves_inputs = (0, 1, 2)

    def forward(self, x, t, w):
        xp = xp_of(x)
        if not bool(((x >= 0) & (x <= 1)).all()):
            raise RuntimeError("all elements of input should be between 0 and 1")
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = (t - 1) * xp.maximum(xp.log1p(-x), -100) - t * xp.maximum(xp.log(x), -100)
        if w is not None:
            loss = loss * w
        return loss.astype(x.dtype, copy=False)

    def backward(self, g):
        x, t, w = self.saved_tensors
        need = self.needs_input_grad
        if w is not None:
            g = g * w
        gx = g * (x - t) / ((1 - x) * x).clamp(min=1e-12) if need[0] else None
        gt = g * ((-x).log1p().clamp(min=-100) - x.log().clamp(min=-100)) if need[1] else None
        return gx, gt, None


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """The binary cross-entropy of probabilities ``input`` and targets ``target``.

    See :class:`~ember.nn.BCELoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size.")
    _no_grad_arg(weight, "binary_cross_entropy", "weight")
    if weight is not None:
        from ember._ops.shape import broadcast_shapes

        weight = weight.expand(tuple(broadcast_shapes(tuple(target.shape), tuple(weight.shape))))
    return _reduce(apply(BinaryCrossEntropy, input, target, weight), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """The binary cross-entropy of ``sigmoid(input)`` and ``target``, computed stably
    from the logits; ``pos_weight`` weighs the positive term (per class).

    See :class:`~ember.nn.BCEWithLogitsLoss` for details.
    """
    from ember.nn._functional.activation import logsigmoid

    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    _no_grad_arg(weight, "binary_cross_entropy_with_logits", "weight")
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input - log_weight * logsigmoid(input)
    else:
        loss = (1 - target) * input - logsigmoid(input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------
# divergences and likelihoods

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The Kullback-Leibler divergence of the distribution ``target`` from the
    log-probabilities ``input``; ``reduction='batchmean'`` is the mathematical one.

    See :class:`~ember.nn.KLDivLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = get_enum(legacy_get_string(size_average, reduce))
        enum = reduction
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with "
                "the KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.", stacklevel=2)
        enum = "sum" if reduction == "batchmean" else get_enum(reduction)
    for t in (input, target):
        if t._data.dtype.kind == "c":
            raise RuntimeError("kl_div: Complex inputs not supported.")
        if t._data.dtype.kind in "biu":
            raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        zero = target == 0
        safe = _where(zero, 1.0, target)
        loss = target * safe.log() - target * input
    out = _reduce(loss, enum)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The negative log-likelihood of ``target`` under a Poisson distribution of rate
    ``exp(input)`` (``log_input``) or ``input``; ``full`` adds Stirling's term.

    See :class:`~ember.nn.PoissonNLLLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + _where(target <= 1, 0.0, stirling)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log-likelihood of ``target`` under Gaussians of mean ``input`` and
    variance ``var`` (a tensor, one dim short or broadcastable in one dim, or a float).

    See :class:`~ember.nn.GaussianNLLLoss` for details.
    """
    from ember._ops.creation import ones_like
    from ember.autograd.grad_mode import no_grad

    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------
# margin losses

def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The two-class logistic loss ``log(1 + exp(-target * input))`` (targets +-1).

    See :class:`~ember.nn.SoftMarginLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    _no_grad_arg(target, "soft_margin_loss", "target")
    return _reduce((-target * input).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """The one-versus-all logistic loss of multi-label targets (0/1 per class),
    averaged over the classes.

    See :class:`~ember.nn.MultiLabelSoftMarginLoss` for details.
    """
    from ember.nn._functional.activation import logsigmoid

    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.shape[class_dim]
    loss = loss.sum(class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    See :class:`~ember.nn.HingeEmbeddingLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    zeros = _zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = _where(target != 1, margin_clamp, zeros)
    output_self = _where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ranks ``input1`` above
    ``input2`` where ``target`` is 1, below where it is -1.

    See :class:`~ember.nn.MarginRankingLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
            f"{target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos - margin)``
    where it is -1.

    See :class:`~ember.nn.CosineEmbeddingLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(
                "1D target tensor expects 2D input tensors, but found inputs with sizes "
                f"{_fmt(input1.shape)} and {_fmt(input2.shape)}.")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{_fmt(input1.shape)} and {_fmt(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(targ_dim)
    mag1 = (input1 * input1).sum(targ_dim) + eps
    mag2 = (input2 * input2).sum(targ_dim) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = _zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = _where(target == 1, pos, zeros) + _where(target == -1, neg, zeros)
    return _reduce(out, reduction)


def _one_hot_mask(xp, tc, C, dtype):
    return (xp.arange(C)[None, :] == tc[:, None]).astype(dtype)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: ``sum_i max(0, margin - x[y] + x[i])**p / C`` over
    the classes ``i != y``, weighted by ``weight[y]``.

    See :class:`~ember.nn.MultiMarginLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nd = input.dim()
    if input.numel() == 0 or nd > 2:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_fmt(input.shape)}")
    nframe = 1 if nd <= 1 else input.shape[0]
    dim = (1 if nd == 0 else input.shape[0]) if nd <= 1 else input.shape[1]
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {_fmt(target.shape)}. Input has shape "
                           f"{_fmt(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{_fmt(weight.shape)}")
    _no_grad_arg(weight, "multi_margin_loss", "weight")
    xp = xp_of(target._data)
    t = xp.asarray(target._data, dtype=np.int64).reshape(nframe)
    if bool(((t < 0) | (t >= dim)).any()):
        raise RuntimeError("target out of range")
    x2 = input.reshape(nframe, dim)
    xy = x2.gather(1, wrap(t[:, None]))
    z = (x2 - xy + margin).relu()
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[wrap(t)].reshape(nframe, 1)
    others = wrap(1 - _one_hot_mask(xp, t, dim, input._data.dtype))
    loss = (z * others).sum(1) / dim
    if reduction == "none":
        return loss if target.dim() > 0 else loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: ``sum max(0, 1 - (x[y_j] - x[i])) / C`` over the
    target classes ``y_j`` (``target``'s entries up to the first -1) and the other
    classes ``i``.

    See :class:`~ember.nn.MultiLabelMarginLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0)
            or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_fmt(input.shape)}")
    if nd <= 1:
        nframe, dim = 1, (1 if nd == 0 else input.shape[0])
        if target.dim() > 1 or target.numel() != dim:
            raise RuntimeError(f"inconsistent target size: {_fmt(target.shape)} for input of "
                               f"size: {_fmt(input.shape)}")
    else:
        nframe, dim = input.shape[0], input.shape[1]
        if target.dim() != 2 or tuple(target.shape) != (nframe, dim):
            raise RuntimeError(f"inconsistent target size: {_fmt(target.shape)} for input of "
                               f"size: {_fmt(input.shape)}")
    xp = xp_of(target._data)
    t = xp.asarray(target._data, dtype=np.int64).reshape(nframe, dim)
    if bool(((t < -1) | (t >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # the target slots before each row's first -1, and the classes they name
    slot_ok = xp.cumprod(t >= 0, axis=1).astype(bool)
    tc = xp.where(slot_ok, t, 0)
    is_target = xp.zeros((nframe, dim), dtype=bool)
    rows = xp.broadcast_to(xp.arange(nframe)[:, None], t.shape)
    is_target[rows[slot_ok], tc[slot_ok]] = True
    dt = input._data.dtype
    mask = (slot_ok[:, :, None] & ~is_target[:, None, :]).astype(dt)
    x2 = input.reshape(nframe, dim)
    xy = x2.gather(1, wrap(tc))                        # (nframe, slots)
    z = (1 - xy.unsqueeze(2) + x2.unsqueeze(1)).relu()  # (nframe, slots, dim)
    loss = (z * wrap(mask)).sum((1, 2)) / dim
    if reduction == "none":
        return loss if target.dim() > 1 else loss.reshape(())
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p, eps):
    from ember._ops.reduction import norm

    dim = max(x1.dim(), x2.dim()) - 1
    return norm(x1 - x2 + eps, p, dim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the p-norm distance (``swap``:
    ``d(a, n)`` is the smaller of it and ``d(p, n)``).

    See :class:`~ember.nn.TripletMarginLoss` for details.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    reduction = get_enum(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
            f"{n_dim}D inputs")
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        from ember._ops.elementwise import minimum

        dist_neg = minimum(dist_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce((dist_pos - dist_neg + margin).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any distance function (default the pairwise
    Euclidean distance).

    See :class:`~ember.nn.TripletMarginWithDistanceLoss` for details.
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
            f"{n_dim}D inputs")
    if distance_function is None:
        def distance_function(x1, x2):
            return _pairwise_distance(x1, x2, 2.0, 1e-6)
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        from ember._ops.elementwise import minimum

        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


# ---------------------------------------------------------------------------
# CTC

def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The Connectionist Temporal Classification loss of log-probabilities ``log_probs``
    (T, N, C) (or (T, C)) and target sequences (padded (N, S) or concatenated 1-d).

    See :class:`~ember.nn.CTCLoss` for details.
    """
    from ember.nn._functional._ctc import ctc_loss as _ctc

    return _ctc(log_probs, targets, input_lengths, target_lengths, blank,
                get_enum(reduction), zero_infinity)
