"""Pretrained text models whose Hugging Face checkpoints load: BERT, RoBERTa / XLM-R,
DistilBERT, GPT-2."""

from embertext.models.bert import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    BertOutput,
)
from embertext.models.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    DistilBertModel,
)
from embertext.models.gpt2 import GPT2Config, GPT2LMHeadModel, GPT2Model
from embertext.models.roberta import (
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaModel,
    XLMRobertaModel,
)
from embertext.models.t5_transform import T5Transform

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput", "RobertaConfig", "RobertaModel", "RobertaForMaskedLM",
           "RobertaForSequenceClassification", "XLMRobertaModel", "GPT2Config", "GPT2Model",
           "GPT2LMHeadModel", "DistilBertConfig", "DistilBertModel", "DistilBertForMaskedLM",
           "DistilBertForSequenceClassification", "T5Transform"]
