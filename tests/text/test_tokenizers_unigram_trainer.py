"""UnigramTrainer (EM + pruning as SentencePiece and Hugging Face train a Unigram model):
its steps against known values, and trained tokenizers that encode, decode and save.
The comparison with Hugging Face's trainer is tests/interop/test_text_unigram_trainer_hf.py."""

import math

import pytest

from embertext import tokenizers as et
from embertext.tokenizers import _unigram_training as training
from embertext.tokenizers import decoders, models, pre_tokenizers, trainers

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "she sells sea shells by the sea shore; the shells she sells are sea shells",
    "unbelievable unbelievably believable believer believing relieve",
    "Ünïcödé façade jalapeño — 中文字符和日本語のテキスト 한국어",
] * 3


def _tokenizer(**kwargs):
    tokenizer = et.Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    kwargs.setdefault("show_progress", False)
    tokenizer.train_from_iterator(CORPUS, trainers.UnigramTrainer(**kwargs))
    return tokenizer


def test_seed_pieces_are_characters_then_repeated_substrings():
    # The example of the reference's own unit test: characters by count (then code point,
    # both descending), then repeated substrings by occurrences x length.
    seeds = training.seed_pieces([("This is a", 1), ("こんにちは友達", 1)], 16)
    assert [p for p, _ in seeds] == ["s", "i", " ", "達", "友", "ん", "は", "に", "ち", "こ",
                                     "h", "a", "T", "is ", "s "]
    counts = [2, 2, 2] + [1] * 10 + [6, 4]
    for (_, score), count in zip(seeds, counts):
        assert score == pytest.approx(math.log(count / sum(counts)))


def test_repeated_substrings_are_the_suffix_tree_nodes():
    codes = [ord(c) for c in "abcab\0abd\0"]
    found = {("abcab\0abd\0"[s:s + n], count) for s, n, count in
             training._repeated_substrings(codes)}
    # "ab" thrice (followed by c, \0, d), "b" thrice, "\0" twice; "a" is always followed by b.
    assert ("ab", 3) in found and ("b", 3) in found and ("\0", 2) in found
    assert not any(text == "a" for text, _ in found)


def test_digamma():
    assert training.digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-9)
    assert training.digamma(10.5) == pytest.approx(2.3030010342976865, abs=1e-9)  # scipy.special


def test_em_raises_the_likelihood():
    words = [(w, 2) for text in CORPUS for w in text.split()]
    pieces = [("<UNK>", math.nan)] + training.seed_pieces(words, 16)
    objectives = []
    for _ in range(3):
        objective, expected = training.e_step(pieces, words)
        objectives.append(objective)
        pieces = training._m_step(pieces, expected)
    assert objectives[0] > objectives[1] > objectives[2]


def test_trained_unigram_tokenizer():
    # 51 characters and 66 pieces survive EM on this corpus (+ <unk>); 60 is reached.
    assert _tokenizer(vocab_size=90, unk_token="<unk>").get_vocab_size() == 67
    tokenizer = _tokenizer(vocab_size=60, special_tokens=["<pad>"], unk_token="<unk>")
    vocab = tokenizer.get_vocab()
    assert len(vocab) == 60
    assert vocab["<unk>"] == 0 and vocab["<pad>"] == 1  # unk added before the specials
    chars = {c for text in CORPUS for word, _ in
             tokenizer.pre_tokenizer.pre_tokenize_str(text) for c in word}
    assert chars <= set(vocab)
    pieces = tokenizer.model.pieces
    scores = [score for _, score in pieces[2:]]
    assert scores == sorted(scores, reverse=True) and all(s < 0 for s in scores)
    for text in CORPUS[:4]:
        assert tokenizer.decode(tokenizer.encode(text).ids) == text
    unseen = tokenizer.encode("unseen: ж")
    assert unseen.ids[-1] == 0 and unseen.offsets[-1] == (8, 9)
    again = et.Tokenizer.from_str(tokenizer.to_str())
    assert again.encode(CORPUS[1]).ids == tokenizer.encode(CORPUS[1]).ids
    assert isinstance(tokenizer.model, models.Unigram)


def test_unk_token_among_the_special_tokens_keeps_its_place():
    tokenizer = _tokenizer(vocab_size=60, special_tokens=["<s>", "<unk>"], unk_token="<unk>")
    assert tokenizer.model.unk_id == 1 and tokenizer.get_vocab_size() == 60
    assert _tokenizer(vocab_size=60).model.unk_id is None


def test_default_trainer_of_a_unigram_model():
    assert isinstance(trainers.trainer_for(models.Unigram()), trainers.UnigramTrainer)


def test_initial_alphabet_and_max_piece_length():
    tokenizer = _tokenizer(vocab_size=60, initial_alphabet=["ΩQ", "ж"], max_piece_length=3)
    vocab = tokenizer.get_vocab()
    assert "Ω" in vocab and "ж" in vocab and "Q" not in vocab
    assert max(len(p) for p in vocab) <= 3


@pytest.mark.parametrize("kwargs, error", [
    (dict(vocab_size=0), ValueError), (dict(shrinking_factor=1.5), ValueError),
    (dict(max_piece_length=0), ValueError), (dict(n_sub_iterations=0), ValueError),
    (dict(initial_alphabet=[3]), TypeError),
])
def test_bad_arguments(kwargs, error):
    with pytest.raises(error):
        trainers.UnigramTrainer(**kwargs)


def test_empty_corpus():
    # As the reference: the special tokens (and the unknown token) alone.
    tokenizer = et.Tokenizer(models.Unigram())
    tokenizer.train_from_iterator([], trainers.UnigramTrainer(
        vocab_size=10, special_tokens=["<s>"], unk_token="<unk>", show_progress=False))
    assert tokenizer.model.pieces == [("<unk>", 0.0), ("<s>", 0.0)]
    assert tokenizer.model.unk_id == 0


def test_only_unigram_models():
    with pytest.raises(TypeError, match="can only train a Unigram, got BPE"):
        et.Tokenizer(models.BPE()).train_from_iterator(
            ["ab"], trainers.UnigramTrainer(show_progress=False))


def test_vocabulary_smaller_than_the_alphabet():
    with pytest.raises(ValueError, match="not large enough to contain all chars"):
        _tokenizer(vocab_size=20)


def test_compiled_e_step_is_the_python_e_step():
    # Unknown characters (pieces left out) and several-byte characters included: the same
    # sums in the same order, so the same floats.
    words = [(w, 1 + i % 4) for i, w in enumerate(
        w for text in CORPUS for w in ("▁" + text).replace(" ", " ▁").split(" "))]
    pieces = [("<UNK>", math.nan)] + training.seed_pieces(words, 16)
    pieces = [p for p in pieces if "中" not in p[0] and "ö" not in p[0]]
    compiled = training.e_step(pieces, words)
    python = training.e_step_python(pieces, words)
    assert compiled[0] == python[0]
    assert compiled[1] == python[1]
    with pytest.raises(ValueError, match="unknown token"):
        training._kernels.UnigramKernel([("a", 1, -1.0)], -10.0, False).e_step(["a"], [1], 2, 0)
    with pytest.raises(ValueError, match="out of range"):
        training._kernels.UnigramKernel([("a", 5, -1.0)], -10.0, True).e_step(["a"], [1], 2, 0)
