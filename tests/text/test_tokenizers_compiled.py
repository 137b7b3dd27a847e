"""The compiled tokenizer pipelines (embertext/tokenizers/_kernels.pyx) against the general
Python pipeline, batch encoding on threads, BPE dropout, Regex, Split and WordLevel."""

import random

import pytest

from embertext import tokenizers as et
from embertext.tokenizers import _kernels, models, normalizers, pre_tokenizers, processors

TEXTS = [
    "Hello world! It's the world's best; we're sure they'll say I'd've known.",
    "The café served crème brûlée; naïve coöperation.  Ångström",
    "中文字符和日本語のテキスト、한국어 문장도 있습니다。",
    "Emoji 😀😃 and flags 🇫🇷 with ZWJ 👩‍💻 sequences.",
    "  leading and trailing spaces  ", "tabs\tand\nnewlines\r\nand   runs   of spaces",
    "Numbers 123 4567 3.14159 2²½ Ⅻ and symbols $%^&*()_+-=[]{}|", "", " ", "'s 'x ''",
    "\u3000ideographic space\u00a0nbsp <mask> the<mask>end",
]
FIELDS = ["ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids"]


def assert_same(a, b):
    for field in FIELDS:
        assert getattr(a, field) == getattr(b, field), field


def byte_level(add_prefix_space, roberta):
    tokenizer = et.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    if roberta:
        tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    trainer = et.trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                     special_tokens=["<s>", "<pad>", "</s>"],
                                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(TEXTS * 3, trainer)
    tokenizer.add_special_tokens([et.AddedToken("<mask>", lstrip=True, special=True)])
    return tokenizer


