"""torchtext's RoBERTa model (``torchtext.models.roberta.model``): its configuration, the
encoder and the classification head, with torchtext's module names and state-dict keys, so
that torchtext's RoBERTa and XLM-R checkpoints load."""

import math
from dataclasses import asdict, dataclass

import ember
from ember import nn
from embertext.models.roberta.modules import TransformerEncoder

__all__ = ["RobertaEncoderConf", "RobertaEncoder", "RobertaClassificationHead", "RobertaModel"]


@dataclass
class RobertaEncoderConf:
    r"""The hyper-parameters of :class:`RobertaModel`'s encoder (RoBERTa-base's by default)."""

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
    r"""The RoBERTa encoder: a :class:`~embertext.models.roberta.modules.TransformerEncoder`
    (``transformer``) whose output is returned batch first, :math:`(B, T, C)`.

    Args:
        vocab_size, embedding_dim, ffn_dimension, padding_idx, max_seq_len,
        num_attention_heads, num_encoder_layers, dropout, scaling, normalize_before: as in
            :class:`RobertaEncoderConf`.
        freeze (bool): set ``requires_grad=False`` on the encoder's parameters.
    """

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
            for parameter in self.parameters():
                parameter.requires_grad = False

    def forward(self, tokens, masked_tokens=None):
        r"""The features :math:`(B, T, C)` of ``tokens`` :math:`(B, T)`; with
        ``masked_tokens`` (a :math:`(B, T)` mask), those of the masked positions only,
        :math:`(N, C)`."""
        output = self.transformer(tokens)
        if isinstance(output, list):
            output = output[-1]
        output = output.transpose(1, 0)
        if masked_tokens is not None:
            output = output[masked_tokens.to(ember.bool), :]
        return output


class RobertaClassificationHead(nn.Module):
    r"""A classifier on the first token's features (``<s>``): dropout, ``dense``, the
    activation, dropout, ``out_proj``.

    Args:
        num_classes (int): the number of classes.
        input_dim (int): the encoder's width.
        inner_dim (int, optional): the width of ``dense`` (``input_dim``).
        dropout (float): the dropout probability. Default: 0.1.
        activation: the activation module class. Default: ``nn.ReLU``.

    Shape:
        - Input: :math:`(B, T, C)`. Output: :math:`(B, \text{num\_classes})`.
    """

    def __init__(self, num_classes, input_dim, inner_dim=None, dropout=0.1,
                 activation=nn.ReLU):
        super().__init__()
        if not inner_dim:
            inner_dim = input_dim
        self.dense = nn.Linear(input_dim, inner_dim)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(inner_dim, num_classes)
        self.activation_fn = activation()

    def forward(self, features):
        x = self.dropout(features[:, 0, :])
        x = self.dropout(self.activation_fn(self.dense(x)))
        return self.out_proj(x)


class RobertaModel(nn.Module):
    r"""RoBERTa (Liu et al., 2019) and XLM-R (Conneau et al., 2020) in torchtext's layout:
    a :class:`RobertaEncoder` (``encoder``) and an optional task ``head`` applied to its
    features. Hugging Face's layout is
    :class:`embertext.models.roberta.modeling_roberta.RobertaModel`.

    Args:
        encoder_conf (RobertaEncoderConf): the encoder's hyper-parameters.
        head (nn.Module, optional): applied to the features :math:`(B, T, C)`.
        freeze_encoder (bool): set ``requires_grad=False`` on the encoder's parameters.

    Examples::

        >>> roberta_encoder_conf = RobertaEncoderConf(vocab_size=250002)
        >>> encoder = RobertaModel(encoder_conf=roberta_encoder_conf)
        >>> classifier_head = RobertaClassificationHead(num_classes=2, input_dim=768)
        >>> classifier = RobertaModel(encoder_conf=roberta_encoder_conf, head=classifier_head)
    """

    def __init__(self, encoder_conf, head=None, freeze_encoder=False):
        super().__init__()
        if not isinstance(encoder_conf, RobertaEncoderConf):
            raise AssertionError("encoder_conf must be a RobertaEncoderConf, got "
                                 f"{type(encoder_conf).__name__}")
        self.encoder = RobertaEncoder(**asdict(encoder_conf), freeze=freeze_encoder)
        self.head = head

    def forward(self, tokens, masked_tokens=None):
        """The encoder's features of ``tokens``, through ``head`` when there is one."""
        features = self.encoder(tokens, masked_tokens)
        if self.head is None:
            return features
        return self.head(features)
