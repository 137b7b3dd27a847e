"""BERT (Devlin et al., 2019) with the module names of Hugging Face `transformers`, so that
its checkpoints (``config.json`` + ``model.safetensors`` or ``pytorch_model.bin``) load with
``strict=True`` and give the same hidden states."""

import os
from dataclasses import dataclass, field

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models._config import HFConfig, num_labels_override

__all__ = ["BertConfig", "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
           "BertOutput"]


@dataclass
class BertConfig(HFConfig):
    """The hyper-parameters of a BERT model (the keys of its ``config.json``)."""

    model_type = "bert"

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    num_labels: int = 2
    classifier_dropout: float = None
    extra: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data):
        config = cls._from_keys(data, **num_labels_override(data))
        position = data.get("position_embedding_type", "absolute")
        if position != "absolute":
            raise ValueError(f"position_embedding_type {position!r} is not supported "
                             "(only 'absolute')")
        if config.hidden_size % config.num_attention_heads:
            raise ValueError(f"hidden_size ({config.hidden_size}) is not a multiple of "
                             f"num_attention_heads ({config.num_attention_heads})")
        return config


_ACTIVATIONS = {
    "gelu": F.gelu,
    "relu": F.relu,
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


def _activation(name):
    if name not in _ACTIVATIONS:
        raise ValueError(f"hidden_act {name!r} is not supported: one of {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]


class BertOutput:
    """The outputs of a BERT model: attribute access (``last_hidden_state``,
    ``pooler_output``, ``logits``, ``loss``) and tuple-like indexing of the set ones."""

    def __init__(self, **values):
        self._names = [k for k, v in values.items() if v is not None]
        for key, value in values.items():
            setattr(self, key, value)

    def __getitem__(self, index):
        return getattr(self, self._names[index])

    def __len__(self):
        return len(self._names)

    def to_tuple(self):
        return tuple(getattr(self, name) for name in self._names)


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings,
                                                config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.max_positions = config.max_position_embeddings

    def forward(self, input_ids, token_type_ids=None, position_ids=None):
        length = input_ids.shape[1]
        if length > self.max_positions:
            raise ValueError(f"sequence length {length} is longer than max_position_embeddings "
                             f"({self.max_positions})")
        if position_ids is None:
            position_ids = ember.arange(length, device=input_ids.device).unsqueeze(0)
        if token_type_ids is None:
            token_type_ids = ember.zeros_like(input_ids)
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(position_ids))
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def _heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_attention_heads,
                      self.attention_head_size).transpose(1, 2)

    def forward(self, hidden_states, attention_bias=None):
        q = self._heads(self.query(hidden_states))
        k = self._heads(self.key(hidden_states))
        v = self._heads(self.value(hidden_states))
        # one attention node (NOTE [ Attention as one node ]), as transformers' "sdpa"
        # attention; the dropout on the probabilities only while training
        context = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attention_bias,
            dropout_p=self.dropout.p if self.training else 0.0).transpose(1, 2)
        batch, length = context.shape[0], context.shape[1]
        return context.reshape(batch, length, -1)


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attention_bias=None):
        return self.output(self.self(hidden_states, attention_bias), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = _activation(config.hidden_act)

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertLayerOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertLayerOutput(config)

    def forward(self, hidden_states, attention_bias=None):
        attended = self.attention(hidden_states, attention_bias)
        return self.output(self.intermediate(attended), attended)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, hidden_states, attention_bias=None, output_hidden_states=False):
        states = [hidden_states]
        for layer in self.layer:
            hidden_states = layer(hidden_states, attention_bias)
            states.append(hidden_states)
        return hidden_states, (tuple(states) if output_hidden_states else None)


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


def _attention_bias(attention_mask, dtype):
    """(B, L) 1/0 mask -> (B, 1, 1, L) additive bias: 0 to attend, the dtype's minimum not."""
    if attention_mask is None:
        return None
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must be (batch, length), got shape "
                         f"{tuple(attention_mask.shape)}")
    keep = attention_mask.to(dtype)[:, None, None, :]
    return (1.0 - keep) * ember.finfo(dtype).min


class _Pretrained(nn.Module):
    """Loading from a folder in the Hugging Face layout."""

    _config_class = BertConfig

    @classmethod
    def from_pretrained(cls, path, strict=True, **overrides):
        r"""A model from a folder with ``config.json`` and ``model.safetensors`` (or
        ``pytorch_model.bin``), loaded with ``strict``.

        Examples::

            >>> model = BertModel.from_pretrained("bert-tiny/")
        """
        config = cls._config_class.from_json_file(os.path.join(path, "config.json"))
        for key, value in overrides.items():
            setattr(config, key, value)
        model = cls(config)
        model.load_hf_state_dict(_read_weights(path), strict=strict)
        return model.eval()

    def load_hf_state_dict(self, state_dict, strict=True):
        """Load a Hugging Face state dict: the buffers it may hold (``position_ids``), the
        tied decoder weights and a prefix other than this model's are taken care of."""
        state_dict = dict(state_dict)
        for key in list(state_dict):
            if key.endswith(("embeddings.position_ids", "embeddings.token_type_ids")):
                del state_dict[key]
        state_dict = self._rename(state_dict)
        return self.load_state_dict(state_dict, strict=strict)

    def _rename(self, state_dict):
        return state_dict


