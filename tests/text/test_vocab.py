"""embertext.vocab: Vocab, vocab(), build_vocab_from_iterator (torchtext's behaviour)."""

import io
from collections import Counter, OrderedDict

import pytest

import ember
from embertext.vocab import Vocab, build_vocab_from_iterator, vocab


def test_vocab_factory_keeps_order_and_min_freq():
    v = vocab(OrderedDict([("b", 3), ("a", 1), ("c", 2)]), min_freq=2)
    assert v.get_itos() == ["b", "c"]
    assert v.get_stoi() == {"b": 0, "c": 1}
    assert len(v) == 2 and "b" in v and "a" not in v


def test_vocab_factory_specials():
    ordered = OrderedDict([("a", 5), ("<unk>", 9), ("b", 1)])
    v = vocab(ordered, specials=["<unk>", "<pad>"])
    assert v.get_itos() == ["<unk>", "<pad>", "a", "b"]
    assert "<unk>" not in ordered  # removed from the dict, as torchtext does
    v = vocab(OrderedDict([("a", 5)]), specials=["<unk>"], special_first=False)
    assert v.get_itos() == ["a", "<unk>"]


def test_docs_example():
    counter = Counter(["a", "a", "b", "b", "b"])
    v1 = vocab(OrderedDict(sorted(counter.items(), key=lambda x: x[1], reverse=True)))
    assert v1["a"] == 1
    with pytest.raises(RuntimeError, match="Token out of vocab not found and default index"):
        v1["out of vocab"]
    v2 = vocab(OrderedDict((t, 1) for t in ["e", "d", "c", "b", "a"]), specials=["<unk>"])
    v2.set_default_index(-1)
    assert v2["<unk>"] == 0 and v2["out of vocab"] == -1
    v2.set_default_index(v2["<unk>"])
    assert v2["zzz"] == 0 and v2.get_default_index() == 0
    v2.set_default_index(None)
    with pytest.raises(RuntimeError):
        v2["zzz"]


def test_build_vocab_from_iterator_sorts_by_frequency_then_token():
    data = [["b", "a", "c"], ["c", "b", "d"], ["a", "c"]]
    v = build_vocab_from_iterator(data)
    assert v.get_itos() == ["c", "a", "b", "d"]
    v = build_vocab_from_iterator(iter(data), min_freq=2, specials=["<unk>", "<pad>"])
    assert v.get_itos() == ["<unk>", "<pad>", "c", "a", "b"]
    v = build_vocab_from_iterator(data, specials=["<unk>"], max_tokens=3)
    assert v.get_itos() == ["<unk>", "c", "a"]
    v = build_vocab_from_iterator(data, specials=["<unk>"], special_first=False, max_tokens=2)
    assert v.get_itos() == ["c", "<unk>"]
    assert len(build_vocab_from_iterator([])) == 0
    with pytest.raises(AssertionError, match="entirely special"):
        build_vocab_from_iterator(data, specials=["<unk>"], max_tokens=1)


def test_lookups():
    v = vocab(OrderedDict([("a", 1), ("b", 1), ("c", 1)]))
    assert v(["c", "a"]) == [2, 0]
    assert v.lookup_indices(["b"]) == [1]
    assert v.lookup_token(2) == "c"
    assert v.lookup_tokens([0, 2]) == ["a", "c"]
    for bad in (3, -1):
        with pytest.raises(RuntimeError, match="out of bounds"):
            v.lookup_token(bad)
    with pytest.raises(RuntimeError, match="not found"):
        v.lookup_indices(["a", "zz"])
    v.set_default_index(7)
    assert v.lookup_indices(["a", "zz"]) == [0, 7]
    with pytest.raises(TypeError):
        v.set_default_index("a")


def test_insert_and_append():
    v = vocab(OrderedDict([("a", 1), ("b", 1), ("c", 1)]))
    v.insert_token("x", 1)
    assert v.get_itos() == ["a", "x", "b", "c"]
    assert v.get_stoi() == {"a": 0, "x": 1, "b": 2, "c": 3}
    v.insert_token("end", 4)
    v.append_token("last")
    assert v.get_itos()[-2:] == ["end", "last"] and v["last"] == 5
    with pytest.raises(RuntimeError, match="out of bounds"):
        v.insert_token("y", 7)
    with pytest.raises(RuntimeError, match="already exists in the Vocab with index: 0"):
        v.insert_token("a", 0)
    with pytest.raises(RuntimeError, match="already exists"):
        v.append_token("b")


def test_duplicate_specials_are_an_error():
    with pytest.raises(RuntimeError, match="Duplicate token"):
        vocab(OrderedDict([("a", 1)]), specials=["<s>", "<s>"])


def test_copies_are_copies():
    v = vocab(OrderedDict([("a", 1)]))
    v.get_itos().append("zz")
    v.get_stoi()["zz"] = 3
    assert len(v) == 1 and "zz" not in v


def test_save_and_load_round_trip():
    v = build_vocab_from_iterator([["x", "y", "y"]], specials=["<unk>"])
    v.set_default_index(0)
    buffer = io.BytesIO()
    ember.save(v, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer, weights_only=False)
    assert isinstance(loaded, Vocab)
    assert loaded.get_itos() == ["<unk>", "y", "x"] and loaded["nope"] == 0
