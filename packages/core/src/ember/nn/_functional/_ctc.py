"""The CTC loss: the forward-backward algorithm in log space, vectorized over the batch.

NOTE [ CTC ]
For a target ``l`` of length L the extended sequence ``l'`` has 2L+1 symbols: blanks at
the even positions and ``l`` at the odd ones. ``alpha[t, s]`` is the log-probability of
the prefixes of all the alignments that are at ``l'_s`` at time t, ``beta[t, s]`` that of
the suffixes from there (both including ``log_probs[t, l'_s]``); a step comes from s, s-1,
or s-2 when ``l'_s`` is not blank and differs from ``l'_{s-2}``. The loss of a sample is
``-log(alpha[T-1, 2L] + alpha[T-1, 2L-1])``. Each time step is one vectorized update of the
(N, 2L+1) lattice, so the Python loop runs T times, never over samples or symbols.

The gradient w.r.t. ``log_probs[t, n, c]`` is PyTorch's:
``exp(log_probs) - exp(logsumexp_{s: l'_s = c}(alpha + beta) + nll - log_probs)``, the
gradient w.r.t. the logits that a log_softmax made ``log_probs`` from: through that
log_softmax's backward it is the exact gradient (PyTorch documents the same).
Computations are in float64.
"""

from __future__ import annotations

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, not_implemented, type_name, wrap, xp_of

_NEG_INF = -np.inf


def _logaddexp(xp, a, b):
    with np.errstate(invalid="ignore"):
        return xp.logaddexp(a, b)


class CTCLoss(Node):
    """Per-sample negative log-likelihoods (N,) of CTC; see NOTE [ CTC ]."""

    def forward(self, log_probs, targets, input_lengths, target_lengths, blank,
                zero_infinity):
        xp = xp_of(log_probs)
        lp = log_probs.astype(xp.float64)
        T, N, C = lp.shape
        L = targets.shape[1]
        S = 2 * L + 1
        ext = xp.full((N, S), blank, dtype=np.int64)
        ext[:, 1::2] = targets
        s_idx = xp.arange(S)
        valid_s = s_idx[None, :] < (2 * target_lengths + 1)[:, None]         # (N, S)
        # a step may skip from s-2: l'_s is not blank and differs from l'_{s-2}
        skip = xp.zeros((N, S), dtype=bool)
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        rows = xp.arange(N)[:, None]
        alpha = xp.full((T, N, S), _NEG_INF)
        emit0 = lp[0][rows, ext] if T else None
        if T:
            a0 = xp.full((N, S), _NEG_INF)
            a0[:, 0] = emit0[:, 0]
            if S > 1:
                a0[:, 1] = xp.where(target_lengths > 0, emit0[:, 1], _NEG_INF)
            alpha[0] = xp.where(valid_s, a0, _NEG_INF)
        for t in range(1, T):
            prev = alpha[t - 1]
            acc = prev.copy()
            acc[:, 1:] = _logaddexp(xp, acc[:, 1:], prev[:, :-1])
            acc[:, 2:] = xp.where(skip[:, 2:], _logaddexp(xp, acc[:, 2:], prev[:, :-2]),
                                  acc[:, 2:])
            alpha[t] = xp.where(valid_s, acc + lp[t][rows, ext], _NEG_INF)
        # the likelihood at each sample's last frame, from its last two lattice nodes
        last_t = xp.maximum(input_lengths - 1, 0)
        a_last = alpha[last_t, xp.arange(N)]                                  # (N, S)
        end = 2 * target_lengths
        ll = a_last[xp.arange(N), end]
        ll = xp.where(target_lengths > 0,
                      _logaddexp(xp, ll, a_last[xp.arange(N), xp.maximum(end - 1, 0)]), ll)
        ll = xp.where(input_lengths == 0, xp.where(target_lengths == 0, 0.0, _NEG_INF), ll)
        nll = -ll
        self.saved = (lp, ext, valid_s, skip, alpha, nll, input_lengths, target_lengths,
                      zero_infinity, log_probs.dtype)
        if zero_infinity:
            nll = xp.where(nll == np.inf, 0.0, nll)
        return nll.astype(log_probs.dtype)

    def backward(self, g):
        grad = wrap(self._grad_log_probs())
        return grad * g.reshape(1, -1, 1)

    def _grad_log_probs(self):
        (lp, ext, valid_s, skip, alpha, nll, input_lengths, target_lengths, zero_infinity,
         dtype) = self.saved
        xp = xp_of(lp)
        T, N, C = lp.shape
        S = ext.shape[1]
        rows = xp.arange(N)[:, None]
        t_idx = xp.arange(T)
        beta = xp.full((T, N, S), _NEG_INF)
        end = 2 * target_lengths
        last = input_lengths - 1
        # beta is started at each sample's last frame, and is -inf after it
        skip_next = xp.zeros((N, S), dtype=bool)
        skip_next[:, :-2] = skip[:, 2:]      # from s, s+2 is reachable
        for t in range(T - 1, -1, -1):
            emit = lp[t][rows, ext]
            start = xp.full((N, S), _NEG_INF)
            start[xp.arange(N), end] = 0.0
            start[xp.arange(N), xp.maximum(end - 1, 0)] = xp.where(
                target_lengths > 0, 0.0, start[xp.arange(N), xp.maximum(end - 1, 0)])
            if t + 1 < T:
                nxt = beta[t + 1]
                acc = nxt.copy()
                acc[:, :-1] = _logaddexp(xp, acc[:, :-1], nxt[:, 1:])
                acc[:, :-2] = xp.where(skip_next[:, :-2],
                                       _logaddexp(xp, acc[:, :-2], nxt[:, 2:]), acc[:, :-2])
            else:
                acc = xp.full((N, S), _NEG_INF)
            acc = xp.where((t == last)[:, None], start, acc)
            beta[t] = xp.where(valid_s & (t <= last)[:, None], acc + emit, _NEG_INF)
        # posterior of every lattice node, gathered per class
        with np.errstate(invalid="ignore", over="ignore"):
            post = xp.exp(alpha + beta + nll[None, :, None])                 # (T, N, S)
        post = xp.where(xp.isnan(post), 0.0, post)
        onehot = (ext[:, :, None] == xp.arange(C)[None, None, :]).astype(lp.dtype)  # N,S,C
        post_c = xp.einsum("tns,nsc->tnc", post, onehot)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            grad = xp.exp(lp) - xp.exp(xp.log(post_c) - lp)
        active = (t_idx[:, None] < input_lengths[None, :])[:, :, None]
        grad = xp.where(active, grad, 0.0)
        if zero_infinity:
            grad = xp.where((nll == np.inf)[None, :, None], 0.0, grad)
        return grad.astype(dtype)


