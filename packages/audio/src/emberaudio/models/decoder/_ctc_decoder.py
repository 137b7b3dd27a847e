"""CTC prefix beam search with an optional lexicon (a trie of spellings) and a language
model hook, in the shape of torchaudio.models.decoder.ctc_decoder."""

from __future__ import annotations

import abc
import math
import os
from typing import NamedTuple

import numpy as np

import ember

__all__ = ["CTCDecoder", "CTCDecoderLM", "CTCDecoderLMState", "CTCHypothesis", "ctc_decoder"]

_NEG_INF = float("-inf")


class CTCHypothesis(NamedTuple):
    """One decoded hypothesis.

    Attributes:
        tokens (Tensor): the token indices, repeats collapsed and blanks removed.
        words (list[str]): the words (lexicon decoding; empty without a lexicon).
        score (float): the hypothesis' score (acoustic plus weighted LM and bonuses).
        timesteps (Tensor): the frame at which each token was emitted.
    """

    tokens: ember.Tensor
    words: list[str]
    score: float
    timesteps: ember.Tensor


class CTCDecoderLMState:
    """A language model state: a node of a tree of contexts, whose children are made on
    demand by :meth:`child`."""

    def __init__(self) -> None:
        self.children: dict[int, CTCDecoderLMState] = {}

    def child(self, usr_index: int) -> CTCDecoderLMState:
        """The state after ``usr_index`` (made once, then reused)."""
        if usr_index not in self.children:
            self.children[usr_index] = type(self)()
        return self.children[usr_index]

    def compare(self, state: CTCDecoderLMState) -> int:
        """0 if ``state`` is this state, else -1 or 1 (an order by identity)."""
        return 0 if state is self else (-1 if id(self) < id(state) else 1)


class CTCDecoderLM(abc.ABC):
    """The language model hook: subclass and define :meth:`start`, :meth:`score` and
    :meth:`finish`. With a lexicon the indices are word indices (into the lexicon's words,
    or ``lm_dict``'s); without one they are token indices."""

    @abc.abstractmethod
    def start(self, start_with_nothing: bool) -> CTCDecoderLMState:
        """The initial state."""

    @abc.abstractmethod
    def score(self, state: CTCDecoderLMState, usr_token_idx: int
              ) -> tuple[CTCDecoderLMState, float]:
        """The next state and the log score of ``usr_token_idx`` after ``state``."""

    @abc.abstractmethod
    def finish(self, state: CTCDecoderLMState) -> tuple[CTCDecoderLMState, float]:
        """The final state and the log score of ending after ``state``."""


class _ZeroLM(CTCDecoderLM):
    def start(self, start_with_nothing: bool) -> CTCDecoderLMState:
        return CTCDecoderLMState()

    def score(self, state, usr_token_idx):
        return state, 0.0

    def finish(self, state):
        return state, 0.0


class _Hyp:
    __slots__ = ("prefix", "p_blank", "p_token", "extra", "lm_state", "node", "words",
                 "timesteps")

    def __init__(self, prefix, p_blank, p_token, extra, lm_state, node, words, timesteps):
        self.prefix, self.p_blank, self.p_token = prefix, p_blank, p_token
        self.extra, self.lm_state, self.node = extra, lm_state, node
        self.words, self.timesteps = words, timesteps

    def acoustic(self, log_add):
        return _combine(self.p_blank, self.p_token, log_add)


def _combine(a: float, b: float, log_add: bool) -> float:
    if not log_add:
        return max(a, b)
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


