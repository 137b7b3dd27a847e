"""embertext.transforms: the torchtext transforms that need no tokenizer model."""

from collections import OrderedDict

import numpy as np
import pytest

import ember
from embertext import transforms as T
from embertext.vocab import vocab


def _vocab():
    v = vocab(OrderedDict([("a", 1), ("b", 1), ("c", 1)]), specials=["<unk>"])
    v.set_default_index(0)
    return v


def test_vocab_transform():
    transform = T.VocabTransform(_vocab())
    assert transform(["a", "zz"]) == [1, 0]
    assert transform([["a", "b"], ["a", "b", "c"]]) == [[1, 2], [1, 2, 3]]
    with pytest.raises(TypeError):
        transform("a b")
    with pytest.raises(AssertionError):
        T.VocabTransform({"a": 0})


def test_to_tensor_truncate_add_token_str_to_int():
    assert T.ToTensor(padding_value=0)([[1, 2], [3]]).tolist() == [[1, 2], [3, 0]]
    assert T.ToTensor(dtype=ember.int32)([[1], [2]]).dtype == ember.int32
    assert T.Truncate(1)([[1, 2], [3]]) == [[1], [3]]
    assert T.AddToken(token=0, begin=True)([1]) == [0, 1]
    assert T.AddToken(token="</s>", begin=False)([["a"]]) == [["a", "</s>"]]
    assert T.StrToIntTransform()(["4", "2"]) == [4, 2]


def test_pad_transform():
    x = ember.tensor([[1, 2], [3, 4]])
    out = T.PadTransform(max_length=4, pad_value=-1)(x)
    np.testing.assert_array_equal(out.numpy(), [[1, 2, -1, -1], [3, 4, -1, -1]])
    assert out.dtype == ember.int64
    assert T.PadTransform(2, 0)(x) is x
    assert T.PadTransform(1, 0)(x) is x
    out = T.PadTransform(3, 0.5)(ember.tensor([1.0]))
    np.testing.assert_array_equal(out.numpy(), np.float32([1, 0.5, 0.5]))


def test_label_to_index(tmp_path):
    transform = T.LabelToIndex(["neg", "pos"])
    assert transform("pos") == 1 and transform(["pos", "neg"]) == [1, 0]
    assert transform.label_names == ["neg", "pos"]
    assert T.LabelToIndex(["b", "a"], sort_names=True).label_names == ["a", "b"]
    path = tmp_path / "labels.txt"
    path.write_text("world\n\nsports\n")
    assert T.LabelToIndex(label_path=str(path)).label_names == ["world", "sports"]
    with pytest.raises(RuntimeError, match="not found"):
        transform("meh")
    with pytest.raises(AssertionError, match="required"):
        T.LabelToIndex()
    with pytest.raises(AssertionError, match="mutually exclusive"):
        T.LabelToIndex(["a"], label_path=str(path))


def test_regex_tokenizer():
    rules = [(r"\'", " '  "), (r"\"", "")]
    assert T.RegexTokenizer(rules)('Basic "Regex" Token\'s') == [
        "Basic", "Regex", "Token", "'", "s"]
    tokenizer = T.RegexTokenizer([(r"[,._+ ]+", r" ")])
    assert tokenizer("Basic.Regex,Tokenization_for+a..Line,,of  Text") == [
        "Basic", "Regex", "Tokenization", "for", "a", "Line", "of", "Text"]
    # Only spaces separate tokens: a tab stays inside one.
    assert T.RegexTokenizer([])("a\tb c") == ["a\tb", "c"]
    assert T.RegexTokenizer([(r"(\d)", r"\1 ")])("a12") == ["a1", "2"]


def test_sequential_pipeline():
    pipeline = T.Sequential(T.VocabTransform(_vocab()), T.Truncate(2), T.AddToken(9),
                            T.ToTensor(padding_value=0))
    out = pipeline([["a", "b", "c"], ["c"]])
    assert out.tolist() == [[9, 1, 2], [9, 3, 0]]
    assert isinstance(pipeline[1], T.Truncate) and len(pipeline) == 4


def test_mask_transform():
    ember.manual_seed(0)
    bos, pad, mask_idx = 6, 5, 4
    tokens = ember.tensor([[6, 0, 1, 2, 3, 0, 1, 2, 3, 0], [6, 0, 1, 2, 5, 5, 5, 5, 5, 5]])
    transform = T.MaskTransform(vocab_len=7, mask_idx=mask_idx, bos_idx=bos, pad_idx=pad,
                                mask_prob=0.5)
    masked, target, mask = transform(tokens)
    assert masked.shape == tokens.shape and mask.shape == tokens.shape
    m = mask.numpy().astype(bool)
    t = tokens.numpy()
    assert not m[t == bos].any() and not m[t == pad].any()
    assert m[0].sum() <= 5 and m[1].sum() <= 5
    np.testing.assert_array_equal(target.numpy(), t[m])
    # Positions not chosen are left as they were.
    np.testing.assert_array_equal(masked.numpy()[~m], t[~m])
    assert ((masked.numpy() >= 0) & (masked.numpy() < 7)).all()


def test_mask_transform_always_masks_one():
    transform = T.MaskTransform(vocab_len=7, mask_idx=4, bos_idx=6, pad_idx=5, mask_prob=0.0)
    _, target, mask = transform(ember.tensor([[1, 2, 3]]))
    assert mask.tolist() == [[1, 0, 0]] and target.tolist() == [1]


def test_regex_tokenizer_re2_bracket_classes():
    """RegexTokenizer's patterns are RE2's: each POSIX bracket class matches the ASCII
    characters C's <ctype.h> puts in it."""
    import re
    import string

    from embertext.tokenizers._regex import translate_re2

    ascii_chars = [chr(c) for c in range(128)]
    expected = {
        "alnum": str.isalnum, "alpha": str.isalpha, "digit": str.isdigit,
        "lower": str.islower, "upper": str.isupper, "xdigit": lambda c: c in string.hexdigits,
        "space": lambda c: c in " \t\n\v\f\r", "blank": lambda c: c in " \t",
        "punct": lambda c: c in string.punctuation, "print": lambda c: " " <= c <= "~",
        "graph": lambda c: "!" <= c <= "~", "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
        "word": lambda c: c.isalnum() or c == "_", "ascii": lambda c: True,
    }
    for name, member in expected.items():
        pattern = re.compile(translate_re2(f"[[:{name}:]]"))
        assert [c for c in ascii_chars if pattern.fullmatch(c)] == \
            [c for c in ascii_chars if member(c)], name
    assert T.RegexTokenizer([(r"[[:punct:][:space:]]+", " ")])("a,b;\tc") == ["a", "b", "c"]
    with pytest.raises(ValueError, match="negated"):
        T.RegexTokenizer([(r"[[:^alpha:]]", "")])
    with pytest.raises(ValueError, match="unknown character class"):
        T.RegexTokenizer([(r"[[:vowel:]]", "")])


def test_regex_tokenizer_re2_rewrites():
    """RE2's rewrite strings: \\0 the match, \\N a group (empty when it did not take part),
    \\\\ one backslash, \\n not an escape; any other backslash sequence is refused."""
    tokenizer = T.RegexTokenizer([(r"(a)|(b)", r"[\0\2\\]"), (r"n", r"\\n")])
    assert tokenizer("a b n") == ["[a\\]", "[bb\\]", "\\n"]
    with pytest.raises(ValueError, match="invalid rewrite pattern"):
        T.RegexTokenizer([("x", r"\g<0>")])