def _lengths(v, name):
    if isinstance(v, TensorBase):
        a = v._data
        if a.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.int64).reshape(-1)
    a = np.asarray(v)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"{name} must be integral")
    return a.astype(np.int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
             zero_infinity):
    """See :func:`ember.nn.functional.ctc_loss`."""
    fn = "ctc_loss_allocate_outputs"
    batched = log_probs.dim() == 3
    # PyTorch treats any other rank as unbatched: a batch dim is inserted at 1
    lp = log_probs if batched else log_probs.unsqueeze(1 if log_probs.dim() else 0)
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' (while checking arguments for "
                           f"{fn})")
    if log_probs._data.dtype.kind != "f":
        raise not_implemented("ctc_loss_cpu", log_probs._data.dtype)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    tg = targets
    if not batched and targets.dim() == 1:
        tg = targets.unsqueeze(0)
    if tg._data.dtype.kind not in "iuf":
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{type_name(tg._data.dtype)} instead (while checking arguments "
                           f"for {fn})")
    if tg.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tg.dim()}-dimensional "
                           f"tensor for argument #2 'targets' (while checking arguments for "
                           f"{fn})")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if il.size != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.size != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {v} (while checking arguments for {fn})")
    L = int(tl.max()) if N else 0
    t_host = tg._data.get() if hasattr(tg._data, "get") else tg._data
    t_host = np.asarray(t_host, dtype=np.int64)
    padded = np.full((N, L), blank, dtype=np.int64)
    if tg.dim() == 1:
        if t_host.shape[0] != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, "
                               f"but got size {t_host.shape[0]} for argument #2 'targets' "
                               f"(while checking arguments for {fn})")
        pos = 0
        for n in range(N):
            padded[n, :tl[n]] = t_host[pos:pos + tl[n]]
            pos += tl[n]
    else:
        if t_host.shape[0] != N:
            raise RuntimeError(f"Expected tensor to have size {N} at dimension 0, but got size "
                               f"{t_host.shape[0]} for argument #2 'targets' (while checking "
                               f"arguments for {fn})")
        if t_host.shape[1] < L:
            raise RuntimeError(f"Expected tensor to have size at least {L} at dimension 1, but "
                               f"got size {t_host.shape[1]} for argument #2 'targets' (while "
                               f"checking arguments for {fn})")
        for n in range(N):
            padded[n, :tl[n]] = t_host[n, :tl[n]]
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                               f"value {v} (while checking arguments for {fn})")
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {v} (while checking arguments for {fn})")
    if padded.size and ((padded < 0) | (padded >= C)).any():
        bad = int(padded[(padded < 0) | (padded >= C)][0])
        raise IndexError(f"Target {bad} is out of bounds for {C} classes.")
    xp = xp_of(lp._data)
    res = apply(CTCLoss, lp, xp.asarray(padded), xp.asarray(il), xp.asarray(tl), int(blank),
                bool(zero_infinity))
    if reduction == "mean":
        tlen = wrap(xp.asarray(np.maximum(tl, 1), dtype=lp._data.dtype))
        return (res / tlen).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
