"""The result of encoding one text (or a pair): ids, tokens, offsets and masks."""

__all__ = ["Encoding"]

_FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
           "word_ids", "sequence_ids")


class Encoding:
    r"""One encoded sequence, as Hugging Face `tokenizers` returns it.

    Attributes:
        ids (list of int): the token ids.
        tokens (list of str): the tokens.
        offsets (list of (int, int)): each token's span in the original text (string
            indices); ``(0, 0)`` for special and padding tokens.
        type_ids (list of int): the segment of each token (0 first text, 1 pair).
        attention_mask (list of int): 1 for tokens, 0 for padding.
        special_tokens_mask (list of int): 1 for special and padding tokens.
        word_ids (list of int or None): the index of the word each token came from.
        sequence_ids (list of int or None): 0 or 1, the text each token came from.
        overflowing (list of Encoding): the windows cut off by truncation.
    """

    __slots__ = ("ids", "tokens", "offsets", "type_ids", "attention_mask",
                 "special_tokens_mask", "word_ids", "sequence_ids", "overflowing", "_trimmed")

    def __init__(self, ids, tokens, offsets, type_ids=None, attention_mask=None,
                 special_tokens_mask=None, word_ids=None, sequence_ids=None, overflowing=None):
        n = len(ids)
        self.ids = ids
        self.tokens = tokens
        self.offsets = offsets
        self.type_ids = type_ids if type_ids is not None else [0] * n
        self.attention_mask = attention_mask if attention_mask is not None else [1] * n
        self.special_tokens_mask = (special_tokens_mask if special_tokens_mask is not None
                                    else [0] * n)
        self.word_ids = word_ids if word_ids is not None else [None] * n
        self.sequence_ids = sequence_ids if sequence_ids is not None else [0] * n
        self.overflowing = overflowing if overflowing is not None else []
        # The byte-level spaces are already left out of the offsets (processors.py).
        self._trimmed = False

    @property
    def words(self):
        return self.word_ids

    @property
    def n_sequences(self):
        return len({s for s in self.sequence_ids if s is not None}) or 1

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, "
                f"attention_mask, special_tokens_mask, overflowing])")

    def slice(self, start, stop):
        part = Encoding(*(getattr(self, name)[start:stop] for name in _FIELDS))
        part._trimmed = self._trimmed
        return part

    @staticmethod
    def merge(encodings):
        """One encoding of ``encodings`` one after another."""
        fields = {name: [] for name in _FIELDS}
        for encoding in encodings:
            for name, values in fields.items():
                values.extend(getattr(encoding, name))
        return Encoding(**fields)

    def truncate(self, max_length, stride=0, direction="right"):
        """Cut to ``max_length`` tokens; the rest goes to :attr:`overflowing`, in windows of
        ``max_length`` that overlap by ``stride``."""
        n = len(self)
        if max_length >= n:
            return
        if max_length == 0:
            self.overflowing = [self.slice(0, n)]
            for name in _FIELDS:
                setattr(self, name, [])
            return
        if stride >= max_length:
            raise ValueError(f"truncation stride ({stride}) must be smaller than the maximum "
                             f"length ({max_length})")
        step = max_length - stride
        ranges = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                ranges.append((start, stop))
                if stop == n:
                    break
        else:
            for stop in range(n, 0, -step):
                start = max(stop - max_length, 0)
                ranges.append((start, stop))
                if start == 0:
                    break
        parts = [self.slice(a, b) for a, b in ranges]
        head = parts[0]
        for name in _FIELDS:
            setattr(self, name, getattr(head, name))
        self.overflowing = parts[1:]

    def pad(self, length, pad_id=0, pad_type_id=0, pad_token="[PAD]", direction="right"):
        """Pad to ``length`` tokens with ``pad_token`` (attention 0, special 1)."""
        for overflow in self.overflowing:
            overflow.pad(length, pad_id, pad_type_id, pad_token, direction)
        missing = length - len(self)
        if missing <= 0:
            return
        pads = {"ids": [pad_id], "tokens": [pad_token], "offsets": [(0, 0)],
                "type_ids": [pad_type_id], "attention_mask": [0], "special_tokens_mask": [1],
                "word_ids": [None], "sequence_ids": [None]}
        for name, value in pads.items():
            current = getattr(self, name)
            setattr(self, name, current + value * missing if direction == "right"
                    else value * missing + current)

    def char_to_token(self, char_pos, sequence_index=0):
        """The index of the token whose offsets hold character ``char_pos``, or ``None``."""
        for i, (start, end) in enumerate(self.offsets):
            if (self.sequence_ids[i] == sequence_index and not self.special_tokens_mask[i]
                    and start <= char_pos < end):
                return i
        return None

    def token_to_chars(self, token_index):
        """The offsets of one token."""
        return self.offsets[token_index]
