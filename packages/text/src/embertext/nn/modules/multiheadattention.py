"""torchtext's composable multi-head attention: in-projection, attention and
out-projection as separate, swappable modules."""

import ember
from ember import nn
from ember.nn import functional as F

__all__ = ["MultiheadAttentionContainer", "InProjContainer", "ScaledDotProduct",
           "generate_square_subsequent_mask"]


class MultiheadAttentionContainer(nn.Module):
    r"""Multi-head attention made of an in-projection container, an attention layer and an
    out-projection.

    Args:
        nhead (int): the number of heads.
        in_proj_container: projects query, key and value (an :class:`InProjContainer`).
        attention_layer: attends over heads folded into the batch: it gets
            :math:`(L, N H, E / H)` queries and :math:`(S, N H, E / H)` keys and values
            (a :class:`ScaledDotProduct`).
        out_proj: the output projection (an ``nn.Linear``).
        batch_first (bool): inputs and outputs are :math:`(N, L, E)`. Default: ``False``.

    Shape:
        - query: :math:`(L, N, E)`; key, value: :math:`(S, N, E)`.
        - Outputs: :math:`(L, N, E)` and the weights :math:`(N H, L, S)`.

    Examples::

        >>> embed_dim, num_heads, bsz = 10, 5, 64
        >>> in_proj = InProjContainer(nn.Linear(embed_dim, embed_dim),
        ...                           nn.Linear(embed_dim, embed_dim),
        ...                           nn.Linear(embed_dim, embed_dim))
        >>> mha = MultiheadAttentionContainer(num_heads, in_proj, ScaledDotProduct(),
        ...                                   nn.Linear(embed_dim, embed_dim))
        >>> out, weights = mha(ember.rand(21, bsz, embed_dim), ember.rand(16, bsz, embed_dim),
        ...                    ember.rand(16, bsz, embed_dim))
        >>> out.shape
        ember.Size([21, 64, 10])
    """

    def __init__(self, nhead, in_proj_container, attention_layer, out_proj, batch_first=False):
        super().__init__()
        self.nhead = nhead
        self.in_proj_container = in_proj_container
        self.attention_layer = attention_layer
        self.out_proj = out_proj
        self.batch_first = batch_first

    def _fold_heads(self, x, length, batch, name):
        if x.size(-1) % self.nhead:
            raise AssertionError(f"{name}'s embed_dim must be divisible by the number of heads")
        return x.reshape(length, batch * self.nhead, x.size(-1) // self.nhead)

    def forward(self, query, key, value, attn_mask=None, bias_k=None, bias_v=None):
        if self.batch_first:
            query, key, value = (t.transpose(-3, -2) for t in (query, key, value))
        tgt_len, src_len = query.size(-3), key.size(-3)
        bsz, embed_dim = query.size(-2), query.size(-1)
        q, k, v = self.in_proj_container(query, key, value)
        q = self._fold_heads(q, tgt_len, bsz, "query")
        k = self._fold_heads(k, src_len, bsz, "key")
        v = self._fold_heads(v, src_len, bsz, "value")
        attn_output, attn_output_weights = self.attention_layer(
            q, k, v, attn_mask=attn_mask, bias_k=bias_k, bias_v=bias_v)
        attn_output = self.out_proj(attn_output.reshape(tgt_len, bsz, embed_dim))
        if self.batch_first:
            attn_output = attn_output.transpose(-3, -2)
        return attn_output, attn_output_weights


class ScaledDotProduct(nn.Module):
    r"""Scaled dot-product attention over projected queries, keys and values.

    Args:
        dropout (float): the dropout probability of the attention weights. Default: 0.
        batch_first (bool): inputs and outputs are :math:`(N H, L, E / H)`. Default: ``False``.

    Shape:
        - query: :math:`(..., L, N H, E / H)`; key, value: :math:`(..., S, N H, E / H)`.
        - attn_mask: bool :math:`(N H, L, S)` or :math:`(1, L, S)`, ``True`` where a position
          may not attend.
        - bias_k, bias_v: :math:`(1, N H, E / H)`, a key and value added at the end.
        - Outputs: :math:`(..., L, N H, E / H)` and :math:`(N H, L, S)`.

    Examples::

        >>> sdp = ScaledDotProduct(dropout=0.1)
        >>> q = ember.randn(21, 256, 3)
        >>> out, weights = sdp(q, q, q)
        >>> out.shape, weights.shape
        (ember.Size([21, 256, 3]), ember.Size([256, 21, 21]))
    """

    def __init__(self, dropout=0.0, batch_first=False):
        super().__init__()
        self.dropout = dropout
        self.batch_first = batch_first

    def forward(self, query, key, value, attn_mask=None, bias_k=None, bias_v=None):
        if self.batch_first:
            query, key, value = (t.transpose(-3, -2) for t in (query, key, value))
        if bias_k is not None and bias_v is not None:
            if not (key.size(-1) == bias_k.size(-1) and key.size(-2) == bias_k.size(-2)
                    and bias_k.size(-3) == 1):
                raise AssertionError("Shape of bias_k is not supported")
            if not (value.size(-1) == bias_v.size(-1) and value.size(-2) == bias_v.size(-2)
                    and bias_v.size(-3) == 1):
                raise AssertionError("Shape of bias_v is not supported")
            key = ember.cat([key, bias_k])
            value = ember.cat([value, bias_v])
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
        tgt_len, head_dim = query.size(-3), query.size(-1)
        if not query.size(-1) == key.size(-1) == value.size(-1):
            raise AssertionError("The feature dim of query, key, value must be equal.")
        if key.size() != value.size():
            raise AssertionError("Shape of key, value must match")
        src_len = key.size(-3)
        batch_heads = max(query.size(-2), key.size(-2))
        query, key, value = (t.transpose(-2, -3) for t in (query, key, value))
        query = query * (float(head_dim) ** -0.5)
        if attn_mask is not None:
            if attn_mask.dim() != 3:
                raise RuntimeError("attn_mask must be a 3D tensor.")
            if (attn_mask.size(-1) != src_len or attn_mask.size(-2) != tgt_len
                    or attn_mask.size(-3) not in (1, batch_heads)):
                raise RuntimeError("The size of the attn_mask is not correct.")
            if attn_mask.dtype != ember.bool:
                raise RuntimeError("Only bool tensor is supported for attn_mask")
        weights = ember.matmul(query, key.transpose(-2, -1))
        if attn_mask is not None:
            weights = weights.masked_fill(attn_mask, -1e8)
        weights = F.dropout(F.softmax(weights, dim=-1), p=self.dropout, training=self.training)
        output = ember.matmul(weights, value)
        if self.batch_first:
            return output, weights
        return output.transpose(-3, -2), weights


class InProjContainer(nn.Module):
    r"""The query, key and value projections of multi-head attention, applied before the
    heads are split.

    Args:
        query_proj, key_proj, value_proj: the projection layers (``nn.Linear``).
    """

    def __init__(self, query_proj, key_proj, value_proj):
        super().__init__()
        self.query_proj = query_proj
        self.key_proj = key_proj
        self.value_proj = value_proj

    def forward(self, query, key, value):
        return self.query_proj(query), self.key_proj(key), self.value_proj(value)


def generate_square_subsequent_mask(nbatch, sz):
    r"""A ``(nbatch, sz, sz)`` bool mask, ``True`` on and below the diagonal (as torchtext
    makes it: pass ``~mask`` to hide the future from each position)."""
    mask = (ember.triu(ember.ones(sz, sz)) == 1).transpose(0, 1)
    return mask.repeat(nbatch, 1, 1)
