"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016) for large
output vocabularies."""

from __future__ import annotations

from collections import namedtuple

from ember.nn import functional as F
from ember.nn.modules.container import ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""Efficient softmax approximation for large output spaces (`Grave et al., 2016
    <https://arxiv.org/abs/1609.04309>`__).

    The classes are split into clusters by ``cutoffs``: the head predicts the first
    ``cutoffs[0]`` classes and one entry per further cluster; cluster ``i`` predicts its
    classes from a projection of the input to ``in_features // div_value ** (i + 1)``
    features. The log-probability of a class of cluster ``i`` is the head's
    log-probability of that cluster plus the cluster's own.

    Args:
        in_features (int): features of the input.
        n_classes (int): number of classes.
        cutoffs (Sequence[int]): increasing cluster boundaries, each in ``[1, n_classes)``.
        div_value (float, optional): the divisor of the clusters' projection sizes.
            Default: 4.0.
        head_bias (bool, optional): whether the head has a bias. Default: False.

    Returns:
        ``NamedTuple`` with ``output`` (the target's log-probability per sample, shape
        ``(N,)``) and ``loss`` (their negated mean, a scalar).

    Shape:
        - input: :math:`(N, \text{in\_features})` or :math:`(\text{in\_features})`
        - target: :math:`(N)` or :math:`()`, class indices in ``[0, n_classes)``
        - output1: :math:`(N)` or :math:`()`; output2: a scalar

    Examples::

        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 100, [10, 50])
        >>> out = asm(ember.randn(4, 16), ember.tensor([1, 20, 60, 99]))
        >>> out.output.shape, out.loss.shape
        (ember.Size([4]), ember.Size([]))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory_kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **factory_kwargs),
                                        Linear(hsz, osz, bias=False, **factory_kwargs)))

    def reset_parameters(self) -> None:
        """Reset the head's and the clusters' linear layers."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {tuple(input_.size())}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {tuple(input_.size())}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_zeros(batch_size)
        used_rows = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds = gather_inds.index_copy(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)),
                                                dim=1)
                gather_inds = gather_inds.index_fill(0, rows, self.shortlist_size + i - 1)
                local = cluster_logprob.gather(1, relative.unsqueeze(1)).squeeze(1)
                output = output.index_copy(0, rows, local)
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        """The log-probabilities of all the classes, (N, n_classes)."""
        from ember._ops.join import cat

        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input):
        r"""The log-probabilities of all the classes: :math:`(N, \text{n\_classes})` for an
        input :math:`(N, \text{in\_features})` (or unbatched)."""
        is_batched = input.dim() > 1
        x = input if is_batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if is_batched else out.squeeze(0)

    def predict(self, input):
        r"""The most likely class per sample, :math:`(N)` (or a scalar unbatched); cheaper
        than ``log_prob(input).argmax(1)`` when the head's best entry is a shortlist
        class."""
        is_batched = input.dim() > 1
        x = input if is_batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            rows = outside.nonzero().reshape(-1)
            log_prob = self._get_full_log_prob(x.index_select(0, rows),
                                               head_output.index_select(0, rows))
            output = output.index_copy(0, rows, log_prob.argmax(dim=1))
        return output if is_batched else output.squeeze(0)