class CTCDecoder:
    """CTC beam-search decoder; make one with :func:`ctc_decoder`.

    Call it on emissions ``(batch, frames, tokens)`` (log probabilities) and optional
    ``lengths`` ``(batch,)``; it returns, per batch item, the ``nbest`` best
    :class:`CTCHypothesis` s, best first.
    """

    def __init__(self, tokens: list[str], lexicon: dict[str, list[list[str]]] | None,
                 lm: CTCDecoderLM | None, lm_words: list[str] | None, nbest: int,
                 beam_size: int, beam_size_token: int | None, beam_threshold: float,
                 lm_weight: float, word_score: float, unk_word: str, sil_score: float,
                 log_add: bool, blank_token: str, sil_token: str, unk_score: float) -> None:
        self.tokens = list(tokens)
        index = {t: i for i, t in enumerate(self.tokens)}
        for name, token in (("blank_token", blank_token), ("sil_token", sil_token)):
            if token not in index:
                raise ValueError(f"{name} {token!r} is not one of the tokens")
        self.blank = index[blank_token]
        self.sil = index[sil_token]
        self.nbest, self.beam_size = nbest, beam_size
        self.beam_size_token = beam_size_token or len(self.tokens)
        self.beam_threshold, self.lm_weight = beam_threshold, lm_weight
        self.word_score, self.sil_score, self.unk_score = word_score, sil_score, unk_score
        self.log_add = log_add
        self.unk_word = unk_word
        self.lm = lm if lm is not None else _ZeroLM()
        self.lexicon = lexicon
        self._trie: list[dict] = []
        if lexicon is not None:
            words = list(lm_words) if lm_words is not None else list(lexicon)
            self.word_index = {w: i for i, w in enumerate(words)}
            self.words = words
            self._trie = [{"next": {}, "words": []}]
            for word, spellings in lexicon.items():
                for spelling in spellings:
                    # A word ends at the silence token (or at the end of the utterance).
                    if spelling and spelling[-1] == sil_token:
                        spelling = spelling[:-1]
                    if not spelling:
                        raise ValueError(f"the lexicon spells {word!r} with no tokens")
                    node = 0
                    for token in spelling:
                        if token not in index:
                            raise ValueError(f"the lexicon spells {word!r} with {token!r}, "
                                             "which is not one of the tokens")
                        nxt = self._trie[node]["next"]
                        if index[token] not in nxt:
                            nxt[index[token]] = len(self._trie)
                            self._trie.append({"next": {}, "words": []})
                        node = nxt[index[token]]
                    self._trie[node]["words"].append(word)

    def idxs_to_tokens(self, idxs: ember.Tensor) -> list[str]:
        """The token strings of ``idxs``."""
        return [self.tokens[int(i)] for i in idxs]

    # -- one hypothesis extended by one token ---------------------------------------------
    def _end_word(self, hyp_extra, lm_state, node, words):
        """Finish the partial word at ``node``: the best word there (by LM), or unk."""
        candidates = self._trie[node]["words"] if node > 0 else []
        if not candidates:
            if self.unk_score == _NEG_INF:
                return None
            word_idx = self.word_index.get(self.unk_word, -1)
            state, lm_score = ((lm_state, 0.0) if word_idx < 0
                               else self.lm.score(lm_state, word_idx))
            return (hyp_extra + self.unk_score + self.lm_weight * lm_score, state,
                    words + [self.unk_word])
        best = None
        for word in candidates:
            word_idx = self.word_index.get(word, -1)
            state, lm_score = ((lm_state, 0.0) if word_idx < 0
                               else self.lm.score(lm_state, word_idx))
            score = hyp_extra + self.word_score + self.lm_weight * lm_score
            if best is None or score > best[0]:
                best = (score, state, words + [word])
        return best

    def _extend(self, hyp: _Hyp, token: int):
        """(extra, lm_state, node, words) after emitting ``token``, or ``None`` if the
        lexicon forbids it."""
        extra, lm_state, node, words = hyp.extra, hyp.lm_state, hyp.node, hyp.words
        if self.lexicon is None:
            lm_state, lm_score = self.lm.score(lm_state, token)
            extra += self.lm_weight * lm_score
            if token == self.sil:
                extra += self.sil_score + self.word_score
            return extra, lm_state, node, words
        if token == self.sil:
            extra += self.sil_score
            if node != 0:
                ended = self._end_word(extra, lm_state, node, words)
                if ended is None:
                    return None
                extra, lm_state, words = ended
            return extra, lm_state, 0, words
        nxt = self._trie[node]["next"].get(token)
        if nxt is None:
            if self.unk_score == _NEG_INF:
                return None
            # an out-of-lexicon spelling: stays "off the trie" until the next silence
            return extra, lm_state, -1, words
        if node == -1:
            return extra, lm_state, -1, words
        return extra, lm_state, nxt, words

    def _add(self, new, prefix, p_blank, p_token, parent, ext=None, stamp=None):
        hyp = new.get(prefix)
        if hyp is None:
            if ext is None:
                ext = (parent.extra, parent.lm_state, parent.node, parent.words)
            timesteps = parent.timesteps + ((stamp,) if stamp is not None else ())
            hyp = new[prefix] = _Hyp(prefix, _NEG_INF, _NEG_INF, ext[0], ext[1], ext[2],
                                     ext[3], timesteps)
        hyp.p_blank = _combine(hyp.p_blank, p_blank, self.log_add)
        hyp.p_token = _combine(hyp.p_token, p_token, self.log_add)

    def _decode_one(self, emission: np.ndarray) -> list[CTCHypothesis]:
        log_add = self.log_add
        start = _Hyp((), 0.0, _NEG_INF, 0.0, self.lm.start(False), 0, [], ())
        beam = {(): start}
        for t in range(emission.shape[0]):
            frame = emission[t]
            top = np.argsort(-frame, kind="stable")[:self.beam_size_token]
            new: dict[tuple, _Hyp] = {}

            for prefix, hyp in beam.items():
                total = hyp.acoustic(log_add)
                last = prefix[-1] if prefix else None
                for token in top:
                    token = int(token)
                    p = float(frame[token])
                    if token == self.blank:
                        self._add(new, prefix, total + p, _NEG_INF, hyp)
                        continue
                    if token == last:
                        self._add(new, prefix, _NEG_INF, hyp.p_token + p, hyp)  # held
                        if hyp.p_blank == _NEG_INF:
                            continue
                        source = hyp.p_blank                          # blank-separated repeat
                    else:
                        source = total
                    extended = prefix + (token,)
                    if extended not in new:
                        ext = self._extend(hyp, token)
                        if ext is None:
                            continue
                        self._add(new, extended, _NEG_INF, source + p, hyp, ext, stamp=t)
                    else:
                        self._add(new, extended, _NEG_INF, source + p, hyp)
            ranked = sorted(new.values(), key=lambda h: h.acoustic(log_add) + h.extra,
                            reverse=True)
            if ranked:
                best = ranked[0].acoustic(log_add) + ranked[0].extra
                ranked = [h for h in ranked[:self.beam_size]
                          if h.acoustic(log_add) + h.extra >= best - self.beam_threshold]
            beam = {h.prefix: h for h in ranked}
        finals = []
        for hyp in beam.values():
            extra, lm_state, words = hyp.extra, hyp.lm_state, hyp.words
            if self.lexicon is not None and hyp.node != 0:
                ended = self._end_word(extra, lm_state, hyp.node, words)
                if ended is None:
                    continue
                extra, lm_state, words = ended
            _, lm_score = self.lm.finish(lm_state)
            score = hyp.acoustic(log_add) + extra + self.lm_weight * lm_score
            finals.append(CTCHypothesis(
                tokens=ember.tensor(list(hyp.prefix), dtype=ember.long),
                words=list(words) if self.lexicon is not None else [],
                score=float(score),
                timesteps=ember.tensor(list(hyp.timesteps), dtype=ember.int32)))
        finals.sort(key=lambda h: h.score, reverse=True)
        return finals[:self.nbest]

    def __call__(self, emissions: ember.Tensor, lengths: ember.Tensor | None = None
                 ) -> list[list[CTCHypothesis]]:
        """
        Args:
            emissions (Tensor): ``(batch, frames, num_tokens)`` log probabilities.
            lengths (Tensor or None, optional): ``(batch,)`` valid frames per item.

        Returns:
            list[list[CTCHypothesis]]: per item, its best hypotheses, best first.
        """
        if emissions.ndim != 3:
            raise ValueError(f"emissions must be (batch, frames, tokens), got shape "
                             f"{tuple(emissions.shape)}")
        if emissions.shape[2] != len(self.tokens):
            raise ValueError(f"emissions have {emissions.shape[2]} tokens, the decoder "
                             f"{len(self.tokens)}")
        if emissions.dtype not in (ember.float32, ember.float64):
            raise ValueError(f"emissions must be float32 or float64, got {emissions.dtype}")
        values = emissions.detach().cpu().numpy()
        frames = ([values.shape[1]] * values.shape[0] if lengths is None
                  else [int(n) for n in lengths.tolist()])
        if len(frames) != values.shape[0]:
            raise ValueError("lengths must have one entry per batch item")
        return [self._decode_one(values[b, :frames[b]]) for b in range(values.shape[0])]


