"""Models: split one word into tokens (the ``tokenizers.models`` of Hugging Face): BPE
(byte-level or character-level, GPT-2 / RoBERTa style) and WordPiece (BERT)."""

import json
import random
import weakref

from embertext.tokenizers import _kernels, _unicode

__all__ = ["Model", "BPE", "WordPiece", "WordLevel", "Unigram"]


# NOTE [ Stale tables ]
# A model compiles tables from its vocabulary and settings: its kernel, the pipelines of
# _kernels.pyx and the word cache. They are forgotten (and made again when needed) whenever
# those change: a public attribute set, or the vocabulary (``vocab``; Unigram's ``pieces``) or
# BPE's ``merges`` changed in place, which are a dict and lists that tell their model.


def _tracking(base, methods):
    """A subclass of ``base`` whose ``methods`` (those that change it) tell its model."""

    def wrap(name):
        method = getattr(base, name)

        def changed(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            owner = self._owner()
            if owner is not None:
                owner._reset()
            return result

        changed.__name__ = name
        return changed

    namespace = {name: wrap(name) for name in methods}
    namespace["__slots__"] = ("_owner",)
    namespace["__reduce__"] = lambda self: (base, (base(self),))  # copied as a plain one
    return type(f"Tracked{base.__name__.capitalize()}", (base,), namespace)


_TrackedDict = _tracking(dict, ("__setitem__", "__delitem__", "__ior__", "clear", "pop",
                                "popitem", "setdefault", "update"))
_TrackedList = _tracking(list, ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append",
                                "extend", "insert", "pop", "remove", "clear", "sort",
                                "reverse"))


def _tracked(owner, value):
    container = (_TrackedDict if isinstance(value, dict) else _TrackedList)(value)
    container._owner = weakref.ref(owner)
    return container


class Model:
    """The base of models: a vocabulary and :meth:`tokenize`, which turns one word into
    ``(id, token, start, end)`` tuples (character offsets in the word)."""

    _TRACKED = ("vocab",)  # the containers that tell the model when they change

    def __init__(self, vocab):
        self._reset()
        self.vocab = dict(vocab)

    def __setattr__(self, name, value):
        if name in self._TRACKED and value is not None:
            value = _tracked(self, value)
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            self._reset()  # NOTE [ Stale tables ]

    def __getstate__(self):
        state = dict(self.__dict__)
        for name in ("_compiled", "_plans", "_cache", "_vocab_r"):
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self._reset()
        for name, value in state.items():
            setattr(self, name, value)

    def _rebuild_reverse(self):
        self._reset()

    def _reset(self):
        """Forget what was compiled from the vocabulary and settings (NOTE [ Stale tables ])."""
        self._compiled = None
        self._plans = {}
        self._cache = {}
        self._vocab_r = None

    @property
    def vocab_r(self):
        """id -> token."""
        if self._vocab_r is None:
            self._vocab_r = {index: token for token, index in self.vocab.items()}
        return self._vocab_r

    def _tokens_by_id(self):
        """id -> token, as a list (``None`` where no token has the id)."""
        tokens = [None] * (max(self.vocab_r, default=-1) + 1)
        for index, token in self.vocab_r.items():
            tokens[index] = token
        return tokens

    def _plan(self, signature, build):
        """The compiled pipeline of ``signature`` (made by ``build()`` the first time); one
        is kept for each kind (``signature[0]``)."""
        kept = self._plans.get(signature[0])
        if kept is None or kept[0] != signature:
            kept = self._plans[signature[0]] = (signature, build())
        return kept[1]

    def tokenize(self, word):
        raise TypeError(f"{type(self).__name__} does not tokenize")

    def token_to_id(self, token):
        return self.vocab.get(token)

    def id_to_token(self, index):
        return self.vocab_r.get(index)

    def get_vocab(self):
        return dict(self.vocab)

    def get_vocab_size(self):
        return len(self.vocab)


def read_merges(path):
    """The merges of a ``merges.txt`` file: one ``a b`` pair a line, after an optional
    ``#version`` line."""
    merges = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if (number == 1 and line.startswith("#version")) or not line:
                continue
            parts = line.split(" ")
            if len(parts) != 2:
                raise ValueError(f"{path}, line {number}: a merge is two tokens, got {line!r}")
            merges.append((parts[0], parts[1]))
    return merges


