"""Pre-tokenizers: split normalized text into words (the ``tokenizers.pre_tokenizers`` of
Hugging Face); a model then splits each word into tokens."""

import re

from embertext.tokenizers import _kernels, _unicode
from embertext.tokenizers._piece import Piece
from embertext.tokenizers._regex import Regex

__all__ = [
    "PreTokenizer",
    "ByteLevel",
    "BertPreTokenizer",
    "Whitespace",
    "WhitespaceSplit",
    "Punctuation",
    "Digits",
    "Metaspace",
    "CharDelimiterSplit",
    "Split",
    "FixedLength",
    "UnicodeScripts",
    "Sequence",
]

_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


class PreTokenizer:
    """The base of pre-tokenizers: :meth:`pre_tokenize_str` shows the words and offsets."""

    def pre_tokenize(self, piece):
        raise TypeError(f"{type(self).__name__} does not pre-tokenize")

    def pre_tokenize_str(self, sequence):
        """The words of ``sequence`` with their ``(start, end)`` offsets."""
        return [(p.text, p.span(0, len(p.text))) for p in self.pre_tokenize(
            Piece.from_text(sequence))]

    def to_dict(self):
        return {"type": type(self).__name__}


def _split_chars(piece, is_delimiter, behavior):
    """Split ``piece`` at the characters for which ``is_delimiter`` is true."""
    text = piece.text
    out = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        if not is_delimiter(text[i]):
            i += 1
            continue
        j = i + 1
        if behavior == "contiguous":
            while j < n and is_delimiter(text[j]):
                j += 1
        if behavior == "merged_with_previous":
            out.append((start, j))
            start = j
        elif behavior == "merged_with_next":
            out.append((start, i))
            start = i
        else:
            out.append((start, i))
            if behavior != "removed":
                out.append((i, j))
            start = j
        i = j
    out.append((start, n))
    return [piece.slice(a, b) for a, b in out if b > a]


class ByteLevel(PreTokenizer):
    r"""GPT-2's byte-level pre-tokenization: a space before the text (``add_prefix_space``,
    unless there is one), a split by GPT-2's regex (``use_regex``), then every byte of the
    UTF-8 encoding as one printable character (:func:`bytes_to_unicode`).

    Examples::

        >>> ByteLevel().pre_tokenize_str("Hello world")
        [('ĠHello', (0, 5)), ('Ġworld', (5, 11))]
    """

    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @staticmethod
    def alphabet():
        """The 256 characters that stand for bytes."""
        return sorted(_unicode.bytes_to_unicode().values())

    def pre_tokenize(self, piece):
        text = piece.text
        prefix = self.add_prefix_space and text and not text.startswith(" ")
        # NOTE [ The prefix space ]
        # " " + text splits like text, the space joining the first word, unless text starts
        # with whitespace or an apostrophe (a contraction's); only then is the whole piece
        # prefixed before the split.
        if prefix and (text[0] == "'" or _unicode.is_whitespace(text[0]) or not self.use_regex):
            piece, prefix = piece.prepend(" "), False
        words = ([piece.slice(a, b) for a, b in _kernels.split_gpt2(piece.text)]
                 if self.use_regex else [piece])
        if prefix and words:
            words[0] = words[0].prepend(" ")
        return [_to_byte_chars(word) for word in words]

    def to_dict(self):
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


_ASCII_TO_BYTE_CHAR = {b: c for b, c in _unicode.bytes_to_unicode().items() if b < 128}


_BYTE_WORDS = {}


def _byte_word(word):
    """The byte-level form of ``word`` and each byte's character span in it (cached)."""
    found = _BYTE_WORDS.get(word)
    if found is None:
        found = _bytes_of(word, [(i, i + 1) for i in range(len(word))])
        if len(_BYTE_WORDS) < 100_000:
            _BYTE_WORDS[word] = found
    return found


def _to_byte_chars(piece):
    if piece.text.isascii():
        # One byte a character: the spans stay as they are.
        return Piece(piece.text.translate(_ASCII_TO_BYTE_CHAR), piece.align, piece.offset)
    if piece.align is None:
        text, align = _byte_word(piece.text)
        return Piece(text, align, piece.offset)
    text, align = _bytes_of(piece.text, piece.spans())
    return Piece(text, align)


