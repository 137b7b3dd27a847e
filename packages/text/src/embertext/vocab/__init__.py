"""Vocabularies (``torchtext.vocab``): :class:`Vocab`, the functions that build one, and
pre-trained word vectors."""

from embertext.vocab.vectors import CharNGram, FastText, GloVe, Vectors, pretrained_aliases
from embertext.vocab.vocab import Vocab
from embertext.vocab.vocab_factory import build_vocab_from_iterator, vocab

__all__ = ["Vocab", "vocab", "build_vocab_from_iterator", "GloVe", "FastText", "CharNGram",
           "pretrained_aliases", "Vectors"]
