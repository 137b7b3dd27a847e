"""Text that remembers where each of its characters came from in the original string."""


class Piece:
    """A string and, for each of its characters, the ``(start, end)`` span of the original
    text it came from (Python string indices). Normalizers and pre-tokenizers transform
    pieces, so that every token can report its offsets in the text the user passed."""

    __slots__ = ("text", "align")

    def __init__(self, text, align):
        self.text = text
        self.align = align

    @classmethod
    def from_text(cls, text, start=0):
        return cls(text, [(i, i + 1) for i in range(start, start + len(text))])

    def slice(self, start, end):
        return Piece(self.text[start:end], self.align[start:end])

    def map_chars(self, function):
        """Replace each character by ``function(char)`` (zero or more characters), which
        take the original span of the character they replace."""
        text, align = [], []
        for char, span in zip(self.text, self.align):
            out = function(char)
            text.append(out)
            align.extend([span] * len(out))
        return Piece("".join(text), align)

    def span(self, start, end):
        """The original span of characters ``start:end`` of this piece."""
        if start >= end:
            if not self.align:
                return (0, 0)
            position = self.align[start][0] if start < len(self.align) else self.align[-1][1]
            return (position, position)
        return (self.align[start][0], self.align[end - 1][1])

    def __repr__(self):
        return f"Piece({self.text!r})"
