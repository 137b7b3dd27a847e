"""Pretrained text encoders whose Hugging Face checkpoints load: BERT, RoBERTa / XLM-R."""

from embertext.models.bert import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
)
from embertext.models.roberta import (
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaModel,
    XLMRobertaModel,
)

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput", "RobertaConfig", "RobertaModel", "RobertaForMaskedLM",
           "RobertaForSequenceClassification", "XLMRobertaModel"]
