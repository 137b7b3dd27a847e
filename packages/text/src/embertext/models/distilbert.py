"""DistilBERT (Sanh et al., 2019) with the module names of Hugging Face `transformers`."""

import json
import math
import os
from dataclasses import dataclass, field

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models._config import HFConfig, num_labels_override
from embertext.models.bert import BertOutput, _activation, _attention_bias, _read_weights

__all__ = ["DistilBertConfig", "DistilBertModel", "DistilBertForMaskedLM",
           "DistilBertForSequenceClassification"]


@dataclass
class DistilBertConfig(HFConfig):
    """The hyper-parameters of DistilBERT (distilbert-base-uncased's by default)."""

    model_type = "distilbert"

    vocab_size: int = 30522
    max_position_embeddings: int = 512
    dim: int = 768
    n_layers: int = 6
    n_heads: int = 12
    hidden_dim: int = 3072
    dropout: float = 0.1
    attention_dropout: float = 0.1
    activation: str = "gelu"
    pad_token_id: int = 0
    seq_classif_dropout: float = 0.2
    num_labels: int = 2
    extra: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data):
        config = cls._from_keys(data, **num_labels_override(data))
        if config.dim % config.n_heads:
            raise ValueError(f"dim ({config.dim}) is not a multiple of n_heads ({config.n_heads})")
        return config


class Embeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.dim,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.dim)
        self.LayerNorm = nn.LayerNorm(config.dim, eps=1e-12)
        self.dropout = nn.Dropout(config.dropout)
        self.max_positions = config.max_position_embeddings

    def forward(self, input_ids):
        length = input_ids.shape[1]
        if length > self.max_positions:
            raise ValueError(f"sequence length {length} is longer than max_position_embeddings "
                             f"({self.max_positions})")
        positions = ember.arange(length).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(x))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_heads = config.n_heads
        self.head_dim = config.dim // config.n_heads
        self.q_lin = nn.Linear(config.dim, config.dim)
        self.k_lin = nn.Linear(config.dim, config.dim)
        self.v_lin = nn.Linear(config.dim, config.dim)
        self.out_lin = nn.Linear(config.dim, config.dim)
        self.dropout = nn.Dropout(config.attention_dropout)

    def _heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, bias=None):
        q, k, v = self._heads(self.q_lin(x)), self._heads(self.k_lin(x)), self._heads(self.v_lin(x))
        scores = ember.matmul(q / math.sqrt(self.head_dim), k.transpose(-1, -2))
        if bias is not None:
            scores = scores + bias
        context = ember.matmul(self.dropout(F.softmax(scores, dim=-1)), v).transpose(1, 2)
        return self.out_lin(context.reshape(x.shape[0], x.shape[1], -1))


class FFN(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.lin1 = nn.Linear(config.dim, config.hidden_dim)
        self.lin2 = nn.Linear(config.hidden_dim, config.dim)
        self.activation = _activation(config.activation)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.lin2(self.activation(self.lin1(x))))


class TransformerBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = MultiHeadSelfAttention(config)
        self.sa_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.ffn = FFN(config)
        self.output_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)

    def forward(self, x, bias=None):
        x = self.sa_layer_norm(self.attention(x, bias) + x)
        return self.output_layer_norm(self.ffn(x) + x)


class Transformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([TransformerBlock(config) for _ in range(config.n_layers)])

    def forward(self, x, bias=None):
        for layer in self.layer:
            x = layer(x, bias)
        return x


class _Pretrained(nn.Module):
    _prefix = ""

    @classmethod
    def from_pretrained(cls, path, strict=True):
        """A model from a folder with ``config.json`` and ``model.safetensors`` (or
        ``pytorch_model.bin``), loaded with ``strict``."""
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            config = DistilBertConfig.from_dict(json.load(f))
        model = cls(config)
        state = _read_weights(path)
        if cls is DistilBertModel and any(k.startswith("distilbert.") for k in state):
            state = {k[len("distilbert."):]: v for k, v in state.items()
                     if k.startswith("distilbert.")}
        if cls is DistilBertForMaskedLM:
            state.setdefault("vocab_projector.weight",
                             state["distilbert.embeddings.word_embeddings.weight"])
        model.load_state_dict(state, strict=strict)
        return model.eval()


class DistilBertModel(_Pretrained):
    r"""The DistilBERT encoder: word and position embeddings, ``n_layers`` post-norm blocks.

    Shape:
        - input_ids, attention_mask: :math:`(B, L)`; last_hidden_state: :math:`(B, L, D)`.
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.transformer = Transformer(config)

    def forward(self, input_ids, attention_mask=None):
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, length), got shape "
                             f"{tuple(input_ids.shape)}")
        x = self.embeddings(input_ids)
        x = self.transformer(x, _attention_bias(attention_mask, x.dtype))
        return BertOutput(last_hidden_state=x)


class DistilBertForMaskedLM(_Pretrained):
    """DistilBERT with its masked-language-model head (``vocab_projector`` tied to the word
    embeddings)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.distilbert = DistilBertModel(config)
        self.vocab_transform = nn.Linear(config.dim, config.dim)
        self.vocab_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.vocab_projector = nn.Linear(config.dim, config.vocab_size)
        self.vocab_projector.weight = self.distilbert.embeddings.word_embeddings.weight
        self.activation = _activation(config.activation)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.distilbert(input_ids, attention_mask).last_hidden_state
        logits = self.vocab_projector(
            self.vocab_layer_norm(self.activation(self.vocab_transform(hidden))))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                   ignore_index=-100)
        return BertOutput(loss=loss, logits=logits)


class DistilBertForSequenceClassification(_Pretrained):
    """DistilBERT with a classifier on the first token (``pre_classifier``, ReLU,
    ``classifier``)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.distilbert = DistilBertModel(config)
        self.pre_classifier = nn.Linear(config.dim, config.dim)
        self.classifier = nn.Linear(config.dim, config.num_labels)
        self.dropout = nn.Dropout(config.seq_classif_dropout)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.distilbert(input_ids, attention_mask).last_hidden_state[:, 0]
        logits = self.classifier(self.dropout(F.relu(self.pre_classifier(hidden))))
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
            else:
                loss = F.cross_entropy(logits, labels)
        return BertOutput(loss=loss, logits=logits)
