"""Text transforms as modules (``torchtext.transforms``): they compose with
:class:`Sequential` and take a single sequence or a batch alike."""

import re

import ember
from ember import nn
from ember.nn import functional as nnF
from embertext import functional as F
from embertext._jit import NotJitable
from embertext._tokenizer_transforms import (
    BERTTokenizer,
    CharBPETokenizer,
    CLIPTokenizer,
    GPT2BPETokenizer,
    bytes_to_unicode,
)
from embertext.data.functional import load_sp_model
from embertext.tokenizers._regex import re2_rewrite, translate_re2
from embertext.utils import get_asset_local_path
from embertext.vocab import Vocab
from embertext.vocab.vocab import _VocabTable

__all__ = [
    "SentencePieceTokenizer",
    "VocabTransform",
    "ToTensor",
    "LabelToIndex",
    "Truncate",
    "AddToken",
    "PadTransform",
    "StrToIntTransform",
    "GPT2BPETokenizer",
    "CharBPETokenizer",
    "CLIPTokenizer",
    "BERTTokenizer",
    "RegexTokenizer",
    "Sequential",
    "MaskTransform",
    "bytes_to_unicode",
]


class SentencePieceTokenizer(nn.Module):
    r"""Split text into pieces with a trained SentencePiece model (needs ``sentencepiece``).

    Args:
        sp_model_path (str): the path of the ``.model`` file.

    Examples::

        >>> transform = SentencePieceTokenizer("spm_user.model")
        >>> transform(["hello world", "attention is all you need!"])
    """

    def __init__(self, sp_model_path):
        super().__init__()
        self.sp_model = load_sp_model(get_asset_local_path(sp_model_path))

    def forward(self, input):
        if F._is_list_of(input, str):
            return [self.sp_model.EncodeAsPieces(text) for text in input]
        if isinstance(input, str):
            return self.sp_model.EncodeAsPieces(input)
        raise TypeError("Input type not supported")


class VocabTransform(nn.Module):
    r"""Look tokens up in a :class:`~embertext.vocab.Vocab` (a sequence or a batch).

    Examples::

        >>> vocab_transform = VocabTransform(vocab(OrderedDict([("a", 1), ("b", 1)])))
        >>> vocab_transform([["a", "b"], ["b"]])
        [[0, 1], [1]]
    """

    def __init__(self, vocab):
        super().__init__()
        if not isinstance(vocab, Vocab):
            raise AssertionError(f"VocabTransform needs a Vocab, got {type(vocab).__name__}")
        self.vocab = vocab

    def forward(self, input):
        if F._is_list_of(input, str):
            return self.vocab.lookup_indices(input)
        if F._is_batch_of(input, str):
            return [self.vocab.lookup_indices(tokens) for tokens in input]
        raise TypeError("Input type not supported")


class ToTensor(nn.Module):
    r"""Token ids to a tensor, padding a batch with ``padding_value``: see
    :func:`embertext.functional.to_tensor`."""

    def __init__(self, padding_value=None, dtype=ember.long):
        super().__init__()
        self.padding_value = padding_value
        self.dtype = dtype

    def forward(self, input):
        return F.to_tensor(input, padding_value=self.padding_value, dtype=self.dtype)


class LabelToIndex(nn.Module):
    r"""Map label names to their indices.

    Args:
        label_names (list of str, optional): the distinct labels, in index order.
        label_path (str, optional): a file with one label a line (blank lines skipped);
            give this or ``label_names``, not both.
        sort_names (bool): sort the labels first. Default: ``False``.

    Examples::

        >>> LabelToIndex(["neg", "pos"])(["pos", "neg"])
        [1, 0]
    """

    def __init__(self, label_names=None, label_path=None, sort_names=False):
        if not (label_names or label_path):
            raise AssertionError("label_names or label_path is required")
        if label_names and label_path:
            raise AssertionError("label_names and label_path are mutually exclusive")
        super().__init__()
        if label_path:
            with open(label_path, encoding="utf-8") as f:
                label_names = [line.strip() for line in f if line.strip()]
        if sort_names:
            label_names = sorted(label_names)
        self._label_vocab = Vocab(_VocabTable(label_names, None))
        self._label_names = self._label_vocab.get_itos()

    def forward(self, input):
        if F._is_list_of(input, str):
            return self._label_vocab.lookup_indices(input)
        if isinstance(input, str):
            return self._label_vocab[input]
        raise TypeError("Input type not supported")

    @property
    def label_names(self):
        return self._label_names


class Truncate(nn.Module):
    r"""Keep the first ``max_seq_len`` tokens: see :func:`embertext.functional.truncate`."""

    def __init__(self, max_seq_len):
        super().__init__()
        self.max_seq_len = max_seq_len

    def forward(self, input):
        return F.truncate(input, self.max_seq_len)


class AddToken(nn.Module):
    r"""Add a token at the start or the end: see :func:`embertext.functional.add_token`."""

    def __init__(self, token, begin=True):
        super().__init__()
        self.token = token
        self.begin = begin

    def forward(self, input):
        return F.add_token(input, self.token, self.begin)


