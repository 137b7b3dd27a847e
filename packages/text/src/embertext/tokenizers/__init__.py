"""Fast-path text tokenizers with Hugging Face `tokenizers`' API and file formats.

:class:`Tokenizer` runs added tokens, a normalizer, a pre-tokenizer, a model (byte-level
BPE, WordPiece), a post-processor and a decoder; it loads and saves ``tokenizer.json``, and
the models load ``vocab.json`` + ``merges.txt`` (GPT-2 / RoBERTa) and ``vocab.txt`` (BERT).
Written in Python, with each word's tokens cached.
"""

from embertext.tokenizers import (
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from embertext.tokenizers._encoding import Encoding
from embertext.tokenizers._tokenizer import AddedToken, Tokenizer

__all__ = ["Tokenizer", "Encoding", "AddedToken", "models", "normalizers", "pre_tokenizers",
           "processors", "decoders", "trainers"]
