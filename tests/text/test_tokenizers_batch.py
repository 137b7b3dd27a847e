"""Batch encoding without the GIL (NOTE [ Batches without the GIL ] in _kernels.pyx) and
the lazily made fields of compiled encodings (NOTE [ Lazy encodings ] in _encoding.pyx)."""

import copy
import multiprocessing
import pickle
import sys
import threading

import pytest

from embertext import tokenizers as et
from embertext.tokenizers import Encoding

from ._tokenizer_corpus import (
    COMPILED,
    FIELDS,
    KINDS,
    TEXTS,
    assert_same,
    built,
    fields,
    python_pipeline,
    with_threads,
)


@pytest.fixture(params=list(KINDS))
def kind(request):
    return request.param, built(request.param)


def test_compiled_plans_are_used():
    for name in COMPILED:
        assert built(name)._compiled_plan() is not None, name
    assert built("bpe")._compiled_plan() is None


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_encode_batch_equals_encode_in_a_loop(kind, threads):
    name, tokenizer = kind
    batch = with_threads(threads, tokenizer.encode_batch, TEXTS)
    assert len(batch) == len(TEXTS)
    for text, encoding in zip(TEXTS, batch):
        assert_same(encoding, tokenizer.encode(text))
    # Without special tokens, and as a generator.
    batch = with_threads(threads, tokenizer.encode_batch, iter(TEXTS[:80]), False, False)
    for text, encoding in zip(TEXTS[:80], batch):
        assert_same(encoding, tokenizer.encode(text, add_special_tokens=False))


@pytest.mark.parametrize("name", COMPILED)
def test_encode_batch_equals_the_python_pipeline(name):
    tokenizer = built(name)
    reference = python_pipeline(tokenizer)
    expected = reference.encode_batch(TEXTS)
    for threads in (1, 2, 4):
        for a, b in zip(with_threads(threads, tokenizer.encode_batch, TEXTS), expected):
            assert_same(a, b)


@pytest.mark.parametrize("name", COMPILED)
@pytest.mark.parametrize("settings", [(7, 0, "right"), (9, 3, "left"), (5, 2, "right")])
def test_truncated_batches_equal_the_python_pipeline(name, settings):
    # Truncation of single texts runs in the compiled plans (the overflowing windows too).
    tokenizer = et.Tokenizer.from_str(built(name).to_str())
    max_length, stride, direction = settings
    tokenizer.enable_truncation(max_length, stride, direction=direction)
    reference = python_pipeline(tokenizer)
    for add_special_tokens in (True, False):
        expected = reference.encode_batch(TEXTS, add_special_tokens=add_special_tokens)
        for threads in (1, 2):
            found = with_threads(threads, tokenizer.encode_batch, TEXTS, False,
                                 add_special_tokens)
            for a, b in zip(found, expected):
                assert_same(a, b)
    assert any(e.overflowing for e in expected)
    tokenizer.enable_padding(pad_id=1, pad_token="<pad>", length=12)
    reference.enable_padding(pad_id=1, pad_token="<pad>", length=12)
    for a, b in zip(with_threads(2, tokenizer.encode_batch, TEXTS),
                    reference.encode_batch(TEXTS)):
        assert_same(a, b)
    if tokenizer.num_special_tokens_to_add(False) > 1:
        tokenizer.enable_truncation(1, stride=0)
        with pytest.raises(ValueError, match="smaller than the number of special tokens"):
            tokenizer.encode_batch(TEXTS)
        assert tokenizer.encode_batch([]) == []
    tokenizer.enable_truncation(3, stride=3)
    with pytest.raises(ValueError, match="stride"):
        tokenizer.encode_batch(TEXTS, add_special_tokens=False)


@pytest.mark.parametrize("threads", [2, 4])
def test_pairs_truncation_and_padding_on_threads(kind, threads):
    name, tokenizer = kind
    texts = TEXTS[:96]
    pairs = [(a, b) for a, b in zip(texts, reversed(texts))]
    mixed = [pair if i % 3 else pair[0] for i, pair in enumerate(pairs)]
    tokenizer = et.Tokenizer.from_str(tokenizer.to_str())
    for setup in ["padding", "truncation", "both"]:
        tokenizer.no_padding()
        tokenizer.no_truncation()
        if setup in ("padding", "both"):
            tokenizer.enable_padding(pad_id=1, pad_token="<pad>", pad_to_multiple_of=8,
                                     direction="left" if setup == "both" else "right")
        if setup in ("truncation", "both"):
            tokenizer.enable_truncation(16, stride=2)
        for items in (texts, pairs, mixed):
            single = with_threads(1, tokenizer.encode_batch, items)
            many = with_threads(threads, tokenizer.encode_batch, items)
            assert len(single) == len(many) == len(items)
            for a, b in zip(single, many):
                assert_same(a, b)
        if setup == "truncation":
            for item, encoding in zip(mixed, many):
                assert_same(encoding, tokenizer.encode(*item) if isinstance(item, tuple)
                            else tokenizer.encode(item))


