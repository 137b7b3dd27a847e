"""Trainers: learn a model's vocabulary from word counts (the ``tokenizers.trainers`` of
Hugging Face). BPE training follows the Hugging Face algorithm step for step (the same
tie-breaking), so that it learns the same merges from the same text."""

import heapq

from embertext.tokenizers import _unigram_training, models

__all__ = ["Trainer", "BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer"]


class Trainer:
    """The base of trainers."""

    special_tokens = ()


class BpeTrainer(Trainer):
    r"""Learn byte-pair merges.

    Args:
        vocab_size (int): the size of the vocabulary to reach, special tokens included.
        min_frequency (int): pairs seen fewer times are not merged.
        show_progress (bool): a tqdm progress bar over the merges (needs tqdm).
        special_tokens (list of str): tokens given the first ids.
        limit_alphabet (int, optional): keep only the most frequent initial characters.
        initial_alphabet (list of str): characters in the alphabet even if unseen (the
            byte-level alphabet for byte-level BPE).
        continuing_subword_prefix (str, optional): the prefix of tokens inside a word.
        end_of_word_suffix (str, optional): the suffix of a word's last token.
        max_token_length (int, optional): no merge makes a longer token.

    Examples::

        >>> trainer = BpeTrainer(vocab_size=1000, special_tokens=["<s>", "</s>"],
        ...                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        >>> tokenizer.train_from_iterator(texts, trainer)
    """

    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=(),
                 limit_alphabet=None, initial_alphabet=(), continuing_subword_prefix=None,
                 end_of_word_suffix=None, max_token_length=None):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = [getattr(t, "content", t) for t in special_tokens]
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = list(initial_alphabet)
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = max_token_length

    def _alphabet(self, word_counts, word_to_id, id_to_word):
        counts = {}
        for word, count in word_counts.items():
            for char in word:
                counts[char] = counts.get(char, 0) + count
        infinite = float("inf")
        for char in self.initial_alphabet:
            counts[char] = infinite
        kept = sorted(counts.items(), key=lambda item: item[1], reverse=True)
        if self.limit_alphabet is not None and len(kept) > self.limit_alphabet:
            kept = kept[: self.limit_alphabet]
        for char, _ in sorted(kept, key=lambda item: ord(item[0])):
            if char not in word_to_id:
                word_to_id[char] = len(id_to_word)
                id_to_word.append(char)

    def _words(self, word_counts, word_to_id, id_to_word):
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        words, counts = [], []
        for word, count in word_counts.items():
            symbols = []
            last = len(word) - 1
            for i, char in enumerate(word):
                if char not in word_to_id:
                    continue  # left out of a limited alphabet
                token = char
                if prefix and i > 0:
                    token = prefix + token
                if suffix and i == last:
                    token = token + suffix
                if token not in word_to_id:
                    word_to_id[token] = len(id_to_word)
                    id_to_word.append(token)
                symbols.append(word_to_id[token])
            words.append(symbols)
            counts.append(count)
        return words, counts

    def learn(self, word_counts):
        """The vocabulary (token -> id) and the merges learnt from ``word_counts``."""
        word_to_id, id_to_word = {}, []
        for token in self.special_tokens:
            if token not in word_to_id:
                word_to_id[token] = len(id_to_word)
                id_to_word.append(token)
        self._alphabet(word_counts, word_to_id, id_to_word)
        words, counts = self._words(word_counts, word_to_id, id_to_word)

        pair_counts, where = {}, {}
        for index, symbols in enumerate(words):
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] = pair_counts.get(pair, 0) + counts[index]
                where.setdefault(pair, set()).add(index)
        # NOTE [ The merge queue ]
        # As in Hugging Face's trainer: a max-heap on (count, then the smaller pair), whose
        # entries keep the words they were pushed with; an entry whose count is stale is
        # pushed again with the current count, and the merged pair's count is not reset.
        sequence = 0
        queue = []
        for pair, positions in where.items():
            if pair_counts[pair] > 0:
                queue.append((-pair_counts[pair], pair, sequence, positions))
                sequence += 1
        heapq.heapify(queue)

        prefix = self.continuing_subword_prefix
        merges = []
        progress = _progress(self.show_progress, self.vocab_size - len(id_to_word))
        while len(word_to_id) < self.vocab_size and queue:
            negative, pair, _, positions = heapq.heappop(queue)
            count = pair_counts[pair]
            if -negative != count:
                heapq.heappush(queue, (-count, pair, sequence, positions))
                sequence += 1
                continue
            if count < 1 or self.min_frequency > count:
                break
            part_a, part_b = id_to_word[pair[0]], id_to_word[pair[1]]
            if prefix and part_b.startswith(prefix):
                part_b = part_b[len(prefix):]
            new_token = part_a + part_b
            if self.max_token_length is not None and len(new_token) > self.max_token_length:
                continue
            new_id = word_to_id.get(new_token)
            if new_id is None:
                new_id = len(id_to_word)
                id_to_word.append(new_token)
                word_to_id[new_token] = new_id
                if progress is not None:
                    progress.update(1)
            merges.append((id_to_word[pair[0]], id_to_word[pair[1]]))

            updates = {}
            for index in sorted(positions):
                for changed, change in _merge_word(words[index], pair, new_id):
                    pair_counts[changed] = pair_counts.get(changed, 0) + change * counts[index]
                    if change > 0:
                        updates.setdefault(changed, set()).add(index)
            for changed, changed_positions in updates.items():
                if pair_counts[changed] > 0:
                    heapq.heappush(queue, (-pair_counts[changed], changed, sequence,
                                           changed_positions))
                    sequence += 1
        if progress is not None:
            progress.close()
        return word_to_id, merges

    def train(self, model, word_counts):
        """Train ``model`` (a :class:`~embertext.tokenizers.models.BPE`) in place."""
        vocab, merges = self.learn(word_counts)
        model.vocab = vocab
        model._rebuild_reverse()
        model.merges = merges
        model.continuing_subword_prefix = self.continuing_subword_prefix
        model.end_of_word_suffix = self.end_of_word_suffix
        model._prepare_merges()


