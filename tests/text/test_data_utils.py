"""embertext.data.utils: get_tokenizer, ngrams_iterator, interleave_keys, RandomShuffler."""

import pickle
import random

import pytest

from embertext.data.utils import (
    RandomShuffler,
    dtype_to_attr,
    get_tokenizer,
    interleave_keys,
    is_tokenizer_serializable,
    ngrams_iterator,
)


def test_basic_english_docs_example():
    tokenizer = get_tokenizer("basic_english")
    assert tokenizer("You can now install TorchText using pip!") == [
        "you", "can", "now", "install", "torchtext", "using", "pip", "!"]


@pytest.mark.parametrize("text, expected", [
    ("It's", ["it", "'", "s"]),
    ('say "hi"', ["say", "hi"]),
    ("a.b,c(d)e!f?g", ["a", ".", "b", ",", "c", "(", "d", ")", "e", "!", "f", "?", "g"]),
    ("one;two:three", ["one", "two", "three"]),
    ("line<br />break", ["line", "break"]),
    ("  TABS\tand\nnewlines  ", ["tabs", "and", "newlines"]),
    ("", []),
    ("Ünïcode ÉTÉ", ["ünïcode", "été"]),
])
def test_basic_english_rules(text, expected):
    assert get_tokenizer("basic_english")(text) == expected


def test_basic_english_is_english_only():
    with pytest.raises(ValueError, match="only available for Enlish"):
        get_tokenizer("basic_english", language="de")


def test_none_is_str_split_and_callables_pass_through():
    assert get_tokenizer(None)(" a  b\tc ") == ["a", "b", "c"]

    def reverse(text):
        return text[::-1]

    assert get_tokenizer(reverse) is reverse


def test_unknown_tokenizer_name():
    with pytest.raises(ValueError, match="Requested tokenizer nope"):
        get_tokenizer("nope")


def test_tokenizers_pickle():
    tokenizer = pickle.loads(pickle.dumps(get_tokenizer("basic_english")))
    assert tokenizer("A.B") == ["a", ".", "b"]
    assert is_tokenizer_serializable("basic_english", "en")
    assert not is_tokenizer_serializable("spacy", "en")


def test_ngrams_iterator():
    assert list(ngrams_iterator(["here", "we", "are"], 2)) == [
        "here", "we", "are", "here we", "we are"]
    assert list(ngrams_iterator(["a", "b", "c"], 3)) == ["a", "b", "c", "a b", "b c", "a b c"]
    assert list(ngrams_iterator(["a"], 3)) == ["a"]
    assert list(ngrams_iterator([], 2)) == []


def test_interleave_keys():
    # 3 = 0b011, 5 = 0b101: bit pairs (a, b) from the top: 01 10 11.
    assert interleave_keys(3, 5) == 0b011011
    assert interleave_keys(0, 0) == 0
    assert interleave_keys(0xFFFF, 0) == int("10" * 16, 2)


def test_dtype_to_attr():
    import ember

    assert dtype_to_attr(ember.int32) == "int32"


def test_random_shuffler_is_reproducible_and_leaves_global_state():
    state = random.Random(7).getstate()
    data = list(range(20))
    random.seed(1)
    before = random.getstate()
    first = RandomShuffler(state)(data)
    assert random.getstate() == before
    assert sorted(first) == data and first != data
    assert RandomShuffler(state)(data) == first
    shuffler = RandomShuffler(state)
    assert shuffler(data) == first
    assert shuffler(data) != first  # the state moved on
