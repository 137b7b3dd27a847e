"""The RNN-Transducer loss (Graves, 2012): forward-backward over the (time, label) lattice.

NOTE [ The RNN-T lattice ]
For one sequence with T frames and U labels, alpha[t, u] is the log probability of having
emitted the first u labels by frame t. A row of the lattice is a log-semiring linear
recurrence in u, alpha[t, u] = logaddexp(alpha[t-1, u] + blank[t-1, u],
alpha[t, u-1] + emit[t, u-1]), which one log-cumulative-sum-exp solves, so the loops run
over frames only. The gradient of the loss with respect to each log probability is minus the
posterior of the lattice edge it labels; with ``fused_log_softmax`` it is taken through the
softmax to the logits, and ``clamp`` bounds it, as torchaudio's kernel does.
"""

from __future__ import annotations

import numpy as np

import ember
from ember.autograd import Function

__all__ = ["rnnt_loss"]


def _logcumsumexp(x: np.ndarray) -> np.ndarray:
    peak = np.max(x) if x.size and np.isfinite(np.max(x)) else 0.0
    with np.errstate(divide="ignore"):
        return np.log(np.cumsum(np.exp(x - peak))) + peak


def _row(start: np.ndarray, emit: np.ndarray) -> np.ndarray:
    """Solves r[u] = logaddexp(start[u], r[u-1] + emit[u-1]) (r[0] = start[0])."""
    offsets = np.concatenate([[0.0], np.cumsum(emit)])
    return offsets + _logcumsumexp(start - offsets)


def _sequence(lp: np.ndarray, labels: np.ndarray, blank: int):
    """Loss and d loss / d log-probs of one sequence; lp is (T, U + 1, C)."""
    frames, nodes = lp.shape[0], lp.shape[1]
    blank_lp = lp[:, :, blank]
    emit_lp = lp[:, np.arange(nodes - 1), labels] if nodes > 1 else np.zeros((frames, 0))
    alpha = np.empty((frames, nodes))
    alpha[0] = _row(np.r_[0.0, np.full(nodes - 1, -np.inf)], emit_lp[0])
    for t in range(1, frames):
        alpha[t] = _row(alpha[t - 1] + blank_lp[t - 1], emit_lp[t])
    beta = np.empty((frames, nodes))
    last = np.r_[np.full(nodes - 1, -np.inf), blank_lp[-1, -1]]
    beta[-1] = _row(last[::-1], emit_lp[-1][::-1])[::-1]
    for t in range(frames - 2, -1, -1):
        beta[t] = _row((beta[t + 1] + blank_lp[t])[::-1], emit_lp[t][::-1])[::-1]
    log_likelihood = beta[0, 0]
    grad = np.zeros_like(lp)
    next_beta = np.concatenate([beta[1:], np.full((1, nodes), -np.inf)])
    next_beta[-1, -1] = 0.0  # the final blank ends the sequence
    grad[:, :, blank] = -np.exp(alpha + blank_lp + next_beta - log_likelihood)
    if nodes > 1:
        emit_grad = -np.exp(alpha[:, :-1] + emit_lp + beta[:, 1:] - log_likelihood)
        np.add.at(grad, (slice(None), np.arange(nodes - 1), labels), emit_grad)
    return -log_likelihood, grad


class _RNNTLoss(Function):
    @staticmethod
    def forward(ctx, logits, targets, logit_lengths, target_lengths, blank, clamp, fused):
        x = logits.detach().cpu().numpy().astype(np.float64)
        labels = targets.detach().cpu().numpy().astype(np.int64)
        t_lens = logit_lengths.detach().cpu().numpy().astype(np.int64)
        u_lens = target_lengths.detach().cpu().numpy().astype(np.int64)
        if fused:
            shifted = x - x.max(-1, keepdims=True)
            lp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        else:
            lp = x
        losses = np.zeros(x.shape[0])
        grads = np.zeros_like(x)
        for b in range(x.shape[0]):
            t_b, u_b = int(t_lens[b]), int(u_lens[b])
            losses[b], g = _sequence(lp[b, :t_b, :u_b + 1], labels[b, :u_b], blank)
            if fused:
                g = g - np.exp(lp[b, :t_b, :u_b + 1]) * g.sum(-1, keepdims=True)
            grads[b, :t_b, :u_b + 1] = g
        if clamp > 0:
            grads = np.clip(grads, -clamp, clamp)
        ctx.grads = ember.from_numpy(grads.astype(x.dtype)).to(logits.dtype).to(logits.device)
        return ember.from_numpy(losses).to(logits.dtype).to(logits.device)

    @staticmethod
    def backward(ctx, grad):
        return (ctx.grads * grad.reshape(-1, 1, 1, 1), None, None, None, None, None, None)


