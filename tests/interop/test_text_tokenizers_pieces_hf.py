"""embertext.tokenizers against Hugging Face `tokenizers` for the pieces beyond BPE and
WordPiece: WordLevel and its trainer, Split and Replace with a Regex (GPT-4-style
pre-tokenization), BPE byte fallback and dropout."""

import json

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")

from test_text_tokenizers_hf import CORPUS, PROBES, assert_same  # noqa: E402

from embertext import tokenizers as et  # noqa: E402

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
PATTERNS = [r"\p{L}+", r"\s+", r"\d", r"'s|'t| ?\p{L}+| ?\p{N}+", r"[^\s\p{L}\p{N}]+",
            r"\P{L}"]
# The pre-tokenization regex of GPT-4 (cl100k) and Llama 3 tokenizer.json files.
GPT4 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
        r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_split_regex_behaviors(pattern):
    for behavior in BEHAVIORS:
        for invert in (False, True):
            ours = et.pre_tokenizers.Split(et.Regex(pattern), behavior, invert)
            theirs = hf.pre_tokenizers.Split(hf.Regex(pattern), behavior, invert)
            for text in PROBES:
                assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text), (
                    behavior, invert, text)


def test_split_string_pattern_and_json():
    ours = et.pre_tokenizers.Split(" ", "merged_with_previous")
    theirs = hf.pre_tokenizers.Split(" ", "merged_with_previous")
    for text in PROBES:
        assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)
    assert ours.to_dict() == json.loads(theirs.__getstate__())


def word_level(lib, normalizer=None):
    tokenizer = lib.Tokenizer(lib.models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    trainer = lib.trainers.WordLevelTrainer(vocab_size=60, min_frequency=2,
                                            special_tokens=["[UNK]", "[PAD]"])
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer


def test_word_level_training_and_encoding(tmp_path):
    ours, theirs = word_level(et), word_level(hf)
    assert ours.get_vocab() == theirs.get_vocab()
    for text in PROBES:
        assert_same(ours.encode(text), theirs.encode(text))
    path = tmp_path / "tokenizer.json"
    ours.save(str(path))
    loaded = hf.Tokenizer.from_file(str(path))
    for text in PROBES:
        assert_same(ours.encode(text), loaded.encode(text))
    model = et.models.WordLevel({"a": 0})
    with pytest.raises(ValueError, match="unknown token"):
        model.tokenize("b")


def test_replace_regex_normalizer_offsets():
    def build(lib):
        return lib.normalizers.Sequence([lib.normalizers.Replace(lib.Regex(r"\s+"), " "),
                                         lib.normalizers.Replace(lib.Regex(r"\p{N}+"), "#")])

    ours, theirs = build(et), build(hf)
    for text in PROBES:
        assert ours.normalize_str(text) == theirs.normalize_str(text)
    ours_tok, theirs_tok = word_level(et, build(et)), word_level(hf, build(hf))
    for text in PROBES:
        assert_same(ours_tok.encode(text), theirs_tok.encode(text))
    assert ours.to_dict() == json.loads(theirs.__getstate__())


def test_gpt4_style_tokenizer_json(tmp_path):
    tokenizer = hf.Tokenizer(hf.models.BPE())
    tokenizer.pre_tokenizer = hf.pre_tokenizers.Sequence([
        hf.pre_tokenizers.Split(hf.Regex(GPT4), "isolated"),
        hf.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = hf.decoders.ByteLevel()
    trainer = hf.trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                     initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(CORPUS, trainer)
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    ours = et.Tokenizer.from_file(str(path))
    for text in PROBES + ["It'S ALL'LL 12345678 x\r\n\r\n  y"]:
        assert_same(ours.encode(text), tokenizer.encode(text))
        assert ours.decode(ours.encode(text).ids) == tokenizer.decode(tokenizer.encode(text).ids)


def test_bpe_byte_fallback():
    vocab = {"a": 0, "<0x62>": 1, "<unk>": 2, "<0xC3>": 3, "<0xA9>": 4, "x": 5, "ax": 6}
    for fuse_unk in (False, True):
        ours = et.Tokenizer(et.models.BPE(vocab, [("a", "x")], unk_token="<unk>",
                                          byte_fallback=True, fuse_unk=fuse_unk))
        theirs = hf.Tokenizer(hf.models.BPE(vocab, [("a", "x")], unk_token="<unk>",
                                            byte_fallback=True, fuse_unk=fuse_unk))
        for text in ["abé xa", "axbb", "ééa", "zz", "😀ax"]:
            assert_same(ours.encode(text), theirs.encode(text))


def test_bpe_dropout_edges():
    vocab = {"a": 0, "b": 1, "ab": 2, "abb": 3}
    merges = [("a", "b"), ("ab", "b")]
    for dropout in (0.0, 1.0):
        ours = et.Tokenizer(et.models.BPE(vocab, merges, dropout=dropout))
        theirs = hf.Tokenizer(hf.models.BPE(vocab, merges, dropout=dropout))
        for text in ["abb", "ab", "babb"]:
            assert ours.encode(text).tokens == theirs.encode(text).tokens


def test_llama_style_byte_fallback_tokenizer_json(tmp_path):
    """SentencePiece-style BPE (Llama 2): ▁ for spaces in the normalizer, byte fallback, and
    the decoders Replace, ByteFallback, Fuse, Strip."""
    tokenizer = hf.Tokenizer(hf.models.BPE(unk_token="<unk>", fuse_unk=True))
    tokenizer.normalizer = hf.normalizers.Sequence([hf.normalizers.Prepend("▁"),
                                                    hf.normalizers.Replace(" ", "▁")])
    trainer = hf.trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                     special_tokens=["<unk>", "<s>", "</s>"])
    tokenizer.train_from_iterator(CORPUS[:8], trainer)
    data = json.loads(tokenizer.to_str())
    vocab = data["model"]["vocab"]
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    data["model"]["byte_fallback"] = True
    data["decoder"] = json.loads(hf.decoders.Sequence([
        hf.decoders.Replace("▁", " "), hf.decoders.ByteFallback(), hf.decoders.Fuse(),
        hf.decoders.Strip(" ", 1, 0)]).__getstate__())
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    theirs = hf.Tokenizer.from_file(str(path))
    ours = et.Tokenizer.from_file(str(path))
    for text in PROBES + ["Ελληνικά 😀 zyzzyva"]:
        a, b = ours.encode(text), theirs.encode(text)
        assert_same(a, b)
        assert ours.decode(a.ids) == theirs.decode(b.ids)
    assert ours.decoder.to_dict() == data["decoder"]


def test_bpe_decoder():
    tokens = ["he", "llo</w>", "wor", "ld</w>"]
    assert (et.decoders.BPEDecoder().decode(tokens)
            == hf.decoders.BPEDecoder().decode(tokens) == "hello world")


def test_char_delimiter_split():
    ours = et.pre_tokenizers.CharDelimiterSplit("a")
    theirs = hf.pre_tokenizers.CharDelimiterSplit("a")
    for text in PROBES + ["aaba", "a"]:
        assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)
    assert ours.to_dict() == json.loads(theirs.__getstate__())
    with pytest.raises(ValueError, match="one character"):
        et.pre_tokenizers.CharDelimiterSplit("ab")
