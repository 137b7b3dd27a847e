"""The layers of torchtext's RoBERTa encoder, in torchtext's layout (its state-dict keys):
token and learned positional embeddings, a layer norm, and ``nn.TransformerEncoder`` layers
with GELU."""

import ember
from ember import nn

__all__ = ["PositionalEmbedding", "TransformerEncoderLayer", "TransformerEncoder"]

# torchtext's checkpoints before its switch to nn.TransformerEncoderLayer use fairseq's names;
# loading renames them (the value: the older name).
_OLD_NAMES = {
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


def _rename_old_keys(state_dict, pairs, strict, missing_keys):
    """Move each ``old`` key of ``state_dict`` to its ``new`` name; a ``new`` name found
    under neither is missing (when ``strict``)."""
    for new, old in pairs:
        if old in state_dict:
            state_dict[new] = state_dict.pop(old)
        elif new not in state_dict and strict:
            missing_keys.append(new)


def _encoder_layer(embedding_dim, num_attention_heads, ffn_dimension, dropout,
                   normalize_before):
    return nn.TransformerEncoderLayer(
        d_model=embedding_dim, nhead=num_attention_heads, dim_feedforward=ffn_dimension,
        dropout=dropout, batch_first=True, activation="gelu", norm_first=normalize_before)


class PositionalEmbedding(nn.Module):
    r"""Learned positions, counted from ``pad_index + 1`` over the non-padding tokens (a
    padding token's position is ``pad_index``).

    Args:
        num_embeddings (int): the number of positions (the longest sequence + pad_index + 1).
        embedding_dim (int): the embedding size.
        pad_index (int): the padding id.
    """

    def __init__(self, num_embeddings, embedding_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim, pad_index)
        self.pad_index = pad_index

    def forward(self, input):
        return self.embedding(self._make_positions(input, self.pad_index))

    def max_positions(self):
        """The longest sequence the positions cover."""
        if self.pad_index is not None:
            return self.embedding.num_embeddings - self.pad_index - 1
        return self.embedding.num_embeddings

    def _make_positions(self, tensor, pad_index):
        masked = tensor.ne(pad_index).long()
        return masked.cumsum(dim=1) * masked + pad_index


class TransformerEncoderLayer(nn.Module):
    r"""One encoder layer (``nn.TransformerEncoderLayer``, batch first, GELU) under the name
    ``better_transformer``, taking ``(S, B, E)`` inputs.

    Args:
        embedding_dim (int): the model size.
        num_attention_heads (int): the attention heads.
        ffn_dimension (int, optional): the feed-forward size; ``4 * embedding_dim`` by default.
        dropout (float): the dropout. Default: 0.1.
        normalize_before (bool): pre-norm (the norms before attention and feed-forward).
        scaling (float, optional): unused, as in torchtext (the attention scales by
            ``1 / sqrt(head_dim)``).
    """

    def __init__(self, embedding_dim, num_attention_heads, ffn_dimension=None, dropout=0.1,
                 normalize_before=False, scaling=None):
        super().__init__()
        self.better_transformer = _encoder_layer(
            embedding_dim, num_attention_heads, ffn_dimension or embedding_dim * 4, dropout,
            normalize_before)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        _rename_old_keys(state_dict, [(f"{prefix}better_transformer.{new}", prefix + old)
                                      for new, old in _OLD_NAMES.items()], strict, missing_keys)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input, key_padding_mask, attn_mask=None):
        return self.better_transformer(input.transpose(0, 1), attn_mask,
                                       key_padding_mask).transpose(0, 1)


class TransformerEncoder(nn.Module):
    r"""torchtext's RoBERTa encoder: token + positional embeddings, a layer norm (after the
    layers instead with ``normalize_before``), dropout and ``num_encoder_layers`` layers.

    ``forward(tokens)`` returns ``(S, B, E)``, or with ``return_all_layers`` the list of the
    embeddings and each layer's output, each ``(S, B, E)``. Positions with ``padding_idx``
    are masked out of the attention.
    """

    def __init__(self, vocab_size, embedding_dim, padding_idx, max_seq_len, num_encoder_layers,
                 num_attention_heads, ffn_dimension=None, dropout=0.1, normalize_before=False,
                 scaling=None, return_all_layers=False):
        super().__init__()
        self.padding_idx = padding_idx
        self.token_embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        layer = _encoder_layer(embedding_dim, num_attention_heads,
                               ffn_dimension or 4 * embedding_dim, dropout, normalize_before)
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
            raise TypeError(f"Only float or bool types are supported for attn_mask not "
                            f"{attn_mask.dtype}")
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
        # as torchtext: without return_all_layers, attn_mask is checked but not applied
        encoded = self.layers(embedded, src_key_padding_mask=padding_mask).transpose(1, 0)
        if self.normalize_before:
            encoded = self.embedding_layer_norm(encoded)
        return encoded

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        _rename_old_keys(state_dict, [
            (f"{prefix}layers.layers.{i}.{new}", f"{prefix}layers.{i}.{old}")
            for i in range(self.layers.num_layers) for new, old in _OLD_NAMES.items()],
            strict, missing_keys)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

