"""The Tokenizer pipeline: added tokens, normalizer, pre-tokenizer, model, post-processor,
truncation, padding, decoder; ``tokenizer.json`` in and out."""

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor

from embertext.tokenizers import decoders, models, normalizers, pre_tokenizers, processors
from embertext.tokenizers._encoding import Encoding
from embertext.tokenizers._kernels import AddedMatcher, ByteLevelBPEPlan
from embertext.tokenizers._piece import CharMap, Piece

__all__ = ["Tokenizer", "AddedToken", "set_num_threads", "get_num_threads"]

_STRATEGIES = ("longest_first", "only_first", "only_second")

# NOTE [ Batch threads ]
# A compiled pipeline (_kernels.ByteLevelBPEPlan, BertPlan, UnigramPlan) encodes a whole
# batch in one call, without the GIL, on get_num_threads() threads (NOTE [ Batches without
# the GIL ] in _kernels.pyx): this thread and the others of a pool. Each thread takes a free
# slot of the plan (its word cache), locked while in use, so that batches encoded at once
# from several threads do not share a cache. What stays in Python (pairs, truncation, other
# post-processors) runs after, in the calling thread.
_SLOTS = 64
_threads = {"count": None, "pool": None}
_slot_locks = [threading.Lock() for _ in range(_SLOTS)]
_MIN_CHUNK = 32  # the fewest texts worth a thread of their own


def _after_fork():
    # The pool's threads and the locks they held are the parent's.
    _threads["pool"] = None
    _slot_locks[:] = [threading.Lock() for _ in range(_SLOTS)]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def set_num_threads(num_threads):
    """Set the number of threads of :meth:`Tokenizer.encode_batch` (1 encodes in the
    calling thread)."""
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
    _threads["count"] = min(num_threads, _SLOTS)


def get_num_threads():
    """The number of threads of :meth:`Tokenizer.encode_batch`: the value given to
    :func:`set_num_threads`, else 1 where the environment variable TOKENIZERS_PARALLELISM
    is false (as in Hugging Face `tokenizers`), else the CPU count (at most 8)."""
    if _threads["count"] is not None:
        return _threads["count"]
    if os.environ.get("TOKENIZERS_PARALLELISM", "").lower() in ("0", "false", "off", "no"):
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def _pool(count):
    pool = _threads["pool"]
    if pool is None or pool._max_workers < count:
        if pool is not None:
            pool.shutdown(wait=False)
        pool = _threads["pool"] = ThreadPoolExecutor(count, "embertext-encode")
    return pool


def _take_slot():
    """A free slot, locked (the first one, once free, if none is)."""
    for slot, lock in enumerate(_slot_locks):
        if lock.acquire(blocking=False):
            return slot
    _slot_locks[0].acquire()
    return 0


def _work(batch):
    """``batch.work(slot)`` with a free slot."""
    slot = _take_slot()
    try:
        batch.work(slot)
    finally:
        _slot_locks[slot].release()