class BPE(Model):
    r"""Byte-pair encoding: a word starts as its characters, and the adjacent pair with the
    lowest merge rank is merged until none is in ``merges``.

    Args:
        vocab (dict): token -> id.
        merges (list of (str, str)): the merges, by rank.
        unk_token (str, optional): the token for characters not in the vocabulary; without
            it they are dropped.
        continuing_subword_prefix (str, optional): the prefix of tokens inside a word.
        end_of_word_suffix (str, optional): the suffix of a word's last token.
        fuse_unk (bool): one unknown token for a run of unknown characters.
        byte_fallback (bool): unknown characters as ``<0xXX>`` byte tokens.
        ignore_merges (bool): a word in the vocabulary is one token, merges or not.
        dropout (float, optional): BPE-dropout (Provilkov et al., 2020): each merge is
            skipped with this probability, a skipped merge coming back after the next merge
            made. The random numbers come from Python's :mod:`random` (``random.seed`` makes
            the tokens reproducible); words are not cached then.

    Words are cached: a text repeats its words, and each is merged once. The merge loop is
    compiled (``_kernels.BPEKernel``).

    Examples::

        >>> model = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
        >>> [token for _, token, _, _ in model.tokenize("abba")]
        ['ab', 'b', 'a']
    """

    _TRACKED = ("vocab", "merges")

    def __init__(self, vocab=None, merges=None, unk_token=None, continuing_subword_prefix=None,
                 end_of_word_suffix=None, fuse_unk=False, byte_fallback=False,
                 ignore_merges=False, dropout=None):
        super().__init__(vocab or {})
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be between 0 and 1, got {dropout}")
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.dropout = dropout
        self.merges = [tuple(merge) for merge in (merges or [])]
        self._prepare_merges()

    def _prepare_merges(self):
        prefix = self.continuing_subword_prefix or ""
        ranks = {}
        for rank, (a, b) in enumerate(self.merges):
            for token in (a, b):
                if token not in self.vocab:
                    raise ValueError(f"merge ({a!r}, {b!r}): token {token!r} not in the vocab")
            merged = a + (b[len(prefix):] if prefix and b.startswith(prefix) else b)
            if merged not in self.vocab:
                raise ValueError(f"merge ({a!r}, {b!r}): {merged!r} not in the vocab")
            ranks.setdefault((a, b), (rank, merged))
        self._ranks = ranks

    def _reset(self):
        super()._reset()
        self._ranks = None  # made again from the merges when needed

    def _kernel(self):
        if self._compiled is None:
            if self._ranks is None:
                self._prepare_merges()
            vocab = self.vocab
            ordered = sorted(self._ranks.items(), key=lambda item: item[1][0])
            self._compiled = _kernels.BPEKernel(
                [(vocab[a], vocab[b], vocab[merged]) for (a, b), (_, merged) in ordered])
        return self._compiled

    def _byte_level_plan(self, pre_tokenizer, slots):
        """The compiled byte-level pipeline (GPT-2's split, bytes, merges) for this model, or
        ``None`` when the model is not a plain byte-level one."""
        if self.dropout or self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        byte_char = _unicode.bytes_to_unicode()
        byte_ids = [self.vocab.get(byte_char[b]) for b in range(256)]
        if None in byte_ids:
            return None

        def build():
            char_byte = _unicode.unicode_to_bytes()
            raw_vocab = {}
            for token, index in self.vocab.items():
                if all(c in char_byte for c in token):
                    raw_vocab.setdefault(bytes(char_byte[c] for c in token), index)
            return _kernels.ByteLevelBPEPlan(
                self._kernel(), byte_ids, raw_vocab, self._tokens_by_id(),
                pre_tokenizer.add_prefix_space, pre_tokenizer.use_regex, self.ignore_merges,
                slots)

        return self._plan(("byte_level", bool(pre_tokenizer.add_prefix_space),
                           bool(pre_tokenizer.use_regex), bool(self.ignore_merges)), build)

    @classmethod
    def read_file(cls, vocab, merges):
        """The vocabulary and merges of a ``vocab.json`` and a ``merges.txt``."""
        with open(vocab, encoding="utf-8") as f:
            vocabulary = json.load(f)
        return vocabulary, read_merges(merges)

    @classmethod
    def from_file(cls, vocab, merges, **kwargs):
        """A BPE model from a ``vocab.json`` and a ``merges.txt`` (GPT-2 / RoBERTa files)."""
        vocabulary, merge_list = cls.read_file(vocab, merges)
        return cls(vocabulary, merge_list, **kwargs)

    def _initial_symbols(self, word):
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        symbols = []  # [token, start, end]
        last = len(word) - 1
        unk = self.unk_token
        for i, char in enumerate(word):
            token = char
            if prefix and i > 0:
                token = prefix + token
            if suffix and i == last:
                token = token + suffix
            if token in self.vocab:
                symbols.append([token, i, i + 1])
                continue
            if self.byte_fallback:
                byte_tokens = [f"<0x{b:02X}>" for b in char.encode("utf-8")]
                if all(t in self.vocab for t in byte_tokens):
                    symbols.extend([t, i, i + 1] for t in byte_tokens)
                    continue
            if unk is None:
                continue
            if unk not in self.vocab:
                raise ValueError(f"the unknown token {unk!r} is not in the vocab")
            if self.fuse_unk and symbols and symbols[-1][0] == unk and symbols[-1][2] == i:
                symbols[-1][2] = i + 1
            else:
                symbols.append([unk, i, i + 1])
        return symbols

    def tokenize(self, word):
        dropout = self.dropout or 0.0
        if not dropout:
            cached = self._cache.get(word)
            if cached is not None:
                return cached
        vocab = self.vocab
        if self.ignore_merges and word in vocab:
            out = [(vocab[word], word, 0, len(word))]
        else:
            symbols = self._initial_symbols(word)
            merged = self._kernel().merge_ids(
                [vocab[t] for t, _, _ in symbols], [s for _, s, _ in symbols],
                [e for _, _, e in symbols], dropout, random.getrandbits(64) if dropout else 0)
            tokens = self.vocab_r
            out = [(index, tokens[index], s, e) for index, s, e in merged]
        if not dropout and len(self._cache) < 100_000:
            self._cache[word] = out
        return out

    def to_dict(self):
        return {"type": "BPE", "dropout": self.dropout, "unk_token": self.unk_token,
                "continuing_subword_prefix": self.continuing_subword_prefix,
                "end_of_word_suffix": self.end_of_word_suffix, "fuse_unk": self.fuse_unk,
                "byte_fallback": self.byte_fallback, "ignore_merges": self.ignore_merges,
                "vocab": dict(sorted(self.vocab.items(), key=lambda item: item[1])),
                "merges": [list(merge) for merge in self.merges]}

    def save(self, folder, prefix=None):
        """Write ``vocab.json`` and ``merges.txt`` (with ``prefix-`` before the names) into
        ``folder``; returns their paths."""
        import os

        name = f"{prefix}-" if prefix else ""
        vocab_path = os.path.join(folder, f"{name}vocab.json")
        merges_path = os.path.join(folder, f"{name}merges.txt")
        with open(vocab_path, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(self.vocab.items(), key=lambda item: item[1])), f,
                      ensure_ascii=False)
        with open(merges_path, "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            f.writelines(f"{a} {b}\n" for a, b in self.merges)
        return [vocab_path, merges_path]


def read_wordpiece_vocab(path):
    """The vocabulary of a BERT ``vocab.txt``: one token a line, ids by line number."""
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for index, line in enumerate(f):
            token = line.rstrip("\r\n")
            vocab.setdefault(token, index)
    return vocab


class WordPiece(Model):
    r"""WordPiece (BERT): greedy longest-match-first over the vocabulary, pieces inside a word
    marked by ``continuing_subword_prefix``; a word with a part no piece matches, or longer
    than ``max_input_chars_per_word`` characters, is one ``unk_token``.

    Examples::

        >>> model = WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3})
        >>> [token for _, token, _, _ in model.tokenize("unaffable")]
        ['un', '##aff', '##able']
    """

    def __init__(self, vocab=None, unk_token="[UNK]", max_input_chars_per_word=100,
                 continuing_subword_prefix="##"):
        super().__init__(vocab or {})
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.continuing_subword_prefix = continuing_subword_prefix

    def _kernel(self):
        if self._compiled is None:
            self._compiled = _kernels.WordPieceKernel(
                self.vocab, self.vocab.get(self.unk_token), self.continuing_subword_prefix,
                self.max_input_chars_per_word)
        return self._compiled

    def _bert_plan(self, charmap, slots):
        """The compiled BERT pipeline (normalizer map, pre-tokenizer, WordPiece), or ``None``
        when the unknown token is not in the vocabulary."""
        if self.unk_token not in self.vocab:
            return None
        return self._plan(("bert", id(charmap), self.unk_token, self.max_input_chars_per_word,
                           self.continuing_subword_prefix),
                          lambda: _kernels.BertPlan(self._kernel(), charmap,
                                                    self._tokens_by_id(), slots))

    @classmethod
    def read_file(cls, vocab):
        return read_wordpiece_vocab(vocab)

    @classmethod
    def from_file(cls, vocab, **kwargs):
        """A WordPiece model from a BERT ``vocab.txt``."""
        return cls(read_wordpiece_vocab(vocab), **kwargs)

    def _unknown(self, word):
        if self.unk_token not in self.vocab:
            raise ValueError(f"the unknown token {self.unk_token!r} is not in the vocab")
        return [(self.vocab[self.unk_token], self.unk_token, 0, len(word))]

    def tokenize(self, word):
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        out = self._tokenize(word)
        if len(self._cache) < 100_000:
            self._cache[word] = out
        return out

    def _tokenize(self, word):
        found = self._kernel().tokenize(word)
        if found is None:
            return self._unknown(word)
        tokens = self.vocab_r
        return [(index, tokens[index], start, end) for index, start, end in found]

    def to_dict(self):
        return {"type": "WordPiece", "unk_token": self.unk_token,
                "continuing_subword_prefix": self.continuing_subword_prefix,
                "max_input_chars_per_word": self.max_input_chars_per_word,
                "vocab": dict(sorted(self.vocab.items(), key=lambda item: item[1]))}

    def save(self, folder, prefix=None):
        """Write ``vocab.txt`` (``prefix-vocab.txt``) into ``folder``; returns its path."""
        import os

        path = os.path.join(folder, f"{prefix}-vocab.txt" if prefix else "vocab.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{token}\n" for token, _ in
                         sorted(self.vocab.items(), key=lambda item: item[1]))
        return [path]


class WordLevel(Model):
    r"""One token a word: the word's id in the vocabulary, else ``unk_token``.

    Args:
        vocab (dict): token -> id.
        unk_token (str, optional): the token of words not in the vocabulary; without it (or
            when it is not in the vocabulary) an unknown word is an error.

    Examples::

        >>> model = WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]")
        >>> model.tokenize("hello"), model.tokenize("bye")
        ([(1, 'hello', 0, 5)], [(0, '[UNK]', 0, 3)])
    """

    def __init__(self, vocab=None, unk_token=None):
        super().__init__(vocab or {})
        self.unk_token = unk_token

    @classmethod
    def read_file(cls, vocab):
        """The vocabulary of a ``vocab.json``."""
        with open(vocab, encoding="utf-8") as f:
            return json.load(f)

    @classmethod
    def from_file(cls, vocab, unk_token=None):
        """A WordLevel model from a ``vocab.json``."""
        return cls(cls.read_file(vocab), unk_token=unk_token)

    def tokenize(self, word):
        index = self.vocab.get(word)
        if index is not None:
            return [(index, word, 0, len(word))]
        unk = self.vocab.get(self.unk_token) if self.unk_token is not None else None
        if unk is None:
            raise ValueError(f"WordLevel: {word!r} is not in the vocabulary and the unknown "
                             f"token {self.unk_token!r} is missing from it")
        return [(unk, self.unk_token, 0, len(word))]

    def to_dict(self):
        return {"type": "WordLevel",
                "vocab": dict(sorted(self.vocab.items(), key=lambda item: item[1])),
                "unk_token": self.unk_token}

    def save(self, folder, prefix=None):
        """Write ``vocab.json`` (``prefix-vocab.json``) into ``folder``; returns its path."""
        import os

        path = os.path.join(folder, f"{prefix}-vocab.json" if prefix else "vocab.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(self.vocab.items(), key=lambda item: item[1])), f,
                      ensure_ascii=False)
        return [path]


class Unigram(Model):
    r"""The Unigram language model (Kudo, 2018): the segmentation of a word into pieces of
    highest total log-probability (Viterbi); characters no piece covers are the unknown
    token (a run of them one token), or byte tokens with ``byte_fallback``.

    Args:
        vocab (list of (str, float)): the pieces and their log-probabilities, by id.
        unk_id (int, optional): the id of the unknown token.
        byte_fallback (bool): unknown characters as ``<0xXX>`` tokens.

    Examples::

        >>> model = Unigram([("<unk>", 0.0), ("▁he", -1.0), ("llo", -1.0), ("▁hello", -1.5)],
        ...                 unk_id=0)
        >>> [t for _, t, _, _ in model.tokenize("▁hello")]
        ['▁hello']
    """

    _UNK_PENALTY = 10.0
    _TRACKED = ("pieces",)

    def __init__(self, vocab=None, unk_id=None, byte_fallback=False):
        self._reset()
        self.byte_fallback = byte_fallback
        self._set_pieces(vocab, unk_id)

    def _set_pieces(self, vocab, unk_id):
        """Replace the pieces (``(piece, score)`` by id) and the unknown token's id."""
        pieces = [(str(piece), float(score)) for piece, score in (vocab or [])]
        if unk_id is not None and not 0 <= unk_id < len(pieces):
            raise ValueError(f"unk_id {unk_id} is not an id of the vocabulary ({len(pieces)})")
        self.pieces = pieces
        self.unk_id = unk_id

    def _reset(self):
        super()._reset()
        self._vocab = None

    @property
    def vocab(self):
        """piece -> id (the first of a repeated piece), made from :attr:`pieces`."""
        if self._vocab is None:
            self._vocab = {piece: i for i, (piece, _) in reversed(list(enumerate(self.pieces)))}
        return self._vocab

    @property
    def _unk_score(self):
        scores = [score for _, score in self.pieces]
        return (min(scores) if scores else 0.0) - self._UNK_PENALTY

    def _kernel(self):
        if self._compiled is None:
            self._compiled = _kernels.UnigramKernel(
                [(piece, index, score) for index, (piece, score) in enumerate(self.pieces)],
                self._unk_score, self.unk_id is not None)
        return self._compiled

    def _viterbi(self, word):
        """``(id or None, start, end)`` of the best segmentation (compiled:
        ``_kernels.UnigramKernel``)."""
        return self._kernel().segment(word)

    def _metaspace_plan(self, pre_tokenizer, slots):
        """The compiled Metaspace + Unigram pipeline."""
        if len(pre_tokenizer.replacement) != 1:
            return None
        return self._plan(
            ("metaspace", pre_tokenizer.replacement, pre_tokenizer.prepend_scheme,
             bool(pre_tokenizer.split)),
            lambda: _kernels.UnigramPlan(self._kernel(), pre_tokenizer.replacement,
                                         pre_tokenizer.prepend_scheme, pre_tokenizer.split,
                                         [piece for piece, _ in self.pieces], slots))

    def tokenize(self, word):
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        out = []
        for index, start, end in self._viterbi(word):
            if index is not None:
                out.append((index, self.pieces[index][0], start, end))
            elif out and out[-1][0] is None and out[-1][3] == start:
                # A run of unknown characters is one unknown token.
                out[-1] = (None, out[-1][1] + word[start:end], out[-1][2], end)
            else:
                out.append((None, word[start:end], start, end))
        tokens = []
        for index, token, start, end in out:
            if index is not None:
                tokens.append((index, token, start, end))
                continue
            if self.byte_fallback:
                # The bytes of the run, each with the run's span.
                byte_tokens = [f"<0x{b:02X}>" for b in token.encode("utf-8")]
                if all(t in self.vocab for t in byte_tokens):
                    tokens.extend((self.vocab[t], t, start, end) for t in byte_tokens)
                    continue
            tokens.append((self.unk_id, token, start, end))
        out = tokens
        if len(self._cache) < 100_000:
            self._cache[word] = out
        return out

    def id_to_token(self, index):
        return self.pieces[index][0] if 0 <= index < len(self.pieces) else None

    def get_vocab_size(self):
        return len(self.pieces)

    def to_dict(self):
        return {"type": "Unigram", "unk_id": self.unk_id,
                "vocab": [[piece, score] for piece, score in self.pieces],
                "byte_fallback": self.byte_fallback}


def from_dict(data):
    """The model of a ``tokenizer.json`` entry."""
    kind = data.get("type")
    if kind == "BPE" or (kind is None and "merges" in data):
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m)
                  for m in data.get("merges", [])]
        return BPE(data.get("vocab", {}), merges, unk_token=data.get("unk_token"),
                   continuing_subword_prefix=data.get("continuing_subword_prefix"),
                   end_of_word_suffix=data.get("end_of_word_suffix"),
                   fuse_unk=data.get("fuse_unk", False),
                   byte_fallback=data.get("byte_fallback", False),
                   ignore_merges=data.get("ignore_merges", False), dropout=data.get("dropout"))
    if kind == "WordPiece":
        return WordPiece(data.get("vocab", {}), unk_token=data.get("unk_token", "[UNK]"),
                         max_input_chars_per_word=data.get("max_input_chars_per_word", 100),
                         continuing_subword_prefix=data.get("continuing_subword_prefix", "##"))
    if kind == "WordLevel":
        return WordLevel(data.get("vocab", {}), unk_token=data.get("unk_token"))
    if kind == "Unigram":
        return Unigram([tuple(item) for item in data.get("vocab", [])], data.get("unk_id"),
                       data.get("byte_fallback", False))
    raise ValueError(f"unsupported model type in tokenizer.json: {kind!r}")
