"""decoders.CTC and DecodeStream, normalizers.Nmt and ByteLevel, pre_tokenizers.FixedLength
and UnicodeScripts against Hugging Face `tokenizers`: the same outputs on multilingual
strings (and, for the normalizers, on every code point below U+3000), and tokenizer.json
files that load both ways and encode alike."""

import json

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")  # the interop session of CI has only ember

from test_text_tokenizers_hf import CORPUS, PROBES, assert_same, byte_level_bpe  # noqa: E402

from embertext import tokenizers as ember_tokenizers  # noqa: E402

ALL_CHARS = "".join(chr(c) for c in range(1, 0x3000) if not 0xD800 <= c < 0xE000)
CONTROLS = "a\u2581b\ufeff\ufffd\u200bc\x7f\x8f\x9f\x01\x0b\x1f\td\ne\rf\u2028g\u1680"


@pytest.mark.parametrize("name", ["Nmt", "ByteLevel"])
def test_normalizers(name):
    ours, theirs = getattr(ember_tokenizers.normalizers, name)(), getattr(hf.normalizers, name)()
    for text in PROBES + [ALL_CHARS, CONTROLS]:
        assert ours.normalize_str(text) == theirs.normalize_str(text)


def _word_level(lib, normalizer, pre_tokenizer):
    tokenizer = lib.Tokenizer(lib.models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizer(lib)
    tokenizer.pre_tokenizer = pre_tokenizer(lib)
    tokenizer.train_from_iterator(CORPUS, lib.trainers.WordLevelTrainer(
        special_tokens=["[UNK]"], show_progress=False))
    return tokenizer


PIPELINES = [
    (lambda lib: lib.normalizers.Nmt(), lambda lib: lib.pre_tokenizers.WhitespaceSplit()),
    (lambda lib: lib.normalizers.Sequence([lib.normalizers.Nmt(), lib.normalizers.ByteLevel()]),
     lambda lib: lib.pre_tokenizers.FixedLength(3)),
    (lambda lib: lib.normalizers.ByteLevel(), lambda lib: lib.pre_tokenizers.FixedLength(1)),
    (lambda lib: lib.normalizers.Lowercase(), lambda lib: lib.pre_tokenizers.FixedLength()),
]


@pytest.mark.parametrize("normalizer, pre_tokenizer", PIPELINES)
def test_pipelines_and_tokenizer_json(normalizer, pre_tokenizer):
    # Trained alike, the same ids and offsets (the normalizers' alignments) for every
    # probe; each library's tokenizer.json loads in the other and encodes the same.
    ours = _word_level(ember_tokenizers, normalizer, pre_tokenizer)
    theirs = _word_level(hf, normalizer, pre_tokenizer)
    assert ours.get_vocab() == theirs.get_vocab()
    from_ours, from_theirs = hf.Tokenizer.from_str(ours.to_str()), \
        ember_tokenizers.Tokenizer.from_str(theirs.to_str())
    assert json.loads(ours.to_str())["normalizer"] == json.loads(theirs.to_str())["normalizer"]
    assert json.loads(ours.to_str())["pre_tokenizer"] == json.loads(
        theirs.to_str())["pre_tokenizer"]
    for text in PROBES + [CONTROLS]:
        expected = theirs.encode(text)
        assert_same(ours.encode(text), expected)
        assert_same(from_theirs.encode(text), expected)
        assert_same(from_ours.encode(text), expected)


@pytest.mark.parametrize("length", [1, 2, 5, 7])
def test_fixed_length(length):
    ours = ember_tokenizers.pre_tokenizers.FixedLength(length)
    theirs = hf.pre_tokenizers.FixedLength(length)
    for text in PROBES:
        assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)


SCRIPT_TEXTS = ["Hello, world", " abc", "どこで生れ。Yes", "ーカタカナ中文", "abc 123 def",
                "a\u0301b", "   ", "x  y", "1a", "😀abc😀", "Ελληνικά και Русский текст",
                "हिन्दी और English", "ไทย ภาษา", "עברית abc", "한국어 中文 にほんご", "\ue000a"]


def test_unicode_scripts():
    pytest.importorskip("regex")
    ours = ember_tokenizers.pre_tokenizers.UnicodeScripts()
    theirs = hf.pre_tokenizers.UnicodeScripts()
    for text in PROBES + SCRIPT_TEXTS:
        assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)
    tokenizer = _word_level(hf, lambda lib: lib.normalizers.NFC(),
                            lambda lib: lib.pre_tokenizers.UnicodeScripts())
    loaded = ember_tokenizers.Tokenizer.from_str(tokenizer.to_str())
    assert isinstance(loaded.pre_tokenizer, ember_tokenizers.pre_tokenizers.UnicodeScripts)
    for text in PROBES + SCRIPT_TEXTS:
        assert_same(loaded.encode(text), tokenizer.encode(text))
    assert json.loads(loaded.to_str())["pre_tokenizer"] == {"type": "UnicodeScripts"}


CTC_TOKENS = [
    ["<pad>", "h", "h", "e", "l", "<pad>", "l", "o", "|", "|", "w", "o", "r", "l", "d", "<pad>"],
    ["a", "|", "?", "|", "n't", "|", "<pad>", "<pad>", "'s", "é", "é", "中", "|", "中"],
    ["x<pad>y", "|", "|a", "  ", "", " .", "do", " do not"],
    [],
]


