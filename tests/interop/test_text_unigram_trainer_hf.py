"""UnigramTrainer against Hugging Face `tokenizers`' UnigramTrainer: the same EM + pruning
algorithm on the same words gives the same set of pieces with the same scores (to 1e-9
relative: the reference sums floats in hash-map order), and the tokenizer.json it saves
encodes every probe as the reference does.

What may differ by design: the reference scores the characters that EM dropped at the
lowest score plus 1e-4 steps taken in hash-set order (embertext: code-point order), so those
scores agree only to that band and pieces of equal score can swap ids."""

import math
import random

import pytest

hf = pytest.importorskip("tokenizers")
pytest.importorskip("embertext")  # the interop session of CI has only ember

from test_text_tokenizers_hf import CORPUS, PROBES  # noqa: E402

from embertext import tokenizers as ember_tokenizers  # noqa: E402

EXTRA = [
    "the quick brown fox jumps over the lazy dog " * 3,
    "she sells sea shells by the sea shore; the shells she sells are sea shells",
    "unbelievable unbelievably believable believer believing relieve",
]


def _train(lib, corpus, pre_tokenizer="metaspace", **kwargs):
    tokenizer = lib.Tokenizer(lib.models.Unigram())
    if pre_tokenizer == "metaspace":
        tokenizer.pre_tokenizer = lib.pre_tokenizers.Metaspace()
        tokenizer.decoder = lib.decoders.Metaspace()
    else:
        tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    kwargs.setdefault("show_progress", False)
    tokenizer.train_from_iterator(corpus, lib.trainers.UnigramTrainer(**kwargs))
    return tokenizer


def _pieces(tokenizer):
    data = __import__("json").loads(tokenizer.to_str())
    return data["model"]["vocab"], data["model"]["unk_id"]


def _assert_same_pieces(ours, theirs):
    (a, unk_a), (b, unk_b) = _pieces(ours), _pieces(theirs)
    assert unk_a == unk_b
    assert len(a) == len(b)
    assert {p for p, _ in a} == {p for p, _ in b}
    scores = dict(b)
    # Characters that EM dropped come back at the lowest score plus 1e-4 steps, taken in
    # the reference's hash-set order: their scores agree to that band only.
    lowest = min(score for _, score in b if score != 0.0)
    band = 1e-4 * len(b)

    def penalized(piece, score):
        return len(piece) == 1 and score - lowest <= band

    for piece, score in a:
        tol = band if penalized(piece, scores[piece]) else 1e-9
        assert math.isclose(score, scores[piece], rel_tol=1e-9, abs_tol=tol), piece
    # Ids agree except among pieces of equal score (sorted in hash order there).
    for (pa, sa), (pb, sb) in zip(a, b):
        assert pa == pb or math.isclose(sa, sb, abs_tol=1e-12) or (
            penalized(pa, sa) and penalized(pb, sb))


CASES = [
    dict(vocab_size=300, special_tokens=["<unk>", "<s>"], unk_token="<unk>"),
    dict(vocab_size=200, special_tokens=["<pad>"], unk_token="<unk>"),  # unk added first
    dict(vocab_size=158, unk_token="<unk>"),  # as many as the characters: all pieces kept
    dict(vocab_size=200, shrinking_factor=0.5, n_sub_iterations=3, max_piece_length=6),
    dict(vocab_size=220, unk_token="<unk>", initial_alphabet=["q", "жx", "ö", "\u0915"]),
]


@pytest.mark.parametrize("kwargs", CASES)
def test_unigram_trainer_same_pieces_as_hf(kwargs):
    corpus = CORPUS + EXTRA
    ours = _train(ember_tokenizers, corpus, **kwargs)
    theirs = _train(hf, corpus, **kwargs)
    _assert_same_pieces(ours, theirs)
    # The trained tokenizer.json loads in the reference and encodes alike.
    loaded = hf.Tokenizer.from_str(ours.to_str())
    probes = PROBES + EXTRA if kwargs.get("unk_token") else CORPUS + EXTRA
    for text in probes:
        a, b = ours.encode(text), loaded.encode(text)
        assert a.ids == b.ids and a.offsets == b.offsets
        assert ours.decode(a.ids) == loaded.decode(b.ids)


def _synthetic_corpus(n_words=3000, n_texts=2000):
    rng = random.Random(0)
    syllables = ["ka", "to", "ri", "ne", "sha", "mo", "lu", "vi", "da", "xen", "пр", "ов", "中",
                 "文", "ü", "é", "qu", "ing", "tion", "er"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
             for _ in range(n_words)]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
            for _ in range(n_texts)]


def test_unigram_trainer_prunes_to_size_as_hf():
    # Thousands of distinct words: several pruning rounds down to exactly vocab_size.
    corpus = _synthetic_corpus()
    kwargs = dict(vocab_size=600, special_tokens=["<unk>"], unk_token="<unk>")
    ours = _train(ember_tokenizers, corpus, **kwargs)
    theirs = _train(hf, corpus, **kwargs)
    assert ours.get_vocab_size() == 600
    _assert_same_pieces(ours, theirs)
    loaded = hf.Tokenizer.from_str(ours.to_str())
    for text in corpus[:50]:
        assert ours.encode(text).ids == loaded.encode(text).ids


def test_unigram_trainer_whitespace_words_and_likelihood():
    corpus = CORPUS + EXTRA
    kwargs = dict(vocab_size=180, unk_token="[UNK]", special_tokens=["[UNK]"])
    ours = _train(ember_tokenizers, corpus, pre_tokenizer="whitespace", **kwargs)
    theirs = _train(hf, corpus, pre_tokenizer="whitespace", **kwargs)
    _assert_same_pieces(ours, theirs)
    # The corpus log-likelihood under each model's Viterbi segmentation is the same.
    ll = []
    for tokenizer in (ours, hf.Tokenizer.from_str(theirs.to_str())):
        scores = dict(_pieces(tokenizer)[0])
        ll.append(sum(scores[t] for text in corpus for t in tokenizer.encode(text).tokens))
    assert ll[0] == pytest.approx(ll[1], rel=1e-9)


def test_unigram_trainer_too_small_for_the_characters():
    for lib in (ember_tokenizers, hf):
        with pytest.raises(Exception, match="not large enough to contain all chars"):
            _train(lib, CORPUS + EXTRA, vocab_size=157)
