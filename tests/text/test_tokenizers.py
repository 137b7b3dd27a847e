"""embertext.tokenizers on hand-made vocabularies (tests/interop compares with Hugging Face)."""

import json

import pytest

from embertext.tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from embertext.tokenizers._unicode import OTHER_NUMBER_RANGES, bytes_to_unicode


def wordpiece_tokenizer():
    vocab = {t: i for i, t in enumerate(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", "world", ",",
         "!", "cafe", "中", "文", "##s"])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    return tokenizer


def test_bytes_to_unicode_is_gpt2s_map():
    table = bytes_to_unicode()
    assert len(set(table.values())) == 256
    assert table[ord("A")] == "A" and table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ"
    assert table[0] == "Ā"


def test_other_number_table_matches_unicodedata():
    import unicodedata

    listed = {c for a, b in OTHER_NUMBER_RANGES for c in range(a, b + 1)}
    for code in list(listed)[::7] + [0xB2, 0xBD, 0x2160, 0x32, 0x41]:
        assert (code in listed) == (unicodedata.category(chr(code)) in ("Nl", "No"))


def test_wordpiece_greedy_longest_match_and_unknowns():
    tokenizer = wordpiece_tokenizer()
    encoding = tokenizer.encode("Unaffable, HELLO wxrld!")
    assert encoding.tokens == ["[CLS]", "un", "##aff", "##able", ",", "hello", "[UNK]", "!",
                               "[SEP]"]
    assert encoding.offsets == [(0, 0), (0, 2), (2, 5), (5, 9), (9, 10), (11, 16), (17, 22),
                                (22, 23), (0, 0)]
    assert encoding.word_ids == [None, 0, 0, 0, 1, 2, 3, 4, None]
    assert encoding.special_tokens_mask == [1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert tokenizer.decode(encoding.ids) == "unaffable, hello!"
    assert tokenizer.decode(encoding.ids, skip_special_tokens=False) == (
        "[CLS] unaffable, hello [UNK]! [SEP]")
    model = models.WordPiece({"[UNK]": 0, "a": 1, "##a": 2}, max_input_chars_per_word=3)
    assert [t for _, t, _, _ in model.tokenize("aaaa")] == ["[UNK]"]
    assert [t for _, t, _, _ in model.tokenize("aaa")] == ["a", "##a", "##a"]


def test_bert_normalizer_cjk_accents_controls():
    normalizer = normalizers.BertNormalizer()
    assert normalizer.normalize_str("Héllo\tWORLD中\x00\u200b") == "hello world 中 "
    assert (normalizers.BertNormalizer(lowercase=False).normalize_str("Café")) == "Café"
    tokenizer = wordpiece_tokenizer()
    encoding = tokenizer.encode("中文Cafés")
    assert encoding.tokens[1:-1] == ["中", "文", "cafe", "##s"]
    assert encoding.offsets[1:-1] == [(0, 1), (1, 2), (2, 6), (6, 7)]


def test_pairs_truncation_and_padding():
    tokenizer = wordpiece_tokenizer()
    encoding = tokenizer.encode("hello world", "unaffable")
    assert encoding.tokens == ["[CLS]", "hello", "world", "[SEP]", "un", "##aff", "##able",
                               "[SEP]"]
    assert encoding.type_ids == [0, 0, 0, 0, 1, 1, 1, 1]
    assert encoding.sequence_ids == [None, 0, 0, None, 1, 1, 1, None]
    tokenizer.enable_truncation(6)
    encoding = tokenizer.encode("hello world", "unaffable")
    # 3 tokens for the pair's texts: the shorter one keeps 1, the longer 2.
    assert encoding.tokens == ["[CLS]", "hello", "[SEP]", "un", "##aff", "[SEP]"]
    tokenizer.enable_truncation(4, stride=1)
    encoding = tokenizer.encode("hello world , !")
    assert encoding.tokens == ["[CLS]", "hello", "world", "[SEP]"]
    assert [o.tokens for o in encoding.overflowing] == [
        ["[CLS]", "world", ",", "[SEP]"], ["[CLS]", ",", "!", "[SEP]"]]
    tokenizer.no_truncation()
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    batch = tokenizer.encode_batch(["hello", "hello world !"])
    assert batch[0].tokens == ["[CLS]", "hello", "[SEP]", "[PAD]", "[PAD]"]
    assert batch[0].attention_mask == [1, 1, 1, 0, 0]
    assert len(batch[1]) == 5
    tokenizer.enable_padding(direction="left", length=6)
    assert tokenizer.encode("hello").ids == [0, 0, 0, 2, 7, 3]
    tokenizer.enable_padding(pad_to_multiple_of=4)
    assert len(tokenizer.encode("hello world !")) == 8
    with pytest.raises(ValueError, match="strategy"):
        tokenizer.enable_truncation(4, strategy="middle")


def test_bpe_merges_by_rank_and_unknowns():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "<unk>": 6}
    model = models.BPE(vocab, [("b", "c"), ("a", "b"), ("a", "bc")], unk_token="<unk>")
    assert [t for _, t, _, _ in model.tokenize("abc")] == ["abc"]  # b c first, then a bc
    assert [t for _, t, _, _ in model.tokenize("abab")] == ["ab", "ab"]
    assert [(t, s, e) for _, t, s, e in model.tokenize("axxb")] == [
        ("a", 0, 1), ("<unk>", 1, 2), ("<unk>", 2, 3), ("b", 3, 4)]
    fused = models.BPE(vocab, [], unk_token="<unk>", fuse_unk=True)
    assert [(t, s, e) for _, t, s, e in fused.tokenize("axxb")] == [
        ("a", 0, 1), ("<unk>", 1, 3), ("b", 3, 4)]
    assert [t for _, t, _, _ in models.BPE(vocab, []).tokenize("axb")] == ["a", "b"]
    with pytest.raises(ValueError, match="not in the vocab"):
        models.BPE({"a": 0}, [("a", "a")])
    with pytest.raises(ValueError, match="dropout"):
        models.BPE(vocab, [], dropout=1.5)


