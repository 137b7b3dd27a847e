"""Normalizers: text clean-up before pre-tokenization (the ``tokenizers.normalizers`` of
Hugging Face), each keeping track of the original offsets."""

import re
import unicodedata

from embertext.tokenizers import _unicode
from embertext.tokenizers._piece import CharMap, Piece
from embertext.tokenizers._regex import Regex

__all__ = [
    "Normalizer",
    "BertNormalizer",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "StripAccents",
    "Strip",
    "Replace",
    "Prepend",
    "Precompiled",
    "Nmt",
    "ByteLevel",
    "Sequence",
]


class Normalizer:
    """The base of normalizers: :meth:`normalize_str` on a plain string, and the JSON form
    of ``tokenizer.json`` (:meth:`to_dict`)."""

    def normalize(self, piece):
        raise TypeError(f"{type(self).__name__} does not normalize")

    def normalize_str(self, sequence):
        """The normalized form of ``sequence``."""
        return self.normalize(Piece.from_text(sequence)).text

    def to_dict(self):
        return {"type": type(self).__name__}


class BertNormalizer(Normalizer):
    r"""BERT's normalization: control characters out and whitespace to spaces
    (``clean_text``), spaces around CJK ideographs (``handle_chinese_chars``), accents
    stripped (``strip_accents``; ``None`` follows ``lowercase``) and lowercasing.

    Examples::

        >>> BertNormalizer().normalize_str("Héllo\tWORLD中")
        'hello world 中 '
    """

    def __init__(self, clean_text=True, handle_chinese_chars=True, strip_accents=None,
                 lowercase=True):
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            # The map of every character seen (and the compiled pipeline's copy, made from
            # it) follows the settings (NOTE [ Stale tables ] in models.py).
            self._charmap = None

    def normalize(self, piece):
        if self._charmap is None:
            self._charmap = CharMap(self._normalize_char)
        return piece.map_chars(self._charmap)

    def _normalize_char(self, char):
        # Every step works one character at a time (as in Hugging Face's normalizer), so
        # they compose into one map, learnt per character.
        if self.clean_text:
            char = _clean_char(char)
        if self.handle_chinese_chars and len(char) == 1 and _unicode.is_chinese_char(char):
            char = f" {char} "
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip:
            char = "".join(c for c in unicodedata.normalize("NFD", char)
                           if unicodedata.category(c) != "Mn")
        if self.lowercase:
            char = "".join(c.lower() for c in char)
        return char

    def to_dict(self):
        return {"type": "BertNormalizer", "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars,
                "strip_accents": self.strip_accents, "lowercase": self.lowercase}


def _clean_char(char):
    if char == "\x00" or char == "\ufffd" or _unicode.is_control(char):
        return ""
    return " " if _unicode.is_whitespace(char) else char


class Lowercase(Normalizer):
    """Lowercase every character (Unicode rules: one character may become several)."""

    def __init__(self):
        self._charmap = CharMap(str.lower)

    def normalize(self, piece):
        return piece.map_chars(self._charmap)


def _unicode_normalize(piece, form):
    if unicodedata.is_normalized(form, piece.text):
        return piece
    # Normalized one cluster at a time (a starter and the combining marks after it), so that
    # the characters of each cluster's result take the cluster's original span.
    text, align = [], []
    start = 0
    n = len(piece.text)
    while start < n:
        end = start + 1
        while end < n and unicodedata.combining(piece.text[end]):
            end += 1
        out = unicodedata.normalize(form, piece.text[start:end])
        span = piece.span(start, end)
        text.append(out)
        align.extend([span] * len(out))
        start = end
    return Piece("".join(text), align)


class NFC(Normalizer):
    """Unicode normalization form C."""

    def normalize(self, piece):
        return _unicode_normalize(piece, "NFC")


class NFD(Normalizer):
    """Unicode normalization form D."""

    def normalize(self, piece):
        return _unicode_normalize(piece, "NFD")


class NFKC(Normalizer):
    """Unicode normalization form KC."""

    def normalize(self, piece):
        return _unicode_normalize(piece, "NFKC")


class NFKD(Normalizer):
    """Unicode normalization form KD."""

    def normalize(self, piece):
        return _unicode_normalize(piece, "NFKD")


class StripAccents(Normalizer):
    """Remove non-spacing marks (category Mn); use after :class:`NFD` to strip accents."""

    def __init__(self):
        self._charmap = CharMap(lambda c: "" if unicodedata.category(c) == "Mn" else c)

    def normalize(self, piece):
        return piece.map_chars(self._charmap)


