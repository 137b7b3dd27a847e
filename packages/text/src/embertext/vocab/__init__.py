"""Vocabularies (``torchtext.vocab``): :class:`Vocab` and the functions that build one."""

from embertext.vocab.vocab import Vocab
from embertext.vocab.vocab_factory import build_vocab_from_iterator, vocab

__all__ = ["Vocab", "vocab", "build_vocab_from_iterator"]