def _bytes_of(word, spans):
    byte_char = _unicode.bytes_to_unicode()
    text, align = [], []
    for char, span in zip(word, spans):
        if char < "\x80":
            text.append(byte_char[ord(char)])
            align.append(span)
            continue
        encoded = char.encode("utf-8", "surrogatepass")
        text.extend(byte_char[b] for b in encoded)
        align.extend([span] * len(encoded))
    return "".join(text), align


class BertPreTokenizer(PreTokenizer):
    """BERT's pre-tokenization: split on whitespace, and every punctuation character is a
    word of its own.

    Examples::

        >>> BertPreTokenizer().pre_tokenize_str("Hi, you!")
        [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
    """

    # Whitespace, and the characters that may be punctuation (neither word characters nor
    # whitespace, or "_"): only those are looked at one by one.
    _candidates = re.compile(f"[{_unicode._WHITESPACE_CLASS}]|[^\\w{_unicode._WHITESPACE_CLASS}]|_")

    def pre_tokenize(self, piece):
        text = piece.text
        words = []
        start = 0
        for match in self._candidates.finditer(text):
            i = match.start()
            char = text[i]
            if _unicode.is_whitespace(char):
                if i > start:
                    words.append(piece.slice(start, i))
                start = i + 1
            elif _unicode.is_punctuation(char):
                if i > start:
                    words.append(piece.slice(start, i))
                words.append(piece.slice(i, i + 1))
                start = i + 1
        if start < len(text):
            words.append(piece.slice(start, len(text)))
        return words


class Whitespace(PreTokenizer):
    r"""Split into runs of word characters and runs of other non-space characters
    (``\w+|[^\w\s]+``, with the ``\w`` of Hugging Face's Rust regex: letters, marks, decimal
    digits, connectors; not the other numbers such as "²" that :mod:`re` counts)."""

    _pattern = None

    def pre_tokenize(self, piece):
        if Whitespace._pattern is None:
            from embertext.tokenizers._regex import ranges

            other, marks = ranges("No"), ranges("M") + "\u200c\u200d"
            space = _unicode._WHITESPACE_CLASS
            Whitespace._pattern = re.compile(
                rf"(?:[^\W{other}]|[{marks}])+|(?:[^\w{space}{marks}]|[{other}])+")
        return [piece.slice(*m.span()) for m in self._pattern.finditer(piece.text)]


class WhitespaceSplit(PreTokenizer):
    """Split on whitespace."""

    def pre_tokenize(self, piece):
        return _split_chars(piece, _unicode.is_whitespace, "removed")


class Punctuation(PreTokenizer):
    """Split at punctuation characters, which are kept as ``behavior`` says (``"isolated"``,
    ``"removed"``, ``"merged_with_previous"``, ``"merged_with_next"``, ``"contiguous"``)."""

    def __init__(self, behavior="isolated"):
        if behavior not in _BEHAVIORS:
            raise ValueError(f"behavior must be one of {_BEHAVIORS}, got {behavior!r}")
        self.behavior = behavior

    def pre_tokenize(self, piece):
        return _split_chars(piece, _unicode.is_punctuation, self.behavior)

    def to_dict(self):
        return {"type": "Punctuation", "behavior": _behavior_name(self.behavior)}


class Digits(PreTokenizer):
    """Split digits from the rest; each digit alone with ``individual_digits``."""

    def __init__(self, individual_digits=False):
        self.individual_digits = individual_digits

    def pre_tokenize(self, piece):
        behavior = "isolated" if self.individual_digits else "contiguous"
        return _split_chars(piece, str.isdigit, behavior)

    def to_dict(self):
        return {"type": "Digits", "individual_digits": self.individual_digits}


class Metaspace(PreTokenizer):
    r"""SentencePiece-style words: spaces become ``replacement`` (▁), one is put before the
    text (``prepend_scheme`` ``"always"``; ``"first"``: before the first part of the text
    only; ``"never"``), and with ``split`` each word starts at a ▁.

    Examples::

        >>> Metaspace().pre_tokenize_str("Hey friend")
        [('▁Hey', (0, 3)), ('▁friend', (3, 10))]
    """

    def __init__(self, replacement="\u2581", prepend_scheme="always", split=True):
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(f"prepend_scheme must be 'always', 'first' or 'never', got "
                             f"{prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def pre_tokenize(self, piece):
        piece = Piece(piece.text.replace(" ", self.replacement), piece.align, piece.offset)
        first = piece.span(0, 0)[0] == 0 if piece.text else False
        if piece.text and not piece.text.startswith(self.replacement) and (
                self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)):
            piece = piece.prepend(self.replacement)
        if not self.split:
            return [piece] if piece.text else []
        return _split_chars(piece, lambda c: c == self.replacement, "merged_with_next")

    def to_dict(self):
        return {"type": "Metaspace", "replacement": self.replacement,
                "prepend_scheme": self.prepend_scheme, "split": self.split}