class Strip(Normalizer):
    """Remove whitespace at the start (``left``) and the end (``right``)."""

    def __init__(self, left=True, right=True):
        self.left = left
        self.right = right

    def normalize(self, piece):
        start, end = 0, len(piece.text)
        if self.left:
            while start < end and _unicode.is_whitespace(piece.text[start]):
                start += 1
        if self.right:
            while end > start and _unicode.is_whitespace(piece.text[end - 1]):
                end -= 1
        return piece.slice(start, end)

    def to_dict(self):
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}


class Replace(Normalizer):
    """Replace every match of ``pattern`` (a string, or a
    :class:`~embertext.tokenizers.Regex`) by ``content``; each character of the replacement
    takes the span of the last character it replaces (as in Hugging Face `tokenizers`)."""

    def __init__(self, pattern, content):
        if isinstance(pattern, Regex):
            self._compiled = pattern.compiled
        elif isinstance(pattern, str) and pattern:
            self._compiled = re.compile(re.escape(pattern))
        else:
            raise ValueError("Replace needs a non-empty string pattern or a Regex")
        self.pattern = pattern
        self.content = content

    def normalize(self, piece):
        text, align = [], []
        position = 0
        source = piece.text
        for match in self._compiled.finditer(source):
            start, end = match.span()
            if start == end:
                continue
            for i in range(position, start):
                text.append(source[i])
                align.append(piece.span(i, i + 1))
            span = piece.span(end - 1, end)
            text.append(self.content)
            align.extend([span] * len(self.content))
            position = end
        if position == 0 and not text:
            return piece
        for i in range(position, len(source)):
            text.append(source[i])
            align.append(piece.span(i, i + 1))
        return Piece("".join(text), align)

    def to_dict(self):
        pattern = ({"Regex": self.pattern.pattern} if isinstance(self.pattern, Regex)
                   else {"String": self.pattern})
        return {"type": "Replace", "pattern": pattern, "content": self.content}


class Prepend(Normalizer):
    """Put ``prepend`` before non-empty text (it takes the first character's span)."""

    def __init__(self, prepend):
        self.prepend = prepend

    def normalize(self, piece):
        if not piece.text:
            return piece
        return piece.prepend(self.prepend)

    def to_dict(self):
        return {"type": "Prepend", "prepend": self.prepend}


def _is_control_break(char):
    if char in "\u200c\u200d":
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def _is_extend(char):
    code = ord(char)
    return (unicodedata.category(char) in ("Mn", "Me", "Mc") or code == 0x200D
            or 0xFE00 <= code <= 0xFE0F or 0x1F3FB <= code <= 0x1F3FF
            or 0xE0020 <= code <= 0xE007F or 0xE0100 <= code <= 0xE01EF)


def graphemes(text):
    """``(start, end)`` of the grapheme clusters of ``text``: the main rules of Unicode's
    extended grapheme clusters (CR LF, controls, combining and spacing marks, ZWJ emoji
    sequences, flag pairs; Hangul jamo sequences and prepend marks are not joined)."""
    bounds = []
    start = 0
    n = len(text)
    i = 1
    regional = 0x1F1E6 <= ord(text[0]) <= 0x1F1FF if text else False
    pairs = 1 if regional else 0
    while i < n:
        previous, char = text[i - 1], text[i]
        joined = False
        if previous == "\r" and char == "\n":
            joined = True
        elif previous in "\r\n" or _is_control_break(previous) or char in "\r\n" \
                or _is_control_break(char):
            joined = False
        elif _is_extend(char):
            joined = True
        elif previous == "\u200d" and unicodedata.category(char) == "So":
            joined = True
        elif 0x1F1E6 <= ord(char) <= 0x1F1FF and 0x1F1E6 <= ord(previous) <= 0x1F1FF:
            joined = pairs % 2 == 1
        if 0x1F1E6 <= ord(char) <= 0x1F1FF:
            pairs = pairs + 1 if 0x1F1E6 <= ord(previous) <= 0x1F1FF else 1
        else:
            pairs = 0
        if not joined:
            bounds.append((start, i))
            start = i
        i += 1
    if n:
        bounds.append((start, n))
    return bounds