def _merge_word(symbols, pair, new_id):
    """Merge ``pair`` in one word (a list of ids, in place), left to right; the changes of
    pair counts it makes, as Hugging Face's ``Word::merge`` reports them."""
    first, second = pair
    changes = []
    i = 0
    while i < len(symbols):
        if symbols[i] == first and i + 1 < len(symbols) and symbols[i + 1] == second:
            if i > 0:
                changes.append(((symbols[i - 1], first), -1))
                changes.append(((symbols[i - 1], new_id), 1))
            symbols[i:i + 2] = [new_id]
            if i < len(symbols) - 1:
                changes.append(((second, symbols[i + 1]), -1))
                changes.append(((new_id, symbols[i + 1]), 1))
        i += 1
    return changes


def _progress(show, total, desc="Merges", unit="merge"):
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=max(total, 0), desc=desc, unit=unit)


class WordPieceTrainer(Trainer):
    r"""Learn a WordPiece vocabulary: BPE merges with ``##`` inside words, whose tokens
    become the WordPiece vocabulary (as Hugging Face's WordPieceTrainer does).

    Args:
        vocab_size (int): the size of the vocabulary, special tokens included.
        min_frequency (int): pairs seen fewer times are not merged.
        show_progress (bool): a progress bar.
        special_tokens (list of str): tokens given the first ids (``[UNK]``, ``[CLS]``...).
        limit_alphabet (int, optional): keep only the most frequent initial characters.
        initial_alphabet (list of str): characters in the alphabet even if unseen.
        continuing_subword_prefix (str): the prefix of pieces inside a word. Default: "##".
    """

    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=(),
                 limit_alphabet=None, initial_alphabet=(), continuing_subword_prefix="##",
                 end_of_word_suffix=None):
        self._bpe = BpeTrainer(vocab_size, min_frequency, show_progress, special_tokens,
                               limit_alphabet, initial_alphabet, continuing_subword_prefix,
                               end_of_word_suffix)

    @property
    def special_tokens(self):
        return self._bpe.special_tokens

    def train(self, model, word_counts):
        """Train ``model`` (a :class:`~embertext.tokenizers.models.WordPiece`) in place."""
        vocab, _ = self._bpe.learn(word_counts)
        model.vocab = vocab
        model._rebuild_reverse()
        model.continuing_subword_prefix = self._bpe.continuing_subword_prefix
        model._cache = {}


class WordLevelTrainer(Trainer):
    r"""Learn a WordLevel vocabulary: the special tokens, then the words seen at least
    ``min_frequency`` times, most frequent first (equal counts in code-point order), up to
    ``vocab_size`` tokens.

    Args:
        vocab_size (int): the size of the vocabulary, special tokens included.
        min_frequency (int): words seen fewer times are left out.
        show_progress (bool): kept for Hugging Face's signature (training is one pass).
        special_tokens (list of str): tokens given the first ids.

    Examples::

        >>> tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        >>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        >>> tokenizer.train_from_iterator(texts, WordLevelTrainer(special_tokens=["[UNK]"]))
    """

    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True,
                 special_tokens=()):
        if vocab_size < 0:
            raise ValueError(f"vocab_size must be non-negative, got {vocab_size}")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = [getattr(t, "content", t) for t in special_tokens]

    def train(self, model, word_counts):
        """Train ``model`` (a :class:`~embertext.tokenizers.models.WordLevel`) in place."""
        vocab = {}
        for token in self.special_tokens:
            vocab.setdefault(token, len(vocab))
        ordered = sorted(word_counts.items(), key=lambda item: (-item[1], item[0]))
        for word, count in ordered:
            if len(vocab) >= self.vocab_size:
                break
            if count >= self.min_frequency and word not in vocab:
                vocab[word] = len(vocab)
        model.vocab = vocab
        model._rebuild_reverse()


