"""RoBERTa (Liu et al., 2019) and XLM-R with the module names of Hugging Face
`transformers`: BERT's encoder, positions counted from the padding index, its own heads."""

from dataclasses import dataclass

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models.bert import (
    BertConfig,
    BertEmbeddings,
    BertModel,
    BertOutput,
    _activation,
    _Pretrained,
)

__all__ = ["RobertaConfig", "RobertaModel", "RobertaForMaskedLM",
           "RobertaForSequenceClassification", "XLMRobertaModel"]


@dataclass
class RobertaConfig(BertConfig):
    """The hyper-parameters of RoBERTa (roberta-base's by default)."""

    model_type = "roberta"

    vocab_size: int = 50265
    max_position_embeddings: int = 514
    type_vocab_size: int = 1
    layer_norm_eps: float = 1e-5
    pad_token_id: int = 1


class RobertaEmbeddings(BertEmbeddings):
    def __init__(self, config):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.position_embeddings = nn.Embedding(config.max_position_embeddings,
                                                config.hidden_size,
                                                padding_idx=config.pad_token_id)

    def forward(self, input_ids, token_type_ids=None, position_ids=None):
        if position_ids is None:
            # Positions count the tokens that are not padding, after the padding index.
            keep = (input_ids != self.padding_idx).to(ember.long)
            position_ids = ember.cumsum(keep, dim=1) * keep + self.padding_idx
        return super().forward(input_ids, token_type_ids, position_ids)


class RobertaModel(BertModel):
    r"""The RoBERTa encoder: BERT's, with positions counted from ``pad_token_id + 1``.

    Examples::

        >>> model = RobertaModel.from_pretrained("roberta-base/")
        >>> model(ember.tensor([[0, 31414, 232, 2]])).last_hidden_state.shape
    """

    _config_class = RobertaConfig

    def __init__(self, config, add_pooling_layer=True):
        super().__init__(config, add_pooling_layer)
        self.embeddings = RobertaEmbeddings(config)

    def _rename(self, state_dict):
        if any(k.startswith("roberta.") for k in state_dict):
            state_dict = {k[len("roberta."):]: v for k, v in state_dict.items()
                          if k.startswith("roberta.")}
        if self.pooler is None:
            state_dict = {k: v for k, v in state_dict.items() if not k.startswith("pooler.")}
        return state_dict


XLMRobertaModel = RobertaModel


class RobertaLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(ember.zeros(config.vocab_size))
        self.act = _activation(config.hidden_act)

    def forward(self, features):
        return self.decoder(self.layer_norm(self.act(self.dense(features)))) + self.bias


class RobertaForMaskedLM(_Pretrained):
    r"""RoBERTa with its language-model head (``lm_head``), decoder tied to the word
    embeddings. Forward returns ``logits`` :math:`(B, L, V)` and, with ``labels``, ``loss``."""

    _config_class = RobertaConfig

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.roberta = RobertaModel(config, add_pooling_layer=False)
        self.lm_head = RobertaLMHead(config)
        self.lm_head.decoder.weight = self.roberta.embeddings.word_embeddings.weight

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                labels=None):
        hidden = self.roberta(input_ids, attention_mask, token_type_ids, position_ids)[0]
        logits = self.lm_head(hidden)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                   ignore_index=-100)
        return BertOutput(loss=loss, logits=logits)

    def _rename(self, state_dict):
        state_dict = {k: v for k, v in state_dict.items()
                      if not k.startswith("roberta.pooler.") and k != "lm_head.decoder.bias"}
        embedding = "roberta.embeddings.word_embeddings.weight"
        if embedding in state_dict:
            state_dict["lm_head.decoder.weight"] = state_dict[embedding]
        return state_dict


class RobertaClassificationHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        dropout = (config.classifier_dropout if config.classifier_dropout is not None
                   else config.hidden_dropout_prob)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, features):
        x = self.dropout(features[:, 0])
        x = self.dropout(ember.tanh(self.dense(x)))
        return self.out_proj(x)


class RobertaForSequenceClassification(_Pretrained):
    r"""RoBERTa with its classification head on the first token (``<s>``). Forward returns
    ``logits`` :math:`(B, C)` and, with ``labels``, ``loss``."""

    _config_class = RobertaConfig

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.roberta = RobertaModel(config, add_pooling_layer=False)
        self.classifier = RobertaClassificationHead(config)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                labels=None):
        hidden = self.roberta(input_ids, attention_mask, token_type_ids, position_ids)[0]
        logits = self.classifier(hidden)
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
            else:
                loss = F.cross_entropy(logits, labels)
        return BertOutput(loss=loss, logits=logits)

    def _rename(self, state_dict):
        return {k: v for k, v in state_dict.items() if not k.startswith("roberta.pooler.")}