def _read_tokens(tokens: str | list[str]) -> list[str]:
    if isinstance(tokens, (list, tuple)):
        return list(tokens)
    with open(tokens, encoding="utf-8") as handle:
        return [line.rstrip("\n").split(" ")[0] for line in handle if line.strip()]


def _read_lexicon(path: str) -> dict[str, list[list[str]]]:
    lexicon: dict[str, list[list[str]]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2:
                raise ValueError(f"{path}:{number}: a lexicon line is a word and its "
                                 "spelling in tokens")
            lexicon.setdefault(parts[0], []).append(parts[1:])
    return lexicon


def ctc_decoder(lexicon: str | None, tokens: str | list[str],
                lm: str | CTCDecoderLM | None = None, lm_dict: str | None = None,
                nbest: int = 1, beam_size: int = 50, beam_size_token: int | None = None,
                beam_threshold: float = 50, lm_weight: float = 2, word_score: float = 0,
                unk_word: str = "<unk>", sil_score: float = 0, log_add: bool = False,
                blank_token: str = "-", sil_token: str = "|",
                unk_score: float = float("-inf")) -> CTCDecoder:
    """Builds a CTC beam-search decoder (torchaudio's ``ctc_decoder`` options).

    Args:
        lexicon (str or None): a lexicon file (``word tok tok ...`` per line; a spelling
            usually ends with the silence token); ``None`` decodes without one.
        tokens (str or list[str]): a file of tokens (one per line) or the list.
        lm (str, CTCDecoderLM or None, optional): a language model: a
            :class:`CTCDecoderLM` subclass instance. KenLM files (``str``) need
            flashlight-text and are refused. (Default: ``None``)
        lm_dict (str or None, optional): a file of the LM's words (first field per line),
            giving the word indices the LM sees; default: the lexicon's words in order.
        nbest (int, optional): hypotheses returned per item. (Default: ``1``)
        beam_size (int, optional): hypotheses kept per frame. (Default: ``50``)
        beam_size_token (int or None, optional): tokens tried per frame (the best ones);
            ``None`` for all. (Default: ``None``)
        beam_threshold (float, optional): hypotheses scoring more than this below the best
            are pruned. (Default: ``50``)
        lm_weight (float, optional): weight of the LM scores. (Default: ``2``)
        word_score (float, optional): added per word. (Default: ``0``)
        unk_word (str, optional): the word for out-of-lexicon spellings. (Default:
            ``"<unk>"``)
        sil_score (float, optional): added per silence token. (Default: ``0``)
        log_add (bool, optional): merge paths by log-sum-exp rather than max.
            (Default: ``False``)
        blank_token (str, optional): the CTC blank. (Default: ``"-"``)
        sil_token (str, optional): the silence (word boundary) token. (Default: ``"|"``)
        unk_score (float, optional): the score of an unknown word; ``-inf`` forbids them.
            (Default: ``-inf``)

    Returns:
        CTCDecoder: the decoder.

    Examples::

        >>> decoder = ctc_decoder(lexicon=None, tokens=["-", "|", "a", "b"], beam_size=10)
        >>> hypotheses = decoder(emissions.log_softmax(-1))   # emissions: (1, T, 4)
        >>> hypotheses[0][0].tokens
    """
    if isinstance(lm, (str, os.PathLike)):
        raise ValueError("KenLM language model files need flashlight-text, which emberaudio "
                         "does not use; pass a CTCDecoderLM subclass instance instead")
    if lm is not None and not isinstance(lm, CTCDecoderLM):
        raise TypeError(f"lm must be a CTCDecoderLM or None, got {type(lm).__name__}")
    if nbest < 1 or beam_size < 1:
        raise ValueError("nbest and beam_size must be at least 1")
    lm_words = None
    if lm_dict is not None:
        lm_words = _read_tokens(lm_dict)
    lexicon_map = _read_lexicon(lexicon) if lexicon is not None else None
    return CTCDecoder(_read_tokens(tokens), lexicon_map, lm, lm_words, nbest, beam_size,
                      beam_size_token, beam_threshold, lm_weight, word_score, unk_word,
                      sil_score, log_add, blank_token, sil_token, unk_score)
