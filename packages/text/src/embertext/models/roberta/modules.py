"""The building blocks of torchtext's RoBERTa encoder (``torchtext.models.roberta.modules``):
positions counted from the padding index, and the Transformer stack on PyTorch's
``nn.TransformerEncoderLayer``, with torchtext's state-dict keys. Checkpoints written before
torchtext moved to ``nn.TransformerEncoderLayer`` (``attention.input_projection``,
``residual_mlp.mlp.0`` ...) load too: their keys are renamed while loading."""

import ember
from ember import nn

__all__ = ["PositionalEmbedding", "TransformerEncoderLayer", "TransformerEncoder"]

# a layer's keys in torchtext's earlier layout -> in nn.TransformerEncoderLayer's
_EARLIER_NAMES = {
    "self_attn.in_proj_weight": "attention.input_projection.weight",
    "self_attn.in_proj_bias": "attention.input_projection.bias",
    "self_attn.out_proj.weight": "attention.output_projection.weight",
    "self_attn.out_proj.bias": "attention.output_projection.bias",
    "linear1.weight": "residual_mlp.mlp.0.weight",
    "linear1.bias": "residual_mlp.mlp.0.bias",
    "linear2.weight": "residual_mlp.mlp.3.weight",
    "linear2.bias": "residual_mlp.mlp.3.bias",
    "norm1.weight": "attention_layer_norm.weight",
    "norm1.bias": "attention_layer_norm.bias",
    "norm2.weight": "final_layer_norm.weight",
    "norm2.bias": "final_layer_norm.bias",
}


def _rename_earlier_keys(state_dict, new_prefix, old_prefix):
    """Move a layer's keys from ``old_prefix`` + earlier name to ``new_prefix`` + name."""
    for new, old in _EARLIER_NAMES.items():
        if old_prefix + old in state_dict:
            state_dict[new_prefix + new] = state_dict.pop(old_prefix + old)


def _encoder_layer(embedding_dim, num_attention_heads, ffn_dimension, dropout,
                   normalize_before):
    return nn.TransformerEncoderLayer(
        d_model=embedding_dim, nhead=num_attention_heads,
        dim_feedforward=ffn_dimension or 4 * embedding_dim, dropout=dropout,
        activation="gelu", batch_first=True, norm_first=normalize_before)


class PositionalEmbedding(nn.Module):
    r"""Learned positions: a token's position is its count among the non-padding tokens of
    its row plus ``pad_index``, so padding keeps position ``pad_index`` (a zero row).

    Args:
        num_embeddings (int): the number of positions (``max_seq_len``).
        embedding_dim (int): the size of each position vector.
        pad_index (int): the padding id.

    Shape:
        - Input: :math:`(B, T)` token ids. Output: :math:`(B, T, E)`.
    """

    def __init__(self, num_embeddings, embedding_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim, pad_index)
        self.pad_index = pad_index

    def forward(self, input):
        return self.embedding(self._make_positions(input, self.pad_index))

    def max_positions(self):
        """The longest sequence the positions cover."""
        num_embeddings = self.embedding.num_embeddings
        if self.pad_index is not None:
            return num_embeddings - self.pad_index - 1
        return num_embeddings

    def _make_positions(self, tensor, pad_index):
        masked = tensor.ne(pad_index).long()
        return ember.cumsum(masked, dim=1) * masked + pad_index


class TransformerEncoderLayer(nn.Module):
    r"""One encoder layer in torchtext's ``(T, B, C)`` layout: a PyTorch
    ``nn.TransformerEncoderLayer`` (GELU, batch first) held as ``better_transformer``.

    Args:
        embedding_dim (int): the model width.
        num_attention_heads (int): the attention heads.
        ffn_dimension (int, optional): the feed-forward width (``4 * embedding_dim``).
        dropout (float): the dropout probability. Default: 0.1.
        normalize_before (bool): layer norm before each sub-block (pre-norm).
        scaling (float, optional): accepted as torchtext does; the attention scale is
            ``head_dim ** -0.5``.
    """

    def __init__(self, embedding_dim, num_attention_heads, ffn_dimension=None, dropout=0.1,
                 normalize_before=False, scaling=None):
        super().__init__()
        self.better_transformer = _encoder_layer(embedding_dim, num_attention_heads,
                                                 ffn_dimension, dropout, normalize_before)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        _rename_earlier_keys(state_dict, prefix + "better_transformer.", prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input, key_padding_mask, attn_mask=None):
        """``input`` :math:`(T, B, C)`, ``key_padding_mask`` :math:`(B, T)` (True at
        padding) -> :math:`(T, B, C)`."""
        return self.better_transformer(input.transpose(0, 1), attn_mask,
                                       key_padding_mask).transpose(0, 1)