def _read_weights(path):
    safetensors_path = os.path.join(path, "model.safetensors")
    if os.path.exists(safetensors_path):
        from safetensors.numpy import load_file

        return {k: ember.from_numpy(v) for k, v in load_file(safetensors_path).items()}
    bin_path = os.path.join(path, "pytorch_model.bin")
    if os.path.exists(bin_path):
        return ember.load(bin_path, map_location="cpu")
    raise FileNotFoundError(f"{path} has neither model.safetensors nor pytorch_model.bin")


class BertModel(_Pretrained):
    r"""The BERT encoder: embeddings, ``num_hidden_layers`` Transformer layers and a pooler.

    Args:
        config (BertConfig): the hyper-parameters.
        add_pooling_layer (bool): add the pooler (tanh of a dense layer on the first token).

    Shape:
        - input_ids, token_type_ids, attention_mask: :math:`(B, L)`.
        - last_hidden_state: :math:`(B, L, H)`; pooler_output: :math:`(B, H)`.

    Examples::

        >>> model = BertModel(BertConfig(hidden_size=64, num_hidden_layers=2,
        ...                              num_attention_heads=2, intermediate_size=128))
        >>> out = model(ember.tensor([[101, 7592, 102]]))
        >>> out.last_hidden_state.shape
        (1, 3, 64)
    """

    def __init__(self, config, add_pooling_layer=True):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                output_hidden_states=False):
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, length), got shape "
                             f"{tuple(input_ids.shape)}")
        hidden = self.embeddings(input_ids, token_type_ids, position_ids)
        bias = _attention_bias(attention_mask, hidden.dtype)
        hidden, states = self.encoder(hidden, bias, output_hidden_states)
        pooled = self.pooler(hidden) if self.pooler is not None else None
        return BertOutput(last_hidden_state=hidden, pooler_output=pooled, hidden_states=states)

    def _rename(self, state_dict):
        # A checkpoint of a model with a head names the encoder "bert.".
        if any(k.startswith("bert.") for k in state_dict):
            state_dict = {k[len("bert."):]: v for k, v in state_dict.items()
                          if k.startswith("bert.")}
        if self.pooler is None:
            state_dict = {k: v for k, v in state_dict.items() if not k.startswith("pooler.")}
        return state_dict


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform_act_fn = _activation(config.hidden_act)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states):
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(ember.zeros(config.vocab_size))

    def forward(self, hidden_states):
        return self.decoder(self.transform(hidden_states)) + self.bias


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, sequence_output):
        return self.predictions(sequence_output)


class BertForMaskedLM(_Pretrained):
    r"""BERT with its masked-language-model head; the decoder shares the word embeddings.

    Forward returns ``logits`` :math:`(B, L, V)` and, with ``labels`` (-100 where no loss),
    the cross-entropy ``loss``.
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                labels=None):
        hidden = self.bert(input_ids, attention_mask, token_type_ids, position_ids)[0]
        logits = self.cls(hidden)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                   ignore_index=-100)
        return BertOutput(loss=loss, logits=logits)

    def _rename(self, state_dict):
        state_dict = {k: v for k, v in state_dict.items()
                      if not k.startswith("bert.pooler.") and k != "cls.predictions.decoder.bias"}
        # The decoder weight is the word embedding matrix: one of the two may be missing.
        decoder, embedding = "cls.predictions.decoder.weight", \
            "bert.embeddings.word_embeddings.weight"
        if embedding in state_dict:
            state_dict[decoder] = state_dict[embedding]
        return state_dict


class BertForSequenceClassification(_Pretrained):
    r"""BERT with a linear classifier on the pooled output (``num_labels`` classes).

    Forward returns ``logits`` :math:`(B, C)` and, with ``labels``, the cross-entropy
    ``loss`` (the mean squared error when ``num_labels == 1``).
    """

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        dropout = (config.classifier_dropout if config.classifier_dropout is not None
                   else config.hidden_dropout_prob)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                labels=None):
        pooled = self.bert(input_ids, attention_mask, token_type_ids, position_ids)[1]
        logits = self.classifier(self.dropout(pooled))
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
            else:
                loss = F.cross_entropy(logits, labels)
        return BertOutput(loss=loss, logits=logits)