class CharDelimiterSplit(PreTokenizer):
    """Split at every ``delimiter`` character, which is removed."""

    def __init__(self, delimiter):
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"the delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter

    def pre_tokenize(self, piece):
        return _split_chars(piece, lambda char: char == self.delimiter, "removed")

    def to_dict(self):
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}


class FixedLength(PreTokenizer):
    """Split into chunks of ``length`` characters (the last one shorter)."""

    def __init__(self, length=5):
        if not isinstance(length, int) or length < 1:
            raise ValueError(f"length must be a positive integer, got {length!r}")
        self.length = length

    def pre_tokenize(self, piece):
        n, size = len(piece.text), self.length
        return [piece.slice(start, min(start + size, n)) for start in range(0, n, size)]

    def to_dict(self):
        return {"type": "FixedLength", "length": self.length}


# The Unicode scripts (the values of the Script property) that UnicodeScripts tells apart.
_SCRIPT_NAMES = """Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum
Bassa_Vah Batak Bengali Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal
Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot
Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs
Elbasan Elymaic Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati
Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana
Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi
Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi
Kirat_Rai Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar
Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui
Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean
Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki
Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian
Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene
Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada
Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar
Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut
Telugu Thaana Thai Tibetan Tifinagh Tirhuta Todhri Toto Tulu_Tigalari Ugaritic Vai Vithkuqi
Wancho Warang_Citi Yezidi Yi Zanabazar_Square""".split()


class UnicodeScripts(PreTokenizer):
    """Split where the Unicode script changes (Latin, Cyrillic, Han, Common ...), as
    SentencePiece does: Hiragana, Katakana and the prolonged sound mark ``ー`` count as Han,
    and spaces belong to no script (they stay with the text before them; leading spaces
    are dropped), nor do unassigned and private-use characters.

    The scripts come from the Unicode tables of the ``regex`` package (needed:
    ``pip install regex``). Hugging Face `tokenizers` 0.23 uses an older table (before
    Unicode 10): characters assigned since (U+0860 Syriac Malayalam, U+061D ...) have no
    script there and one here, so texts with them can split differently."""

    _pattern = None

    def __init__(self):
        self._scripts = {}
        if UnicodeScripts._pattern is None:
            try:
                import regex
            except ImportError:
                raise ImportError("UnicodeScripts needs the regex package "
                                  "(pip install regex)") from None
            known = []
            for name in _SCRIPT_NAMES:
                try:
                    regex.compile(rf"\p{{Script={name}}}")
                except regex.error:
                    continue  # a script newer than the installed tables
                known.append(rf"(?P<{name}>\p{{Script={name}}})")
            UnicodeScripts._pattern = regex.compile("|".join(known))

    def _script(self, char):
        script = self._scripts.get(char)
        if script is None:
            if char == "\u30fc":
                script = "Han"
            elif char == " ":
                script = "Any"
            else:
                match = self._pattern.match(char)
                script = match.lastgroup if match else "Any"
                if script in ("Hiragana", "Katakana"):
                    script = "Han"
            self._scripts[char] = script
        return script

    def pre_tokenize(self, piece):
        text = piece.text
        cuts = []
        last = None
        for i, char in enumerate(text):
            script = self._script(char)
            if script != "Any" and last != "Any" and last != script:
                cuts.append(i)
            if script != "Any":
                last = script
        cuts.append(len(text))
        return [piece.slice(a, b) for a, b in zip(cuts, cuts[1:])]


def _apply_behavior(parts, behavior):
    """Hugging Face's split behaviours on ``((start, end), is_match)`` parts: the spans of
    the words."""
    if behavior == "removed":
        return [span for span, is_match in parts if not is_match]
    if behavior == "isolated":
        return [span for span, _ in parts]
    out = []
    previous = False
    if behavior == "contiguous":
        for span, is_match in parts:
            if out and is_match == previous:
                out[-1] = (out[-1][0], span[1])
            else:
                out.append(span)
            previous = is_match
        return out
    if behavior == "merged_with_previous":
        for span, is_match in parts:
            if is_match and not previous and out:
                out[-1] = (out[-1][0], span[1])
            else:
                out.append(span)
            previous = is_match
        return out
    for span, is_match in reversed(parts):  # merged_with_next
        if is_match and not previous and out:
            out[-1] = (span[0], out[-1][1])
        else:
            out.append(span)
        previous = is_match
    out.reverse()
    return out


