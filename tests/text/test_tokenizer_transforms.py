"""The torchtext tokenizer transforms on small files written by the tests."""

import json

import pytest

from embertext.transforms import (
    BERTTokenizer,
    CharBPETokenizer,
    CLIPTokenizer,
    GPT2BPETokenizer,
    bytes_to_unicode,
)


@pytest.fixture
def gpt2_files(tmp_path):
    chars = list(bytes_to_unicode().values())
    merges = [("Ġ", "w"), ("o", "r"), ("Ġw", "or"), ("l", "d"), ("H", "i")]
    tokens = chars + ["".join(m) for m in merges]
    encoder = tmp_path / "encoder.json"
    encoder.write_text(json.dumps({t: i for i, t in enumerate(tokens)}))
    vocab = tmp_path / "vocab.bpe"
    vocab.write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    return str(encoder), str(vocab), {t: i for i, t in enumerate(tokens)}


def test_gpt2_bpe_tokenizer(gpt2_files):
    encoder, vocab, ids = gpt2_files
    tokens = GPT2BPETokenizer(encoder, vocab, return_tokens=True)
    assert tokens("Hi world") == ["Hi", "Ġwor", "ld"]
    assert tokens(["Hi", "é"]) == [["Hi"], ["Ã", "©"]]
    tokenizer = GPT2BPETokenizer(encoder, vocab)
    encoded = tokenizer("Hi world")
    assert encoded == [str(ids["Hi"]), str(ids["Ġwor"]), str(ids["ld"])]
    assert tokenizer.decode(encoded) == "Hi world"
    assert tokenizer.decode(tokenizer("héllo  wörld\n")) == "héllo  wörld\n"
    assert tokenizer.add_special_tokens({"eos_token": "<|endoftext|>"}) == 1
    assert tokenizer.add_special_tokens({"additional_special_tokens": ["<|endoftext|>"]}) == 0
    assert tokenizer("Hi<|endoftext|>")[-1] == str(len(ids))
    with pytest.raises(AssertionError, match="not in the special token list"):
        tokenizer.add_special_tokens({"nope": "x"})
    with pytest.raises(TypeError):
        tokenizer(3)


def test_clip_tokenizer_without_encoder(tmp_path):
    merges = tmp_path / "merges.bpe"
    merges.write_text("#version: 0.2\nh e\nl l\nhe ll\no</w> x\nhell o</w>\n")
    tokenizer = CLIPTokenizer(str(merges), return_tokens=True)
    # Lowercased; the last character of a word carries </w>; digits one by one.
    assert tokenizer("  HELLO hell, 42 ") == ["hello</w>", "he", "l", "l</w>", ",</w>",
                                              "4</w>", "2</w>"]
    ids = CLIPTokenizer(str(merges))("hello <|endoftext|>")
    # 512 byte tokens, then the merges in order (hello</w> is the 5th), then the specials;
    # as in torchtext, the empty line at the end of the file counts as a (sixth) merge.
    assert ids == [str(512 + 4), str(512 + 6 + 1)]
    only_two = CLIPTokenizer(str(merges), num_merges=2, return_tokens=True)
    assert only_two("hello") == ["he", "ll", "o</w>"]


def test_char_bpe_tokenizer(tmp_path):
    encoder = {"<unk>": 0, "l": 1, "o": 2, "w": 3, "lo": 4, "low</w>": 5, "w</w>": 6,
               "o</w>": 7, "<s>": 8}
    (tmp_path / "enc.json").write_text(json.dumps(encoder))
    (tmp_path / "merges.txt").write_text("#version\nl o\nlo w</w>\n")
    tokenizer = CharBPETokenizer(str(tmp_path / "enc.json"), str(tmp_path / "merges.txt"),
                                 unk_token="<unk>", suffix="</w>", special_tokens=["<s>"])
    # "lo" is "l" "o</w>" (no merge of those); "<s>" is never split.
    assert tokenizer("low lo <s>") == [5, 1, 7, 8]
    assert tokenizer(["lox"]) == [[4, 0]]
    assert tokenizer.decode([5, 4, 7]) == "low loo "
    assert tokenizer.vocab_size == 9
    with pytest.raises(RuntimeError, match="Unknown token"):
        CharBPETokenizer(str(tmp_path / "enc.json"), str(tmp_path / "merges.txt"),
                         unk_token="[UNK]")
    strict = CharBPETokenizer(str(tmp_path / "enc.json"), str(tmp_path / "merges.txt"),
                              suffix="</w>")
    with pytest.raises(KeyError):
        strict("lox")


@pytest.fixture
def bert_vocab(tmp_path):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", ",", "!", "how", "are",
              "you", "un", "##aff", "##able", "cafe", "Hello", "中", "[MASK]"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n")
    return str(path), {t: i for i, t in enumerate(tokens)}


def test_bert_tokenizer(bert_vocab):
    path, ids = bert_vocab
    tokenizer = BERTTokenizer(path, do_lower_case=True, return_tokens=True)
    assert tokenizer("Hello World, How are you!") == [
        "hello", "world", ",", "how", "are", "you", "!"]
    assert tokenizer(["Unaffable café", " 中x "]) == [["un", "##aff", "##able", "cafe"],
                                                      ["中", "[UNK]"]]
    cased = BERTTokenizer(path, do_lower_case=False, return_tokens=True)
    assert cased("Hello café") == ["Hello", "[UNK]"]
    accents = BERTTokenizer(path, do_lower_case=False, strip_accents=True, return_tokens=True)
    assert accents("cafè") == ["cafe"]
    never = BERTTokenizer(path, return_tokens=True, never_split=["[MASK]"])
    assert never("hello [MASK] world") == ["hello", "[MASK]", "world"]
    # Without never_split, "[MASK]" is "[", "mask", "]": none is in the vocabulary.
    unknown = str(ids["[UNK]"])
    assert BERTTokenizer(path)("hello [MASK]") == [str(ids["hello"]), unknown, unknown, unknown]