class Precompiled(Normalizer):
    """SentencePiece's precompiled normalization map (from a ``.model`` file), applied as
    Hugging Face `tokenizers` applies it: a grapheme cluster (under 6 bytes) that starts with
    an entry of the map becomes that entry's replacement; otherwise its characters are
    replaced one by one. Replacement characters take the spans of the characters they
    replace in order (extra ones the last one's; characters left over are dropped)."""

    def __init__(self, precompiled_charsmap):
        from embertext.tokenizers.sentencepiece import _CharsMap

        if isinstance(precompiled_charsmap, str):
            import base64

            precompiled_charsmap = base64.b64decode(precompiled_charsmap)
        self.precompiled_charsmap = bytes(precompiled_charsmap)
        self._map = _CharsMap(self.precompiled_charsmap) if self.precompiled_charsmap else None
        self._cache = {}

    def _transform(self, chunk):
        found = self._cache.get(chunk, False)
        if found is False:
            found = self._map.shortest_prefix(chunk.encode("utf-8"))
            self._cache[chunk] = found
        return found

    def normalize(self, piece):
        if self._map is None or not piece.text:
            return piece
        source = piece.text
        spans = piece.spans()
        text, align = [], []
        changed = False

        def replace(start, end, new):
            old = end - start
            for k, char in enumerate(new):
                text.append(char)
                align.append(spans[start + min(k, old - 1)] if old else spans[start])

        for start, end in graphemes(source):
            grapheme = source[start:end]
            if len(grapheme.encode("utf-8")) < 6:
                new = self._transform(grapheme)
                if new is not None:
                    changed = True
                    replace(start, end, new)
                    continue
            for k in range(start, end):
                new = self._transform(source[k])
                if new is None:
                    text.append(source[k])
                    align.append(spans[k])
                else:
                    changed = True
                    replace(k, k + 1, new)
        if not changed:
            return piece
        return Piece("".join(text), align)

    def to_dict(self):
        import base64

        return {"type": "Precompiled",
                "precompiled_charsmap": base64.b64encode(self.precompiled_charsmap).decode()}


_NMT_REMOVED = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
_NMT_SPACES = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028,
                         0x2029, 0x2581, 0xFEFF, 0xFFFD])


def _nmt_char(char):
    code = ord(char)
    if code in _NMT_REMOVED:
        return ""
    return " " if code in _NMT_SPACES else char


class Nmt(Normalizer):
    """The NMT normalization of SentencePiece's ``nmt_nfkc`` rules, without the NFKC part:
    control characters out, and tabs, line breaks, zero-width characters, ``▁``, the BOM
    and U+FFFD to spaces."""

    def __init__(self):
        self._charmap = CharMap(_nmt_char)

    def normalize(self, piece):
        return piece.map_chars(self._charmap)


class ByteLevel(Normalizer):
    """Each character as the byte-level characters of its UTF-8 bytes (GPT-2's alphabet,
    :meth:`~embertext.tokenizers.pre_tokenizers.ByteLevel.alphabet`); all of them take the
    character's span."""

    def __init__(self):
        table = _unicode.bytes_to_unicode()
        self._charmap = CharMap(lambda c: "".join(table[b] for b in c.encode("utf-8",
                                                                             "surrogatepass")))

    def normalize(self, piece):
        return piece.map_chars(self._charmap)


class Sequence(Normalizer):
    """Normalizers applied one after another."""

    def __init__(self, normalizers):
        self.normalizers = list(normalizers)

    def normalize(self, piece):
        for normalizer in self.normalizers:
            piece = normalizer.normalize(piece)
        return piece

    def to_dict(self):
        return {"type": "Sequence", "normalizers": [n.to_dict() for n in self.normalizers]}


def from_dict(data):
    """The normalizer of a ``tokenizer.json`` entry."""
    if data is None:
        return None
    kind = data["type"]
    if kind == "BertNormalizer":
        return BertNormalizer(data.get("clean_text", True), data.get("handle_chinese_chars", True),
                              data.get("strip_accents"), data.get("lowercase", True))
    if kind == "Sequence":
        return Sequence([from_dict(item) for item in data["normalizers"]])
    if kind == "Strip":
        return Strip(data.get("strip_left", True), data.get("strip_right", True))
    if kind == "Replace":
        pattern = data["pattern"]
        pattern = pattern["String"] if "String" in pattern else Regex(pattern["Regex"])
        return Replace(pattern, data["content"])
    if kind == "Prepend":
        return Prepend(data["prepend"])
    if kind == "Precompiled":
        return Precompiled(data.get("precompiled_charsmap") or b"")
    simple = {"Lowercase": Lowercase, "NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD,
              "StripAccents": StripAccents, "Nmt": Nmt, "ByteLevel": ByteLevel}
    if kind in simple:
        return simple[kind]()
    raise ValueError(f"unsupported normalizer type in tokenizer.json: {kind!r}")
