"""Text-pipeline utilities (``torchtext.data``): tokenizers, BLEU and functional helpers."""

from embertext.data.functional import (
    custom_replace,
    filter_wikipedia_xml,
    generate_sp_model,
    load_sp_model,
    numericalize_tokens_from_iterator,
    sentencepiece_numericalizer,
    sentencepiece_tokenizer,
    simple_space_split,
    to_map_style_dataset,
)
from embertext.data.metrics import bleu_score
from embertext.data.sampler import BucketBatchSampler
from embertext.data.utils import get_tokenizer, interleave_keys

__all__ = [
    "bleu_score",
    "get_tokenizer",
    "interleave_keys",
    "generate_sp_model",
    "load_sp_model",
    "sentencepiece_numericalizer",
    "sentencepiece_tokenizer",
    "custom_replace",
    "simple_space_split",
    "numericalize_tokens_from_iterator",
    "filter_wikipedia_xml",
    "to_map_style_dataset",
    "BucketBatchSampler",
]
