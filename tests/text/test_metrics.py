"""embertext.data.metrics.bleu_score against hand-computed BLEU."""

import math

import pytest

from embertext.data.metrics import bleu_score


def test_docs_example_gives_torchtexts_number():
    candidates = [["My", "full", "pytorch", "test"], ["Another", "Sentence"]]
    references = [[["My", "full", "pytorch", "test"], ["Completely", "Different"]],
                  [["No", "Match"]]]
    # Precisions 4/6, 3/4, 2/2, 1/1, brevity penalty 1; float32 as in torchtext.
    assert bleu_score(candidates, references) == 0.8408964276313782
    expected = math.exp(0.25 * (math.log(4 / 6) + math.log(3 / 4)))
    assert bleu_score(candidates, references) == pytest.approx(expected, rel=1e-6)


def test_perfect_match_is_one_and_no_match_is_zero():
    sentence = ["the", "cat", "sat", "on", "the", "mat"]
    assert bleu_score([sentence], [[sentence]]) == pytest.approx(1.0, abs=1e-7)
    assert bleu_score([["a", "b"]], [[["c", "d"]]]) == 0.0


def test_clipping_and_brevity_penalty():
    # "the the the": unigram matches are clipped to the reference's count of "the" (2).
    candidate = [["the", "the", "the"]]
    references = [[["the", "cat", "the", "mat", "x"]]]
    score = bleu_score(candidate, references, max_n=1, weights=[1.0])
    assert score == pytest.approx(math.exp(1 - 5 / 3) * (2 / 3), rel=1e-6)


def test_closest_reference_length_and_union_of_references():
    candidate = [["a", "b", "c"]]
    references = [[["a", "b"], ["b", "c", "d", "e"]]]
    # Reference lengths 2 and 4 are equally close to 3: min() keeps the first (2): bp = 1.
    # Bigrams "a b" and "b c" each come from a different reference.
    score = bleu_score(candidate, references, max_n=2, weights=[0.5, 0.5])
    assert score == pytest.approx(1.0, rel=1e-6)


def test_bad_arguments():
    with pytest.raises(AssertionError, match="weights"):
        bleu_score([["a"]], [[["a"]]], max_n=2, weights=[1.0])
    with pytest.raises(AssertionError, match="same"):
        bleu_score([["a"], ["b"]], [[["a"]]])