class UnigramTrainer(Trainer):
    r"""Learn a Unigram language model as SentencePiece does (Kudo, 2018): seed pieces from
    the repeated substrings of the words, then EM rounds, each followed by pruning the
    pieces whose removal loses the least likelihood (a ``shrinking_factor`` share kept),
    until the vocabulary is ``vocab_size`` (with every character of the corpus kept).

    Args:
        vocab_size (int): the size of the vocabulary, special tokens included. Default: 8000.
        show_progress (bool): a tqdm progress bar over the EM steps (needs tqdm).
        special_tokens (list of str): tokens given the first ids.
        shrinking_factor (float): the share of pieces kept by each pruning. Default: 0.75.
        unk_token (str, optional): the unknown token; added first unless it is one of the
            special tokens.
        max_piece_length (int): the longest piece, in characters. Default: 16.
        n_sub_iterations (int): EM iterations between prunings. Default: 2.
        initial_alphabet (list of str): characters kept in the vocabulary even if unseen
            (the first character of each string).

    Examples::

        >>> tokenizer = Tokenizer(models.Unigram())
        >>> tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        >>> trainer = UnigramTrainer(vocab_size=500, special_tokens=["<unk>"], unk_token="<unk>")
        >>> tokenizer.train_from_iterator(texts, trainer)
    """

    def __init__(self, vocab_size=8000, show_progress=True, special_tokens=(),
                 shrinking_factor=0.75, unk_token=None, max_piece_length=16,
                 n_sub_iterations=2, initial_alphabet=()):
        if vocab_size <= 0:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        if not 0.0 < shrinking_factor < 1.0:
            raise ValueError(f"shrinking_factor must be in (0, 1), got {shrinking_factor}")
        if max_piece_length < 1:
            raise ValueError(f"max_piece_length must be at least 1, got {max_piece_length}")
        if n_sub_iterations < 1:
            raise ValueError(f"n_sub_iterations must be at least 1, got {n_sub_iterations}")
        alphabet = []
        for text in initial_alphabet:
            if not isinstance(text, str):
                raise TypeError(f"initial_alphabet takes strings, got {text!r}")
            if text:
                alphabet.append(text[0])  # the first character, as the reference keeps
        self.vocab_size = vocab_size
        self.show_progress = show_progress
        self.special_tokens = [getattr(t, "content", t) for t in special_tokens]
        self.shrinking_factor = shrinking_factor
        self.unk_token = unk_token
        self.max_piece_length = max_piece_length
        self.n_sub_iterations = n_sub_iterations
        self.initial_alphabet = alphabet
        self.objective = None

    def learn(self, word_counts):
        """``(pieces, unk_id)``: the ``(piece, log-probability)`` list by id and the unknown
        token's id, learnt from ``word_counts`` (word -> count). The last E-step's objective
        (the negative log-likelihood per word) is kept in ``self.objective``."""
        progress = _progress(self.show_progress, 0, desc="EM training", unit="step")
        try:
            pieces, unk_id, self.objective = _unigram_training.train_unigram(
                sorted(word_counts.items()), self.vocab_size, self.n_sub_iterations,
                self.shrinking_factor, self.special_tokens, self.unk_token,
                self.max_piece_length, self.initial_alphabet, progress=progress)
        finally:
            if progress is not None:
                progress.close()
        return pieces, unk_id

    def train(self, model, word_counts):
        """Train ``model`` (a :class:`~embertext.tokenizers.models.Unigram`) in place."""
        if not isinstance(model, models.Unigram):
            raise TypeError(f"UnigramTrainer can only train a Unigram, got "
                            f"{type(model).__name__}")
        pieces, unk_id = self.learn(word_counts)
        model._set_pieces(pieces, unk_id)


def trainer_for(model):
    """The default trainer of a model."""
    if isinstance(model, models.Unigram):
        return UnigramTrainer()
    if isinstance(model, models.WordLevel):
        return WordLevelTrainer()
    if isinstance(model, models.WordPiece):
        return WordPieceTrainer()
    if isinstance(model, models.BPE):
        return BpeTrainer()
    raise TypeError(f"no trainer for {type(model).__name__}")
