"""embertext.tokenizers against Hugging Face `tokenizers`: the same training, ids, tokens,
offsets, masks and decoded text, and tokenizer.json files read both ways."""

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")  # the interop session of CI has only ember

from embertext import tokenizers as ember_tokenizers  # noqa: E402

CORPUS = [
    "Hello world! Hello there, how are you doing today?",
    "The café served crème brûlée; naïve coöperation.",
    "Ünïcödé accents: Ångström, façade, jalapeño, Œuvre.",
    "中文字符和日本語のテキスト、한국어 문장도 있습니다。",
    "Emoji 😀😃 and flags 🇫🇷 with ZWJ 👩‍💻 sequences.",
    "  leading and trailing spaces  ",
    "tabs\tand\nnewlines\r\nand   runs   of spaces",
    "It's the world's best; we're sure they'll say I'd've known.",
    "Numbers 123 4567 3.14159 2²½ Ⅻ and symbols $%^&*()_+-=[]{}|",
    "URLs like https://example.com/path?query=1&b=2 and emails a.b@c.org",
    "Mixed CASE words and UPPER lower Title Case",
    "Ελληνικά κείμενα και Русский текст тоже.",
    "عربى نص مع أرقام ١٢٣",
    "",
    " ",
] * 4

PROBES = CORPUS[:15] + [
    "unseen words: antidisestablishmentarianism zyzzyva",
    "special <s> tokens </s> in <mask> the text<pad>",
    "   ",
    "a",
    "🙂",
]

FIELDS = ["ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids"]


def assert_same(ours, theirs, overflowing=True):
    for field in FIELDS:
        assert list(getattr(ours, field)) == list(getattr(theirs, field)), field
    if not overflowing:
        # Hugging Face's overflowing windows of pairs hold overflowing windows of their own;
        # embertext's windows are flat.
        return
    assert len(ours.overflowing) == len(theirs.overflowing)
    for a, b in zip(ours.overflowing, theirs.overflowing):
        assert_same(a, b, overflowing=False)


def byte_level_bpe(lib, vocab_size=500, roberta=False):
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokenizer.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=roberta)
    tokenizer.decoder = lib.decoders.ByteLevel()
    if roberta:
        tokenizer.post_processor = lib.processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    else:
        tokenizer.post_processor = lib.processors.ByteLevel(trim_offsets=True)
    trainer = lib.trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
        initial_alphabet=lib.pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(CORPUS, trainer)
    if roberta:
        tokenizer.add_special_tokens([lib.AddedToken("<mask>", lstrip=True, special=True)])
    return tokenizer


