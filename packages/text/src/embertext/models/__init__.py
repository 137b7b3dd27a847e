"""Pretrained text encoders whose Hugging Face checkpoints load: BERT."""

from embertext.models.bert import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
)

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput"]
