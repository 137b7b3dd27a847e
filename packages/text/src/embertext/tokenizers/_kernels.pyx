# distutils: language = c++
"""The compiled hot loops of the tokenizers: the BPE merge loop, WordPiece's greedy longest
match and Unigram's Viterbi search, and three whole pipelines that encode batches without
the GIL, on several threads (byte-level BPE; BERT's normalizer, pre-tokenizer and WordPiece;
Metaspace and Unigram).

NOTE [ Character tables ]
The pipelines look characters up in tables indexed by code point (whitespace, letters,
numbers, punctuation, and a normalizer's map). The tables are filled lazily, with the GIL
held, by :func:`learn` from the Python definitions in ``_unicode`` (so both paths agree
character by character); the threads encoding a batch only read them, and leave a text
with a character not learnt yet for later (NOTE [ Batches without the GIL ]).
"""

from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libc.math cimport exp, log
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp
from libcpp.atomic cimport atomic
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref

from embertext.tokenizers._encoding cimport Encoding, Source, batch_source, compiled_encoding

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil

__all__ = ["BPEKernel", "WordPieceKernel", "UnigramKernel", "ByteLevelBPEPlan", "BertPlan",
           "split_gpt2"]

DEF MAX_CODE = 0x110000

# Flags of the character table.
cdef enum:
    KNOWN = 1
    SPACE = 2       # Rust's char::is_whitespace
    LETTER = 4      # \p{L} of GPT-2's regex
    NUMBER = 8      # \p{N}
    PUNCT = 16      # BERT's punctuation

cdef uint8_t *_flags = <uint8_t *> calloc(MAX_CODE, 1)
if _flags == NULL:
    raise MemoryError("embertext: no memory for the character table")

_learn_function = None


cdef int _learn_text(object text) except -1:
    """Fill the table for every character of ``text`` (the GIL is held)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef uint32_t code
    for i in range(n):
        code = PyUnicode_READ(kind, data, i)
        if not _flags[code] & KNOWN:
            _flags[code] = KNOWN | <uint8_t> _learn_function(code)
    return 0


def set_learner(function):
    """``function(code) -> flags`` (an int of the bits above), called for unseen characters."""
    global _learn_function
    _learn_function = function


def learn(text):
    """Learn the characters of ``text``."""
    _learn_text(text)


cdef void _codes(object text, vector[uint32_t] &out):
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    out.resize(n)
    for i in range(n):
        out[i] = PyUnicode_READ(kind, data, i)


cdef inline void _utf8(uint32_t code, string &out) noexcept nogil:
    if code < 0x80:
        out.push_back(<char> code)
    elif code < 0x800:
        out.push_back(<char> (0xC0 | (code >> 6)))
        out.push_back(<char> (0x80 | (code & 0x3F)))
    elif code < 0x10000:
        out.push_back(<char> (0xE0 | (code >> 12)))
        out.push_back(<char> (0x80 | ((code >> 6) & 0x3F)))
        out.push_back(<char> (0x80 | (code & 0x3F)))
    else:
        out.push_back(<char> (0xF0 | (code >> 18)))
        out.push_back(<char> (0x80 | ((code >> 12) & 0x3F)))
        out.push_back(<char> (0x80 | ((code >> 6) & 0x3F)))
        out.push_back(<char> (0x80 | (code & 0x3F)))


cdef inline int _utf8_length(uint32_t code) noexcept nogil:
    if code < 0x80:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


# -- GPT-2's pre-tokenization regex ----------------------------------------------------------

cdef inline int _class(uint32_t code) noexcept nogil:
    """0: whitespace, 1: letter, 2: number, 3: anything else."""
    cdef uint8_t f = _flags[code]
    if f & SPACE:
        return 0
    if f & LETTER:
        return 1
    if f & NUMBER:
        return 2
    return 3


cdef void _gpt2_split(const uint32_t *s, Py_ssize_t n, vector[Py_ssize_t] &bounds) noexcept nogil:
    """The match ends of ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|
    \\s+(?!\\S)|\\s+`` over ``s`` (the matches cover the text, one after another)."""
    cdef Py_ssize_t i = 0, j
    cdef uint32_t c, d, e
    cdef int k
    while i < n:
        c = s[i]
        if c == 39 and i + 1 < n:  # an apostrophe: the contractions first
            d = s[i + 1]
            if d == 115 or d == 116 or d == 109 or d == 100:  # 's 't 'm 'd
                i += 2
                bounds.push_back(i)
                continue
            if i + 2 < n:
                e = s[i + 2]
                if (d == 114 and e == 101) or (d == 118 and e == 101) or (d == 108 and e == 108):
                    i += 3
                    bounds.push_back(i)
                    continue
        k = _class(c)
        if c == 32 and i + 1 < n and _class(s[i + 1]) != 0:
            # " ?X+": the space and the run of the next character's class.
            k = _class(s[i + 1])
            j = i + 2
            while j < n and _class(s[j]) == k:
                j += 1
            i = j
            bounds.push_back(i)
            continue
        if k != 0:
            j = i + 1
            while j < n and _class(s[j]) == k:
                j += 1
            i = j
            bounds.push_back(i)
            continue
        # Whitespace: the run, less its last character when something follows it.
        j = i + 1
        while j < n and _class(s[j]) == 0:
            j += 1
        if j < n and j - i > 1:
            j -= 1
        i = j
        bounds.push_back(i)


def split_gpt2(text):
    """The ``(start, end)`` spans of GPT-2's pre-tokenization regex over ``text``."""
    cdef vector[uint32_t] codes
    cdef vector[Py_ssize_t] bounds
    _learn_text(text)
    _codes(text, codes)
    _gpt2_split(codes.data(), codes.size(), bounds)
    out = []
    cdef Py_ssize_t start = 0, end
    for end in bounds:
        out.append((start, end))
        start = end
    return out


# -- BPE ---------------------------------------------------------------------------------------

cdef struct Merge:
    int32_t rank
    int32_t merged


cdef struct Symbol:
    int32_t id
    int32_t start  # units (bytes or characters) of the word
    int32_t end


cdef inline uint64_t _pair_key(int32_t a, int32_t b) noexcept nogil:
    return (<uint64_t> <uint32_t> a << 32) | <uint32_t> b


