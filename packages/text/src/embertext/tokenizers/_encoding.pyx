# distutils: language = c++
"""The result of encoding one text (or a pair): ids, tokens, offsets and masks.

NOTE [ Lazy encodings ]
An encoding made by a compiled pipeline (_kernels.pyx) keeps what the pipeline wrote without
the GIL: one (id, start, end, word, added segment or -1) record a token, the text, the
vocabulary's id -> token list, the special tokens put around it (``wrap``) and the padding
added since. Each field becomes a Python list the first time it is read, and is kept (so
that changes to the list stay, as with lists given to the constructor). Building those lists
is most of the cost of an encoding with the GIL held; Hugging Face `tokenizers` also builds
them only when they are read. An encoding made from lists holds them as they are.
"""

cimport cython

__all__ = ["Encoding"]

_FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
           "word_ids", "sequence_ids")

cdef enum:
    IDS = 0
    TOKENS = 1
    OFFSETS = 2
    TYPE_IDS = 3
    ATTENTION_MASK = 4
    SPECIAL_TOKENS_MASK = 5
    WORD_IDS = 6
    SEQUENCE_IDS = 7
    OVERFLOWING = 8
    TOKEN_FIELDS = 0xFF  # the bits of fields 0..7
    ALL_FIELDS = 0x1FF

cdef tuple _NO_SPAN = (0, 0)


cdef class _Field:
    """A field of :class:`Encoding`: its list, made when first read (NOTE [ Lazy
    encodings ])."""

    cdef int field
    cdef str name

    def __init__(self, int field, str name):
        self.field = field
        self.name = name

    def __get__(self, encoding, owner):
        if encoding is None:
            return self
        return (<Encoding?> encoding)._field(self.field)

    def __set__(self, encoding, value):
        (<Encoding?> encoding)._store(self.field, value)

    def __delete__(self, encoding):
        raise AttributeError(f"Encoding.{self.name} cannot be deleted")


