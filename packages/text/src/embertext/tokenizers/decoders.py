"""Decoders: tokens back to text (the ``tokenizers.decoders`` of Hugging Face)."""

import re

from embertext.tokenizers import _unicode
from embertext.tokenizers._regex import Regex

__all__ = ["Decoder", "ByteLevel", "WordPiece", "Metaspace", "BPEDecoder", "ByteFallback",
           "Fuse", "Replace", "Strip", "CTC", "Sequence", "DecodeStream"]

_BYTE_TOKEN = re.compile(r"<0x([0-9A-F]{2})>")

_CLEANUPS = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
             (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"),
             (" 're", "'re")]


def cleanup(text):
    """Remove the spaces that tokenization put before punctuation and English contractions."""
    for before, after in _CLEANUPS:
        text = text.replace(before, after)
    return text


class Decoder:
    """The base of decoders: :meth:`decode` joins tokens into text."""

    def decode_chain(self, tokens):
        return list(tokens)

    def decode(self, tokens):
        return "".join(self.decode_chain(tokens))

    def to_dict(self):
        return {"type": type(self).__name__}


class ByteLevel(Decoder):
    """Byte-level tokens back to their bytes, decoded as UTF-8 (invalid bytes become
    U+FFFD)."""

    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def decode_chain(self, tokens):
        to_byte = _unicode.unicode_to_bytes()
        data = bytearray()
        for token in tokens:
            for char in token:
                byte = to_byte.get(char)
                if byte is None:
                    data.extend(char.encode("utf-8"))
                else:
                    data.append(byte)
        return [data.decode("utf-8", "replace")]

    def to_dict(self):
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


class WordPiece(Decoder):
    """WordPiece tokens back to words: pieces with ``prefix`` glued to the one before, the
    others after a space; ``cleanup`` removes spaces before punctuation."""

    def __init__(self, prefix="##", cleanup=True):
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens):
        out = []
        for i, token in enumerate(tokens):
            if i != 0:
                if token.startswith(self.prefix):
                    token = token[len(self.prefix):]
                else:
                    token = " " + token
            if self.cleanup:
                token = cleanup(token)
            out.append(token)
        return out

    def to_dict(self):
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


class Metaspace(Decoder):
    """``replacement`` (▁) back to spaces; in the first token they are dropped (the prefix
    the pre-tokenizer added), unless ``prepend_scheme`` is ``"never"``."""

    def __init__(self, replacement="\u2581", prepend_scheme="always", split=True):
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def decode_chain(self, tokens):
        out = []
        for i, token in enumerate(tokens):
            space = "" if i == 0 and self.prepend_scheme != "never" else " "
            out.append(token.replace(self.replacement, space))
        return out

    def to_dict(self):
        return {"type": "Metaspace", "replacement": self.replacement,
                "prepend_scheme": self.prepend_scheme, "split": self.split}


class BPEDecoder(Decoder):
    """Character-level BPE tokens back to words: ``suffix`` (the end of a word) becomes a
    space, and nothing after the last token."""

    def __init__(self, suffix="</w>"):
        self.suffix = suffix

    def decode_chain(self, tokens):
        last = len(tokens) - 1
        return [token.replace(self.suffix, "" if i == last else " ")
                for i, token in enumerate(tokens)]

    def to_dict(self):
        return {"type": "BPEDecoder", "suffix": self.suffix}


class ByteFallback(Decoder):
    """Runs of ``<0xXX>`` byte tokens (BPE / Unigram ``byte_fallback``) back to the text
    their bytes encode in UTF-8; a run that is not valid UTF-8 is one U+FFFD a byte."""

    def decode_chain(self, tokens):
        out, data, count = [], bytearray(), 0

        def flush():
            if count:
                try:
                    out.append(data.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend(["\ufffd"] * count)

        for token in tokens:
            match = _BYTE_TOKEN.fullmatch(token) if len(token) == 6 else None
            if match is None:
                flush()
                data, count = bytearray(), 0
                out.append(token)
            else:
                data.append(int(match.group(1), 16))
                count += 1
        flush()
        return out


class Fuse(Decoder):
    """All tokens joined into one."""

    def decode_chain(self, tokens):
        return ["".join(tokens)]


class Replace(Decoder):
    """Every match of ``pattern`` (a string or a :class:`~embertext.tokenizers.Regex`) in
    each token replaced by ``content`` (``Replace("▁", " ")`` for SentencePiece BPE)."""

    def __init__(self, pattern, content):
        if isinstance(pattern, Regex):
            self._compiled = pattern.compiled
        elif isinstance(pattern, str) and pattern:
            self._compiled = re.compile(re.escape(pattern))
        else:
            raise ValueError("Replace needs a non-empty string pattern or a Regex")
        self.pattern = pattern
        self.content = content

    def decode_chain(self, tokens):
        content = self.content
        return [self._compiled.sub(lambda _: content, token) for token in tokens]

    def to_dict(self):
        pattern = ({"Regex": self.pattern.pattern} if isinstance(self.pattern, Regex)
                   else {"String": self.pattern})
        return {"type": "Replace", "pattern": pattern, "content": self.content}


class Strip(Decoder):
    """Up to ``left`` characters ``content`` taken off the start of each token and up to
    ``right`` off its end."""

    def __init__(self, content=" ", left=0, right=0):
        self.content = content
        self.left = left
        self.right = right

    def decode_chain(self, tokens):
        out = []
        for token in tokens:
            start, stop = 0, len(token)
            while start < min(self.left, len(token)) and token[start] == self.content:
                start += 1
            while (len(token) - stop < self.right and stop > start
                   and token[stop - 1] == self.content):
                stop -= 1
            out.append(token[start:stop])
        return out

    def to_dict(self):
        return {"type": "Strip", "content": self.content, "start": self.left,
                "stop": self.right}


class CTC(Decoder):
    """The output of a CTC model (wav2vec2-style, one token per frame) back to text:
    repeated tokens merged, ``pad_token`` (the CTC blank) removed, ``word_delimiter_token``
    turned into spaces; ``cleanup`` also removes the spaces tokenization put before
    punctuation (as :class:`WordPiece` does).

    Examples::

        >>> CTC().decode(["<pad>", "h", "h", "e", "l", "<pad>", "l", "o", "|", "w"])
        'hello w'
    """

    def __init__(self, pad_token="<pad>", word_delimiter_token="|", cleanup=True):
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens):
        out = []
        previous = None
        for i, token in enumerate(tokens):
            if i and token == previous:
                continue
            previous = token
            text = token.replace(self.pad_token, "") if self.pad_token else token
            if self.cleanup:
                text = cleanup(text).replace(self.word_delimiter_token, " ")
            if text:
                out.append(text)
        return out

    def to_dict(self):
        return {"type": "CTC", "pad_token": self.pad_token,
                "word_delimiter_token": self.word_delimiter_token, "cleanup": self.cleanup}