def bert_wordpiece(lib, vocab_size=300):
    tokenizer = lib.Tokenizer(lib.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = lib.normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = lib.pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = lib.decoders.WordPiece()
    trainer = lib.trainers.WordPieceTrainer(
        vocab_size=vocab_size, show_progress=False,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tokenizer.train_from_iterator(CORPUS, trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = lib.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tokenizer


@pytest.fixture(scope="module")
def gpt2_pair():
    return byte_level_bpe(ember_tokenizers), byte_level_bpe(hf)


def test_byte_level_bpe_training_learns_the_same_vocab_and_merges(gpt2_pair):
    ours, theirs = gpt2_pair
    assert ours.get_vocab() == theirs.get_vocab()
    import json

    merges = [tuple(m) for m in json.loads(theirs.to_str())["model"]["merges"]]
    assert ours.model.merges == merges


def test_byte_level_bpe_encodes_and_decodes_the_same(gpt2_pair):
    ours, theirs = gpt2_pair
    for text in PROBES:
        a, b = ours.encode(text), theirs.encode(text)
        assert_same(a, b)
        assert ours.decode(a.ids) == theirs.decode(b.ids)
        assert ours.decode(a.ids, skip_special_tokens=False) == theirs.decode(
            b.ids, skip_special_tokens=False)


def test_vocab_json_and_merges_txt_give_the_same_ids(gpt2_pair, tmp_path):
    _, theirs = gpt2_pair
    vocab, merges = theirs.model.save(str(tmp_path))
    model = ember_tokenizers.models.BPE.from_file(vocab, merges)
    ours = ember_tokenizers.Tokenizer(model)
    ours.pre_tokenizer = ember_tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    ours.decoder = ember_tokenizers.decoders.ByteLevel()
    reference = hf.Tokenizer(hf.models.BPE.from_file(vocab, merges))
    reference.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    for text in PROBES:
        a, b = ours.encode(text), reference.encode(text)
        assert a.ids == b.ids and a.tokens == b.tokens and a.offsets == b.offsets
    written = ember_tokenizers.models.BPE.from_file(*model.save(str(tmp_path), "ours"))
    assert written.vocab == model.vocab and written.merges == model.merges


@pytest.fixture(scope="module")
def roberta_json(tmp_path_factory):
    tokenizer = byte_level_bpe(hf, roberta=True)
    path = tmp_path_factory.mktemp("roberta") / "tokenizer.json"
    tokenizer.save(str(path))
    return str(path)


def test_roberta_tokenizer_json_singles_pairs_and_batches(roberta_json):
    ours = ember_tokenizers.Tokenizer.from_file(roberta_json)
    theirs = hf.Tokenizer.from_file(roberta_json)
    for text in PROBES:
        assert_same(ours.encode(text), theirs.encode(text))
    pairs = list(zip(PROBES[::2], PROBES[1::2]))
    for first, second in pairs:
        assert_same(ours.encode(first, second), theirs.encode(first, second))
    for tokenizer in (ours, theirs):
        tokenizer.enable_padding(pad_id=1, pad_token="<pad>")
        tokenizer.enable_truncation(24)
    for a, b in zip(ours.encode_batch(PROBES), theirs.encode_batch(PROBES)):
        assert_same(a, b)
    for a, b in zip(ours.encode_batch(pairs), theirs.encode_batch(pairs)):
        assert_same(a, b)
    ids = [e.ids for e in theirs.encode_batch(PROBES)]
    assert ours.decode_batch(ids) == theirs.decode_batch(ids)


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
@pytest.mark.parametrize("direction", ["right", "left"])
def test_truncation_with_stride_and_overflow(roberta_json, strategy, direction):
    ours = ember_tokenizers.Tokenizer.from_file(roberta_json)
    theirs = hf.Tokenizer.from_file(roberta_json)
    for tokenizer in (ours, theirs):
        tokenizer.enable_truncation(16, stride=3, strategy=strategy, direction=direction)
    long_text, short_text = CORPUS[0] + " " + CORPUS[7], CORPUS[1]
    if strategy != "only_second":
        assert_same(ours.encode(long_text), theirs.encode(long_text))
    first, second = (long_text, "short") if strategy == "only_first" else (short_text, long_text)
    if strategy == "only_second":
        first = "short"
    assert_same(ours.encode(first, second), theirs.encode(first, second))


@pytest.mark.parametrize("padding", [
    {"length": 40}, {"direction": "left", "pad_id": 1, "pad_token": "<pad>"},
    {"pad_to_multiple_of": 8, "pad_type_id": 2},
])
def test_padding(roberta_json, padding):
    ours = ember_tokenizers.Tokenizer.from_file(roberta_json)
    theirs = hf.Tokenizer.from_file(roberta_json)
    for tokenizer in (ours, theirs):
        tokenizer.enable_padding(**padding)
    for a, b in zip(ours.encode_batch(PROBES[:6]), theirs.encode_batch(PROBES[:6])):
        assert_same(a, b)
    assert_same(ours.encode(PROBES[0]), theirs.encode(PROBES[0]))


@pytest.fixture(scope="module")
def bert_pair():
    theirs = bert_wordpiece(hf)
    return ember_tokenizers.Tokenizer.from_str(theirs.to_str()), theirs


def test_wordpiece_training_learns_a_vocab_of_the_same_size_and_alphabet():
    ours, theirs = bert_wordpiece(ember_tokenizers), bert_wordpiece(hf)
    # Hugging Face numbers the "##" pieces in the order of a hash map, which changes from
    # run to run, and its ties between equally frequent pairs follow those ids: only the size,
    # the special tokens and the alphabet are the same from run to run.
    ours_vocab, theirs_vocab = ours.get_vocab(), theirs.get_vocab()
    assert len(ours_vocab) == len(theirs_vocab)
    assert ({t: i for t, i in ours_vocab.items() if len(t) == 1 or t.startswith("[")}
            == {t: i for t, i in theirs_vocab.items() if len(t) == 1 or t.startswith("[")})
    assert bert_wordpiece(ember_tokenizers).get_vocab() == ours_vocab  # deterministic


def test_bert_wordpiece_encodes_and_decodes_the_same(bert_pair):
    ours, theirs = bert_pair
    for text in PROBES:
        a, b = ours.encode(text), theirs.encode(text)
        assert_same(a, b)
        assert ours.decode(a.ids) == theirs.decode(b.ids)
    for first, second in zip(PROBES[::2], PROBES[1::2]):
        assert_same(ours.encode(first, second), theirs.encode(first, second))
    words = ["Hello", "wörld!", "中文"]
    assert_same(ours.encode(words, is_pretokenized=True),
                theirs.encode(words, is_pretokenized=True))


def test_bert_vocab_txt(bert_pair, tmp_path):
    _, theirs = bert_pair
    (path,) = theirs.model.save(str(tmp_path))
    ours = ember_tokenizers.Tokenizer(ember_tokenizers.models.WordPiece.from_file(path))
    ours.normalizer = ember_tokenizers.normalizers.BertNormalizer()
    ours.pre_tokenizer = ember_tokenizers.pre_tokenizers.BertPreTokenizer()
    reference = hf.Tokenizer(hf.models.WordPiece.from_file(path))
    reference.normalizer = hf.normalizers.BertNormalizer()
    reference.pre_tokenizer = hf.pre_tokenizers.BertPreTokenizer()
    for text in PROBES:
        a, b = ours.encode(text), reference.encode(text)
        assert a.ids == b.ids and a.offsets == b.offsets


@pytest.mark.parametrize("options", [
    {"lowercase": False}, {"lowercase": False, "strip_accents": True},
    {"handle_chinese_chars": False}, {"clean_text": False},
])
def test_bert_normalizer_options(options):
    text = "Ünïcödé\x00\u200bcafé 中文\tX\ufffdY Ⅻ İstanbul"
    assert (ember_tokenizers.normalizers.BertNormalizer(**options).normalize_str(text)
            == hf.normalizers.BertNormalizer(**options).normalize_str(text))


def test_our_tokenizer_json_loads_in_hugging_face(gpt2_pair, bert_pair, tmp_path):
    for ours, _ in (gpt2_pair, bert_pair):
        ours.enable_truncation(20)
        ours.enable_padding(length=24)
        path = tmp_path / "tokenizer.json"
        ours.save(str(path))
        theirs = hf.Tokenizer.from_file(str(path))
        for text in PROBES:
            assert_same(ours.encode(text), theirs.encode(text))
        again = ember_tokenizers.Tokenizer.from_file(str(path))
        assert again.to_str() == ours.to_str()
        ours.no_truncation()
        ours.no_padding()


@pytest.mark.parametrize("name", ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"])
def test_simple_normalizers_with_offsets(name):
    ours = ember_tokenizers.Tokenizer(ember_tokenizers.models.WordPiece({"[UNK]": 0}))
    theirs = hf.Tokenizer(hf.models.WordPiece({"[UNK]": 0}))
    for lib, tokenizer in ((ember_tokenizers, ours), (hf, theirs)):
        normalizer = getattr(lib.normalizers, name)()
        tokenizer.normalizer = lib.normalizers.Sequence([lib.normalizers.NFD(), normalizer])
        tokenizer.pre_tokenizer = lib.pre_tokenizers.WhitespaceSplit()
    for text in ["ﬁve Ångström ÉCOLE x\u0301y", "Ⅻ ½ ﬀ İ ß"]:
        assert ours.normalizer.normalize_str(text) == theirs.normalizer.normalize_str(text)
        assert_same(ours.encode(text), theirs.encode(text))
