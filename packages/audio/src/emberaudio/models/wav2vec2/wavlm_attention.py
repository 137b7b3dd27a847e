"""WavLM's self-attention: multi-head attention with a gated, bucketed relative position
bias (Chen et al., 2022), in torchaudio's parameter layout."""

from __future__ import annotations

import math

import ember
from ember import nn

__all__ = ["WavLMSelfAttention"]


class WavLMSelfAttention(nn.Module):
    """Multi-head self-attention for WavLM: a ``nn.MultiheadAttention`` 's projections, plus
    relative position embeddings (made in the first layer and handed on to the next ones)
    scaled by a gate computed from the query.

    Args:
        embed_dim (int): total dimension of the model.
        num_heads (int): the number of heads.
        dropout (float, optional): dropout on the attention weights. (Default: ``0.0``)
        bias (bool, optional): biases in the projections. (Default: ``True``)
        has_relative_attention_bias (bool, optional): own the relative position embedding
            (the first encoder layer does). (Default: ``False``)
        num_buckets (int, optional): buckets of relative positions. (Default: ``32``)
        max_distance (int, optional): the distance where buckets stop growing.
            (Default: ``128``)
        gru_rel_pos (bool, optional): gate the relative position bias. (Default: ``True``)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 has_relative_attention_bias: bool = False, num_buckets: int = 32,
                 max_distance: int = 128, gru_rel_pos: bool = True) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.has_relative_attention_bias = has_relative_attention_bias
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.rel_attn_embed = (nn.Embedding(num_buckets, num_heads)
                               if has_relative_attention_bias else None)
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.dropout = dropout
        self.attention = nn.MultiheadAttention(embed_dim, num_heads, dropout=dropout, bias=bias,
                                               batch_first=True)
        self.gru_rel_pos = gru_rel_pos
        if gru_rel_pos:
            self.gru_rel_pos_linear = nn.Linear(self.head_dim, 8)
            self.gru_rel_pos_const = nn.Parameter(ember.ones(1, num_heads, 1, 1))
        self.has_position_bias = True

    def compute_bias(self, query_length: int, key_length: int) -> ember.Tensor:
        """The relative position embedding, ``(num_heads, query_length, key_length)``."""
        device = self.rel_attn_embed.weight.device
        context = ember.arange(query_length, dtype=ember.long, device=device)[:, None]
        memory = ember.arange(key_length, dtype=ember.long, device=device)[None, :]
        buckets = self._relative_positions_bucket(memory - context, bidirectional=True)
        return self.rel_attn_embed(buckets).permute(2, 0, 1)

    def _relative_positions_bucket(self, relative_positions: ember.Tensor,
                                   bidirectional: bool = True) -> ember.Tensor:
        """Buckets of relative offsets: exact below ``num_buckets // 4`` (per direction),
        logarithmic up to ``max_distance``, one direction per half when bidirectional."""
        num_buckets = self.num_buckets
        buckets = ember.zeros_like(relative_positions, dtype=ember.long)
        if bidirectional:
            num_buckets //= 2
            buckets = buckets + (relative_positions > 0).to(ember.long) * num_buckets
            relative_positions = relative_positions.abs()
        else:
            relative_positions = -ember.clamp(relative_positions, max=0)
        max_exact = num_buckets // 2
        is_small = relative_positions < max_exact
        # log(0) never reaches the result (is_small covers it); clamping keeps it finite.
        scaled = (ember.log(relative_positions.clamp(min=1).float() / max_exact)
                  / math.log(self.max_distance / max_exact) * (num_buckets - max_exact))
        large = ember.clamp(max_exact + scaled.to(ember.long), max=num_buckets - 1)
        return buckets + ember.where(is_small, relative_positions, large)

    def forward(self, query: ember.Tensor, key_padding_mask: ember.Tensor | None = None,
                attention_mask: ember.Tensor | None = None,
                position_bias: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        """
        Args:
            query (Tensor): ``(batch, frames, embed_dim)``.
            key_padding_mask (Tensor or None, optional): ``(batch, frames)``, true (or 1) at
                padded keys. (Default: ``None``)
            attention_mask (Tensor or None, optional): an additive ``(batch, 1, frames,
                frames)`` mask (the encoder's, built from the lengths), added to the bias.
                (Default: ``None``)
            position_bias (Tensor or None, optional): ``(batch, num_heads, frames,
                frames)``, the first layer's bias, handed on. (Default: ``None``)

        Returns:
            (Tensor, Tensor or None): the output ``(batch, frames, embed_dim)`` and the
            position bias for the next layer.
        """
        bsz, seq_len, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise ValueError(f"expected embed_dim {self.embed_dim}, got {embed_dim}")
        if self.rel_attn_embed is not None and position_bias is None:
            position_bias = self.compute_bias(seq_len, seq_len).unsqueeze(0).repeat(
                bsz, 1, 1, 1)
        bias = None
        if position_bias is not None:
            bias = position_bias
            if self.gru_rel_pos:
                q = query.view(bsz, seq_len, self.num_heads, -1).permute(0, 2, 1, 3)
                gates = ember.sigmoid(self.gru_rel_pos_linear(q).view(
                    bsz, self.num_heads, seq_len, 2, 4).sum(-1))
                gate_a, gate_b = gates.chunk(2, dim=-1)
                gate = gate_a * (gate_b * self.gru_rel_pos_const - 1.0) + 2.0
                bias = gate.view(bsz, self.num_heads, -1, 1) * position_bias
            bias = bias.view(bsz, self.num_heads, seq_len, seq_len)
        extra = []
        if key_padding_mask is not None:
            pad = key_padding_mask.view(bsz, 1, 1, seq_len)
            extra.append(ember.zeros(pad.shape, dtype=query.dtype).masked_fill(
                pad.bool(), float("-inf")))
        if attention_mask is not None:
            extra.append(attention_mask.to(query.dtype))
        for mask in extra:
            bias = mask.expand(bsz, self.num_heads, seq_len, seq_len) if bias is None \
                else bias + mask
        projected = nn.functional.linear(query, self.attention.in_proj_weight,
                                         self.attention.in_proj_bias)
        shape = (bsz, seq_len, self.num_heads, self.head_dim)
        q, k, v = (t.reshape(shape).transpose(2, 1) for t in projected.chunk(3, -1))
        output = nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=bias, dropout_p=self.dropout if self.training else 0.0)
        output = output.transpose(1, 2).reshape(bsz, seq_len, self.embed_dim)
        return self.attention.out_proj(output), position_bias