class TransformerEncoder(nn.Module):
    r"""Token and position embeddings, their layer norm (before the stack, or after it with
    ``normalize_before``) and a stack of ``nn.TransformerEncoderLayer`` (``layers``, a PyTorch
    ``nn.TransformerEncoder``) that ignores the tokens equal to ``padding_idx``.

    Args:
        vocab_size (int), embedding_dim (int), padding_idx (int), max_seq_len (int),
        num_encoder_layers (int), num_attention_heads (int): the sizes.
        ffn_dimension (int, optional): the feed-forward width (``4 * embedding_dim``).
        dropout (float): the dropout probability. Default: 0.1.
        normalize_before (bool): pre-norm layers, the embedding layer norm applied to the
            output instead of the embeddings.
        scaling (float, optional): accepted as torchtext does (unused).
        return_all_layers (bool): return the embeddings and every layer's output.

    Shape:
        - Input: :math:`(B, T)` token ids.
        - Output: :math:`(T, B, C)`, or a list of ``num_encoder_layers + 1`` of them.

    As in PyTorch, in evaluation without autograd the stack's output is zero at the padded
    positions (the nested-tensor path of ``nn.TransformerEncoder``); ``attn_mask`` is used
    only with ``return_all_layers``, as in torchtext.
    """

    def __init__(self, vocab_size, embedding_dim, padding_idx, max_seq_len, num_encoder_layers,
                 num_attention_heads, ffn_dimension=None, dropout=0.1, normalize_before=False,
                 scaling=None, return_all_layers=False):
        super().__init__()
        self.padding_idx = padding_idx
        self.token_embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        layer = _encoder_layer(embedding_dim, num_attention_heads, ffn_dimension, dropout,
                               normalize_before)
        self.layers = nn.TransformerEncoder(encoder_layer=layer, num_layers=num_encoder_layers,
                                            enable_nested_tensor=True, mask_check=False)
        self.positional_embedding = PositionalEmbedding(max_seq_len, embedding_dim, padding_idx)
        self.embedding_layer_norm = nn.LayerNorm(embedding_dim)
        self.dropout = nn.Dropout(dropout)
        self.normalize_before = normalize_before
        self.return_all_layers = return_all_layers

    def forward(self, tokens, attn_mask=None):
        if attn_mask is not None and not (attn_mask.is_floating_point()
                                          or attn_mask.dtype == ember.bool):
            raise AssertionError(
                f"Only float or bool types are supported for attn_mask not {attn_mask.dtype}")
        padding_mask = tokens.eq(self.padding_idx)
        embedded = self.token_embedding(tokens) + self.positional_embedding(tokens)
        if not self.normalize_before:
            embedded = self.embedding_layer_norm(embedded)
        embedded = self.dropout(embedded)
        if self.return_all_layers:
            encoded = embedded
            states = [encoded.transpose(1, 0)]
            for layer in self.layers.layers:
                encoded = layer(encoded, src_key_padding_mask=padding_mask, src_mask=attn_mask)
                states.append(encoded.transpose(1, 0))
            if self.normalize_before:
                states = [self.embedding_layer_norm(state) for state in states]
            return states
        encoded = self.layers(embedded, src_key_padding_mask=padding_mask).transpose(1, 0)
        if self.normalize_before:
            encoded = self.embedding_layer_norm(encoded)
        return encoded

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for i in range(self.layers.num_layers):
            _rename_earlier_keys(state_dict, f"{prefix}layers.layers.{i}.",
                                 f"{prefix}layers.{i}.")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
