"""torchtext's RoBERTa / XLM-R: :class:`RobertaEncoderConf`, :class:`RobertaModel` (an
encoder and an optional head) and :class:`RobertaClassificationHead`. Hugging Face's layout of
the same model is :mod:`embertext.models.roberta.modeling_roberta`."""

import math
from dataclasses import asdict, dataclass

from ember import nn
from embertext.models.roberta.modules import TransformerEncoder

__all__ = ["RobertaEncoderConf", "RobertaEncoder", "RobertaClassificationHead", "RobertaModel"]


@dataclass
class RobertaEncoderConf:
    """The hyper-parameters of the encoder (RoBERTa base's by default)."""

    vocab_size: int = 50265
    embedding_dim: int = 768
    ffn_dimension: int = 3072
    padding_idx: int = 1
    max_seq_len: int = 514
    num_attention_heads: int = 12
    num_encoder_layers: int = 12
    dropout: float = 0.1
    scaling: float | None = None
    normalize_before: bool = False


class RobertaEncoder(nn.Module):
    r"""The encoder: ``forward(tokens, masked_tokens=None)`` gives ``(B, S, E)``, or the
    features of the positions where ``masked_tokens`` is true (``(N, E)``)."""

    def __init__(self, vocab_size, embedding_dim, ffn_dimension, padding_idx, max_seq_len,
                 num_attention_heads, num_encoder_layers, dropout=0.1, scaling=None,
                 normalize_before=False, freeze=False):
        super().__init__()
        if not scaling:
            scaling = 1.0 / math.sqrt(embedding_dim // num_attention_heads)
        self.transformer = TransformerEncoder(
            vocab_size=vocab_size, embedding_dim=embedding_dim, padding_idx=padding_idx,
            max_seq_len=max_seq_len, ffn_dimension=ffn_dimension,
            num_encoder_layers=num_encoder_layers, num_attention_heads=num_attention_heads,
            dropout=dropout, normalize_before=normalize_before, scaling=scaling,
            return_all_layers=False)
        if freeze:
            for p in self.parameters():
                p.requires_grad = False

    def forward(self, tokens, masked_tokens=None):
        output = self.transformer(tokens)
        if isinstance(output, list):
            output = output[-1]
        output = output.transpose(1, 0)
        if masked_tokens is not None:
            output = output[masked_tokens.bool(), :]
        return output


class RobertaClassificationHead(nn.Module):
    r"""A classifier on the first token's features: dropout, ``dense``, the activation,
    dropout, ``out_proj``.

    Args:
        num_classes (int): the classes.
        input_dim (int): the encoder's embedding size.
        inner_dim (int, optional): the hidden size; ``input_dim`` by default.
        dropout (float): the dropout. Default: 0.1.
        activation: the activation's module class. Default: ``nn.ReLU``.
    """

    def __init__(self, num_classes, input_dim, inner_dim=None, dropout=0.1,
                 activation=nn.ReLU):
        super().__init__()
        inner_dim = inner_dim or input_dim
        self.dense = nn.Linear(input_dim, inner_dim)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(inner_dim, num_classes)
        self.activation_fn = activation()

    def forward(self, features):
        x = self.dropout(features[:, 0, :])
        x = self.dropout(self.activation_fn(self.dense(x)))
        return self.out_proj(x)


class RobertaModel(nn.Module):
    r"""torchtext's RoBERTa: the encoder of ``encoder_conf`` and an optional ``head``.

    Args:
        encoder_conf (RobertaEncoderConf): the encoder's hyper-parameters.
        head (nn.Module, optional): applied to the encoder's ``(B, S, E)`` features.
        freeze_encoder (bool): ``requires_grad=False`` on the encoder's parameters.

    Examples::

        >>> conf = RobertaEncoderConf(vocab_size=100, embedding_dim=32, ffn_dimension=64,
        ...                           num_attention_heads=2, num_encoder_layers=2)
        >>> model = RobertaModel(conf, RobertaClassificationHead(num_classes=2, input_dim=32))
        >>> model(ember.tensor([[0, 5, 6, 2]])).shape
        (1, 2)
    """

    def __init__(self, encoder_conf, head=None, freeze_encoder=False):
        super().__init__()
        if not isinstance(encoder_conf, RobertaEncoderConf):
            raise TypeError(f"encoder_conf must be a RobertaEncoderConf, got "
                            f"{type(encoder_conf).__name__}")
        self.encoder = RobertaEncoder(**asdict(encoder_conf), freeze=freeze_encoder)
        self.head = head

    def forward(self, tokens, masked_tokens=None):
        features = self.encoder(tokens, masked_tokens)
        if self.head is None:
            return features
        return self.head(features)