cdef inline uint64_t _next_random(uint64_t *state) noexcept nogil:
    # xorshift64*
    cdef uint64_t x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * <uint64_t> 0x2545F4914F6CDD1DULL


cdef class BPEKernel:
    """The merge table of a BPE model on ids: ``(a, b) -> (rank, merged id)``."""

    cdef unordered_map[uint64_t, Merge] merges

    def __init__(self, merges):
        """``merges``: ``(a_id, b_id, merged_id)`` by rank (the first of equal pairs wins)."""
        cdef Merge m
        cdef int32_t rank = 0
        for a, b, merged in merges:
            key = _pair_key(a, b)
            if self.merges.count(key) == 0:
                m.rank = rank
                m.merged = merged
                self.merges[key] = m
            rank += 1

    cdef void merge(self, vector[Symbol] &symbols, double dropout,
                    uint64_t *state) noexcept nogil:
        """Merge the pair of lowest rank (the leftmost of equal ones) until none is left.

        With ``dropout``, each chosen merge is skipped with that probability; the skipped ones
        come back after the next merge that is made (Hugging Face's BPE-dropout)."""
        cdef Py_ssize_t i, best_i, n
        cdef int32_t best_rank
        cdef Merge found
        cdef unordered_map[uint64_t, Merge].iterator it
        cdef vector[uint64_t] skipped
        cdef uint64_t key
        cdef bint is_skipped
        cdef Py_ssize_t k
        while symbols.size() > 1:
            n = symbols.size()
            best_i = -1
            best_rank = 0
            for i in range(n - 1):
                key = _pair_key(symbols[i].id, symbols[i + 1].id)
                it = self.merges.find(key)
                if it == self.merges.end():
                    continue
                found = deref(it).second
                if best_i >= 0 and found.rank >= best_rank:
                    continue
                if skipped.size():
                    # A skipped merge is a (rank, position) not to take until the next merge.
                    is_skipped = False
                    for k in range(<Py_ssize_t> skipped.size()):
                        if skipped[k] == ((<uint64_t> found.rank << 32) | <uint64_t> i):
                            is_skipped = True
                            break
                    if is_skipped:
                        continue
                best_i = i
                best_rank = found.rank
            if best_i < 0:
                break
            if dropout > 0.0 and (_next_random(state) >> 11) * (1.0 / 9007199254740992.0) < dropout:
                skipped.push_back((<uint64_t> best_rank << 32) | <uint64_t> best_i)
                continue
            skipped.clear()
            key = _pair_key(symbols[best_i].id, symbols[best_i + 1].id)
            symbols[best_i].id = self.merges[key].merged
            symbols[best_i].end = symbols[best_i + 1].end
            symbols.erase(symbols.begin() + best_i + 1)

    def merge_ids(self, ids, starts, ends, double dropout=0.0, seed=0):
        """Merge a word's initial symbols; ``[(id, start, end)]``."""
        cdef vector[Symbol] symbols
        cdef Symbol s
        cdef uint64_t state = (<uint64_t> seed) | 1
        for i in range(len(ids)):
            s.id = ids[i]
            s.start = starts[i]
            s.end = ends[i]
            symbols.push_back(s)
        with nogil:
            self.merge(symbols, dropout, &state)
        return [(s.id, s.start, s.end) for s in symbols]


# -- the byte-level BPE pipeline ------------------------------------------------------------

cdef struct TextIn:
    vector[uint32_t] codes
    vector[int32_t] segments  # (start, end, added id or -1) triples
    vector[int32_t] ids       # out: (id, start, end, word, added segment or -1) 5-tuples
    int32_t words
    int trim                  # byte-level offset trimming: -1 none, else add_prefix_space
    string raw                # scratch: a word's bytes
    bint fallback             # out: the text needs the Python pipeline
    vector[int32_t] spans     # scratch: the character of each byte
    const void *data          # the str's characters (of PyUnicode_KIND kind)
    int kind
    Py_ssize_t length
    int waits                 # why the text waits for the second pass (WAITS_...)
    vector[vector[int32_t]] windows  # out: the truncated records, then the overflowing ones
    bint defer_trim           # trim after the truncation: the spaces of each token in trims
    vector[int32_t] trims


cdef inline void _trim_at(Py_ssize_t i, int trim, int32_t lead, int32_t trail, int32_t *start,
                          int32_t *end) noexcept nogil:
    """processors.trim_byte_level_offsets for token ``i`` of an encoding, with ``lead`` and
    ``trail`` byte-level spaces."""
    if lead:
        if (i == 0 or start[0] == 0) and trim == 1 and lead == 1:
            lead = 0
        start[0] = min(start[0] + lead, end[0])
    if trail and end[0] >= trail:
        end[0] = max(end[0] - trail, start[0])


