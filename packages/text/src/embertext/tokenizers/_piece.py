"""Text that remembers where each of its characters came from in the original string."""


class CharMap:
    """A per-character transform, remembered for every character seen: applied with
    ``str.translate`` (C speed), and the characters whose result is not one character are
    known, so that unchanged alignments are kept as they are."""

    __slots__ = ("function", "table", "resized")

    def __init__(self, function):
        self.function = function
        self.table = {}
        self.resized = set()

    def learn(self, text):
        chars = set(text)
        table = self.table
        for char in chars:
            code = ord(char)
            if code not in table:
                out = self.function(char)
                table[code] = out
                if len(out) != 1:
                    self.resized.add(char)
        return chars


class Piece:
    """A string and, for each of its characters, the ``(start, end)`` span of the original
    text it came from (Python string indices). Normalizers and pre-tokenizers transform
    pieces, so that every token can report its offsets in the text the user passed.

    The spans in ``align`` are relative to ``offset``; while no transform has changed
    lengths they are not stored: character ``i`` comes from ``offset + i`` (``align`` is
    ``None``)."""

    __slots__ = ("text", "align", "offset")

    def __init__(self, text, align, offset=0):
        self.text = text
        self.align = align
        self.offset = offset

    @classmethod
    def from_text(cls, text, start=0):
        return cls(text, None, start)

    def spans(self):
        """The span of every character, as a list."""
        offset = self.offset
        if self.align is None:
            return [(i, i + 1) for i in range(offset, offset + len(self.text))]
        if offset == 0:
            return self.align
        return [(a + offset, b + offset) for a, b in self.align]

    def slice(self, start, end):
        if self.align is None:
            return Piece(self.text[start:end], None, self.offset + start)
        return Piece(self.text[start:end], self.align[start:end], self.offset)

    def map_chars(self, charmap):
        """Replace each character by ``charmap.function(char)`` (zero or more characters),
        which take the original span of the character they replace."""
        chars = charmap.learn(self.text)
        text = self.text.translate(charmap.table)
        if not chars & charmap.resized:
            return Piece(text, self.align, self.offset)
        table = charmap.table
        align = []
        for char, span in zip(self.text, self.spans()):
            align.extend([span] * len(table[ord(char)]))
        return Piece(text, align)

    def prepend(self, prefix):
        """``prefix + text``; the prefix takes the span of the first character."""
        spans = self.spans()
        return Piece(prefix + self.text, [spans[0]] * len(prefix) + spans)

    def span(self, start, end):
        """The original span of characters ``start:end`` of this piece."""
        offset = self.offset
        if self.align is None:
            return (offset + start, offset + max(start, end))
        if start >= end:
            if not self.align:
                return (0, 0)
            position = self.align[start][0] if start < len(self.align) else self.align[-1][1]
            return (position + offset, position + offset)
        return (self.align[start][0] + offset, self.align[end - 1][1] + offset)

    def __repr__(self):
        return f"Piece({self.text!r})"
