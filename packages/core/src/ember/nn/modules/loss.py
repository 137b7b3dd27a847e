"""Loss modules: each ``forward`` is one call into ``ember.nn.functional``."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn._functional.loss import legacy_get_string
from ember.nn.modules.module import Module

__all__ = [
    "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss",
    "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
    "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss",
    "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
    "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
    "LinearCrossEntropyLoss",
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    r"""The mean absolute error ``|x - y|`` of the elements of the input and the target
    (``reduction``: 'mean' (default), 'sum' or 'none').

    Shape:
        - Input: (*). Target: the same shape. Output: scalar, or (*) with 'none'.
    """

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    r"""The negative log-likelihood loss of log-probabilities (N, C, d1, ...) and class
    indices (N, d1, ...): ``-weight[y] * x[y]``; 'mean' divides by the sum of the
    targets' weights. Targets equal to ``ignore_index`` contribute nothing.

    Args:
        weight: a weight per class (C,). Default: None.
        ignore_index: a target value to ignore. Default: -100.
        reduction: 'mean' (default), 'sum' or 'none'.
    """

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """:class:`NLLLoss` under its old name for (N, C, H, W) inputs (deprecated, as in
    PyTorch: use ``NLLLoss``, which takes any number of dims)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean") -> None:
        import warnings

        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html#torch."
                      "nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class PoissonNLLLoss(_Loss):
    r"""The negative log-likelihood of a target under a Poisson distribution:
    ``exp(x) - y * x`` (``log_input``), else ``x - y * log(x + eps)``; ``full`` adds
    Stirling's approximation of ``log(y!)``.
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    r"""The negative log-likelihood of a target under Gaussians with the predicted means
    and variances: ``0.5 * (log(max(var, eps)) + (x - y)**2 / max(var, eps))``
    (+ ``0.5 * log(2 pi)`` with ``full``)."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class KLDivLoss(_Loss):
    r"""The Kullback-Leibler divergence ``y * (log y - x)`` of a target distribution
    from log-probabilities ``x`` (``log_target``: the target given as log-probabilities);
    'batchmean' divides the sum by the batch size (the mathematical definition)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MSELoss(_Loss):
    r"""The mean squared error ``(x - y)**2`` of the elements of the input and the
    target (``reduction``: 'mean' (default), 'sum' or 'none')."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    r"""The binary cross-entropy ``-w * (y * log x + (1 - y) * log(1 - x))`` of
    probabilities ``x`` and targets ``y`` (the logs clamped at -100)."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Sigmoid and binary cross-entropy in one, stable for large logits;
    ``pos_weight`` (per class) weighs the positive examples."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""``x`` where the target is 1 and ``max(0, margin - x)`` where it is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""The multi-class multi-label hinge loss; the target holds class indices,
    ended by -1."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""A squared error below ``beta`` and an absolute one above it."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""A squared error below ``delta`` and ``delta`` times an absolute one above it."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction="mean", delta=1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    r"""The two-class logistic loss ``log(1 + exp(-y * x))`` (targets 1 or -1)."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    r"""The cross-entropy of logits (N, C, d1, ...) (or (C,)) and a target of class
    indices (N, d1, ...) or of class probabilities (the input's shape).

    With class indices the loss of a row is ``-weight[y] * log_softmax(x)[y]``; 'mean'
    divides by the sum of the targets' weights; targets equal to ``ignore_index`` are
    left out. ``label_smoothing`` in [0, 1] mixes the target with the uniform
    distribution.

    Args:
        weight: a weight per class (C,). Default: None.
        ignore_index: a target value to ignore (class indices only). Default: -100.
        reduction: 'mean' (default), 'sum' or 'none'.
        label_smoothing: the amount of smoothing. Default: 0.0.
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""The one-versus-all logistic loss of multi-label targets (0 or 1 per class),
    averaged over the classes."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""``1 - cos(x1, x2)`` where the target is 1 and ``max(0, cos(x1, x2) - margin)``
    where it is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_Loss):
    r"""``max(0, -y * (x1 - x2) + margin)``: ``x1`` should rank above ``x2`` where the
    target is 1, below where it is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""The multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C``
    (``p`` 1 or 2), weighted by ``weight[y]``."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError("MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""``max(0, d(a, p) - d(a, n) + margin)`` with the p-norm distance ``d``."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError("TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    r"""``max(0, d(a, p) - d(a, n) + margin)`` with any distance function ``d``
    (default: the pairwise Euclidean distance)."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        if distance_function is None:
            distance_function = _default_distance()
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


def _default_distance():
    """PyTorch's default distance module, PairwiseDistance(), where it exists."""
    try:
        from ember.nn.modules.distance import PairwiseDistance
    except ImportError:  # the distance family is not there: the functional default
        return None
    return PairwiseDistance()


class CTCLoss(_Loss):
    r"""The Connectionist Temporal Classification loss of log-probabilities
    (T, N, C) and unaligned target sequences; 'mean' divides every sample's loss by
    its target length before averaging over the batch.

    Args:
        blank: the blank label. Default: 0.
        reduction: 'mean' (default), 'sum' or 'none'.
        zero_infinity: whether infinite losses (impossible alignments) and their
            gradients become 0. Default: False.
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class LinearCrossEntropyLoss(_WeightedLoss):
    r"""A linear layer and the cross-entropy of its output in one module:
    :func:`~ember.nn.functional.linear_cross_entropy` with its own ``linear``
    (:math:`\text{in\_features} \to C \cdot \prod \text{out\_features}`).

    Args:
        in_features (int): features of the input.
        num_classes (int): C, the number of classes.
        out_features (tuple of int): the extra dims of a K-dimensional loss. Default: ().
        bias (bool): whether the linear layer has a bias. Default: False.
        reduction, weight, label_smoothing: as :class:`CrossEntropyLoss`.
        ignore_index (int or None): as :class:`CrossEntropyLoss` (None: -100).
        options (LinearCrossEntropyOptions, optional): PyTorch's chunking settings
            (accepted; ember computes the unchunked form).

    Examples::

        >>> loss = nn.LinearCrossEntropyLoss(8, 10)
        >>> loss(ember.randn(4, 8), ember.tensor([1, 0, 9, 3])).shape
        ember.Size([])
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None) -> None:
        import math

        from ember.nn.modules.linear import Linear

        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError("expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features) * num_classes, bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        w = self.linear.weight.reshape((self.num_classes, *self.out_features,
                                        self.linear.in_features))
        b = self.linear.bias.reshape((self.num_classes, *self.out_features)) \
            if self.linear.bias is not None else None
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)