class PadTransform(nn.Module):
    r"""Pad the last dimension of a tensor at the end to ``max_length`` with ``pad_value``
    (tensors already as long are left as they are).

    Shape:
        - Input: :math:`(*, L)`
        - Output: :math:`(*, \max(L, \text{max\_length}))`

    Examples::

        >>> PadTransform(4, 0)(ember.tensor([[1, 2], [3, 4]]))
        tensor([[1, 2, 0, 0],
                [3, 4, 0, 0]])
    """

    def __init__(self, max_length, pad_value):
        super().__init__()
        self.max_length = max_length
        self.pad_value = float(pad_value)

    def forward(self, x):
        length = x.size(-1)
        if length < self.max_length:
            x = nnF.pad(x, (0, self.max_length - length), value=self.pad_value)
        return x


class StrToIntTransform(nn.Module):
    r"""String tokens to ints: see :func:`embertext.functional.str_to_int`."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, input):
        return F.str_to_int(input)


def get_pairs(word):
    """The set of adjacent symbol pairs of ``word`` (a tuple of symbols, which are strings
    of any length): the merge candidates of byte-pair encoding.

    Examples::

        >>> sorted(get_pairs(("h", "e", "l", "l", "o")))
        [('e', 'l'), ('h', 'e'), ('l', 'l'), ('l', 'o')]
    """
    return set(zip(word, word[1:]))


class RegexTokenizer(NotJitable, nn.Module):
    r"""Apply regex replacements in order, then split on spaces (empty tokens dropped).

    Args:
        patterns_list: ``(pattern, replacement)`` pairs; ``(r"[,.]+", " ")`` splits on a
            pattern. The patterns are RE2's, as torchtext's (``[[:punct:]]``, ``\\pL`` work).

    Examples::

        >>> RegexTokenizer([(r"[,._+ ]+", r" ")])("Basic.Regex,Tokenization_for+a..Line")
        ['Basic', 'Regex', 'Tokenization', 'for', 'a', 'Line']
    """

    def __init__(self, patterns_list):
        super().__init__()
        self.patterns_list = [(pattern, replacement) for pattern, replacement in patterns_list]
        # torchtext compiles them with RE2: its bracket and Unicode classes are translated
        self._rules = [(re.compile(translate_re2(p)), re2_rewrite(r))
                       for p, r in self.patterns_list]

    def forward(self, line):
        for pattern, replacement in self._rules:
            line = pattern.sub(replacement, line)
        return [token for token in line.split(" ") if token]


class Sequential(nn.Sequential):
    r"""Transforms applied one after another (any input the first one takes).

    Examples::

        >>> pipeline = Sequential(Truncate(2), AddToken(0), ToTensor())
        >>> pipeline([5, 6, 7])
        tensor([0, 5, 6])
    """

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class MaskTransform(nn.Module):
    r"""BERT-style masking of token ids for masked language modelling.

    ``int(seq_len * mask_prob)`` positions of each row are chosen at random (not padding,
    nor beginning-of-sequence tokens unless ``mask_bos``); of those, about 80% become the
    mask token, 10% a random token and 10% stay. At least one position is always chosen.

    Args:
        vocab_len (int): the vocabulary size, special tokens included.
        mask_idx (int): the index of the mask token.
        bos_idx (int): the index of the beginning-of-sequence token.
        pad_idx (int): the index of the padding token.
        mask_bos (bool): may beginning-of-sequence tokens be masked. Default: ``False``.
        mask_prob (float): the share of positions chosen. Default: 0.15.

    Shape:
        - Input: :math:`(B, L)` token ids.
        - Output: ``(masked_tokens, target_tokens, mask)``: :math:`(B, L)`, :math:`(M)` (the
          chosen tokens) and :math:`(B, L)` (1 where chosen).
    """

    mask_mask_prob = 0.8
    rand_mask_prob = 0.1

    def __init__(self, vocab_len, mask_idx, bos_idx, pad_idx, mask_bos=False, mask_prob=0.15):
        super().__init__()
        self.vocab_len = vocab_len
        self.mask_idx = mask_idx
        self.bos_idx = bos_idx
        self.pad_idx = pad_idx
        self.mask_prob = mask_prob
        self.mask_bos = mask_bos

    def forward(self, tokens):
        mask, mask_mask, rand_mask = self._generate_mask(tokens)
        masked_tokens = self._mask_input(tokens, mask_mask, self.mask_idx)
        masked_tokens = self._mask_input(masked_tokens, rand_mask,
                                         ember.randint_like(tokens, high=self.vocab_len))
        target_tokens = ember.masked_select(tokens, mask.bool())
        return masked_tokens, target_tokens, mask

    def _random_masking(self, tokens, mask_prob):
        batch_size, seq_len = tokens.size()
        mask = ember.zeros((batch_size, seq_len), dtype=ember.int, device=tokens.device)
        mask[:, : int(seq_len * mask_prob)] = 1
        for i in range(batch_size):
            mask[i] = mask[i, ember.randperm(seq_len)]
        return mask

    def _generate_mask(self, tokens):
        mask = self._random_masking(tokens, self.mask_prob)
        if not self.mask_bos:
            mask *= (tokens != self.bos_idx).long()
        mask *= (tokens != self.pad_idx).long()
        # One chosen position at least, so that the loss has a target.
        if not mask.bool().any():
            mask[0, 0] = 1
        probs = ember.rand_like(tokens, dtype=ember.float)
        mask_mask = (probs >= (1 - self.mask_mask_prob)).long() * mask
        rand_mask = (probs < self.rand_mask_prob).long() * mask
        return mask, mask_mask, rand_mask

    @staticmethod
    def _mask_input(tokens, mask, replacement):
        return tokens * (1 - mask) + replacement * mask