def test_byte_level_bpe_offsets_and_decode():
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {c: i for i, c in enumerate(alphabet)}
    vocab["Ġh"] = len(vocab)
    vocab["Ġhi"] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab, [("Ġ", "h"), ("Ġh", "i")]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.post_processor = processors.ByteLevel()
    tokenizer.decoder = decoders.ByteLevel()
    encoding = tokenizer.encode("hi é")
    assert encoding.tokens == ["Ġhi", "Ġ", "Ã", "©"]
    # The two bytes of "é" both point at the character; a lone space token is trimmed empty.
    assert encoding.offsets == [(0, 2), (3, 3), (3, 4), (3, 4)]
    assert tokenizer.decode(encoding.ids) == " hi é"
    assert tokenizer.decode([vocab["Ã"]]) == "\ufffd"  # half a character


def test_added_tokens():
    tokenizer = wordpiece_tokenizer()
    assert tokenizer.add_special_tokens(["[MASK]"]) == 1
    assert tokenizer.add_tokens([AddedToken("<x>", lstrip=True)]) == 1
    assert tokenizer.token_to_id("[MASK]") == 15 and tokenizer.id_to_token(16) == "<x>"
    encoding = tokenizer.encode("hello[MASK] <x>world")
    assert encoding.tokens == ["[CLS]", "hello", "[MASK]", " <x>", "world", "[SEP]"]
    assert encoding.offsets[2:4] == [(5, 11), (11, 15)]
    assert tokenizer.decode(encoding.ids) == "hello <x> world"
    assert tokenizer.get_vocab_size() == 17
    assert tokenizer.get_vocab_size(with_added_tokens=False) == 15


def test_pretokenized_input():
    encoding = wordpiece_tokenizer().encode(["Hello", "unaffable!"], is_pretokenized=True)
    assert encoding.tokens[1:-1] == ["hello", "un", "##aff", "##able", "!"]
    assert encoding.word_ids[1:-1] == [0, 1, 1, 1, 1]
    assert encoding.offsets[1:-1] == [(0, 5), (0, 2), (2, 5), (5, 9), (9, 10)]
    with pytest.raises(TypeError):
        wordpiece_tokenizer().encode("a b", is_pretokenized=True)
    with pytest.raises(TypeError):
        wordpiece_tokenizer().encode(3)


def test_tokenizer_json_round_trip(tmp_path):
    tokenizer = wordpiece_tokenizer()
    tokenizer.add_special_tokens(["[MASK]"])
    tokenizer.enable_truncation(8, strategy="only_first")
    tokenizer.enable_padding(length=10)
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    data = json.loads(path.read_text())
    assert data["model"]["type"] == "WordPiece"
    assert data["padding"]["strategy"] == {"Fixed": 10}
    assert data["truncation"]["strategy"] == "OnlyFirst"
    loaded = Tokenizer.from_file(str(path))
    assert loaded.to_str() == tokenizer.to_str()
    text = "Unaffable, HELLO wörld! [MASK] cafes"
    assert loaded.encode(text).ids == tokenizer.encode(text).ids
    with pytest.raises(ValueError, match="unsupported model type"):
        Tokenizer.from_str(json.dumps({"model": {"type": "Mystery"}}))