# Not tracked by the cyclic garbage collector (as Hugging Face's Encoding is not): a batch
# makes thousands, and each would count toward a collection that walks all of them. An
# encoding is not part of a cycle unless one is made by hand through its lists.
@cython.no_gc
cdef class Encoding:
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

    The encodings of the compiled pipelines make these lists when they are first read
    (NOTE [ Lazy encodings ]).
    """

    def __init__(self, ids, tokens, offsets, type_ids=None, attention_mask=None,
                 special_tokens_mask=None, word_ids=None, sequence_ids=None, overflowing=None):
        n = len(ids)
        self._fields = [
            ids, tokens, offsets, type_ids if type_ids is not None else [0] * n,
            attention_mask if attention_mask is not None else [1] * n,
            special_tokens_mask if special_tokens_mask is not None else [0] * n,
            word_ids if word_ids is not None else [None] * n,
            sequence_ids if sequence_ids is not None else [0] * n,
            overflowing if overflowing is not None else []]
        self._made = ALL_FIELDS
        # The byte-level spaces are already left out of the offsets (processors.py).
        self._trimmed = False

    # -- the fields -------------------------------------------------------------------------

    cdef Py_ssize_t _length(self):
        if self._made & (1 << IDS):
            return len(self._fields[IDS])
        return (self._pad_left + self._pad_right + self._records.size() // 5
                + (2 if self._source is not None and self._source.wrap is not None else 0))

    cdef object _field(self, int field):
        if not self._made & (1 << field):
            self._store(field, [] if field == OVERFLOWING else self._build(field))
        return self._fields[field]

    cdef void _store(self, int field, object value):
        if self._fields is None:
            self._fields = [None] * (OVERFLOWING + 1)
        self._fields[field] = value
        self._made |= 1 << field

    cdef list _build(self, int field):
        """The list of ``field`` from the compiled form."""
        cdef Py_ssize_t i, count = self._records.size() // 5
        cdef const int32_t *r = self._records.data()
        cdef object text = self._text, segments = self._segments, segment
        cdef object wrap = None, sequence_id = None
        cdef list middle, vocab = None
        cdef int32_t added
        if self._source is not None:
            vocab, wrap = self._source.vocab, self._source.wrap
            sequence_id = self._source.sequence_id
        if field == IDS:
            middle = [r[5 * i] for i in range(count)]
        elif field == TOKENS:
            middle = [None] * count
            for i in range(count):
                added = r[5 * i + 4]
                if added >= 0:  # an added token: the text it matched
                    segment = segments[added]
                    middle[i] = text[segment[0]:segment[1]]
                else:
                    middle[i] = vocab[r[5 * i]]
        elif field == OFFSETS:
            middle = [(r[5 * i + 1], r[5 * i + 2]) for i in range(count)]
        elif field == WORD_IDS:
            middle = [r[5 * i + 3] for i in range(count)]
        elif field == TYPE_IDS:  # a text's index in its pair
            middle = [sequence_id if sequence_id is not None else 0] * count
        elif field == ATTENTION_MASK:
            middle = [1] * count
        elif field == SPECIAL_TOKENS_MASK:
            middle = [0] * count
        else:
            middle = [sequence_id] * count
        if wrap is None and self._pad is None:
            return middle
        cdef list out = []
        cdef object pad = None
        if self._pad is not None:
            pad_id, pad_type_id, pad_token = self._pad
            pad = (pad_id, pad_token, _NO_SPAN, pad_type_id, 0, 1, None,
                   0 if self._unranged else None)[field]
            out = [pad] * self._pad_left
        if wrap is not None:
            first, last = wrap
            out.append(_wrap_value(first, field))
            out.extend(middle)
            out.append(_wrap_value(last, field))
        else:
            out.extend(middle)
        if self._pad_right:
            out.extend([pad] * self._pad_right)
        return out

    ids = _Field(IDS, "ids")
    tokens = _Field(TOKENS, "tokens")
    offsets = _Field(OFFSETS, "offsets")
    type_ids = _Field(TYPE_IDS, "type_ids")
    attention_mask = _Field(ATTENTION_MASK, "attention_mask")
    special_tokens_mask = _Field(SPECIAL_TOKENS_MASK, "special_tokens_mask")
    word_ids = _Field(WORD_IDS, "word_ids")
    sequence_ids = _Field(SEQUENCE_IDS, "sequence_ids")
    overflowing = _Field(OVERFLOWING, "overflowing")

    @property
    def words(self):
        return self.word_ids

    @property
    def n_sequences(self):
        return len({s for s in self.sequence_ids if s is not None}) or 1

    def __len__(self):
        return self._length()

    def __repr__(self):
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, "
                f"attention_mask, special_tokens_mask, overflowing])")

    # -- copies and pickles ------------------------------------------------------------------

    def __reduce__(self):
        return (Encoding, tuple(getattr(self, name) for name in (*_FIELDS, "overflowing")),
                {"_trimmed": self._trimmed, "_unranged": self._unranged})

    def __setstate__(self, state):
        if isinstance(state, tuple):  # (__dict__, __slots__ values): the old Python class
            state = {**(state[0] or {}), **(state[1] or {})}
        for name, value in state.items():
            setattr(self, name, value)

    # -- slicing, merging, truncation, padding ------------------------------------------------

    def slice(self, start, stop):
        part = Encoding(*(getattr(self, name)[start:stop] for name in _FIELDS))
        part._trimmed = self._trimmed
        part._unranged = self._unranged
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

    # NOTE [ Unranged encodings ]
    # Hugging Face's Encoding derives sequence_ids from the ranges its post-processor (or
    # the merge of a pair) sets; an encoding without them is one sequence spanning every
    # token, so a text encoded with no post-processor gets sequence id 0 on its padding
    # too, where any post-processor (even ByteLevel's) leaves padding at None. _unranged
    # marks the former (set by the Tokenizer).
    def pad(self, length, pad_id=0, pad_type_id=0, pad_token="[PAD]", direction="right"):
        """Pad to ``length`` tokens with ``pad_token`` (attention 0, special 1)."""
        if self._made & (1 << OVERFLOWING):
            for overflow in self._fields[OVERFLOWING]:
                if self._unranged:  # the windows of an unranged encoding are too
                    (<Encoding?>overflow)._unranged = True
                overflow.pad(length, pad_id, pad_type_id, pad_token, direction)
        missing = length - len(self)
        if missing <= 0:
            return
        if not self._made & TOKEN_FIELDS and self._pad is None:
            # Nothing read yet: the compiled form notes the padding.
            self._pad = (pad_id, pad_type_id, pad_token)
            if direction == "right":
                self._pad_right = missing
            else:
                self._pad_left = missing
            return
        pads = {"ids": [pad_id], "tokens": [pad_token], "offsets": [(0, 0)],
                "type_ids": [pad_type_id], "attention_mask": [0], "special_tokens_mask": [1],
                "word_ids": [None], "sequence_ids": [0 if self._unranged else None]}
        for name, value in pads.items():
            current = getattr(self, name)
            setattr(self, name, current + value * missing if direction == "right"
                    else value * missing + current)

    # -- positions -------------------------------------------------------------------------

    def char_to_token(self, char_pos, sequence_index=0):
        """The index of the token whose offsets hold character ``char_pos``, or ``None``."""
        sequence_ids, special = self.sequence_ids, self.special_tokens_mask
        for i, (start, end) in enumerate(self.offsets):
            if (sequence_ids[i] == sequence_index and not special[i]
                    and start <= char_pos < end):
                return i
        return None

    def token_to_chars(self, token_index):
        """The offsets of one token."""
        return self.offsets[token_index]


cdef object _wrap_value(object special, int field):
    """Field ``field`` of a special token ``(token, id)`` put around a text."""
    if field == IDS:
        return special[1]
    if field == TOKENS:
        return special[0]
    if field == OFFSETS:
        return _NO_SPAN
    if field == TYPE_IDS:
        return 0
    if field == ATTENTION_MASK or field == SPECIAL_TOKENS_MASK:
        return 1
    return None


cdef class Source:
    """What the encodings of one compiled batch share."""


cdef Source batch_source(list vocab, object wrap, object sequence_id):
    cdef Source source = Source.__new__(Source)
    source.vocab = vocab
    source.wrap = wrap
    source.sequence_id = sequence_id
    return source


cdef Encoding compiled_encoding(vector[int32_t] &records, Source source, object text,
                                object segments, bint trimmed):
    """An encoding of the ``records`` a compiled pipeline wrote for a text (taken, not
    copied: ``records`` is left empty); ``text`` and its ``segments`` are needed only where
    it has added tokens (NOTE [ Lazy encodings ])."""
    cdef Encoding e = Encoding.__new__(Encoding)
    e._records.swap(records)
    e._source = source
    if segments is not None:
        e._text = text
        e._segments = segments
    e._trimmed = trimmed
    return e
