"""Pretrained text models whose Hugging Face checkpoints load: BERT, RoBERTa / XLM-R,
DistilBERT, GPT-2, T5; and torchtext's RoBERTa / XLM-R and T5 (``RobertaModel``,
``RobertaBundle``, ``T5Conf``, ``T5Model``, ``T5Bundle`` and their pretrained bundles).
Hugging Face's ``RobertaModel`` and ``T5Model`` are
``embertext.models.roberta.modeling_roberta.RobertaModel`` and
``embertext.models.t5.modeling_t5.T5Model``: the names here are torchtext's."""

from embertext.models import roberta as _roberta
from embertext.models import t5 as _t5
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
from embertext.models.roberta import *  # noqa: F403 (torchtext's RoBERTa names: roberta.__all__)
from embertext.models.roberta.modeling_roberta import (
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    XLMRobertaModel,
)
from embertext.models.t5 import *  # noqa: F403 (torchtext's T5 names: t5.__all__)
from embertext.models.t5.modeling_t5 import T5Config, T5EncoderModel, T5ForConditionalGeneration

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput", "RobertaConfig", "RobertaForMaskedLM",
           "RobertaForSequenceClassification", "XLMRobertaModel", "GPT2Config",
           "GPT2Model", "GPT2LMHeadModel", "DistilBertConfig", "DistilBertModel",
           "DistilBertForMaskedLM", "DistilBertForSequenceClassification",
           "T5Config", "T5EncoderModel", "T5ForConditionalGeneration", *_roberta.__all__,
           *_t5.__all__]