def test_bpe_training_is_deterministic_and_respects_vocab_size():
    texts = ["low lower lowest", "new newer newest", "wide wider widest"] * 5

    def train(size):
        tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=size, special_tokens=["<unk>"],
                                      show_progress=False)
        tokenizer.train_from_iterator(texts, trainer)
        return tokenizer

    tokenizer = train(20)
    vocab = tokenizer.get_vocab()
    # <unk>, the 9 letters, then 10 merges.
    assert vocab["<unk>"] == 0 and len(vocab) == 20
    assert vocab == train(20).get_vocab()
    assert "".join(tokenizer.encode("lowest").tokens) == "lowest"
    # Every word is one token when merges may go on: 28 tokens in all.
    full = train(100)
    assert full.get_vocab_size() == 28
    assert full.encode("widest newer").tokens == ["widest", "newer"]
    assert tokenizer.encode("zz").tokens == ["<unk>", "<unk>"]


def test_template_processing():
    tokenizer = wordpiece_tokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    encoding = tokenizer.encode("hello", "world")
    assert encoding.tokens == ["[CLS]", "hello", "[SEP]", "world", "[SEP]"]
    assert encoding.type_ids == [0, 0, 0, 1, 1]
    assert tokenizer.encode("hello", add_special_tokens=False).tokens == ["hello"]
    with pytest.raises(ValueError, match="missing special token"):
        processors.TemplateProcessing(single="[X] $A", special_tokens=[])


def test_unigram_metaspace_and_graphemes():
    from embertext.tokenizers.normalizers import graphemes

    vocab = [("<unk>", 0.0), ("▁", -2.0), ("▁he", -3.0), ("llo", -3.0), ("▁hello", -4.5),
             ("h", -5.0), ("e", -5.0), ("l", -5.0), ("o", -5.0), ("▁w", -4.0), ("or", -4.0),
             ("ld", -4.0)] + [(f"<0x{b:02X}>", -1.0) for b in range(256)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    encoding = tokenizer.encode("hello world")
    assert encoding.tokens == ["▁hello", "▁w", "or", "ld"]
    assert encoding.offsets == [(0, 5), (5, 7), (7, 9), (9, 11)]
    assert tokenizer.decode(encoding.ids) == "hello world"
    # Unknown characters: one token for a run, or its bytes with byte_fallback.
    assert tokenizer.encode("hexyz").tokens == ["▁he", "xyz"]
    tokenizer.model = models.Unigram(vocab, unk_id=0, byte_fallback=True)
    encoding = tokenizer.encode("heé")
    assert encoding.tokens == ["▁he", "<0xC3>", "<0xA9>"]
    assert encoding.offsets[1:] == [(2, 3), (2, 3)]
    assert tokenizer.decode(encoding.ids) == "he<0xC3><0xA9>"
    data = json.loads(tokenizer.to_str())
    assert data["model"]["type"] == "Unigram" and data["pre_tokenizer"]["type"] == "Metaspace"
    assert Tokenizer.from_str(tokenizer.to_str()).encode("heé").ids == encoding.ids
    with pytest.raises(ValueError, match="unk_id"):
        models.Unigram(vocab, unk_id=999)
    assert pre_tokenizers.Metaspace(prepend_scheme="never").pre_tokenize_str("a b") == [
        ("a", (0, 1)), ("▁b", (1, 3))]
    assert graphemes("e\u0301a\r\n🇫🇷x") == [(0, 2), (2, 3), (3, 5), (5, 7), (7, 8)]


def test_sentencepiece_style_decoders():
    from embertext.tokenizers import decoders as d

    chain = d.Sequence([d.Replace("▁", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)])
    assert chain.decode(["▁Hi", "▁", "<0xE4>", "<0xB8>", "<0xAD>", "!"]) == "Hi 中!"
    assert d.ByteFallback().decode_chain(["<0xE4>", "x"]) == ["\ufffd", "x"]
    assert d.Strip("x", 2, 1).decode_chain(["xxxaxx", "x"]) == ["xax", ""]
    assert d.from_dict(chain.to_dict()).decode(["▁a", "▁b"]) == "a b"
    with pytest.raises(ValueError, match="pattern"):
        d.Replace("", "x")


def test_padding_sequence_ids_follow_the_post_processor():
    # Hugging Face tokenizers 0.23 (recorded): with no post-processor an encoding is one
    # sequence over all its tokens, padding included; any post-processor leaves padding None
    from embertext.tokenizers import Tokenizer, models, pre_tokenizers, processors

    def make(post):
        t = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[PAD]": 2}, unk_token="[PAD]"))
        t.pre_tokenizer = pre_tokenizers.Whitespace()
        t.post_processor = post
        t.enable_padding(pad_id=2, pad_token="[PAD]", length=4)
        return t

    plain, byte_level = make(None), make(processors.ByteLevel())
    assert plain.encode("a b").sequence_ids == [0, 0, 0, 0]
    assert plain.encode_batch(["a"])[0].sequence_ids == [0, 0, 0, 0]
    assert plain.encode("a", "b").sequence_ids == [0, 1, None, None]
    assert byte_level.encode("a b").sequence_ids == [0, 0, None, None]
    import pickle

    again = pickle.loads(pickle.dumps(plain.encode("a")))
    assert again.sequence_ids == [0, 0, 0, 0] and again._unranged
