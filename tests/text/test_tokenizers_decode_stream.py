"""decoders.CTC and DecodeStream, normalizers.Nmt and ByteLevel, pre_tokenizers.FixedLength
and UnicodeScripts on known values (the comparison with Hugging Face is
tests/interop/test_text_tokenizers_more_hf.py)."""

import pytest

from embertext import tokenizers as et
from embertext.tokenizers import decoders, models, normalizers, pre_tokenizers


def test_ctc():
    tokens = ["<pad>", "h", "h", "e", "l", "<pad>", "l", "o", "|", "|", "w", "?", "<pad>"]
    assert decoders.CTC().decode(tokens) == "hello w?"
    assert decoders.CTC(cleanup=False).decode_chain(tokens) == ["h", "e", "l", "l", "o", "|",
                                                                "w", "?"]
    again = decoders.from_dict(decoders.CTC("[PAD]", "_", False).to_dict())
    assert (again.pad_token, again.word_delimiter_token, again.cleanup) == ("[PAD]", "_", False)


def test_nmt():
    nmt = normalizers.Nmt()
    assert nmt.normalize_str("a\tb\x01c\u200bd\ufeff\u2581e\x7f") == "a bc d  e"
    assert isinstance(normalizers.from_dict({"type": "Nmt"}), normalizers.Nmt)


def test_byte_level_normalizer_and_offsets():
    tokenizer = et.Tokenizer(models.WordLevel({"h": 0, "Ã": 1, "©": 2, "[UNK]": 3}, "[UNK]"))
    tokenizer.normalizer = normalizers.ByteLevel()
    tokenizer.pre_tokenizer = pre_tokenizers.FixedLength(1)
    assert normalizers.ByteLevel().normalize_str("hé 中") == "hÃ©Ġä¸Ń"
    encoding = tokenizer.encode("hé")
    assert encoding.ids == [0, 1, 2] and encoding.offsets == [(0, 1), (1, 2), (1, 2)]


def test_fixed_length():
    assert pre_tokenizers.FixedLength(3).pre_tokenize_str("héllo中文") == [
        ("hél", (0, 3)), ("lo中", (3, 6)), ("文", (6, 7))]
    assert pre_tokenizers.FixedLength().pre_tokenize_str("") == []
    assert pre_tokenizers.from_dict({"type": "FixedLength", "length": 2}).length == 2
    with pytest.raises(ValueError, match="length"):
        pre_tokenizers.FixedLength(0)


def test_unicode_scripts():
    pytest.importorskip("regex")
    scripts = pre_tokenizers.UnicodeScripts()
    assert scripts.pre_tokenize_str("Hello, world") == [("Hello", (0, 5)), (", ", (5, 7)),
                                                        ("world", (7, 12))]
    # Kana is Han; a leading space belongs to nothing and is dropped.
    assert scripts.pre_tokenize_str(" どこで生れ。Yes") == [("どこで生れ", (1, 6)),
                                                          ("。", (6, 7)), ("Yes", (7, 10))]
    assert scripts.pre_tokenize_str("Ελληνικά Русский") == [("Ελληνικά ", (0, 9)),
                                                           ("Русский", (9, 16))]
    assert scripts.pre_tokenize_str("   ") == []
    assert isinstance(pre_tokenizers.from_dict({"type": "UnicodeScripts"}),
                      pre_tokenizers.UnicodeScripts)


def _byte_fallback_tokenizer():
    vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, **{f"<0x{b:02X}>": 4 + b for b in range(256)}}
    tokenizer = et.Tokenizer(models.BPE(vocab, [], unk_token="<unk>", byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                           decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return tokenizer


def test_decode_stream_waits_for_whole_characters():
    tokenizer = _byte_fallback_tokenizer()
    ids = tokenizer.encode("a 中 b").ids  # 中: three byte tokens
    assert len(ids) == 8
    stream = decoders.DecodeStream()
    steps = [stream.step(tokenizer, i) for i in ids]
    assert steps == [None, "a", " ", None, None, "中", " ", "b"]
    assert "".join(s for s in steps if s) == tokenizer.decode(ids) == "a 中 b"
    # A prompt is context; ids may come several at a time.
    stream = decoders.DecodeStream(ids[:2])
    assert stream.step(tokenizer, ids[2:4]) is None
    assert stream.step(tokenizer, ids[4:]) == " 中 b"
