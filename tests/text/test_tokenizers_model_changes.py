"""The compiled tables follow changes to a model's vocabulary and settings made after they
were compiled (NOTE [ Stale tables ] in models.py); tokenizers pickle after encoding."""

import pickle

from ._tokenizer_corpus import (
    TEXTS,
    byte_level,
    fields,
    python_pipeline,
    unigram,
    wordpiece,
)


def test_wordpiece_vocab_changed_in_place_is_seen():
    tokenizer = wordpiece()
    model = tokenizer.model
    text = "zzyzx zzyzx"
    before = tokenizer.encode(text)
    assert model.token_to_id("zzyzx") is None
    model.vocab["zzyzx"] = 1000
    after = tokenizer.encode(text)
    assert after.ids[1:3] == [1000, 1000] and after.tokens[1:3] == ["zzyzx", "zzyzx"]
    assert after.ids != before.ids
    assert tokenizer.encode_batch([text] * 70)[-1].ids == after.ids
    assert model.tokenize("zzyzx") == [(1000, "zzyzx", 0, 5)]
    assert model.id_to_token(1000) == "zzyzx"
    del model.vocab["zzyzx"]
    assert tokenizer.encode(text).ids == before.ids
    model.vocab.update({"zzyzx": 1001})
    assert tokenizer.encode(text).ids[1] == 1001
    model.vocab.pop("zzyzx")
    model.vocab.setdefault("zzyzx", 1002)
    assert tokenizer.encode(text).ids[1] == 1002


def test_wordpiece_settings_and_normalizer_changes_are_seen():
    tokenizer = wordpiece()
    text = "Hello WORLD worldhelloworld"  # the last word is longer than 12 characters
    before = tokenizer.encode(text)
    assert before.tokens[-2] == "[UNK]"
    tokenizer.model.max_input_chars_per_word = 100
    assert "[UNK]" not in tokenizer.encode(text).tokens
    assert tokenizer.encode(text).ids == python_pipeline(tokenizer).encode(text).ids
    tokenizer.normalizer.lowercase = False
    cased = tokenizer.encode(text)
    assert cased.ids == python_pipeline(tokenizer).encode(text).ids
    assert cased.ids != before.ids
    tokenizer.model.vocab = {"[UNK]": 0, "hello": 1}
    assert tokenizer.encode("hello there", add_special_tokens=False).ids == [1, 0]


def test_byte_level_vocab_and_merges_changed_in_place_are_seen():
    tokenizer = byte_level()
    model = tokenizer.model
    word = "Hello"
    before = tokenizer.encode(word)
    # Give the first token another id: the encoding follows.
    token = before.tokens[0]
    model.vocab[token] = 9999
    assert tokenizer.encode(word).ids[0] == 9999
    assert tokenizer.encode_batch([word] * 70)[0].ids[0] == 9999
    assert tokenizer.encode(word).tokens == before.tokens
    # A new merge of the whole word.
    pieces = tokenizer.encode(word).tokens
    while len(pieces) > 1:
        merged = pieces[0] + pieces[1]
        model.vocab.setdefault(merged, len(model.vocab) + 10000)
        model.merges.insert(0, (pieces[0], pieces[1]))
        pieces = [merged, *pieces[2:]]
    encoding = tokenizer.encode(word)
    assert encoding.tokens == [word] and encoding.ids == [model.vocab[word]]
    assert encoding.ids == python_pipeline(tokenizer).encode(word).ids


def test_unigram_pieces_changed_in_place_are_seen():
    tokenizer = unigram()
    model = tokenizer.model
    text = "Hello world"
    before = tokenizer.encode(text)
    assert before.tokens[-1] == "▁world"
    index = model.token_to_id("▁world")
    # The piece becomes much less likely: the segmentation changes.
    model.pieces[index] = (model.pieces[index][0], -1000.0)
    after = tokenizer.encode(text)
    assert after.tokens != before.tokens
    assert after.ids == python_pipeline(tokenizer).encode(text).ids
    model.pieces.append(("▁Hello", 0.0))
    assert tokenizer.encode(text).tokens[0] == "▁Hello"
    assert model.token_to_id("▁Hello") == len(model.pieces) - 1


def test_tokenizers_pickle_after_encoding():
    for make in (wordpiece, byte_level, unigram):
        tokenizer = make()
        expected = [fields(e) for e in tokenizer.encode_batch(TEXTS[:50])]
        copied = pickle.loads(pickle.dumps(tokenizer))
        assert [fields(e) for e in copied.encode_batch(TEXTS[:50])] == expected
        # The copy's vocabulary tells the copy, not the original.
        token = next(iter(copied.model.vocab))
        copied.model.vocab[token] = 77777
        assert tokenizer.model.vocab[token] != 77777
        assert [fields(e) for e in tokenizer.encode_batch(TEXTS[:50])] == expected
