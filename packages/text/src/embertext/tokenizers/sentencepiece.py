"""SentencePiece models (``.model`` files) read and applied without the sentencepiece
package: the protobuf, the precompiled normalization map and Unigram segmentation (with byte
fallback), giving the ids and pieces sentencepiece gives."""

import struct

from embertext.tokenizers import _kernels

__all__ = ["SentencePieceProcessor"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_SPACE = "\u2581"
_UNK_PENALTY = 10.0


# -- protobuf ---------------------------------------------------------------------------

def _varint(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(data):
    """(field number, wire type, value) of a serialized protobuf message."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"not a SentencePiece model: protobuf wire type {wire}")
        if pos > end:
            raise ValueError("not a SentencePiece model: truncated protobuf")
        yield number, wire, value


def _parse_model(data):
    pieces, trainer, normalizer = [], {}, {}
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            piece, score, kind = "", 0.0, NORMAL
            for n, w, v in _fields(value):
                if n == 1:
                    piece = bytes(v).decode("utf-8")
                elif n == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif n == 3:
                    kind = v
            pieces.append((piece, score, kind))
        elif number == 2 and wire == 2:
            trainer = {n: v for n, _, v in _fields(value)}
        elif number == 3 and wire == 2:
            normalizer = {n: v for n, _, v in _fields(value)}
    if not pieces:
        raise ValueError("not a SentencePiece model: no pieces")
    return pieces, trainer, normalizer


# -- normalization ----------------------------------------------------------------------

class _CharsMap:
    """The precompiled normalization map: a darts-clone double-array trie over UTF-8 bytes
    whose values index NUL-terminated replacement strings."""

    def __init__(self, blob):
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        self.units = struct.unpack_from(f"<{trie_size // 4}I", blob, 4)
        self.strings = bytes(blob[4 + trie_size:])

    def shortest_prefix(self, key):
        """The replacement of the shortest entry that ``key`` starts with, or ``None`` (the
        lookup of Hugging Face's Precompiled normalizer)."""
        units = self.units
        unit = units[0]
        node = (unit >> 10) << ((unit & (1 << 9)) >> 6)
        for c in key:
            if c == 0:
                break
            node ^= c
            if node >= len(units):
                break
            unit = units[node]
            if (unit & ((1 << 31) | 0xFF)) != c:
                break
            node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            if (unit >> 8) & 1:
                offset = units[node] & ((1 << 31) - 1)
                end = self.strings.index(b"\0", offset)
                return self.strings[offset:end].decode("utf-8")
        return None

    def longest_prefix(self, key, start):
        """(length in bytes, replacement) of the longest entry that ``key[start:]`` starts
        with, or ``None``."""
        units = self.units
        unit = units[0]
        node = (unit >> 10) << ((unit & (1 << 9)) >> 6)
        best = None
        for i in range(start, len(key)):
            c = key[i]
            if c == 0:
                break
            node ^= c
            if node >= len(units):
                break
            unit = units[node]
            if (unit & ((1 << 31) | 0xFF)) != c:
                break
            node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            if (unit >> 8) & 1:
                best = (i + 1 - start, units[node] & ((1 << 31) - 1))
        if best is None:
            return None
        length, offset = best
        end = self.strings.index(b"\0", offset)
        return length, self.strings[offset:end].decode("utf-8")


def _utf8_length(lead):
    if lead < 0x80:
        return 1
    if lead >> 5 == 0b110:
        return 2
    if lead >> 4 == 0b1110:
        return 3
    return 4


class SentencePieceProcessor:
    r"""A SentencePiece Unigram model, with the methods of ``sentencepiece``'s processor.

    Args:
        model_file (str, optional): the ``.model`` file.
        model_proto (bytes, optional): its contents.

    Examples::

        >>> sp = SentencePieceProcessor(model_file="m.model")
        >>> sp.EncodeAsPieces("Hello world")
        ['▁Hello', '▁world']
    """

    def __init__(self, model_file=None, model_proto=None):
        if model_file is not None:
            self.Load(model_file)
        elif model_proto is not None:
            self.LoadFromSerializedProto(model_proto)

    def Load(self, model_file):
        with open(model_file, "rb") as f:
            self.LoadFromSerializedProto(f.read())

    def LoadFromSerializedProto(self, data):
        pieces, trainer, normalizer = _parse_model(memoryview(data).tobytes())
        model_type = trainer.get(3, 1)
        if model_type != 1:
            raise ValueError(f"only Unigram SentencePiece models are supported (model_type "
                             f"{model_type})")
        self._pieces = pieces
        self._byte_fallback = bool(trainer.get(35, 0))
        self._ids = {piece: i for i, (piece, _, kind) in enumerate(pieces)}
        self._unk_id = next((i for i, (_, _, k) in enumerate(pieces) if k == UNKNOWN), None)
        if self._unk_id is None:
            raise ValueError("the SentencePiece model has no unknown piece")
        charsmap = normalizer.get(2)
        self._charsmap = _CharsMap(charsmap) if charsmap else None
        self._add_dummy_prefix = bool(normalizer.get(3, 1))
        self._remove_extra_whitespaces = bool(normalizer.get(4, 1))
        self._escape_whitespaces = bool(normalizer.get(5, 1))
        scores = [s for _, s, k in pieces if k == NORMAL]
        self._unk_score = (min(scores) if scores else 0.0) - _UNK_PENALTY
        # The pieces that segmentation may use (user-defined ones score 0), for the compiled
        # Viterbi search.
        self._kernel = _kernels.UnigramKernel(
            [(piece, i, 0.0 if kind == USER_DEFINED else score)
             for i, (piece, score, kind) in enumerate(pieces)
             if kind in (NORMAL, USER_DEFINED) and piece], self._unk_score, True)
        self._cache = {}

    # -- normalization ------------------------------------------------------------------

    def _normalize_prefix(self, data, pos):
        if self._charsmap is not None:
            found = self._charsmap.longest_prefix(data, pos)
            if found is not None:
                return found
        length = _utf8_length(data[pos])
        return length, data[pos:pos + length].decode("utf-8", "replace")

    def normalize(self, text):
        """The text as the model sees it (▁ for spaces, a ▁ before it)."""
        data = text.encode("utf-8")
        pos = 0
        if self._remove_extra_whitespaces:
            while pos < len(data):
                length, out = self._normalize_prefix(data, pos)
                if out != " ":
                    break
                pos += length
        if pos >= len(data):
            return ""
        space = _SPACE if self._escape_whitespaces else " "
        out = [space] if self._add_dummy_prefix else []
        previous_space = self._remove_extra_whitespaces
        while pos < len(data):
            length, piece = self._normalize_prefix(data, pos)
            pos += length
            for char in piece:
                if char == " ":
                    if self._remove_extra_whitespaces and previous_space:
                        continue
                    previous_space = True
                    out.append(space)
                else:
                    previous_space = False
                    out.append(char)
        if self._remove_extra_whitespaces:
            while out and out[-1] == space:
                out.pop()
        return "".join(out)

    # -- segmentation -------------------------------------------------------------------

    def _segment(self, text):
        """Viterbi over the pieces: the (piece, id) list of highest total score."""
        pieces, unk = self._pieces, self._unk_id
        return [(pieces[index][0], index) if index is not None else (text[start:end], unk)
                for index, start, end in self._kernel.segment(text)]

    def _encode_word(self, text):
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        out = []
        for piece, index in self._segment(text):
            if index == self._unk_id:
                if self._byte_fallback:
                    out.extend((f"<0x{b:02X}>", self._ids[f"<0x{b:02X}>"])
                               for b in piece.encode("utf-8"))
                    continue
                if out and out[-1][1] == self._unk_id:
                    # A run of unknown characters is one unknown piece.
                    out[-1] = (out[-1][0] + piece, self._unk_id)
                    continue
            out.append((piece, index))
        if len(self._cache) < 100_000:
            self._cache[text] = out
        return out

    def _encode(self, text):
        return self._encode_word(self.normalize(text))

    def EncodeAsPieces(self, text):
        return [piece for piece, _ in self._encode(text)]

    def EncodeAsIds(self, text):
        return [index for _, index in self._encode(text)]

    def encode(self, input, out_type=int):
        """Ids (``out_type=int``) or pieces (``out_type=str``) of a text or a list of texts."""
        if isinstance(input, list):
            return [self.encode(text, out_type) for text in input]
        return self.EncodeAsIds(input) if out_type is int else self.EncodeAsPieces(input)

    def _piece_bytes(self, index):
        piece, _, kind = self._pieces[index]
        if kind == CONTROL:
            return b""
        if kind == BYTE:
            return bytes([int(piece[3:5], 16)])
        if kind == UNKNOWN:
            return " \u2047 ".encode("utf-8")
        return piece.replace(_SPACE, " ").encode("utf-8")

    def _text(self, data):
        text = data.decode("utf-8", "replace")
        if self._add_dummy_prefix and text.startswith(" "):
            text = text[1:]
        return text

    def DecodeIds(self, ids):
        """The text of ids: ▁ back to spaces, byte pieces back to bytes, control pieces
        left out."""
        return self._text(b"".join(self._piece_bytes(index) for index in ids))

    def DecodePieces(self, pieces):
        """The text of pieces, as :meth:`DecodeIds`; a piece the model does not have stays
        as it is (its ▁ too), as in sentencepiece."""
        return self._text(b"".join(
            self._piece_bytes(self._ids[piece]) if piece in self._ids else piece.encode("utf-8")
            for piece in pieces))

    def decode(self, ids):
        if ids and isinstance(ids[0], list):
            return [self.DecodeIds(x) for x in ids]
        return self.DecodeIds(ids)

    def GetPieceSize(self):
        return len(self._pieces)

    def get_piece_size(self):
        return len(self._pieces)

    def PieceToId(self, piece):
        return self._ids.get(piece, self._unk_id)

    def IdToPiece(self, index):
        return self._pieces[index][0]

    def GetScore(self, index):
        return self._pieces[index][1]

    def unk_id(self):
        return self._unk_id