cdef inline void _trim(TextIn *out, int32_t lead, int32_t trail, int32_t *start,
                       int32_t *end) noexcept nogil:
    """Trim the offsets of the token about to be added to ``out``, or (before a truncation,
    which decides where the encodings start) note its spaces for later."""
    if out.defer_trim:
        out.trims.push_back(lead)
        out.trims.push_back(trail)
        return
    _trim_at(out.ids.size() // 5, out.trim, lead, trail, start, end)


# NOTE [ Batches without the GIL ]
# A batch is encoded in passes, each spread over threads by the caller's ``runner``: every
# thread calls _Batch.work, which releases the GIL and takes texts (a block at a time) until
# none is left. The first pass reads each text's characters, checks that the character
# tables know them all and that no added token can occur in it, and encodes it; a text that
# fails a check waits. Then, with the GIL, the waiting texts' characters are learnt and
# their added tokens split off (by the Python code, whose rules it keeps), and a second pass
# encodes them. The encodings are made last, from the records the passes wrote (NOTE [ Lazy
# encodings ] in _encoding.pyx): what holds the GIL is a few steps a text, not a step a
# token.

cdef enum:
    WAITS_UNKNOWN = 1  # a character the tables do not know
    WAITS_ADDED = 2    # an added token may be in the text
    BLOCK = 8          # texts a thread takes at a time


cdef class AddedMatcher:
    """Whether an added token's text occurs in a text (then the Python code splits it)."""

    cdef vector[vector[uint32_t]] contents
    cdef unordered_map[uint32_t, vector[Py_ssize_t]] by_first
    cdef uint8_t first_bits[8192]  # bit (code & 0xFFFF): some content starts with such a code
    cdef bint always

    def __init__(self, contents):
        cdef vector[uint32_t] codes
        self.always = False
        for content in contents:
            if not content:
                self.always = True
                continue
            _codes(content, codes)
            self.by_first[codes[0]].push_back(self.contents.size())
            self.contents.push_back(codes)
            self.first_bits[(codes[0] & 0xFFFF) >> 3] |= 1 << (codes[0] & 7)

    cdef bint found(self, const uint32_t *s, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t i, j, m
        cdef uint32_t c
        cdef const vector[Py_ssize_t] *candidates
        cdef const vector[uint32_t] *content
        cdef unordered_map[uint32_t, vector[Py_ssize_t]].iterator it
        if self.always:
            return True
        for i in range(n):
            c = s[i]
            if not self.first_bits[(c & 0xFFFF) >> 3] & (1 << (c & 7)):
                continue
            it = self.by_first.find(c)
            if it == self.by_first.end():
                continue
            candidates = &deref(it).second
            for j in range(<Py_ssize_t> candidates.size()):
                content = &self.contents[candidates[0][j]]
                m = content.size()
                if i + m <= n and memcmp(content.data(), s + i, m * sizeof(uint32_t)) == 0:
                    return True
        return False


cdef class _Batch:
    """The texts of one batch and the pass that runs (NOTE [ Batches without the GIL ])."""

    cdef _Pipeline plan
    cdef AddedMatcher matcher
    cdef list texts
    cdef vector[TextIn] items
    cdef vector[Py_ssize_t] order  # the texts of this pass
    cdef atomic[Py_ssize_t] next
    cdef bint first_pass
    cdef Py_ssize_t max_length, stride  # truncation (max_length -1: none)
    cdef bint right

    def __len__(self):
        return self.order.size()

    def work(self, int slot):
        """Encode texts of this pass until none is left (each thread with its own ``slot``
        of the plan's caches)."""
        with nogil:
            self._work(slot)

    cdef void _work(self, int slot) noexcept nogil:
        cdef Py_ssize_t start, k, n = self.order.size()
        while True:
            start = self.next.fetch_add(BLOCK)
            if start >= n:
                break
            for k in range(start, min(start + BLOCK, n)):
                self._encode(&self.items[self.order[k]], slot)

    cdef void _encode(self, TextIn *item, int slot) noexcept nogil:
        cdef Py_ssize_t i, n = item.length
        if self.first_pass:
            item.codes.resize(n)
            for i in range(n):
                item.codes[i] = PyUnicode_READ(item.kind, item.data, i)
            item.waits = 0
            if not self.plan.known(item):
                item.waits |= WAITS_UNKNOWN
            if self.matcher is not None and self.matcher.found(item.codes.data(), n):
                item.waits |= WAITS_ADDED
            if item.waits:
                return
            item.segments.push_back(0)
            item.segments.push_back(n)
            item.segments.push_back(-1)
        self.plan.run_text(item, slot)
        if self.max_length >= 0 and not item.fallback:
            self._truncate(item)
        # Freed here, on this thread, rather than with the batch (with the GIL).
        item.trims.clear()
        item.trims.shrink_to_fit()
        item.codes.clear()
        item.codes.shrink_to_fit()
        item.segments.clear()
        item.segments.shrink_to_fit()
        item.spans.clear()
        item.spans.shrink_to_fit()
        item.raw.clear()
        item.raw.shrink_to_fit()

    cdef void _truncate(self, TextIn *item) noexcept nogil:
        """Encoding.truncate: the windows of ``max_length`` records overlapping by ``stride``
        into ``item.windows`` (each trimmed as an encoding of its own); a case left to the
        Python code (no window, an error to raise) falls back."""
        cdef Py_ssize_t n = item.ids.size() // 5, start, stop
        cdef Py_ssize_t length = self.max_length, step = self.max_length - self.stride
        if n <= length:
            if item.defer_trim:
                _trim_window(item.ids, item.trims.data(), item.trim)
            return
        if length == 0 or step <= 0:
            item.fallback = True
            return
        if self.right:
            start = 0
            while True:
                stop = min(start + length, n)
                self._window(item, start, stop)
                if stop == n:
                    break
                start += step
        else:
            stop = n
            while True:
                start = max(stop - length, 0)
                self._window(item, start, stop)
                if start == 0:
                    break
                stop -= step
        item.ids.clear()
        item.ids.shrink_to_fit()

    cdef void _window(self, TextIn *item, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        cdef const int32_t *r = item.ids.data()
        item.windows.push_back(vector[int32_t](r + 5 * start, r + 5 * stop))
        if item.defer_trim:
            _trim_window(item.windows.back(), item.trims.data() + 2 * start, item.trim)


cdef void _trim_window(vector[int32_t] &records, const int32_t *trims, int trim) noexcept nogil:
    """Trim the offsets of ``records`` as one encoding (``trims``: each one's spaces)."""
    cdef Py_ssize_t k
    cdef int32_t *r = records.data()
    for k in range(<Py_ssize_t> records.size() // 5):
        _trim_at(k, trim, trims[2 * k], trims[2 * k + 1], &r[5 * k + 1], &r[5 * k + 2])


cdef class _Pipeline:
    """What the pipelines share: batches of texts in, encodings out."""

    cdef list tokens  # id -> token
    cdef int prefix_ok

    cdef void run_text(self, TextIn *text, int slot) noexcept nogil:
        pass

    cdef bint known(self, TextIn *text) noexcept nogil:
        """Whether the character tables know every character of ``text``."""
        cdef Py_ssize_t i
        cdef const uint32_t *s = text.codes.data()
        for i in range(<Py_ssize_t> text.codes.size()):
            if not _flags[s[i]] & KNOWN:
                return False
        return True

    cdef int learn(self, object text, TextIn *item) except -1:
        """Fill the tables for the characters of ``text`` (the GIL is held)."""
        _learn_text(text)
        return 0

    def encode(self, list texts, AddedMatcher matcher, segments_of, int trim, wrap,
               sequence_id, int threads, runner, truncation=None):
        """``(encodings, fallbacks)``: the :class:`Encoding` of each of ``texts``, and the
        indices of the texts the plan cannot encode alone (the Unigram plan's unknown
        characters; their encodings are ``None``); ``None`` when a text is not a str.
        ``matcher``: ``None``, or the added tokens, split off by ``segments_of(text)``
        (``None`` or ``(start, end, added id or None)`` triples) where one may occur.
        ``trim`` (byte-level BPE): -1, or trim the offsets as the post-processors do, with
        (1) or without (0) ``add_prefix_space``. ``wrap``: ``None``, or the ``((token, id),
        (token, id))`` special tokens put around each text. ``runner(batch, threads)`` calls
        ``batch.work(slot)`` on up to ``threads`` threads (NOTE [ Batches without the
        GIL ]). ``truncation``: ``None``, or ``(max_length, stride, right)`` to truncate each
        text as Encoding.truncate does (the windows after the first are its overflowing
        encodings; the texts it cannot truncate are fallbacks)."""
        for text in texts:
            if not isinstance(text, str):
                return None
        texts = list(texts)  # the batch holds the texts it reads without the GIL
        cdef Py_ssize_t i, n = len(texts)
        cdef _Batch batch = _Batch.__new__(_Batch)
        cdef TextIn *item
        cdef list segment_lists = None
        batch.plan = self
        batch.matcher = matcher
        batch.texts = texts
        batch.max_length = -1
        if truncation is not None:
            batch.max_length, batch.stride, batch.right = truncation
        batch.items.resize(n)
        batch.order.resize(n)
        for i in range(n):
            text = texts[i]
            item = &batch.items[i]
            item.kind = PyUnicode_KIND(text)
            item.data = PyUnicode_DATA(text)
            item.length = PyUnicode_GET_LENGTH(text)
            item.trim = trim
            item.fallback = False
            item.defer_trim = trim >= 0 and batch.max_length >= 0
            batch.order[i] = i
        batch.first_pass = True
        batch.next.store(0)
        runner(batch, threads)
        batch.order.clear()
        for i in range(n):
            item = &batch.items[i]
            if not item.waits:
                continue
            batch.order.push_back(i)
            self.learn(texts[i], item)
            segments = None
            if item.waits & WAITS_ADDED:
                segments = segments_of(texts[i])
            if segments is None:
                item.segments.push_back(0)
                item.segments.push_back(item.length)
                item.segments.push_back(-1)
            else:
                if segment_lists is None:
                    segment_lists = [None] * n
                segment_lists[i] = segments
                for a, b, added in segments:
                    item.segments.push_back(a)
                    item.segments.push_back(b)
                    item.segments.push_back(-1 if added is None else added)
        if batch.order.size():
            batch.first_pass = False
            batch.next.store(0)
            runner(batch, threads)
        cdef list out = [None] * n, fallbacks = [], overflowing
        cdef Source source = batch_source(self.tokens, wrap, sequence_id)
        cdef bint trimmed = trim >= 0
        cdef Encoding encoding
        cdef Py_ssize_t k
        for i in range(n):
            item = &batch.items[i]
            if item.fallback:
                fallbacks.append(i)
                continue
            segments = None if segment_lists is None else segment_lists[i]
            if not item.windows.size():
                out[i] = compiled_encoding(item.ids, source, texts[i], segments, trimmed)
                continue
            encoding = compiled_encoding(item.windows[0], source, texts[i], segments, trimmed)
            overflowing = [compiled_encoding(item.windows[k], source, texts[i], segments,
                                             trimmed)
                           for k in range(1, <Py_ssize_t> item.windows.size())]
            encoding.overflowing = overflowing
            out[i] = encoding
        return out, fallbacks


DEF CACHE_LIMIT = 100000
DEF POOL_SIZE = 4 * MAX_CODE


cdef class ByteLevelBPEPlan(_Pipeline):
    """GPT-2's pre-tokenization (regex, prefix space, bytes as characters) and BPE on the
    bytes' ids, without the GIL; words are cached (one cache a worker thread)."""

    cdef BPEKernel kernel
    cdef int32_t byte_ids[256]
    cdef bint add_prefix_space, use_regex, ignore_merges
    cdef unordered_map[string, int32_t] raw_vocab  # the bytes a token stands for -> id
    cdef vector[unordered_map[string, vector[int32_t]]] caches

    def __init__(self, BPEKernel kernel, byte_ids, raw_vocab, list tokens, add_prefix_space,
                 use_regex, ignore_merges, int slots):
        self.kernel = kernel
        for b in range(256):
            self.byte_ids[b] = byte_ids[b]
        for raw, index in raw_vocab.items():
            self.raw_vocab[<string> raw] = index
        self.tokens = tokens
        self.add_prefix_space = add_prefix_space
        self.use_regex = use_regex
        self.ignore_merges = ignore_merges
        self.caches.resize(slots)

    cdef void _word(self, const uint32_t *s, Py_ssize_t a, Py_ssize_t b, bint prefix,
                    int32_t word, TextIn *out, int slot) noexcept nogil:
        cdef string *raw = &out.raw
        cdef vector[int32_t] *spans = &out.spans  # the character of each byte
        cdef Py_ssize_t i, _, length
        cdef vector[Symbol] symbols
        cdef Symbol sym
        cdef uint64_t state = 1
        cdef unordered_map[string, vector[int32_t]] *cache = &self.caches[slot]
        cdef unordered_map[string, vector[int32_t]].iterator hit
        cdef unordered_map[string, int32_t].iterator whole
        cdef vector[int32_t] computed
        cdef const vector[int32_t] *found
        raw.clear()
        spans.clear()
        if prefix:
            raw.push_back(32)
            spans.push_back(a)
        for i in range(a, b):
            length = _utf8_length(s[i])
            _utf8(s[i], raw[0])
            for _ in range(length):
                spans.push_back(i)
        hit = cache.find(raw[0])
        if hit != cache.end():
            found = &deref(hit).second
        else:
            whole = (self.raw_vocab.find(raw[0]) if self.ignore_merges
                     else self.raw_vocab.end())
            if whole != self.raw_vocab.end():
                computed.push_back(deref(whole).second)
                computed.push_back(0)
                computed.push_back(raw.size())
            else:
                for i in range(<Py_ssize_t> raw.size()):
                    sym.id = self.byte_ids[<uint8_t> raw[0][i]]
                    sym.start = i
                    sym.end = i + 1
                    symbols.push_back(sym)
                self.kernel.merge(symbols, 0.0, &state)
                for i in range(<Py_ssize_t> symbols.size()):
                    computed.push_back(symbols[i].id)
                    computed.push_back(symbols[i].start)
                    computed.push_back(symbols[i].end)
            if cache.size() >= CACHE_LIMIT:
                cache.clear()
            cache[0][raw[0]] = computed
            found = &computed
        cdef int32_t first, last, lead, trail, start, end, begin
        cdef const int32_t *f = found.data()
        cdef const char *r = raw.data()
        for i in range(<Py_ssize_t> found.size() // 3):
            first = f[3 * i]
            begin = f[3 * i + 1]
            last = f[3 * i + 2]
            start = spans[0][begin]
            end = spans[0][last - 1] + 1
            if out.trim >= 0:
                lead = 0
                while begin + lead < last and r[begin + lead] == 32:
                    lead += 1
                trail = 0
                while last - 1 - trail >= begin and r[last - 1 - trail] == 32:
                    trail += 1
                _trim(out, lead, trail, &start, &end)
            out.ids.push_back(first)
            out.ids.push_back(start)
            out.ids.push_back(end)
            out.ids.push_back(word)
            out.ids.push_back(-1)

    cdef void run_text(self, TextIn *text, int slot) noexcept nogil:
        cdef const uint32_t *s = text.codes.data()
        cdef Py_ssize_t k, a, b, start
        cdef int32_t added
        cdef bint prefix
        cdef int32_t word = 0
        cdef vector[Py_ssize_t] bounds
        cdef vector[uint32_t] spaced
        cdef Py_ssize_t m, i
        cdef int32_t lead, trail, first, last
        for k in range(<Py_ssize_t> text.segments.size() // 3):
            a = text.segments[3 * k]
            b = text.segments[3 * k + 1]
            added = text.segments[3 * k + 2]
            if added >= 0:
                first = a
                last = b
                if text.trim >= 0:
                    # An added token's text may hold the whitespace lstrip/rstrip took.
                    lead = 0
                    while a + lead < b and (s[a + lead] == 0x120 or _flags[s[a + lead]] & SPACE):
                        lead += 1
                    trail = 0
                    while b - 1 - trail >= a and (s[b - 1 - trail] == 0x120
                                                  or _flags[s[b - 1 - trail]] & SPACE):
                        trail += 1
                    _trim(text, lead, trail, &first, &last)
                text.ids.push_back(added)
                text.ids.push_back(first)
                text.ids.push_back(last)
                text.ids.push_back(word)
                text.ids.push_back(k)
                word += 1
                continue
            if b <= a:
                continue
            # NOTE [ The prefix space ] of pre_tokenizers.py: " " + text splits like text
            # unless it starts with whitespace or an apostrophe (or there is no regex).
            prefix = self.add_prefix_space and s[a] != 32
            bounds.clear()
            if prefix and (s[a] == 39 or _flags[s[a]] & SPACE or not self.use_regex):
                # The whole segment is prefixed before the split; the words' bounds are in
                # the prefixed text, one more than in the segment.
                spaced.clear()
                spaced.push_back(32)
                for i in range(a, b):
                    spaced.push_back(s[i])
                if self.use_regex:
                    _gpt2_split(spaced.data(), spaced.size(), bounds)
                else:
                    bounds.push_back(spaced.size())
                start = a
                for m in range(<Py_ssize_t> bounds.size()):
                    self._word(s, start, a + bounds[m] - 1, m == 0, word, text, slot)
                    word += 1
                    start = a + bounds[m] - 1
                continue
            if self.use_regex:
                _gpt2_split(s + a, b - a, bounds)
            else:
                bounds.push_back(b - a)
            start = a
            for m in range(<Py_ssize_t> bounds.size()):
                self._word(s, start, a + bounds[m], prefix and m == 0, word, text, slot)
                word += 1
                start = a + bounds[m]
        text.words = word


# -- WordPiece -------------------------------------------------------------------------------

cdef class WordPieceKernel:
    """WordPiece's vocabulary (UTF-8 keys) and its greedy longest-match-first search."""

    cdef unordered_map[string, int32_t] vocab
    cdef string prefix
    cdef int32_t unk
    cdef Py_ssize_t max_chars

    def __init__(self, vocab, unk_id, prefix, max_input_chars_per_word):
        for token, index in vocab.items():
            self.vocab[<string> token.encode("utf-8", "surrogatepass")] = index
        self.unk = -1 if unk_id is None else unk_id
        self.prefix = prefix.encode("utf-8") if prefix else b""
        self.max_chars = max_input_chars_per_word

    cdef int word(self, const uint32_t *s, Py_ssize_t n, vector[int32_t] &out) noexcept nogil:
        """``(id, start, end)`` triples of the word ``s[:n]`` into ``out``; -1 when the word is
        unknown (``out`` is then unchanged), -2 when it is and there is no unknown token."""
        cdef Py_ssize_t start = 0, end, i
        cdef string piece
        cdef size_t base = out.size()
        cdef unordered_map[string, int32_t].iterator it
        cdef bint matched
        if n > self.max_chars:
            return -1
        while start < n:
            end = n
            matched = False
            while end > start:
                piece.clear()
                if start > 0:
                    piece.append(self.prefix)
                for i in range(start, end):
                    _utf8(s[i], piece)
                it = self.vocab.find(piece)
                if it != self.vocab.end():
                    out.push_back(deref(it).second)
                    out.push_back(start)
                    out.push_back(end)
                    matched = True
                    break
                end -= 1
            if not matched:
                out.resize(base)
                return -1
            start = end
        return 0

    def tokenize(self, word):
        """``[(id, start, end)]`` of one word, or ``None`` when it is unknown."""
        cdef vector[uint32_t] codes
        cdef vector[int32_t] out
        cdef int status
        _codes(word, codes)
        with nogil:
            status = self.word(codes.data(), codes.size(), out)
        if status < 0:
            return None
        return [(out[3 * k], out[3 * k + 1], out[3 * k + 2]) for k in range(out.size() // 3)]


cdef class BertPlan(_Pipeline):
    """BERT's normalizer (a map learnt per character, or none), pre-tokenizer (whitespace
    removed, punctuation isolated) and WordPiece, without the GIL; words are cached."""

    cdef WordPieceKernel kernel
    cdef object charmap  # normalizers.CharMap, or None
    # NOTE [ The normalizer's table ]
    # code -> 0 unknown, 1 itself, else 2 + (position << 3 | length): the replacement is
    # pool[position:position + length]. The pool never moves, and an entry is written before
    # its index, so that threads encoding without the GIL can read while another learns.
    cdef int32_t *map_index
    cdef uint32_t *pool
    cdef Py_ssize_t pool_used
    cdef vector[unordered_map[string, vector[int32_t]]] caches

    def __init__(self, WordPieceKernel kernel, charmap, list tokens, int slots):
        self.kernel = kernel
        self.charmap = charmap
        self.tokens = tokens
        self.caches.resize(slots)
        self.map_index = NULL
        self.pool = NULL
        self.pool_used = 0
        if charmap is not None:
            self.map_index = <int32_t *> calloc(MAX_CODE, sizeof(int32_t))
            self.pool = <uint32_t *> calloc(POOL_SIZE, sizeof(uint32_t))
            if self.map_index == NULL or self.pool == NULL:
                raise MemoryError("embertext: no memory for the normalizer's table")

    def __dealloc__(self):
        free(self.map_index)
        free(self.pool)

    cdef bint known(self, TextIn *text) noexcept nogil:
        cdef Py_ssize_t i
        cdef const uint32_t *s = text.codes.data()
        if not _Pipeline.known(self, text):
            return False
        if self.map_index != NULL:
            for i in range(<Py_ssize_t> text.codes.size()):
                if self.map_index[s[i]] == 0:
                    return False
        return True

    cdef int learn(self, object text, TextIn *item) except -1:
        _learn_text(text)
        if self.charmap is None:
            return 0
        cdef Py_ssize_t j, k, length
        cdef uint32_t code
        cdef vector[uint32_t] *codes = &item.codes
        for j in range(<Py_ssize_t> codes.size()):
            code = codes[0][j]
            if self.map_index[code] != 0:
                continue
            out = self.charmap.function(chr(code))
            _learn_text(out)
            if len(out) == 1 and ord(out) == code:
                self.map_index[code] = 1
                continue
            length = len(out)
            if length > 7 or self.pool_used + length > POOL_SIZE:
                raise ValueError(f"the normalizer maps {chr(code)!r} to {out!r}: more "
                                 "characters than the compiled pipeline takes")
            for k in range(length):
                self.pool[self.pool_used + k] = ord(out[k])
            self.map_index[code] = 2 + (self.pool_used << 3 | length)
            self.pool_used += length
        return 0

    cdef void _word(self, vector[uint32_t] &chars, vector[int32_t] &origin, int32_t word,
                    TextIn *out, int slot) noexcept nogil:
        cdef string key
        cdef Py_ssize_t i, n = chars.size()
        cdef vector[int32_t] computed
        cdef const vector[int32_t] *found
        cdef unordered_map[string, vector[int32_t]] *cache = &self.caches[slot]
        cdef unordered_map[string, vector[int32_t]].iterator hit
        if n == 0:
            return
        for i in range(n):
            _utf8(chars[i], key)
        hit = cache.find(key)
        if hit != cache.end():
            found = &deref(hit).second
        else:
            if self.kernel.word(chars.data(), n, computed) < 0:
                computed.clear()
                computed.push_back(self.kernel.unk)
                computed.push_back(0)
                computed.push_back(n)
            if cache.size() >= CACHE_LIMIT:
                cache.clear()
            cache[0][key] = computed
            found = &computed
        cdef const int32_t *f = found.data()
        for i in range(<Py_ssize_t> found.size() // 3):
            out.ids.push_back(f[3 * i])
            out.ids.push_back(origin[f[3 * i + 1]])
            out.ids.push_back(origin[f[3 * i + 2] - 1] + 1)
            out.ids.push_back(word)
            out.ids.push_back(-1)

    cdef void run_text(self, TextIn *text, int slot) noexcept nogil:
        cdef const uint32_t *s = text.codes.data()
        cdef Py_ssize_t k, a, b, i, r
        cdef int32_t added, index, word = 0
        cdef vector[uint32_t] chars
        cdef vector[int32_t] origin
        cdef uint32_t c
        cdef uint8_t f
        cdef const uint32_t *repl
        for k in range(<Py_ssize_t> text.segments.size() // 3):
            a = text.segments[3 * k]
            b = text.segments[3 * k + 1]
            added = text.segments[3 * k + 2]
            if added >= 0:
                text.ids.push_back(added)
                text.ids.push_back(a)
                text.ids.push_back(b)
                text.ids.push_back(word)
                text.ids.push_back(k)
                word += 1
                continue
            chars.clear()
            origin.clear()
            for i in range(a, b):
                index = 1 if self.map_index == NULL else self.map_index[s[i]]
                if index == 1:
                    repl = s + i
                    r = 1
                else:
                    repl = self.pool + ((index - 2) >> 3)
                    r = (index - 2) & 7
                for j in range(r):
                    c = repl[j]
                    f = _flags[c]
                    if f & SPACE:
                        if chars.size():
                            self._word(chars, origin, word, text, slot)
                            word += 1
                            chars.clear()
                            origin.clear()
                    elif f & PUNCT:
                        if chars.size():
                            self._word(chars, origin, word, text, slot)
                            word += 1
                            chars.clear()
                            origin.clear()
                        chars.push_back(c)
                        origin.push_back(i)
                        self._word(chars, origin, word, text, slot)
                        word += 1
                        chars.clear()
                        origin.clear()
                    else:
                        chars.push_back(c)
                        origin.push_back(i)
            if chars.size():
                self._word(chars, origin, word, text, slot)
                word += 1
        text.words = word


# -- Unigram ---------------------------------------------------------------------------------

cdef struct PieceEntry:
    int32_t id
    double score


cdef inline double _log_sum_exp(double x, double y) noexcept nogil:
    """log(exp(x) + exp(y)), as SentencePiece computes it (exp(-50) and less dropped)."""
    cdef double low = y if x > y else x
    cdef double high = x if x > y else y
    if high > low + 50.0:
        return high
    return high + log(exp(low - high) + 1.0)


cdef class UnigramKernel:
    """The pieces of a Unigram model (UTF-8 keys) and the Viterbi search over a word."""

    cdef unordered_map[string, PieceEntry] pieces
    cdef Py_ssize_t max_length
    cdef double unk_score
    cdef bint has_unk
    cdef list _ids

    def __init__(self, pieces, double unk_score, bint has_unk):
        """``pieces``: ``(piece, id, score)``, the first of equal pieces kept."""
        cdef PieceEntry entry
        self.max_length = 0
        self._ids = []
        for piece, index, score in pieces:
            if not piece:
                continue
            key = piece.encode("utf-8", "surrogatepass")
            if self.pieces.count(key):
                continue
            entry.id = index
            entry.score = score
            self.pieces[key] = entry
            self._ids.append(index)
            self.max_length = max(self.max_length, len(piece))
        self.unk_score = unk_score
        self.has_unk = has_unk

    cdef bint pieces_at(self, const uint32_t *s, Py_ssize_t n, Py_ssize_t start,
                        vector[int32_t] &ends, vector[int32_t] &ids,
                        vector[double] &scores) noexcept nogil:
        """The pieces that start at ``start`` (shorter first) into ``ends``/``ids``/
        ``scores``; true when one of them is a single character."""
        cdef Py_ssize_t end, limit = min(n, start + self.max_length)
        cdef string key
        cdef unordered_map[string, PieceEntry].iterator it
        cdef bint single = False
        ends.clear()
        ids.clear()
        scores.clear()
        for end in range(start + 1, limit + 1):
            _utf8(s[end - 1], key)
            it = self.pieces.find(key)
            if it == self.pieces.end():
                continue
            ends.push_back(end)
            ids.push_back(deref(it).second.id)
            scores.push_back(deref(it).second.score)
            single = single or end == start + 1
        return single

    cdef int viterbi(self, const uint32_t *s, Py_ssize_t n, vector[int32_t] &out) noexcept nogil:
        """``(id or -1 for unknown, start, end)`` triples of the best segmentation into ``out``;
        -1 (at the first character no piece covers) without an unknown token."""
        cdef vector[double] best, scores
        cdef vector[int32_t] origin, chosen, ends, ids
        cdef vector[char] reached
        cdef Py_ssize_t start, end, i, k
        cdef bint single
        cdef double value
        cdef Py_ssize_t count
        cdef vector[int32_t] ordered
        best.resize(n + 1)
        origin.resize(n + 1)
        chosen.resize(n + 1)
        reached.resize(n + 1)
        reached[0] = 1
        best[0] = 0.0
        for start in range(n):
            if not reached[start]:
                continue
            single = self.pieces_at(s, n, start, ends, ids, scores)
            for k in range(<Py_ssize_t> ends.size()):
                end = ends[k]
                value = best[start] + scores[k]
                if not reached[end] or value > best[end]:
                    reached[end] = 1
                    best[end] = value
                    origin[end] = start
                    chosen[end] = ids[k]
            if not single:
                if not self.has_unk:
                    return -1 - start
                value = best[start] + self.unk_score
                if not reached[start + 1] or value > best[start + 1]:
                    reached[start + 1] = 1
                    best[start + 1] = value
                    origin[start + 1] = start
                    chosen[start + 1] = -1
        end = n
        while end > 0:
            out.push_back(end)
            out.push_back(origin[end])
            out.push_back(chosen[end])
            end = origin[end]
        # Reverse into (id, start, end) order.
        count = out.size() // 3
        for i in range(count - 1, -1, -1):
            ordered.push_back(out[3 * i + 2])
            ordered.push_back(out[3 * i + 1])
            ordered.push_back(out[3 * i])
        out.swap(ordered)
        return 0

    cdef double marginals(self, const uint32_t *s, Py_ssize_t n, double freq, int32_t unk_id,
                          double *expected) noexcept nogil:
        """Forward-backward over the lattice of one word (nodes in the order of Hugging
        Face's lattice: by start, shorter pieces first, the unknown node last, so that the
        sums run in the same order): adds ``freq`` times each node's marginal probability
        to ``expected[id]``; returns ``freq * log Z``."""
        cdef vector[int32_t] starts, ends, ids, by_end, end_first, filled, at_ends, at_ids
        cdef vector[double] scores, alpha, beta, at_scores
        cdef Py_ssize_t start, k, j, m, count, pos
        cdef bint single, first
        cdef double value = 0.0, term, z
        for start in range(n):
            single = self.pieces_at(s, n, start, at_ends, at_ids, at_scores)
            for k in range(<Py_ssize_t> at_ends.size()):
                starts.push_back(start)
                ends.push_back(at_ends[k])
                ids.push_back(at_ids[k])
                scores.push_back(at_scores[k])
            if not single:
                starts.push_back(start)
                ends.push_back(start + 1)
                ids.push_back(unk_id)
                scores.push_back(self.unk_score)
        count = starts.size()
        # The nodes ending at each position, in insertion order (a stable counting sort).
        end_first.resize(n + 2, 0)
        for k in range(count):
            end_first[ends[k] + 1] += 1
        for pos in range(n + 1):
            end_first[pos + 1] += end_first[pos]
        by_end.resize(count)
        filled.resize(n + 1, 0)
        for k in range(count):
            by_end[end_first[ends[k]] + filled[ends[k]]] = k
            filled[ends[k]] += 1
        alpha.resize(count, 0.0)
        for k in range(count):
            if starts[k] == 0:
                continue
            first = True
            for m in range(end_first[starts[k]], end_first[starts[k] + 1]):
                j = by_end[m]
                term = scores[j] + alpha[j]
                value = term if first else _log_sum_exp(value, term)
                first = False
            alpha[k] = value
        z = 0.0
        first = True
        for m in range(end_first[n], end_first[n + 1]):
            j = by_end[m]
            term = scores[j] + alpha[j]
            z = term if first else _log_sum_exp(z, term)
            first = False
        beta.resize(count, 0.0)
        # Nodes are grouped by start: begins[pos] is the run of nodes with that start.
        k = count
        for pos in range(n - 1, 0, -1):
            while k > 0 and starts[k - 1] >= pos:
                k -= 1
            for m in range(end_first[pos], end_first[pos + 1]):
                j = by_end[m]
                first = True
                for start in range(k, count):
                    if starts[start] != pos:
                        break
                    term = scores[start] + beta[start]
                    value = term if first else _log_sum_exp(value, term)
                    first = False
                beta[j] = value
        for k in range(count):
            expected[ids[k]] += freq * exp(alpha[k] + scores[k] + beta[k] - z)
        return freq * z

    def e_step(self, list words, list counts, Py_ssize_t size, int32_t unk_id):
        """``(objective, expected)``: the negative log-likelihood per word of ``words``
        (weighted by ``counts``) and the expected count of each of the ``size`` piece ids,
        by forward-backward over every word's lattice (the unknown node counts for
        ``unk_id``)."""
        cdef vector[uint32_t] codes, word_codes
        cdef vector[Py_ssize_t] offsets
        cdef vector[double] freqs, expected
        cdef Py_ssize_t i, w
        cdef double total = 0.0, objective = 0.0, z
        if not self.has_unk:
            raise ValueError("the E-step needs an unknown token")
        if len(words) != len(counts):
            raise ValueError("words and counts differ in length")
        offsets.push_back(0)
        for word, count in zip(words, counts):
            _codes(word, word_codes)
            codes.insert(codes.end(), word_codes.begin(), word_codes.end())
            offsets.push_back(codes.size())
            freqs.push_back(count)
            total += count
        expected.resize(size, 0.0)
        for piece in self._ids:
            if not 0 <= piece < size:
                raise ValueError(f"piece id {piece} out of range for {size} pieces")
        if not 0 <= unk_id < size:
            raise ValueError(f"unk_id {unk_id} out of range for {size} pieces")
        with nogil:
            for w in range(freqs.size()):
                if offsets[w + 1] == offsets[w]:
                    continue
                z = self.marginals(codes.data() + offsets[w], offsets[w + 1] - offsets[w],
                                   freqs[w], unk_id, expected.data())
                objective -= z / total
        return objective, [expected[i] for i in range(size)]

    def segment(self, word):
        """``[(id or None, start, end)]`` of the best segmentation of ``word``; raises
        ValueError at a character no piece covers when there is no unknown token."""
        cdef vector[uint32_t] codes
        cdef vector[int32_t] out
        cdef int status
        _codes(word, codes)
        with nogil:
            status = self.viterbi(codes.data(), codes.size(), out)
        if status < 0:
            char = word[-1 - status]
            raise ValueError(f"cannot tokenize {word!r} without an unknown token: {char!r} is "
                             "in no piece")
        return [(out[3 * k] if out[3 * k] >= 0 else None, out[3 * k + 1], out[3 * k + 2])
                for k in range(out.size() // 3)]


cdef class UnigramPlan(_Pipeline):
    """The Metaspace pre-tokenizer (spaces to the replacement character, one before the text,
    a word at each) and Unigram's Viterbi search, without the GIL; words are cached. A text
    with a character no piece covers is left to the Python pipeline (``None``)."""

    cdef UnigramKernel kernel
    cdef uint32_t replacement
    cdef int scheme  # 0 always, 1 first, 2 never
    cdef bint split
    cdef vector[unordered_map[string, vector[int32_t]]] caches

    def __init__(self, UnigramKernel kernel, replacement, prepend_scheme, split, list tokens,
                 int slots):
        self.kernel = kernel
        self.replacement = ord(replacement)
        self.scheme = ("always", "first", "never").index(prepend_scheme)
        self.split = split
        self.tokens = tokens
        self.caches.resize(slots)

    cdef bint _word(self, const uint32_t *chars, const int32_t *origin, Py_ssize_t n,
                    int32_t word, TextIn *out, int slot) noexcept nogil:
        cdef string key
        cdef Py_ssize_t i
        cdef vector[int32_t] computed
        cdef const vector[int32_t] *found
        cdef unordered_map[string, vector[int32_t]] *cache = &self.caches[slot]
        cdef unordered_map[string, vector[int32_t]].iterator hit
        for i in range(n):
            _utf8(chars[i], key)
        hit = cache.find(key)
        if hit != cache.end():
            found = &deref(hit).second
        else:
            if self.kernel.viterbi(chars, n, computed) < 0:
                return False
            for i in range(<Py_ssize_t> computed.size() // 3):
                if computed[3 * i] < 0:
                    return False
            if cache.size() >= CACHE_LIMIT:
                cache.clear()
            cache[0][key] = computed
            found = &computed
        cdef const int32_t *f = found.data()
        for i in range(<Py_ssize_t> found.size() // 3):
            out.ids.push_back(f[3 * i])
            out.ids.push_back(origin[f[3 * i + 1]])
            out.ids.push_back(origin[f[3 * i + 2] - 1] + 1)
            out.ids.push_back(word)
            out.ids.push_back(-1)
        return True

    cdef void run_text(self, TextIn *text, int slot) noexcept nogil:
        cdef const uint32_t *s = text.codes.data()
        cdef Py_ssize_t k, a, b, i, start
        cdef int32_t added, word = 0
        cdef vector[uint32_t] chars
        cdef vector[int32_t] origin
        cdef uint32_t c
        for k in range(<Py_ssize_t> text.segments.size() // 3):
            a = text.segments[3 * k]
            b = text.segments[3 * k + 1]
            added = text.segments[3 * k + 2]
            if added >= 0:
                text.ids.push_back(added)
                text.ids.push_back(a)
                text.ids.push_back(b)
                text.ids.push_back(word)
                text.ids.push_back(k)
                word += 1
                continue
            if b <= a:
                continue
            chars.clear()
            origin.clear()
            if (s[a] != 32 and s[a] != self.replacement
                    and (self.scheme == 0 or (self.scheme == 1 and a == 0))):
                chars.push_back(self.replacement)
                origin.push_back(a)
            for i in range(a, b):
                c = s[i]
                chars.push_back(self.replacement if c == 32 else c)
                origin.push_back(i)
            start = 0
            for i in range(1, <Py_ssize_t> chars.size() + 1):
                if i < <Py_ssize_t> chars.size() and not (self.split
                                                          and chars[i] == self.replacement):
                    continue
                if not self._word(chars.data() + start, origin.data() + start, i - start,
                                  word, text, slot):
                    text.fallback = True
                    return
                word += 1
                start = i
        text.words = word