def _run_batch(batch, threads):
    """Run a pass of a compiled batch on up to ``threads`` threads (NOTE [ Batch threads ])."""
    threads = min(threads, max(1, len(batch) // _MIN_CHUNK))
    if threads == 1:
        _work(batch)
        return
    futures = [_pool(threads - 1).submit(_work, batch) for _ in range(threads - 1)]
    _work(batch)
    for future in futures:
        future.result()


class AddedToken:
    r"""A token matched in the raw text before the model runs.

    Args:
        content (str): the token's text.
        single_word (bool): match only as a whole word.
        lstrip (bool): the match takes the whitespace on its left.
        rstrip (bool): the match takes the whitespace on its right.
        normalized (bool): kept for ``tokenizer.json``; matching is on the raw text.
        special (bool): a special token (``decode`` can skip it).
    """

    def __init__(self, content, single_word=False, lstrip=False, rstrip=False, normalized=True,
                 special=False):
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.normalized = normalized
        self.special = special

    def __repr__(self):
        return f"AddedToken({self.content!r}, special={self.special})"

    def to_dict(self, index):
        return {"id": index, "content": self.content, "single_word": self.single_word,
                "lstrip": self.lstrip, "rstrip": self.rstrip, "normalized": self.normalized,
                "special": self.special}


class Tokenizer:
    r"""A text tokenizer with Hugging Face `tokenizers`' API and ``tokenizer.json`` format.

    Args:
        model: a :class:`~embertext.tokenizers.models.BPE` or
            :class:`~embertext.tokenizers.models.WordPiece`.

    The ``normalizer``, ``pre_tokenizer``, ``post_processor`` and ``decoder`` attributes
    are set after construction (``None`` skips that step).

    Examples::

        >>> tokenizer = Tokenizer.from_file("tokenizer.json")
        >>> encoding = tokenizer.encode("Hello, y'all!")
        >>> encoding.ids, encoding.offsets
        >>> tokenizer.decode(encoding.ids)
    """

    def __init__(self, model):
        self.model = model
        self.normalizer = None
        self.pre_tokenizer = None
        self.post_processor = None
        self.decoder = None
        self._added = {}  # id -> AddedToken
        self._added_ids = {}  # content -> id
        self._added_pattern = None  # and _added_matcher: made from _added_ids when needed
        self._added_matcher = None
        self.truncation = None
        self.padding = None

    # -- added tokens ---------------------------------------------------------------------

    def _add(self, tokens, special):
        count = 0
        for token in tokens:
            if isinstance(token, str):
                token = AddedToken(token, normalized=not special, special=special)
            elif special:
                token.special = True
            if token.content in self._added_ids:
                self._added[self._added_ids[token.content]] = token
                continue
            index = self.model.token_to_id(token.content)
            if index is None:
                used = [self.model.get_vocab_size() - 1, *self._added, *self.model.vocab_r]
                index = max(used, default=-1) + 1
                count += 1
            self._added[index] = token
            self._added_ids[token.content] = index
        self._added_pattern = None
        return count

    def add_special_tokens(self, tokens):
        """Add special tokens (str or :class:`AddedToken`); returns how many are new."""
        return self._add(tokens, special=True)

    def add_tokens(self, tokens):
        """Add tokens matched before the model runs; returns how many are new."""
        return self._add(tokens, special=False)

    def _compile_added(self):
        contents = sorted(self._added_ids, key=len, reverse=True)
        self._added_pattern = re.compile("|".join(re.escape(c) for c in contents))
        self._added_matcher = AddedMatcher(contents)

    def _matcher(self):
        """The compiled check for the added tokens in a text, or ``None`` without any."""
        if not self._added_ids:
            return None
        if self._added_pattern is None:
            self._compile_added()
        return self._added_matcher

    def __getstate__(self):
        # The compiled parts are made again when needed.
        return {**self.__dict__, "_added_pattern": None, "_added_matcher": None}

    def _split_added(self, text):
        """``(start, end, id or None)`` segments of ``text``: added tokens and the rest."""
        if not self._added_ids:
            return [(0, len(text), None)]
        if self._added_pattern is None:
            self._compile_added()
        segments = []
        position = 0
        for match in self._added_pattern.finditer(text):
            start, end = match.span()
            if start < position:
                continue
            index = self._added_ids[match.group()]
            token = self._added[index]
            if token.single_word and (
                    (start > 0 and _is_word_char(text[start - 1]))
                    or (end < len(text) and _is_word_char(text[end]))):
                continue
            if token.lstrip:
                while start > position and text[start - 1].isspace():
                    start -= 1
            if token.rstrip:
                while end < len(text) and text[end].isspace():
                    end += 1
            if start > position:
                segments.append((position, start, None))
            segments.append((start, end, index))
            position = end
        if position < len(text):
            segments.append((position, len(text), None))
        return segments

    # -- encoding -------------------------------------------------------------------------

    def _words(self, text, offset=0):
        piece = Piece.from_text(text, offset)
        if self.normalizer is not None:
            piece = self.normalizer.normalize(piece)
        if self.pre_tokenizer is not None:
            return self.pre_tokenizer.pre_tokenize(piece)
        return [piece] if piece.text else []

    def _encode_texts(self, texts, sequence_id, pretokenized):
        """Encode ``texts`` one after another: one text, or the given words of a pre-tokenized
        input (each word is then one word, with offsets within it)."""
        ids, tokens, offsets, word_ids = [], [], [], []
        word = 0
        for number, text in enumerate(texts):
            for start, end, added in self._split_added(text):
                if added is not None:
                    ids.append(added)
                    # The token is the text matched, with the whitespace lstrip/rstrip took.
                    tokens.append(text[start:end])
                    offsets.append((start, end))
                    word_ids.append(number if pretokenized else word)
                    word += 1
                    continue
                for piece in self._words(text[start:end], start):
                    word_id = number if pretokenized else word
                    found = self.model.tokenize(piece.text)
                    if piece.align is None:
                        offset = piece.offset
                        offsets.extend([(offset + a, offset + b) for _, _, a, b in found])
                    else:
                        offsets.extend([piece.span(a, b) for _, _, a, b in found])
                    ids.extend([index for index, _, _, _ in found])
                    tokens.extend([token for _, token, _, _ in found])
                    word_ids.extend([word_id] * len(found))
                    word += 1
        # Special tokens written in the text are not marked in special_tokens_mask (only
        # those the post-processor adds are), as in Hugging Face `tokenizers`.
        # The type id of a text is its index in the pair, as in Hugging Face `tokenizers`
        # (post-processors that add special tokens set their own).
        return Encoding(ids, tokens, offsets, type_ids=[sequence_id] * len(ids),
                        word_ids=word_ids, sequence_ids=[sequence_id] * len(ids))

    def _compiled_plan(self):
        """The compiled pipeline this tokenizer's parts make up, or ``None`` (NOTE [ Batch
        threads ])."""
        model, pre, norm = self.model, self.pre_tokenizer, self.normalizer
        if type(model) is models.BPE and type(pre) is pre_tokenizers.ByteLevel and norm is None:
            return model._byte_level_plan(pre, _SLOTS)
        if type(model) is models.Unigram and type(pre) is pre_tokenizers.Metaspace and norm is None:
            return model._metaspace_plan(pre, _SLOTS)
        if (type(model) is models.WordPiece and type(pre) is pre_tokenizers.BertPreTokenizer
                and (norm is None or type(norm) is normalizers.BertNormalizer)):
            charmap = None
            if norm is not None:
                if norm._charmap is None:
                    norm._charmap = CharMap(norm._normalize_char)
                charmap = norm._charmap
            return model._bert_plan(charmap, _SLOTS)
        return None

    def _segments(self, text):
        segments = self._split_added(text)
        if len(segments) == 1 and segments[0][2] is None and segments[0][0] == 0:
            return None
        return segments

    def _byte_level_trim(self, plan, truncated=True):
        """-1, or whether the post-processor trims byte-level offsets with a prefix space
        (0 or 1): the compiled byte-level pipeline then trims them itself (which it cannot
        do before a truncation, unless it does the truncation: ``truncated=False``)."""
        post = self.post_processor
        if isinstance(post, processors.Sequence) and post.processors:
            post = post.processors[0]
        if (isinstance(plan, ByteLevelBPEPlan)
                and (self.truncation is None or not truncated)
                and isinstance(post, (processors.ByteLevel, processors.RobertaProcessing))
                and post.trim_offsets):
            return int(bool(post.add_prefix_space))
        return -1

    def _run_plan(self, plan, texts, sequence_id, trim, wrap, threads, truncation=None):
        """``plan.encode`` (``None`` when a text is not a str)."""
        return plan.encode(texts, self._matcher(), self._segments, trim, wrap, sequence_id,
                           threads, _run_batch, truncation)

    def _encode_compiled(self, plan, texts, sequence_id, threads):
        """Encodings of texts through a compiled plan, or ``None`` when one is not a str."""
        trim = self._byte_level_trim(plan)
        found = self._run_plan(plan, texts, sequence_id, trim, None, threads)
        if found is None:
            return None
        encodings, fallbacks = found
        for i in fallbacks:
            encodings[i] = self._encode_texts([texts[i]], sequence_id, False)
        return encodings

    def _encode_final(self, plan, texts, add_special_tokens, threads):
        """The final encodings of single texts, straight from a compiled plan, where the
        post-processing is adding ``[CLS] ... [SEP]``-style tokens (BertProcessing,
        RobertaProcessing) or nothing (ByteLevel, none), truncation included (the plan
        leaves the texts it cannot truncate itself to the Python code); else (or when a
        text is not a str) ``None``."""
        post = self.post_processor
        trim = self._byte_level_trim(plan, truncated=False)
        wrap = None
        if type(post) in (processors.BertProcessing, processors.RobertaProcessing):
            if type(post) is processors.RobertaProcessing and post.trim_offsets and trim < 0:
                return None
            if add_special_tokens:
                wrap = (post.cls, post.sep)
        elif post is not None and not (type(post) is processors.ByteLevel
                                       and (not post.trim_offsets or trim >= 0)):
            return None
        truncation = None
        if self.truncation is not None:
            t = self.truncation
            max_length = t["max_length"]
            if add_special_tokens:
                max_length -= self.num_special_tokens_to_add(False)
            if max_length < 0 and texts:
                raise ValueError(f"truncation max_length ({t['max_length']}) is smaller than "
                                 "the number of special tokens to add")
            truncation = (max_length, t["stride"], t["direction"] == "right")
        found = self._run_plan(plan, texts, 0, trim, wrap, threads, truncation)
        if found is None:
            return None
        encodings, fallbacks = found
        for i in fallbacks:
            encodings[i] = self._post_process(self._encode_compiled(plan, [texts[i]], 0, 1)[0],
                                              None, add_special_tokens)
        if post is None:  # NOTE [ Unranged encodings ]
            for encoding in encodings:
                encoding._unranged = True
        return encodings

    def _encode_one(self, sequence, sequence_id, is_pretokenized, plan=None):
        if plan is not None and isinstance(sequence, str) and not is_pretokenized:
            return self._encode_compiled(plan, [sequence], sequence_id, 1)[0]
        if is_pretokenized:
            if isinstance(sequence, str) or not all(isinstance(w, str) for w in sequence):
                raise TypeError("a pre-tokenized input is a list of str")
            return self._encode_texts(list(sequence), sequence_id, True)
        if not isinstance(sequence, str):
            raise TypeError(f"a text input must be str, got {type(sequence).__name__}")
        return self._encode_texts([sequence], sequence_id, False)

    def _encode_many(self, texts, sequence_id, is_pretokenized, plan, threads):
        """:meth:`_encode_one` of each text, the texts through ``plan`` at once."""
        encodings = (None if plan is None
                     else self._encode_compiled(plan, texts, sequence_id, threads))
        if encodings is None:
            encodings = [self._encode_one(text, sequence_id, is_pretokenized, plan)
                         for text in texts]
        return encodings

    def num_special_tokens_to_add(self, is_pair):
        """How many special tokens the post-processor adds."""
        if self.post_processor is None:
            return 0
        return self.post_processor.num_special_tokens_to_add(is_pair)

    def _truncate(self, encoding, pair, add_special_tokens):
        params = self.truncation
        max_length = params["max_length"]
        if add_special_tokens:
            max_length -= self.num_special_tokens_to_add(pair is not None)
        if max_length < 0:
            raise ValueError(f"truncation max_length ({params['max_length']}) is smaller than "
                             "the number of special tokens to add")
        stride, direction = params["stride"], params["direction"]
        total = len(encoding) + (len(pair) if pair is not None else 0)
        if total <= max_length:
            return
        strategy = params["strategy"]
        if pair is None or strategy == "only_first" and pair is None:
            encoding.truncate(max_length, stride, direction)
        elif strategy == "longest_first":
            n1, n2 = len(encoding), len(pair)
            swap = n1 > n2
            if swap:
                n1, n2 = n2, n1
            n2 = n1 if n1 > max_length else max(n1, max_length - n1)
            if n1 + n2 > max_length:
                n1 = max_length // 2
                n2 = n1 + max_length % 2
            if swap:
                n1, n2 = n2, n1
            encoding.truncate(n1, stride, direction)
            pair.truncate(n2, stride, direction)
        else:
            target, other = (encoding, pair) if strategy == "only_first" else (pair, encoding)
            keep = max_length - len(other)
            if keep <= 0:
                raise ValueError("truncation error: the other sequence is longer than "
                                 "max_length")
            target.truncate(keep, stride, direction)

    def _process(self, encoding, pair, add_special_tokens):
        if self.post_processor is None:
            if pair is not None:
                return Encoding.merge([encoding, pair])
            merged = Encoding.merge([encoding])
            merged._unranged = True  # NOTE [ Unranged encodings ]
            return merged
        return self.post_processor.process(encoding, pair, add_special_tokens)

    def _post_process(self, encoding, pair, add_special_tokens):
        if self.truncation is not None:
            self._truncate(encoding, pair, add_special_tokens)
        overflow_a = encoding.overflowing
        overflow_b = pair.overflowing if pair is not None else []
        if not overflow_a and not overflow_b:
            # Nothing else uses the parts: no copies.
            return self._process(encoding, pair, add_special_tokens)
        encoding.overflowing = []
        if pair is not None:
            pair.overflowing = []
        result = self._process(_copy(encoding), _copy(pair) if pair is not None else None,
                               add_special_tokens)
        combos = []
        for a in overflow_a:
            combos.append((a, pair))
            combos.extend((a, b) for b in overflow_b)
        combos.extend((encoding, b) for b in overflow_b)
        result.overflowing = [
            self._process(_copy(a), _copy(b) if b is not None else None, add_special_tokens)
            for a, b in combos]
        return result

    def _pad_length(self, lengths):
        params = self.padding
        length = params["length"] if params["length"] is not None else max(lengths, default=0)
        multiple = params["pad_to_multiple_of"]
        if multiple and length % multiple:
            length += multiple - length % multiple
        return length

    def _pad(self, encodings):
        if self.padding is None:
            return
        length = self._pad_length([len(e) for e in encodings])
        p = self.padding
        for encoding in encodings:
            encoding.pad(length, p["pad_id"], p["pad_type_id"], p["pad_token"], p["direction"])

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        r"""Encode a text, or a pair of texts, into an :class:`Encoding`.

        Args:
            sequence (str or list of str): the text (a list of words if pre-tokenized).
            pair (str or list of str, optional): the second text of a pair.
            is_pretokenized (bool): the inputs are lists of words.
            add_special_tokens (bool): let the post-processor add special tokens.
        """
        plan = None if is_pretokenized else self._compiled_plan()
        if plan is not None and pair is None and isinstance(sequence, str):
            final = self._encode_final(plan, [sequence], add_special_tokens, 1)
            if final is not None:
                self._pad(final)
                return final[0]
        encoding = self._encode_one(sequence, 0, is_pretokenized, plan)
        pair_encoding = (None if pair is None
                         else self._encode_one(pair, 1, is_pretokenized, plan))
        result = self._post_process(encoding, pair_encoding, add_special_tokens)
        self._pad([result])
        return result

    def encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        """Encode a list of texts or ``(text, pair)`` tuples; padding applies to the batch.

        The batch is encoded by :func:`get_num_threads` threads (NOTE [ Batch threads ])."""
        items = input if type(input) is list else list(input)
        plan = None if is_pretokenized else self._compiled_plan()
        threads = get_num_threads()
        if plan is not None:
            # Plain texts (the usual batch) go straight to the plan, unlooked at here.
            results = self._encode_final(plan, items, add_special_tokens, threads)
            if results is not None:
                self._pad(results)
                return results
        firsts, pairs = [], []
        for item in items:
            if isinstance(item, (tuple, list)) and not is_pretokenized or (
                    is_pretokenized and isinstance(item, tuple)):
                if len(item) != 2:
                    raise ValueError("a pair input is a tuple of two texts")
                firsts.append(item[0])
                pairs.append(item[1])
            else:
                firsts.append(item)
                pairs.append(None)
        encodings = self._encode_many(firsts, 0, is_pretokenized, plan, threads)
        paired = [i for i, pair in enumerate(pairs) if pair is not None]
        if paired:
            for i, encoding in zip(paired, self._encode_many(
                    [pairs[i] for i in paired], 1, is_pretokenized, plan, threads)):
                pairs[i] = encoding
        results = [self._post_process(encoding, pair, add_special_tokens)
                   for encoding, pair in zip(encodings, pairs)]
        self._pad(results)
        return results

    # -- decoding -------------------------------------------------------------------------

    def id_to_token(self, id):
        """The token of an id, or ``None``."""
        if id in self._added:
            return self._added[id].content
        return self.model.id_to_token(id)

    def token_to_id(self, token):
        """The id of a token, or ``None``."""
        if token in self._added_ids:
            return self._added_ids[token]
        return self.model.token_to_id(token)

    def decode(self, ids, skip_special_tokens=True):
        """Text from token ids (special tokens left out unless ``skip_special_tokens=False``)."""
        tokens = []
        for index in ids:
            if skip_special_tokens and index in self._added and self._added[index].special:
                continue
            token = self.id_to_token(int(index))
            if token is None:
                continue
            tokens.append(token)
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)

    def decode_batch(self, sequences, skip_special_tokens=True):
        """:meth:`decode` for each list of ids."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary, truncation, padding ---------------------------------------------------

    def get_vocab(self, with_added_tokens=True):
        vocab = self.model.get_vocab()
        if with_added_tokens:
            vocab.update(self._added_ids)
        return vocab

    def get_vocab_size(self, with_added_tokens=True):
        return len(self.get_vocab(with_added_tokens))

    def get_added_tokens_decoder(self):
        return dict(self._added)

    def enable_truncation(self, max_length, stride=0, strategy="longest_first",
                          direction="right"):
        """Truncate encodings to ``max_length`` tokens, special tokens included."""
        if strategy not in _STRATEGIES:
            raise ValueError(f"strategy must be one of {_STRATEGIES}, got {strategy!r}")
        if direction not in ("right", "left"):
            raise ValueError(f"direction must be 'right' or 'left', got {direction!r}")
        self.truncation = {"max_length": max_length, "stride": stride, "strategy": strategy,
                           "direction": direction}

    def no_truncation(self):
        self.truncation = None

    def enable_padding(self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]",
                       length=None, pad_to_multiple_of=None):
        """Pad encodings to ``length``, or a batch to its longest encoding."""
        if direction not in ("right", "left"):
            raise ValueError(f"direction must be 'right' or 'left', got {direction!r}")
        self.padding = {"direction": direction, "pad_id": pad_id, "pad_type_id": pad_type_id,
                        "pad_token": pad_token, "length": length,
                        "pad_to_multiple_of": pad_to_multiple_of}

    def no_padding(self):
        self.padding = None

    # -- training -------------------------------------------------------------------------

    def train_from_iterator(self, iterator, trainer=None, length=None):
        """Train the model on an iterable of texts (or of lists of texts)."""
        from embertext.tokenizers import trainers

        if trainer is None:
            trainer = trainers.trainer_for(self.model)
        counts = {}
        for item in iterator:
            for text in [item] if isinstance(item, str) else item:
                for start, end, added in self._split_added(text):
                    if added is not None:
                        continue
                    for piece in self._words(text[start:end]):
                        counts[piece.text] = counts.get(piece.text, 0) + 1
        trainer.train(self.model, counts)
        self.add_special_tokens(list(trainer.special_tokens))

    def train(self, files, trainer=None):
        """Train the model on text files (one text a line)."""

        def lines():
            for path in files:
                with open(path, encoding="utf-8") as f:
                    yield from f

        self.train_from_iterator(lines(), trainer)

    # -- tokenizer.json -------------------------------------------------------------------

    def to_dict(self):
        truncation = padding = None
        if self.truncation is not None:
            t = self.truncation
            truncation = {"direction": t["direction"].capitalize(), "max_length": t["max_length"],
                          "strategy": "".join(s.capitalize() for s in t["strategy"].split("_")),
                          "stride": t["stride"]}
        if self.padding is not None:
            p = self.padding
            padding = {"strategy": {"Fixed": p["length"]} if p["length"] is not None
                       else "BatchLongest", "direction": p["direction"].capitalize(),
                       "pad_to_multiple_of": p["pad_to_multiple_of"], "pad_id": p["pad_id"],
                       "pad_type_id": p["pad_type_id"], "pad_token": p["pad_token"]}

        def dump(part):
            return None if part is None else part.to_dict()

        return {"version": "1.0", "truncation": truncation, "padding": padding,
                "added_tokens": [token.to_dict(index)
                                 for index, token in sorted(self._added.items())],
                "normalizer": dump(self.normalizer), "pre_tokenizer": dump(self.pre_tokenizer),
                "post_processor": dump(self.post_processor), "decoder": dump(self.decoder),
                "model": self.model.to_dict()}

    def to_str(self, pretty=False):
        """The ``tokenizer.json`` text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2 if pretty else None)

    def save(self, path, pretty=True):
        """Write ``tokenizer.json`` to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str(pretty))

    @classmethod
    def from_str(cls, json_string):
        """A tokenizer from the text of a ``tokenizer.json``."""
        data = json.loads(json_string)
        tokenizer = cls(models.from_dict(data["model"]))
        tokenizer.normalizer = normalizers.from_dict(data.get("normalizer"))
        tokenizer.pre_tokenizer = pre_tokenizers.from_dict(data.get("pre_tokenizer"))
        tokenizer.post_processor = processors.from_dict(data.get("post_processor"))
        tokenizer.decoder = decoders.from_dict(data.get("decoder"))
        for entry in data.get("added_tokens", []):
            token = AddedToken(entry["content"], entry.get("single_word", False),
                               entry.get("lstrip", False), entry.get("rstrip", False),
                               entry.get("normalized", True), entry.get("special", False))
            tokenizer._added[entry["id"]] = token
            tokenizer._added_ids[token.content] = entry["id"]
        if data.get("truncation"):
            t = data["truncation"]
            tokenizer.enable_truncation(t["max_length"], t.get("stride", 0),
                                        _snake(t.get("strategy", "LongestFirst")),
                                        t.get("direction", "Right").lower())
        if data.get("padding"):
            p = data["padding"]
            strategy = p.get("strategy", "BatchLongest")
            length = strategy["Fixed"] if isinstance(strategy, dict) else None
            tokenizer.enable_padding(p.get("direction", "Right").lower(), p.get("pad_id", 0),
                                     p.get("pad_type_id", 0), p.get("pad_token", "[PAD]"),
                                     length, p.get("pad_to_multiple_of"))
        return tokenizer

    @classmethod
    def from_file(cls, path):
        """A tokenizer from a ``tokenizer.json`` file."""
        with open(path, encoding="utf-8") as f:
            return cls.from_str(f.read())


def _snake(name):
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _is_word_char(char):
    return char.isalnum() or char == "_"


def _copy(encoding):
    return encoding.slice(0, len(encoding))