class Split(PreTokenizer):
    r"""Split at the matches of ``pattern`` (a string, or a :class:`~embertext.tokenizers.Regex`),
    which are kept as ``behavior`` says (``"removed"``, ``"isolated"``,
    ``"merged_with_previous"``, ``"merged_with_next"``, ``"contiguous"``); with ``invert``
    the matches are the words and what lies between them the delimiters.

    Examples::

        >>> Split(Regex(r"\d+"), "isolated").pre_tokenize_str("ab12cd")
        [('ab', (0, 2)), ('12', (2, 4)), ('cd', (4, 6))]
    """

    def __init__(self, pattern, behavior, invert=False):
        if behavior not in _BEHAVIORS:
            raise ValueError(f"behavior must be one of {_BEHAVIORS}, got {behavior!r}")
        if isinstance(pattern, str):
            self._compiled = re.compile(re.escape(pattern))
        elif isinstance(pattern, Regex):
            self._compiled = pattern.compiled
        else:
            raise TypeError(f"pattern must be a str or a Regex, got {type(pattern).__name__}")
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert

    def pre_tokenize(self, piece):
        text = piece.text
        parts = []
        previous = 0
        for match in self._compiled.finditer(text):
            start, end = match.span()
            if start == end:
                continue
            if start > previous:
                parts.append(((previous, start), self.invert))
            parts.append(((start, end), not self.invert))
            previous = end
        if previous < len(text):
            parts.append(((previous, len(text)), self.invert))
        return [piece.slice(a, b) for a, b in _apply_behavior(parts, self.behavior) if b > a]

    def to_dict(self):
        pattern = ({"String": self.pattern} if isinstance(self.pattern, str)
                   else {"Regex": self.pattern.pattern})
        return {"type": "Split", "pattern": pattern, "behavior": _behavior_name(self.behavior),
                "invert": self.invert}


class Sequence(PreTokenizer):
    """Pre-tokenizers applied one after another, each to the words of the one before."""

    def __init__(self, pretokenizers):
        self.pretokenizers = list(pretokenizers)

    def pre_tokenize(self, piece):
        words = [piece]
        for pretokenizer in self.pretokenizers:
            words = [out for word in words for out in pretokenizer.pre_tokenize(word)]
        return words

    def to_dict(self):
        return {"type": "Sequence", "pretokenizers": [p.to_dict() for p in self.pretokenizers]}


def _behavior_name(behavior):
    return "".join(part.capitalize() for part in behavior.split("_"))


def _behavior_from_name(name):
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def from_dict(data):
    """The pre-tokenizer of a ``tokenizer.json`` entry."""
    if data is None:
        return None
    kind = data["type"]
    if kind == "ByteLevel":
        return ByteLevel(data.get("add_prefix_space", True), data.get("trim_offsets", True),
                         data.get("use_regex", True))
    if kind == "Sequence":
        return Sequence([from_dict(item) for item in data["pretokenizers"]])
    if kind == "Punctuation":
        return Punctuation(_behavior_from_name(data.get("behavior", "Isolated")))
    if kind == "Digits":
        return Digits(data.get("individual_digits", False))
    if kind == "CharDelimiterSplit":
        return CharDelimiterSplit(data["delimiter"])
    if kind == "Split":
        pattern = data["pattern"]
        pattern = pattern["String"] if "String" in pattern else Regex(pattern["Regex"])
        return Split(pattern, _behavior_from_name(data.get("behavior", "Isolated")),
                     data.get("invert", False))
    if kind == "Metaspace":
        return Metaspace(data.get("replacement", "\u2581"), data.get("prepend_scheme", "always"),
                         data.get("split", True))
    if kind == "FixedLength":
        return FixedLength(data.get("length", 5))
    simple = {"BertPreTokenizer": BertPreTokenizer, "Whitespace": Whitespace,
              "WhitespaceSplit": WhitespaceSplit, "UnicodeScripts": UnicodeScripts}
    if kind in simple:
        return simple[kind]()
    raise ValueError(f"unsupported pre-tokenizer type in tokenizer.json: {kind!r}")
