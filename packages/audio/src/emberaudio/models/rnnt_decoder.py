"""Beam search over an :class:`~emberaudio.models.RNNT` 's outputs, whole-utterance and
streaming."""

from __future__ import annotations

from collections.abc import Callable
from typing import List, Tuple  # noqa: UP035 (Hypothesis is a typing alias, as in torchaudio)

import numpy as np

import ember
from ember import nn

__all__ = ["Hypothesis", "RNNTBeamSearch"]

Hypothesis = Tuple[List[int], ember.Tensor, List[List[ember.Tensor]], float]  # noqa: UP006
Hypothesis.__doc__ = """A hypothesis of the RNN-T beam search: (tokens, prediction network
output, prediction network state, score)."""


def _tokens(hypo):
    return hypo[0]


def _score(hypo):
    return hypo[3]


def _key(hypo) -> str:
    return str(hypo[0])


def _default_hypo_sort_key(hypo) -> float:
    """The score per emitted token (counting the initial blank)."""
    return _score(hypo) / (len(_tokens(hypo)) + 1)


def _logaddexp(a: float, b: float) -> float:
    return float(np.logaddexp(np.float32(a), np.float32(b)))


class RNNTBeamSearch(nn.Module):
    r"""Beam search decoder for an RNN-T model.

    At each frame, hypotheses that end in a blank ("b" hypotheses, whose blank-extended
    scores merge by log-add-exp when their tokens agree) are collected while the best
    non-blank extensions ("a" hypotheses) still beat the ``beam_width``-th of them, at most
    ``step_max_tokens`` times; then the ``beam_width`` best by ``hypo_sort_key`` are kept.

    Args:
        model (RNNT): the RNN-T model.
        blank (int): index of the blank token.
        temperature (float, optional): the joint network's outputs are divided by it before
            the log-softmax. (Default: ``1.0``)
        hypo_sort_key (callable or None, optional): ranks hypotheses; ``None`` for the score
            divided by the number of tokens. (Default: ``None``)
        step_max_tokens (int, optional): the most tokens emitted per frame. (Default: ``100``)

    Examples::

        >>> decoder = RNNTBeamSearch(model, blank=4096)
        >>> hypotheses = decoder(features, length, beam_width=10)
        >>> tokens, _, _, score = hypotheses[0]
    """

    def __init__(self, model: nn.Module, blank: int, temperature: float = 1.0,
                 hypo_sort_key: Callable | None = None, step_max_tokens: int = 100) -> None:
        super().__init__()
        self.model = model
        self.blank = blank
        self.temperature = temperature
        self.hypo_sort_key = _default_hypo_sort_key if hypo_sort_key is None else hypo_sort_key
        self.step_max_tokens = step_max_tokens

    def _init_b_hypos(self, device) -> list:
        one = ember.tensor([1], device=device)
        pred_out, _, pred_state = self.model.predict(
            ember.tensor([[self.blank]], device=device), one, None)
        return [([self.blank], pred_out[0].detach(), pred_state, 0.0)]

    def _next_token_probs(self, enc_out, hypos, device) -> np.ndarray:
        predictor_out = ember.stack([h[1] for h in hypos], dim=0)
        joined, _, _ = self.model.join(enc_out, ember.tensor([1], device=device),
                                       predictor_out,
                                       ember.tensor([1] * len(hypos), device=device))
        joined = nn.functional.log_softmax(joined / self.temperature, dim=3)
        return joined[:, 0, 0].detach().cpu().numpy()

    def _extend_with_blank(self, b_hypos, a_hypos, probs, key_to_b_hypo) -> list:
        for i, h_a in enumerate(a_hypos):
            blank_score = np.float32(_score(h_a)) + probs[i, -1]
            key = _key(h_a)
            if key in key_to_b_hypo:
                h_old = key_to_b_hypo[key]
                for j, elem in enumerate(b_hypos):
                    if _key(elem) == _key(h_old):
                        del b_hypos[j]
                        break
                score = _logaddexp(_score(h_old), blank_score)
            else:
                score = float(blank_score)
            h_b = (h_a[0], h_a[1], h_a[2], score)
            b_hypos.append(h_b)
            key_to_b_hypo[key] = h_b
        order = np.argsort(np.array([_score(h) for h in b_hypos], dtype=np.float32),
                           kind="stable")
        return [b_hypos[i] for i in order]

    def _extend_with_tokens(self, a_hypos, b_hypos, probs, beam_width, device) -> list:
        scores = np.array([_score(h) for h in a_hypos], dtype=np.float32)[:, None]
        nonblank = (scores + probs[:, :-1]).reshape(-1)
        best = ember.as_tensor(nonblank).topk(min(beam_width, nonblank.size))
        best_scores, best_idx = best.values.numpy(), best.indices.numpy()
        threshold = -float("inf") if len(b_hypos) < beam_width else _score(
            b_hypos[-beam_width])
        width = probs.shape[1] - 1
        chosen = [(int(i) // width, int(i) % width, float(s))
                  for s, i in zip(best_scores, best_idx) if float(s) > threshold]
        if not chosen:
            return []
        base = [a_hypos[h] for h, _, _ in chosen]
        tokens = ember.tensor([[t] for _, t, _ in chosen], device=device)
        states = [[ember.cat([h[2][i][j] for h in base]) for j in range(len(base[0][2][i]))]
                  for i in range(len(base[0][2]))]
        pred_out, _, pred_states = self.model.predict(
            tokens, ember.tensor([1] * len(base), device=device), states)
        return [(_tokens(h) + [t], pred_out[n].detach(),
                 [[s[n:n + 1] for s in layer] for layer in pred_states], score)
                for n, (h, (_, t, score)) in enumerate(zip(base, chosen))]

    def _search(self, enc_out, hypo, beam_width) -> list:
        device = enc_out.device
        b_hypos = self._init_b_hypos(device) if hypo is None else hypo
        for t in range(enc_out.shape[1]):
            a_hypos = b_hypos
            b_hypos = []
            key_to_b_hypo = {}
            emitted = 0
            while a_hypos:
                probs = self._next_token_probs(enc_out[:, t:t + 1], a_hypos, device)
                b_hypos = self._extend_with_blank(b_hypos, a_hypos, probs, key_to_b_hypo)
                if emitted == self.step_max_tokens:
                    break
                a_hypos = self._extend_with_tokens(a_hypos, b_hypos, probs, beam_width, device)
                if a_hypos:
                    emitted += 1
            keys = ember.tensor([float(self.hypo_sort_key(h)) for h in b_hypos])
            top = keys.topk(min(beam_width, len(b_hypos))).indices.tolist()
            b_hypos = [b_hypos[i] for i in top]
        return b_hypos

    @staticmethod
    def _check(input, length):
        if input.ndim != 2 and not (input.ndim == 3 and input.shape[0] == 1):
            raise ValueError("input must be of shape (T, D) or (1, T, D)")
        if tuple(length.shape) not in ((), (1,)):
            raise ValueError("length must be of shape () or (1,)")
        if input.ndim == 2:
            input = input.unsqueeze(0)
        if length.ndim == 0:
            length = length.unsqueeze(0)
        return input, length

    def forward(self, input: ember.Tensor, length: ember.Tensor, beam_width: int) -> list:
        """Beam search over a whole utterance.

        Args:
            input (Tensor): the input frames, ``(T, D)`` or ``(1, T, D)``.
            length (Tensor): the number of valid frames, ``()`` or ``(1,)``.
            beam_width (int): the beam size.

        Returns:
            list of Hypothesis: the ``beam_width`` best hypotheses, best first.
        """
        input, length = self._check(input, length)
        enc_out, _ = self.model.transcribe(input, length)
        return self._search(enc_out, None, beam_width)

    def infer(self, input: ember.Tensor, length: ember.Tensor, beam_width: int,
              state: list[list[ember.Tensor]] | None = None,
              hypothesis: list | None = None) -> tuple[list, list[list[ember.Tensor]]]:
        """Beam search over one segment of a stream.

        Args:
            input (Tensor): the segment's frames (with right context), ``(T, D)`` or
                ``(1, T, D)``.
            length (Tensor): the number of valid frames, ``()`` or ``(1,)``.
            beam_width (int): the beam size.
            state (list of list of Tensor or None, optional): the transcriber's state from
                the previous call. (Default: ``None``)
            hypothesis (list of Hypothesis or None, optional): the hypotheses of the previous
                call, to continue. (Default: ``None``)

        Returns:
            (list of Hypothesis, list of list of Tensor): the best hypotheses and the
            transcriber's state.
        """
        input, length = self._check(input, length)
        enc_out, _, state = self.model.transcribe_streaming(input, length, state)
        return self._search(enc_out, hypothesis, beam_width), state