def test_batches_from_several_threads_at_once():
    tokenizer = built("wordpiece")
    expected = [fields(e) for e in with_threads(1, tokenizer.encode_batch, TEXTS)]
    failures = []

    def run():
        for _ in range(5):
            if [fields(e) for e in tokenizer.encode_batch(TEXTS)] != expected:
                failures.append(1)

    et.set_num_threads(2)
    try:
        workers = [threading.Thread(target=run) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        et._tokenizer._threads["count"] = None
    assert not failures


def _encode_in_child(connection):
    tokenizer = built("byte_level_bpe")
    et.set_num_threads(2)
    connection.send([e.ids for e in tokenizer.encode_batch(TEXTS)])
    connection.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_encode_batch_after_fork():
    tokenizer = built("byte_level_bpe")
    expected = [e.ids for e in with_threads(2, tokenizer.encode_batch, TEXTS)]
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    child = context.Process(target=_encode_in_child, args=(theirs,), daemon=True)
    child.start()
    try:
        assert ours.poll(60), "the child did not answer (waiting on the parent's threads?)"
        assert ours.recv() == expected
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()


def test_non_str_inputs_raise_as_before():
    tokenizer = built("wordpiece")
    with pytest.raises(TypeError, match="must be str"):
        tokenizer.encode_batch(["fine", 3])
    with pytest.raises(ValueError, match="tuple of two"):
        tokenizer.encode_batch(["fine", ("a", "b", "c")])
    with pytest.raises(TypeError, match="pre-tokenized"):
        tokenizer.encode_batch(["fine"], is_pretokenized=True)


# -- lazy fields ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", COMPILED)
def test_lazy_fields_equal_eager_ones(name):
    tokenizer = built(name)
    reference = python_pipeline(tokenizer)
    lazy = with_threads(2, tokenizer.encode_batch, TEXTS)
    eager = reference.encode_batch(TEXTS)
    for i, (a, b) in enumerate(zip(lazy, eager)):
        assert type(a) is Encoding
        assert len(a) == len(b)  # before any field is made
        order = FIELDS[i % len(FIELDS):] + FIELDS[:i % len(FIELDS)]
        for field in order:
            assert getattr(a, field) == getattr(b, field), (field, TEXTS[i])
        assert a.overflowing == [] and a.n_sequences == b.n_sequences
        assert a.words == b.words


@pytest.mark.parametrize("direction", ["right", "left"])
def test_lazy_padding_equals_eager_padding(direction):
    tokenizer = built("roberta")
    for text in TEXTS[:40]:
        unread, read = tokenizer.encode(text), tokenizer.encode(text)
        eager = Encoding(*fields(read).values())
        read.ids  # noqa: B018 (made: padded through the lists)
        n = len(eager)
        for encoding in (unread, read, eager):
            encoding.pad(n + 3, pad_id=1, pad_type_id=2, pad_token="<pad>",
                         direction=direction)
            encoding.pad(n + 1)  # long enough already: nothing changes
            assert len(encoding) == n + 3
        assert_same(unread, eager)
        assert_same(read, eager)
        unread = tokenizer.encode(text)
        eager = Encoding(*fields(tokenizer.encode(text)).values())
        for encoding in (unread, eager):
            encoding.pad(n + 2, direction=direction)
            encoding.pad(n + 4, pad_id=7, direction=direction)  # padded twice
        assert_same(unread, eager)


def test_lazy_fields_are_kept_and_can_be_set():
    tokenizer = built("wordpiece")
    encoding = tokenizer.encode("hello world <mask>")
    assert encoding.ids is encoding.ids
    encoding.ids.append(-1)
    assert encoding.ids[-1] == -1 and len(encoding) == len(encoding.tokens) + 1
    encoding.tokens = ["x"]
    assert encoding.tokens == ["x"]
    encoding.word_ids = None
    assert encoding.word_ids is None
    other = tokenizer.encode("hello world <mask>")
    assert other.tokens[-2] == "<mask>" and other.offsets[-2] == (12, 18)


def test_lazy_slice_merge_truncate_and_positions_equal_eager():
    tokenizer = built("byte_level_bpe")
    for text in TEXTS[:60]:
        lazy = tokenizer.encode(text)
        eager = Encoding(*fields(tokenizer.encode(text)).values())
        assert_same(lazy.slice(1, 4), eager.slice(1, 4))
        assert_same(Encoding.merge([lazy, tokenizer.encode(text)]), Encoding.merge([eager, eager]))
        for char in range(len(text) + 1):
            assert lazy.char_to_token(char) == eager.char_to_token(char)
        lazy, eager = tokenizer.encode(text), Encoding(*fields(tokenizer.encode(text)).values())
        lazy.truncate(3, stride=1)
        eager.truncate(3, stride=1)
        assert_same(lazy, eager)
        if len(eager):
            assert lazy.token_to_chars(0) == eager.token_to_chars(0)


@pytest.mark.parametrize("name", COMPILED)
def test_lazy_encodings_pickle_and_copy(name):
    tokenizer = built(name)
    for text in TEXTS[:30]:
        for made in (False, True):
            encoding = tokenizer.encode(text)
            if made:
                encoding.tokens  # noqa: B018
            expected = fields(tokenizer.encode(text))
            for copied in (pickle.loads(pickle.dumps(encoding)), copy.copy(encoding),
                           copy.deepcopy(encoding)):
                assert fields(copied) == expected
                assert copied._trimmed == encoding._trimmed


def test_encoding_from_the_old_pickle_state():
    # A pickle of the Python class Encoding was: no __dict__, the slots as a dict.
    old = Encoding.__new__(Encoding)
    old.__setstate__((None, {"ids": [5], "tokens": ["a"], "offsets": [(0, 1)],
                             "type_ids": [0], "attention_mask": [1],
                             "special_tokens_mask": [0], "word_ids": [0],
                             "sequence_ids": [0], "overflowing": [], "_trimmed": True}))
    assert old.ids == [5] and old.tokens == ["a"] and old._trimmed and len(old) == 1
