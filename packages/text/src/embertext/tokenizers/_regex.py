"""``Regex``: a regular expression of Hugging Face `tokenizers` (Oniguruma syntax) run by
Python's :mod:`re`, with the Unicode property classes (``\\p{L}``, ``\\p{N}``, ``\\P{...}``)
that :mod:`re` lacks written out as code-point ranges."""

import functools
import re
import unicodedata

__all__ = ["Regex"]

_PROPERTY = re.compile(r"\\([pP])\{\^?(\w+)\}|\\([pP])([A-Z])")
_CATEGORY_NAMES = {"Letter": "L", "Mark": "M", "Number": "N", "Punctuation": "P",
                   "Symbol": "S", "Separator": "Z", "Other": "C"}


@functools.cache
def _runs():
    """(category, first, last) runs of code points of one general category."""
    runs = []
    category = unicodedata.category
    current, start = category("\0"), 0
    for code in range(1, 0x110000):
        found = category(chr(code))
        if found != current:
            runs.append((current, start, code - 1))
            current, start = found, code
    runs.append((current, start, 0x10FFFF))
    return runs


@functools.cache
def ranges(category):
    """The code points whose general category starts with ``category``, as a character-class
    body of ranges."""
    parts = []
    for found, a, b in _runs():
        if found.startswith(category):
            if parts and parts[-1][1] == a - 1:
                parts[-1] = (parts[-1][0], b)
            else:
                parts.append((a, b))
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in parts)


def _category(name):
    name = _CATEGORY_NAMES.get(name, name)
    if not (1 <= len(name) <= 2 and name[0] in "LMNPSZC"):
        raise ValueError(f"Regex: the Unicode property \\p{{{name}}} is not supported (only "
                         "general categories such as L, Lu, N, Nd, P, S, Z, M, C)")
    return name


def translate(pattern):
    """``pattern`` for :mod:`re`: ``\\p{X}`` becomes a class of ranges (inside a class, the
    ranges join it; ``\\P{X}`` inside a class is not supported)."""
    out = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            match = _PROPERTY.match(pattern, i)
            if match is None:
                out.append(pattern[i:i + 2])
                i += 2
                continue
            kind = match.group(1) or match.group(3)
            name = _category(match.group(2) or match.group(4))
            negated = (kind == "P") != ("{^" in match.group(0))
            body = ranges(name)
            if in_class:
                if negated:
                    raise ValueError(f"Regex: {match.group(0)} inside a character class is "
                                     "not supported")
                out.append(body)
            else:
                out.append(f"[{'^' if negated else ''}{body}]")
            i = match.end()
            continue
        if char == "[" and not in_class:
            in_class = True
            out.append(char)
            i += 1
            # A "]" or "^]" right after the bracket is a literal.
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


# RE2's (and POSIX's) bracket classes, ASCII as in RE2, for use inside [...]
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_POSIX = re.compile(r"\[:(\^?)([a-z]+):\]")


def translate_re2(pattern):
    """An RE2 ``pattern`` (torchtext's C++ regexes) for :mod:`re`: its POSIX bracket classes
    (``[[:punct:]]``) written out, then :func:`translate`'s Unicode classes.

    Raises:
        ValueError: for an unknown or a negated (``[:^alpha:]``) bracket class.
    """
    def expand(match):
        negated, name = match.groups()
        if name not in _POSIX_CLASSES:
            raise ValueError(f"unknown character class [:{name}:] in {pattern!r}")
        if negated:
            raise ValueError(f"negated character class [:^{name}:] in {pattern!r} is not "
                             "supported")
        return _POSIX_CLASSES[name]

    return translate(_POSIX.sub(expand, pattern))


def re2_rewrite(replacement):
    """RE2's rewrite string as a function of a match for :func:`re.sub`: ``\\0`` is the match,
    ``\\1``-``\\9`` its groups, ``\\\\`` a backslash, all else literal (no ``\\n`` escapes).

    Raises:
        ValueError: for another backslash sequence, as RE2 refuses it.
    """
    parts, literal, i = [], [], 0
    while i < len(replacement):
        char = replacement[i]
        if char != "\\":
            literal.append(char)
            i += 1
            continue
        following = replacement[i + 1:i + 2]
        if following == "\\":
            literal.append("\\")
        elif following.isdigit():
            parts += ["".join(literal), int(following)]
            literal = []
        else:
            raise ValueError(f"invalid rewrite pattern: {replacement!r}")
        i += 2
    parts.append("".join(literal))
    return lambda match: "".join(p if isinstance(p, str) else match.group(p) or ""
                                 for p in parts)


class Regex:
    r"""A regular expression for :class:`~embertext.tokenizers.pre_tokenizers.Split` and
    :class:`~embertext.tokenizers.normalizers.Replace` (``tokenizers.Regex``).

    Args:
        pattern (str): the expression, in the syntax of Hugging Face `tokenizers`
            (Oniguruma): that of :mod:`re`, with ``\p{...}`` general categories.

    Examples::

        >>> Regex(r"\p{L}+").compiled.findall("héllo 42 wörld")
        ['héllo', 'wörld']
    """

    def __init__(self, pattern):
        if not isinstance(pattern, str):
            raise TypeError(f"Regex needs a str pattern, got {type(pattern).__name__}")
        self.pattern = pattern
        try:
            self.compiled = re.compile(translate(pattern))
        except re.error as error:
            raise ValueError(f"Regex: invalid pattern {pattern!r}: {error}") from None

    def __repr__(self):
        return f"Regex({self.pattern!r})"
