"""Fast-path text tokenizers with Hugging Face `tokenizers`' API and file formats.

:class:`Tokenizer` runs added tokens, a normalizer, a pre-tokenizer, a model (byte-level
BPE, WordPiece), a post-processor and a decoder; it loads and saves ``tokenizer.json``, and
the models load ``vocab.json`` + ``merges.txt`` (GPT-2 / RoBERTa) and ``vocab.txt`` (BERT).
The hot loops are compiled (``_kernels.pyx``): the BPE merge loop, WordPiece's longest match,
Unigram's Viterbi search, and the whole byte-level BPE, BERT and Metaspace-Unigram pipelines,
which run without the GIL so that ``encode_batch`` runs on several threads; their encodings
make their lists when read (``_encoding.pyx``).
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
from embertext.tokenizers._regex import Regex
from embertext.tokenizers._tokenizer import AddedToken, Tokenizer, get_num_threads, set_num_threads

__all__ = ["Tokenizer", "Encoding", "AddedToken", "models", "normalizers", "pre_tokenizers",
           "processors", "decoders", "trainers", "Regex", "set_num_threads", "get_num_threads"]
