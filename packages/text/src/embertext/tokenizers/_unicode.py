"""Character classes as Hugging Face `tokenizers` (Rust) sees them, and GPT-2's byte map."""

import functools
import re
import unicodedata

# Rust's char::is_whitespace: the Unicode White_Space property (Python's str.isspace also
# takes the information separators U+001C..U+001F, which Rust does not).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE_CLASS = "".join(f"\\u{ord(c):04x}" for c in sorted(WHITESPACE))


def is_whitespace(char):
    return char in WHITESPACE


def is_punctuation(char):
    """BERT's punctuation: ASCII punctuation or a Unicode P* character."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_control(char):
    """BERT's control characters: Unicode C* but tab, newline and carriage return."""
    if char in "\t\n\r":
        return False
    return unicodedata.category(char).startswith("C")


def is_chinese_char(char):
    """The CJK Unified Ideograph blocks that BERT pads with spaces."""
    code = ord(char)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F
            or 0x2B820 <= code <= 0x2CEAF or 0xF900 <= code <= 0xFAFF
            or 0x2F800 <= code <= 0x2FA1F)


# The numbers (\\p{N}) that are not decimal digits (categories Nl and No: Roman numerals,
# "²", "½", ...), as code point ranges of the Unicode database of Python 3.11 (14.0). `re`
# counts them in \\w but not in \\d; tests/text/test_tokenizers_unicode.py checks the table.
OTHER_NUMBER_RANGES = (
    (0xB2, 0xB3), (0xB9, 0xB9), (0xBC, 0xBE), (0x9F4, 0x9F9), (0xB72, 0xB77), (0xBF0, 0xBF2),
    (0xC78, 0xC7E), (0xD58, 0xD5E), (0xD70, 0xD78), (0xF2A, 0xF33), (0x1369, 0x137C), (0x16EE,
    0x16F0), (0x17F0, 0x17F9), (0x19DA, 0x19DA), (0x2070, 0x2070), (0x2074, 0x2079), (0x2080,
    0x2089), (0x2150, 0x2182), (0x2185, 0x2189), (0x2460, 0x249B), (0x24EA, 0x24FF), (0x2776,
    0x2793), (0x2CFD, 0x2CFD), (0x3007, 0x3007), (0x3021, 0x3029), (0x3038, 0x303A), (0x3192,
    0x3195), (0x3220, 0x3229), (0x3248, 0x324F), (0x3251, 0x325F), (0x3280, 0x3289), (0x32B1,
    0x32BF), (0xA6E6, 0xA6EF), (0xA830, 0xA835), (0x10107, 0x10133), (0x10140, 0x10178),
    (0x1018A, 0x1018B), (0x102E1, 0x102FB), (0x10320, 0x10323), (0x10341, 0x10341), (0x1034A,
    0x1034A), (0x103D1, 0x103D5), (0x10858, 0x1085F), (0x10879, 0x1087F), (0x108A7, 0x108AF),
    (0x108FB, 0x108FF), (0x10916, 0x1091B), (0x109BC, 0x109BD), (0x109C0, 0x109CF), (0x109D2,
    0x109FF), (0x10A40, 0x10A48), (0x10A7D, 0x10A7E), (0x10A9D, 0x10A9F), (0x10AEB, 0x10AEF),
    (0x10B58, 0x10B5F), (0x10B78, 0x10B7F), (0x10BA9, 0x10BAF), (0x10CFA, 0x10CFF), (0x10E60,
    0x10E7E), (0x10F1D, 0x10F26), (0x10F51, 0x10F54), (0x10FC5, 0x10FCB), (0x11052, 0x11065),
    (0x111E1, 0x111F4), (0x1173A, 0x1173B), (0x118EA, 0x118F2), (0x11C5A, 0x11C6C), (0x11FC0,
    0x11FD4), (0x12400, 0x1246E), (0x16B5B, 0x16B61), (0x16E80, 0x16E96), (0x1D2E0, 0x1D2F3),
    (0x1D360, 0x1D378), (0x1E8C7, 0x1E8CF), (0x1EC71, 0x1ECAB), (0x1ECAD, 0x1ECAF), (0x1ECB1,
    0x1ECB4), (0x1ED01, 0x1ED2D), (0x1ED2F, 0x1ED3D), (0x1F100, 0x1F10C),
)
_OTHER_NUMBERS = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in OTHER_NUMBER_RANGES)


@functools.cache
def bytes_to_unicode():
    """GPT-2's map from the 256 byte values to printable characters (bytes that print as
    themselves keep their code point; the others get 256, 257, ...)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


@functools.cache
def unicode_to_bytes():
    return {char: byte for byte, char in bytes_to_unicode().items()}


_LETTER_RE = re.compile(rf"[^\W\d_{_OTHER_NUMBERS}]")
_NUMBER_RE = re.compile(rf"[\d{_OTHER_NUMBERS}]")


def char_flags(code):
    """The bits of the compiled character table (NOTE [ Character tables ] in _kernels.pyx)
    for one code point: 2 whitespace, 4 a letter and 8 a number of GPT-2's regex, 16 BERT's
    punctuation."""
    char = chr(code)
    flags = 0
    if char in WHITESPACE:
        flags |= 2
    elif _LETTER_RE.match(char):
        flags |= 4
    elif _NUMBER_RE.match(char):
        flags |= 8
    if is_punctuation(char):
        flags |= 16
    return flags


def _register():
    from embertext.tokenizers import _kernels

    _kernels.set_learner(char_flags)


_register()
