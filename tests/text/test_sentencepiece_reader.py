"""embertext.tokenizers.sentencepiece on .model files the test writes (protobuf by hand);
tests/interop compares it with the sentencepiece package on trained models."""

import struct

import pytest

from embertext.tokenizers.sentencepiece import SentencePieceProcessor


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 5:
        return key + payload
    return key + varint(len(payload)) + payload


def model_bytes(pieces, byte_fallback=False, add_dummy_prefix=True, model_type=1):
    data = b""
    for piece, score, kind in pieces:
        data += field(1, 2, field(1, 2, piece.encode()) + field(2, 5, struct.pack("<f", score))
                      + field(3, 0, kind))
    data += field(2, 2, field(3, 0, model_type) + field(35, 0, int(byte_fallback)))
    data += field(3, 2, field(1, 2, b"identity") + field(3, 0, int(add_dummy_prefix)))
    return data


PIECES = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("▁", -2.0, 1),
          ("▁he", -3.0, 1), ("llo", -3.0, 1), ("▁hello", -4.5, 1), ("h", -5.0, 1),
          ("e", -5.0, 1), ("l", -5.0, 1), ("o", -5.0, 1), ("▁w", -4.0, 1), ("or", -4.0, 1),
          ("ld", -4.0, 1)]


def test_unigram_viterbi_picks_the_best_segmentation():
    sp = SentencePieceProcessor(model_proto=model_bytes(PIECES))
    # "▁hello" (-4.5) beats "▁he" + "llo" (-6.0).
    assert sp.EncodeAsPieces("hello") == ["▁hello"]
    assert sp.EncodeAsIds("hello") == [6]
    assert sp.EncodeAsPieces("  hello   world ") == ["▁hello", "▁w", "or", "ld"]
    assert sp.encode(["hello", "he"], out_type=str) == [["▁hello"], ["▁he"]]
    assert sp.EncodeAsPieces("") == [] and sp.EncodeAsPieces("   ") == []
    assert sp.DecodeIds(sp.EncodeAsIds("  hello   world ")) == "hello world"
    assert sp.GetPieceSize() == 14 and sp.PieceToId("llo") == 5 and sp.IdToPiece(4) == "▁he"


def test_unknown_runs_merge_and_byte_fallback():
    sp = SentencePieceProcessor(model_proto=model_bytes(PIECES))
    assert sp.EncodeAsPieces("hexyz") == ["▁he", "xyz"]
    assert sp.EncodeAsIds("hexyz") == [4, 0]
    assert sp.DecodeIds([4, 0]) == "he \u2047 "
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    sp = SentencePieceProcessor(model_proto=model_bytes(PIECES + byte_pieces,
                                                        byte_fallback=True))
    assert sp.EncodeAsPieces("heé") == ["▁he", "<0xC3>", "<0xA9>"]
    assert sp.DecodeIds(sp.EncodeAsIds("heé")) == "heé"


def test_no_dummy_prefix_and_bad_files():
    sp = SentencePieceProcessor(model_proto=model_bytes(PIECES, add_dummy_prefix=False))
    assert sp.EncodeAsPieces("hello") == ["h", "e", "llo"]
    with pytest.raises(ValueError, match="only Unigram"):
        SentencePieceProcessor(model_proto=model_bytes(PIECES, model_type=2))
    with pytest.raises(ValueError, match="no unknown piece"):
        SentencePieceProcessor(model_proto=model_bytes(PIECES[1:]))
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencePieceProcessor(model_proto=b"\x0f\x01")
