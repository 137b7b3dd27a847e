"""models.T5Transform on a SentencePiece .model file the test writes (the pieces of
test_sentencepiece_reader.py): ids, truncation, the end-of-sequence id and padding."""

import pytest

import ember
from embertext.models import T5Transform

from .test_sentencepiece_reader import PIECES, model_bytes


@pytest.fixture
def transform(tmp_path):
    path = tmp_path / "spm.model"
    path.write_bytes(model_bytes(PIECES))
    return T5Transform(str(path), max_seq_len=3, eos_idx=2, padding_idx=0)


def test_t5_transform(transform):
    assert transform.encode("hello world") == [6, 11, 12, 13]
    assert transform.encode(["hello", "he"]) == [[6], [4]]
    single = transform("hello world")
    # truncated to max_seq_len - 1 = 2, then the end-of-sequence id: 3 in all
    assert single.dtype == ember.long and single.tolist() == [6, 11, 2]
    batch = transform(["hello world", "he", ""])
    assert batch.tolist() == [[6, 11, 2], [4, 2, 0], [2, 0, 0]]
    assert transform.decode([6, 11, 12, 13]) == "hello world"
    assert transform.decode([[6], [4]]) == ["hello", "he"]


def test_t5_transform_bad_input(transform, tmp_path):
    with pytest.raises(TypeError, match="Input type not supported"):
        transform(3)
    with pytest.raises(TypeError, match="Input type not supported"):
        transform.decode("hello")
    with pytest.raises(FileNotFoundError):
        T5Transform(str(tmp_path / "missing.model"), 8, 1, 0)
