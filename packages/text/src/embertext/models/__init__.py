"""Pretrained text models whose Hugging Face checkpoints load: BERT, RoBERTa / XLM-R,
DistilBERT, GPT-2, T5; and torchtext's T5 (``T5Conf``, ``T5Model``, ``T5Bundle`` and its
pretrained bundles). Hugging Face's ``T5Model`` (the encoder-decoder without a head) is
``embertext.models.t5.modeling_t5.T5Model``: the name here is torchtext's."""

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
from embertext.models.t5 import (
    FLAN_T5_BASE,
    FLAN_T5_BASE_ENCODER,
    FLAN_T5_BASE_GENERATION,
    FLAN_T5_LARGE,
    FLAN_T5_LARGE_ENCODER,
    FLAN_T5_LARGE_GENERATION,
    FLAN_T5_XL,
    FLAN_T5_XL_ENCODER,
    FLAN_T5_XL_GENERATION,
    FLAN_T5_XXL,
    FLAN_T5_XXL_ENCODER,
    FLAN_T5_XXL_GENERATION,
    T5_3B,
    T5_3B_ENCODER,
    T5_3B_GENERATION,
    T5_11B,
    T5_11B_ENCODER,
    T5_11B_GENERATION,
    T5_BASE,
    T5_BASE_ENCODER,
    T5_BASE_GENERATION,
    T5_LARGE,
    T5_LARGE_ENCODER,
    T5_LARGE_GENERATION,
    T5_SMALL,
    T5_SMALL_ENCODER,
    T5_SMALL_GENERATION,
    T5Bundle,
    T5Conf,
    T5Model,
)
from embertext.models.t5.modeling_t5 import T5Config, T5EncoderModel, T5ForConditionalGeneration
from embertext.models.t5_transform import T5Transform

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput", "RobertaConfig", "RobertaModel", "RobertaForMaskedLM",
           "RobertaForSequenceClassification", "XLMRobertaModel", "GPT2Config",
           "GPT2Model", "GPT2LMHeadModel", "DistilBertConfig", "DistilBertModel",
           "DistilBertForMaskedLM", "DistilBertForSequenceClassification",
           "T5Transform", "T5Config", "T5EncoderModel", "T5ForConditionalGeneration",
           "T5Conf", "T5Model", "T5Bundle", "T5_SMALL_ENCODER", "T5_SMALL",
           "T5_SMALL_GENERATION", "T5_BASE_ENCODER", "T5_BASE", "T5_BASE_GENERATION",
           "T5_LARGE_ENCODER", "T5_LARGE", "T5_LARGE_GENERATION", "T5_3B_ENCODER",
           "T5_3B", "T5_3B_GENERATION", "T5_11B_ENCODER", "T5_11B", "T5_11B_GENERATION",
           "FLAN_T5_BASE_ENCODER", "FLAN_T5_BASE", "FLAN_T5_BASE_GENERATION",
           "FLAN_T5_LARGE_ENCODER", "FLAN_T5_LARGE", "FLAN_T5_LARGE_GENERATION",
           "FLAN_T5_XL_ENCODER", "FLAN_T5_XL", "FLAN_T5_XL_GENERATION",
           "FLAN_T5_XXL_ENCODER", "FLAN_T5_XXL", "FLAN_T5_XXL_GENERATION"]