@pytest.mark.parametrize("args", [(), ("<pad>", "|", False), ("[PAD]", " ", True)])
def test_ctc_decoder(args):
    ours, theirs = ember_tokenizers.decoders.CTC(*args), hf.decoders.CTC(*args)
    for tokens in CTC_TOKENS:
        assert ours.decode(tokens) == theirs.decode(tokens)


def test_ctc_decoder_in_tokenizer_json():
    vocab = {t: i for i, t in enumerate(["<pad>", "|", "h", "e", "l", "o", "w", "r", "d"])}
    theirs = hf.Tokenizer(hf.models.WordLevel(vocab, unk_token="<pad>"))
    theirs.decoder = hf.decoders.CTC()
    ours = ember_tokenizers.Tokenizer.from_str(theirs.to_str())
    assert isinstance(ours.decoder, ember_tokenizers.decoders.CTC)
    ids = [0, 2, 2, 3, 4, 0, 4, 5, 1, 6, 5, 7, 4, 8, 8, 0]
    assert ours.decode(ids) == theirs.decode(ids) == "hello world"
    assert json.loads(ours.to_str())["decoder"] == json.loads(theirs.to_str())["decoder"]


def _llama_like(lib):
    # Byte fallback: characters out of the vocabulary are <0xXX> tokens, so that a character
    # of several bytes is several tokens and DecodeStream must wait for the last one.
    tokenizer = lib.Tokenizer(lib.models.BPE(byte_fallback=True, unk_token="<unk>"))
    tokenizer.normalizer = lib.normalizers.Sequence([
        lib.normalizers.Prepend("\u2581"), lib.normalizers.Replace(" ", "\u2581")])
    tokenizer.decoder = lib.decoders.Sequence([
        lib.decoders.Replace("\u2581", " "), lib.decoders.ByteFallback(), lib.decoders.Fuse(),
        lib.decoders.Strip(" ", 1, 0)])
    trainer = lib.trainers.BpeTrainer(
        vocab_size=300, show_progress=False,
        special_tokens=["<unk>", "<s>"] + [f"<0x{b:02X}>" for b in range(256)])
    tokenizer.train_from_iterator([t for t in CORPUS if t.isascii()], trainer)
    return tokenizer


@pytest.mark.parametrize("kind", ["byte_level", "byte_fallback"])
@pytest.mark.parametrize("skip_special_tokens", [False, True])
def test_decode_stream(kind, skip_special_tokens):
    if kind == "byte_level":
        theirs = byte_level_bpe(hf)
    else:
        theirs = _llama_like(hf)
    ours = ember_tokenizers.Tokenizer.from_str(theirs.to_str())
    texts = PROBES + ["<s>中文 and <s> 😀 é", "ﬁ ① \u00e9\u0301 🇫🇷👩‍💻"]
    for text in texts:
        ids = theirs.encode(text).ids
        streams = [lib.decoders.DecodeStream(skip_special_tokens=skip_special_tokens)
                   for lib in (ember_tokenizers, hf)]
        a = [streams[0].step(ours, i) for i in ids]
        b = [streams[1].step(theirs, i) for i in ids]
        assert a == b, text
        # Steps of several ids, after a prompt given as context.
        if len(ids) > 3:
            streams = [lib.decoders.DecodeStream(ids[:2], skip_special_tokens)
                       for lib in (ember_tokenizers, hf)]
            chunks = [ids[k:k + 3] for k in range(2, len(ids), 3)]
            a = [streams[0].step(ours, c) for c in chunks]
            b = [streams[1].step(theirs, c) for c in chunks]
            assert a == b, text


def _padded_word_level(lib, processor):
    tokenizer = lib.Tokenizer(lib.models.WordLevel(
        {"a": 0, "b": 1, "[PAD]": 2, "[CLS]": 3, "[SEP]": 4}, unk_token="[PAD]"))
    tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    if processor is not None:
        tokenizer.post_processor = processor(lib.processors)
    tokenizer.enable_padding(pad_id=2, pad_token="[PAD]", length=6)
    return tokenizer


@pytest.mark.parametrize("processor", [
    None, lambda p: p.BertProcessing(("[SEP]", 4), ("[CLS]", 3)),
    lambda p: p.RobertaProcessing(("[SEP]", 4), ("[CLS]", 3)), lambda p: p.ByteLevel(),
    lambda p: p.TemplateProcessing(single="[CLS] $A", pair="[CLS] $A $B:1",
                                   special_tokens=[("[CLS]", 3)])],
    ids=["none", "bert", "roberta", "byte_level", "template"])
def test_sequence_ids_of_padding(processor):
    # without a post-processor, Hugging Face's padding belongs to sequence 0
    ours = _padded_word_level(ember_tokenizers, processor)
    theirs = _padded_word_level(hf, processor)
    for args, kwargs in [(("a b",), {}), (("a b",), {"add_special_tokens": False}),
                         (("a", "b"), {})]:
        assert_same(ours.encode(*args, **kwargs), theirs.encode(*args, **kwargs))
    batch = [("a",), ("a b a",), ("b", "a")]
    for a, b in zip(ours.encode_batch([x if len(x) == 2 else x[0] for x in batch]),
                    theirs.encode_batch([x if len(x) == 2 else x[0] for x in batch])):
        assert_same(a, b)
