"""CTC forced alignment: the Viterbi path of a transcript through frame-wise label scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ember

__all__ = ["TokenSpan", "forced_align", "merge_tokens"]


def _viterbi(log_probs: np.ndarray, targets: np.ndarray, blank: int) -> np.ndarray:
    """The best path (a label per frame) through the CTC states blank, t1, blank, t2, ...

    Ties prefer staying in a state, then moving by one, as torchaudio's kernel does.
    """
    frames = log_probs.shape[0]
    states = 2 * len(targets) + 1
    labels = np.full(states, blank, dtype=np.int64)
    labels[1::2] = targets
    # a label state may be entered from two back when the label differs from the previous one
    skip = np.zeros(states, dtype=bool)
    if len(targets) > 1:
        skip[3::2] = targets[1:] != targets[:-1]
    alpha = np.full(states, -np.inf)
    alpha[:min(2, states)] = log_probs[0, labels[:min(2, states)]]
    back = np.zeros((frames, states), dtype=np.int8)
    for t in range(1, frames):
        stay = alpha
        step = np.concatenate([[-np.inf], alpha[:-1]])
        jump = np.where(skip, np.concatenate([[-np.inf, -np.inf], alpha[:-2]]), -np.inf)
        choice = np.where((jump > step) & (jump > stay), 2, np.where(step > stay, 1, 0))
        best = np.choose(choice, [stay, step, jump])
        back[t] = choice
        alpha = best + log_probs[t, labels]
    state = states - 1 if states == 1 or alpha[-1] > alpha[-2] else states - 2
    if not np.isfinite(alpha[state]):
        raise RuntimeError("The transcript cannot be aligned to the frames: it needs more "
                           "frames than there are (one per label, plus one between repeats)")
    path = np.empty(frames, dtype=np.int64)
    for t in range(frames - 1, -1, -1):
        path[t] = labels[state]
        state -= back[t, state]
    return path


def forced_align(log_probs: ember.Tensor, targets: ember.Tensor,
                 input_lengths: ember.Tensor | None = None,
                 target_lengths: ember.Tensor | None = None, blank: int = 0
                 ) -> tuple[ember.Tensor, ember.Tensor]:
    r"""Align a CTC label sequence to an emission.

    Args:
        log_probs (Tensor): log probability of CTC emission output, ``(B, T, C)``, where
            ``B`` is the batch size (must be 1), ``T`` the input length and ``C`` the number
            of characters in the alphabet including blank.
        targets (Tensor): target sequence, ``(B, L)``, where ``L`` is the target length.
        input_lengths (Tensor or None, optional): lengths of the inputs, 1D ``(B,)``.
        target_lengths (Tensor or None, optional): lengths of the targets, 1D ``(B,)``.
        blank (int, optional): the index of the blank symbol in CTC emission.
            (Default: ``0``)

    Returns:
        (Tensor, Tensor): the label (blank included) of each frame, int64 ``(B, T)``, and
        the log probability of that label at that frame, ``(B, T)``.
    """
    if log_probs.ndim != 3:
        raise ValueError(f"log_probs must be 3-D (batch_size, input length, num classes), "
                         f"got {log_probs.ndim}-D")
    if targets.ndim != 2:
        raise ValueError(f"targets must be 2-D (batch_size, target length), got "
                         f"{targets.ndim}-D")
    if log_probs.shape[0] != 1 or targets.shape[0] != 1:
        raise ValueError("The batch dimension for log_probs and targets must be 1.")
    if targets.is_floating_point():
        raise ValueError("targets must be an integer tensor")
    num_classes = log_probs.shape[-1]
    if not 0 <= blank < num_classes:
        raise ValueError(f"blank must be within [0, num_classes), got {blank} for "
                         f"{num_classes} classes")
    frames = log_probs.shape[1] if input_lengths is None else int(input_lengths[0])
    length = targets.shape[1] if target_lengths is None else int(target_lengths[0])
    if not 0 < frames <= log_probs.shape[1] or not 0 <= length <= targets.shape[1]:
        raise ValueError("input_lengths and target_lengths must lie within the tensors' "
                         "lengths")
    scores = log_probs.detach().cpu().numpy()[0, :frames].astype(np.float64)
    labels = targets.detach().cpu().numpy()[0, :length].astype(np.int64)
    if (labels == blank).any():
        raise ValueError("targets Tensor shouldn't contain blank index. Found "
                         f"{labels.tolist()}.")
    if (labels < 0).any() or (labels >= num_classes).any():
        raise ValueError(f"targets values must be within [0, {num_classes})")
    repeats = int((labels[1:] == labels[:-1]).sum()) if length else 0
    if frames < length + repeats:
        raise RuntimeError(f"targets length is too long for CTC. Found log_probs length: "
                           f"{frames}, targets length: {length}, and number of repeats: "
                           f"{repeats}")
    path = _viterbi(scores, labels, blank)
    path_scores = log_probs.detach()[0, :frames].gather(
        -1, ember.from_numpy(path).to(log_probs.device).unsqueeze(-1)).squeeze(-1)
    return (ember.from_numpy(path).to(log_probs.device).unsqueeze(0),
            path_scores.unsqueeze(0))


@dataclass
class TokenSpan:
    """A token's span in the frames of an alignment.

    Attributes:
        token (int): the token.
        start (int): the first frame of the span.
        end (int): one past its last frame.
        score (float): the mean score (probability) of the token over its frames.
    """

    token: int
    start: int
    end: int
    score: float

    def __len__(self) -> int:
        """The number of frames of the span."""
        return self.end - self.start


def merge_tokens(tokens: ember.Tensor, scores: ember.Tensor, blank: int = 0
                 ) -> list[TokenSpan]:
    """Removes repeated tokens and blank tokens from the given CTC token sequence.

    Args:
        tokens (Tensor): alignment tokens (unbatched) returned from :func:`forced_align`,
            ``(time,)``.
        scores (Tensor): alignment scores (unbatched), ``(time,)``: converted to
            probabilities (``exp``) beforehand is the usual use.
        blank (int, optional): blank token. (Default: ``0``)

    Returns:
        list[TokenSpan]: the tokens without repetitions, with their frame spans and scores.
    """
    if tokens.ndim != 1 or scores.ndim != 1:
        raise ValueError("`tokens` and `scores` must be 1D Tensor.")
    if len(tokens) != len(scores):
        raise ValueError("`tokens` and `scores` must be the same length.")
    values = tokens.tolist()
    changes = [0] + [i for i in range(1, len(values)) if values[i] != values[i - 1]]
    changes.append(len(values))
    spans = []
    for start, end in zip(changes[:-1], changes[1:]):
        if values and values[start] != blank:
            spans.append(TokenSpan(token=values[start], start=start, end=end,
                                   score=float(scores[start:end].mean())))
    return spans