def bert():
    tokenizer = et.Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = et.trainers.WordPieceTrainer(vocab_size=300, show_progress=False,
                                           special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    tokenizer.train_from_iterator(TEXTS * 3, trainer)
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer.add_special_tokens(["<mask>"])
    return tokenizer


def python_pipeline(tokenizer):
    """The same tokenizer through the general path (a Sequence is not compiled)."""
    other = et.Tokenizer.from_str(tokenizer.to_str())
    other.pre_tokenizer = pre_tokenizers.Sequence([other.pre_tokenizer])
    assert other._compiled_plan() is None
    return other


@pytest.mark.parametrize("make", [
    lambda: byte_level(False, False), lambda: byte_level(True, False),
    lambda: byte_level(True, True), bert])
def test_compiled_pipeline_matches_python(make):
    tokenizer = make()
    assert tokenizer._compiled_plan() is not None
    reference = python_pipeline(tokenizer)
    for text in TEXTS:
        assert_same(tokenizer.encode(text), reference.encode(text))
        assert_same(tokenizer.encode(text, "a pair of words"),
                    reference.encode(text, "a pair of words"))
    tokenizer.enable_truncation(6, stride=2)
    reference.enable_truncation(6, stride=2)
    for text in TEXTS:
        ours, theirs = tokenizer.encode(text), reference.encode(text)
        assert_same(ours, theirs)
        assert len(ours.overflowing) == len(theirs.overflowing)
        for a, b in zip(ours.overflowing, theirs.overflowing):
            assert_same(a, b)


def test_encode_batch_threads_give_the_same_encodings():
    tokenizer = byte_level(True, True)
    batch = [text * (i % 3 + 1) for i, text in enumerate(TEXTS * 12)]
    try:
        et.set_num_threads(1)
        assert et.get_num_threads() == 1
        single = tokenizer.encode_batch(batch)
        et.set_num_threads(2)
        double = tokenizer.encode_batch(batch)
        pairs = tokenizer.encode_batch([(a, b) for a, b in zip(batch, reversed(batch))])
    finally:
        et._tokenizer._threads["count"] = None
    assert len(single) == len(double) == len(batch)
    for a, b in zip(single, double):
        assert_same(a, b)
    for (a, b), encoding in zip(zip(batch, reversed(batch)), pairs):
        assert_same(encoding, tokenizer.encode(a, b))
    with pytest.raises(ValueError, match="positive"):
        et.set_num_threads(0)


def test_gpt2_split_matches_its_definition():
    assert _kernels.split_gpt2("Hello world's  \tfoo 123 é") == [
        (0, 5), (5, 11), (11, 13), (13, 15), (15, 16), (16, 19), (19, 23), (23, 25)]
    assert _kernels.split_gpt2("") == []
    assert _kernels.split_gpt2("   ") == [(0, 3)]
    assert _kernels.split_gpt2("a  ") == [(0, 1), (1, 3)]


def test_bpe_dropout_is_seeded_and_keeps_the_text():
    vocab = {c: i for i, c in enumerate("abcd")}
    merges = [("a", "b"), ("c", "d"), ("ab", "cd"), ("abcd", "abcd")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    word = "abcd" * 4
    full = models.BPE(vocab, merges).tokenize(word)
    assert [t for _, t, _, _ in full] == ["abcdabcd", "abcdabcd"]
    model = models.BPE(vocab, merges, dropout=0.5)
    random.seed(0)
    first = [model.tokenize(word) for _ in range(20)]
    random.seed(0)
    assert [model.tokenize(word) for _ in range(20)] == first
    assert len({tuple(t for _, t, _, _ in out) for out in first}) > 1
    for out in first:
        assert "".join(t for _, t, _, _ in out) == word
        assert [(s, e) for _, _, s, e in out] == [(s, s + len(t)) for _, t, s, _ in out]
    assert [t for _, t, _, _ in models.BPE(vocab, merges, dropout=1.0).tokenize("abcd")] == [
        "a", "b", "c", "d"]
    assert model.to_dict()["dropout"] == 0.5
    with pytest.raises(ValueError, match="dropout"):
        models.BPE(vocab, merges, dropout=-0.1)


def test_unigram_kernel_errors_and_ties():
    model = models.Unigram([("a", -1.0), ("b", -1.0), ("ab", -2.0)])
    # A tie: the segmentation reached first (from the earlier start) is kept.
    assert [t for _, t, _, _ in model.tokenize("ab")] == ["ab"]
    with pytest.raises(ValueError, match="without an unknown token"):
        model.tokenize("abc")


def test_regex_split_replace_and_word_level():
    assert pre_tokenizers.Split(et.Regex(r"\d+"), "isolated").pre_tokenize_str("ab12cd") == [
        ("ab", (0, 2)), ("12", (2, 4)), ("cd", (4, 6))]
    assert pre_tokenizers.Split("-", "removed", invert=False).pre_tokenize_str("a-b--c") == [
        ("a", (0, 1)), ("b", (2, 3)), ("c", (5, 6))]
    assert et.Regex(r"\p{L}+").compiled.findall("héllo 42 wörld") == ["héllo", "wörld"]
    assert et.Regex(r"[^\p{L}\s]+").compiled.findall("a1, b") == ["1,"]
    with pytest.raises(ValueError, match="not supported"):
        et.Regex(r"\p{Han}")
    with pytest.raises(ValueError, match="inside a character class"):
        et.Regex(r"[\P{L}]")
    with pytest.raises(ValueError, match="invalid pattern"):
        et.Regex("(")
    with pytest.raises(TypeError, match="str or a Regex"):
        pre_tokenizers.Split(3, "isolated")
    with pytest.raises(ValueError, match="behavior"):
        pre_tokenizers.Split("a", "dropped")
    replace = normalizers.Replace(et.Regex(r"\s+"), " ")
    assert replace.normalize_str("a \t\n b") == "a b"
    assert normalizers.from_dict(replace.to_dict()).normalize_str("x  y") == "x y"

    tokenizer = et.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = et.trainers.WordLevelTrainer(vocab_size=4, min_frequency=2,
                                           special_tokens=["[UNK]"])
    tokenizer.train_from_iterator(["b a c a b d", "c c"], trainer)
    assert tokenizer.get_vocab() == {"[UNK]": 0, "c": 1, "a": 2, "b": 3}
    encoding = tokenizer.encode("a zz c")
    assert encoding.tokens == ["a", "[UNK]", "c"] and encoding.offsets == [(0, 1), (2, 4), (5, 6)]
    loaded = et.Tokenizer.from_str(tokenizer.to_str())
    assert loaded.encode("a zz c").ids == encoding.ids


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
def test_compiled_unigram_metaspace_matches_python(scheme):
    pieces = [("<unk>", 0.0), ("▁", -2.0)] + [(c, -3.0) for c in "abcdehlorwé"] + [
        ("▁he", -2.5), ("llo", -2.0), ("▁hello", -3.0), ("▁wor", -4.0), ("ld", -2.0)]
    tokenizer = et.Tokenizer(models.Unigram(pieces, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
    tokenizer.add_special_tokens(["<mask>"])
    assert tokenizer._compiled_plan() is not None
    reference = python_pipeline(tokenizer)
    for text in ["hello world", " hello  world ", "hé<mask>llo", "hello zz world", "", " "]:
        assert_same(tokenizer.encode(text), reference.encode(text))
    batch = ["hello world", "xyz hello", "<mask> olé"] * 20
    for a, b in zip(tokenizer.encode_batch(batch), reference.encode_batch(batch)):
        assert_same(a, b)