class Sequence(Decoder):
    """Decoders applied one after another to the list of tokens."""

    def __init__(self, decoders):
        self.decoders = list(decoders)

    def decode_chain(self, tokens):
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens

    def to_dict(self):
        return {"type": "Sequence", "decoders": [d.to_dict() for d in self.decoders]}


def from_dict(data):
    """The decoder of a ``tokenizer.json`` entry."""
    if data is None:
        return None
    kind = data["type"]
    if kind == "ByteLevel":
        return ByteLevel(data.get("add_prefix_space", True), data.get("trim_offsets", True),
                         data.get("use_regex", True))
    if kind == "WordPiece":
        return WordPiece(data.get("prefix", "##"), data.get("cleanup", True))
    if kind == "Metaspace":
        return Metaspace(data.get("replacement", "\u2581"), data.get("prepend_scheme", "always"),
                         data.get("split", True))
    if kind == "Sequence":
        return Sequence([from_dict(item) for item in data["decoders"]])
    if kind == "BPEDecoder":
        return BPEDecoder(data.get("suffix", "</w>"))
    if kind == "ByteFallback":
        return ByteFallback()
    if kind == "Fuse":
        return Fuse()
    if kind == "Replace":
        pattern = data["pattern"]
        pattern = pattern["String"] if "String" in pattern else Regex(pattern["Regex"])
        return Replace(pattern, data["content"])
    if kind == "Strip":
        return Strip(data.get("content", " "), data.get("start", 0), data.get("stop", 0))
    if kind == "CTC":
        return CTC(data.get("pad_token", "<pad>"), data.get("word_delimiter_token", "|"),
                   data.get("cleanup", True))
    raise ValueError(f"unsupported decoder type in tokenizer.json: {kind!r}")


class DecodeStream:
    """Decode token ids one step at a time (streamed generation): :meth:`step` returns the
    text that the new ids add, or ``None`` while they end inside a character (a partial
    UTF-8 sequence, U+FFFD) or add nothing. Only a short window of ids is decoded each step,
    so that decoders that look at their neighbours (spaces of Metaspace, WordPiece's
    ``##``) give the same text as decoding everything at once.

    Args:
        ids (list of int, optional): ids already generated (a prompt): context, whose text
            is not returned (unless it ends inside a character).
        skip_special_tokens (bool): leave special tokens out of the text.

    Examples::

        >>> stream = DecodeStream(skip_special_tokens=True)
        >>> pieces = [stream.step(tokenizer, i) for i in tokenizer.encode("héllo").ids]
    """

    def __init__(self, ids=None, skip_special_tokens=False):
        self.skip_special_tokens = skip_special_tokens
        self.ids = [int(i) for i in ids] if ids is not None else []
        self.prefix = ""
        self.prefix_index = 0

    def step(self, tokenizer, id):
        """The new text after ``id`` (an int or a list of ints), or ``None``."""
        ids = [int(i) for i in id] if isinstance(id, (list, tuple)) else [int(id)]
        skip = self.skip_special_tokens
        if not self.prefix and self.ids:
            # The text so far (a prompt's, at the first step) is context, unless it ends
            # inside a character: then it is returned with the step that completes it.
            prefix = tokenizer.decode(self.ids, skip)
            if not prefix.endswith("\ufffd"):
                self.prefix = prefix
                self.prefix_index = len(self.ids)
        self.ids.extend(ids)
        text = tokenizer.decode(self.ids, skip)
        if len(text.encode("utf-8", "surrogatepass")) <= len(
                self.prefix.encode("utf-8", "surrogatepass")) or text.endswith("\ufffd"):
            return None
        if not text.startswith(self.prefix):
            raise ValueError("DecodeStream: the decoded text no longer starts with the text "
                             "decoded before (the decoder changed earlier characters)")
        new_text = text[len(self.prefix):]
        new_index = len(self.ids) - self.prefix_index
        self.ids = self.ids[self.prefix_index:]
        self.prefix = tokenizer.decode(self.ids, skip)
        self.prefix_index = new_index
        return new_text
