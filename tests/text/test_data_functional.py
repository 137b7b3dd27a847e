"""embertext.data.functional."""

import pytest

from embertext.data.functional import (
    custom_replace,
    filter_wikipedia_xml,
    numericalize_tokens_from_iterator,
    simple_space_split,
    to_map_style_dataset,
)


def test_custom_replace_and_simple_space_split():
    transform = custom_replace([(r"S", "s"), (r"\s+", " ")])
    assert list(transform(["Sentencepiece encode  aS  pieces", "exampleS to   try!"])) == [
        "sentencepiece encode as pieces", "examples to try!"]
    assert list(simple_space_split(["a b", " c "])) == [["a", "b"], ["c"]]


def test_numericalize_tokens_from_iterator():
    vocab = {"Sentencepiece": 0, "encode": 1, "as": 2, "pieces": 3}
    ids = numericalize_tokens_from_iterator(
        vocab, simple_space_split(["Sentencepiece as pieces", "as pieces"]))
    assert [list(x) for x in ids] == [[0, 2, 3], [2, 3]]
    ids = numericalize_tokens_from_iterator(vocab, [["as", "encode", "as"]], removed_tokens=["as"])
    assert [list(x) for x in ids] == [[1]]


def test_filter_wikipedia_xml():
    lines = [
        "#REDIRECT [[Somewhere]]",
        "<page>",
        "The [[Cat|cats]] sat 2 days &amp; {{cite}} [[fr:Chat]] nights",
        "   ",
        "[[category:Felines|x]] Rock &lt;",
        "[[Category:Felines|x]] Rock",
    ]
    assert list(filter_wikipedia_xml(lines)) == [
        "the cats sat two days nights",
        # torchtext's rule writes "[[$1]]" literally: the brackets go, "1" is spelled out.
        "one rock",
        # The rules look for lowercase markup before letters are lowercased.
        "x rock",
    ]
    with pytest.raises(TypeError, match="iterator semantics"):
        list(filter_wikipedia_xml(3))


def test_to_map_style_dataset():
    dataset = to_map_style_dataset(iter([(1, "a"), (2, "b")]))
    assert len(dataset) == 2 and dataset[1] == (2, "b")