def rnnt_loss(logits: ember.Tensor, targets: ember.Tensor, logit_lengths: ember.Tensor,
              target_lengths: ember.Tensor, blank: int = -1, clamp: float = -1,
              reduction: str = "mean", fused_log_softmax: bool = True) -> ember.Tensor:
    r"""Compute the RNN Transducer loss from *Sequence Transduction with Recurrent Neural
    Networks*.

    The RNN Transducer loss extends the CTC loss by defining a distribution over output
    sequences of all lengths, and by jointly modelling both input-output and output-output
    dependencies. Differentiable in ``logits``.

    Args:
        logits (Tensor): tensor of dimension ``(batch, max seq length, max target length +
            1, class)`` containing output from joiner.
        targets (Tensor): integer tensor of dimension ``(batch, max target length)``
            containing targets with zero padded.
        logit_lengths (Tensor): tensor of dimension ``(batch)`` containing lengths of each
            sequence from encoder.
        target_lengths (Tensor): tensor of dimension ``(batch)`` containing lengths of
            targets for each sequence.
        blank (int, optional): blank label. (Default: ``-1``, the last class)
        clamp (float, optional): clamp for gradients. (Default: ``-1``, no clamp)
        reduction (str, optional): ``"none"`` | ``"mean"`` | ``"sum"``.
            (Default: ``"mean"``)
        fused_log_softmax (bool, optional): set to ``False`` if calling log_softmax outside
            of loss. (Default: ``True``)

    Returns:
        Tensor: loss with the reduction option applied. If ``reduction`` is ``"none"``, then
        size ``(batch)``, otherwise scalar.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("reduction should be one of 'none', 'mean', or 'sum'")
    if logits.ndim != 4:
        raise ValueError(f"logits must be 4-D (batch, time, target + 1, class), got "
                         f"{logits.ndim}-D")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating point tensor, got {logits.dtype}")
    batch, frames, nodes, classes = logits.shape
    if targets.ndim != 2 or targets.is_floating_point():
        raise ValueError("targets must be a 2-D integer tensor (batch, max target length)")
    for name, lengths in (("logit_lengths", logit_lengths), ("target_lengths", target_lengths)):
        if lengths.ndim != 1 or lengths.shape[0] != batch or lengths.is_floating_point():
            raise ValueError(f"{name} must be a 1-D integer tensor of length batch ({batch})")
    if blank < 0:
        blank += classes
    if not 0 <= blank < classes:
        raise ValueError(f"blank must be within [0, {classes}), got {blank}")
    t_lens, u_lens = logit_lengths.tolist(), target_lengths.tolist()
    if min(t_lens, default=1) < 1 or max(t_lens, default=0) > frames:
        raise ValueError(f"logit_lengths must lie in [1, {frames}], got {t_lens}")
    if min(u_lens, default=0) < 0 or max(u_lens, default=0) + 1 > nodes:
        raise ValueError(f"target_lengths must lie in [0, {nodes - 1}], got {u_lens}")
    if targets.shape[1] < max(u_lens, default=0):
        raise ValueError("targets is shorter than the largest target_lengths")
    used = [v for row, n in zip(targets.tolist(), u_lens) for v in row[:n]]
    if any(v < 0 or v >= classes or v == blank for v in used):
        raise ValueError(f"targets must be class indices in [0, {classes}) other than the "
                         f"blank ({blank})")
    losses = _RNNTLoss.apply(logits, targets, logit_lengths, target_lengths, blank,
                             float(clamp), fused_log_softmax)
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses
