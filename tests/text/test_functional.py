"""embertext.functional: to_tensor, truncate, add_token, str_to_int."""

import numpy as np
import pytest

import ember
from embertext import functional as F


def test_to_tensor():
    t = F.to_tensor([1, 2, 3])
    assert t.dtype == ember.int64 and t.tolist() == [1, 2, 3]
    # A single sequence is int64 whatever dtype says, as in torchtext 0.18.
    assert F.to_tensor([1, 2], dtype=ember.int32).dtype == ember.int64
    t = F.to_tensor([[1, 2], [3, 4]], dtype=ember.int32)
    assert t.dtype == ember.int32 and t.tolist() == [[1, 2], [3, 4]]
    t = F.to_tensor([[1, 2, 3], [4], []], padding_value=-1)
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, -1, -1], [-1, -1, -1]])
    assert t.dtype == ember.int64
    assert tuple(F.to_tensor([]).shape) == (0,)
    with pytest.raises(TypeError, match="Input type not supported"):
        F.to_tensor((1, 2))
    with pytest.raises(TypeError):
        F.to_tensor(["a"])


def test_truncate():
    assert F.truncate([1, 2, 3], 2) == [1, 2]
    assert F.truncate(["a", "b"], 5) == ["a", "b"]
    assert F.truncate([[1, 2, 3], [4]], 2) == [[1, 2], [4]]
    assert F.truncate([["a", "b", "c"]], 0) == [[]]
    with pytest.raises(TypeError):
        F.truncate([1, "a"], 1)


def test_add_token():
    assert F.add_token([1, 2], 0) == [0, 1, 2]
    assert F.add_token([1, 2], 9, begin=False) == [1, 2, 9]
    assert F.add_token(["a"], "<s>") == ["<s>", "a"]
    assert F.add_token([[1], [2, 3]], 0, begin=False) == [[1, 0], [2, 3, 0]]
    assert F.add_token([["a"], []], "<s>") == [["<s>", "a"], ["<s>"]]
    with pytest.raises(TypeError):
        F.add_token([1, 2], "<s>")
    with pytest.raises(TypeError):
        F.add_token([["a"]], 0)


def test_add_token_does_not_modify_its_input():
    ids = [[1, 2]]
    F.add_token(ids, 0)
    assert ids == [[1, 2]]


def test_str_to_int():
    assert F.str_to_int(["1", "22", "-3"]) == [1, 22, -3]
    assert F.str_to_int([["1"], ["2", "3"]]) == [[1], [2, 3]]
    with pytest.raises(TypeError):
        F.str_to_int([1])
    with pytest.raises(ValueError):
        F.str_to_int(["x"])
