"""The building blocks of T5 (Raffel et al., 2020) with torchtext's module names
(``torchtext.models.t5.modules``), and the pieces the Hugging Face layout
(:mod:`embertext.models.t5.modeling_t5`) shares with them: the RMS layer norm, the
relative position buckets and bias, attention without the 1/sqrt(d) scaling, and the
feed-forward block."""

import math

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models.bert import _activation

__all__ = ["T5MultiheadAttention", "T5LayerNorm", "T5Layer", "T5Encoder", "T5Decoder"]


class T5LayerNorm(nn.Module):
    r"""T5's layer norm: a scale and no shift, without subtracting the mean (root mean square
    normalization), the mean of squares taken in float32.

    .. math:: y = w \cdot x / \sqrt{\mathrm{mean}(x^2) + \epsilon}

    Args:
        d_model (int): the size of the last dimension.
        eps (float): added to the mean of squares. Default: 1e-6.
    """

    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(ember.ones(d_model))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(ember.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * ember.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in (ember.float16, ember.bfloat16):
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
                             max_distance=128):
    """The bucket (0 .. num_buckets - 1) of each relative position ``key - query``: exact
    buckets for small distances, logarithmically wider ones up to ``max_distance``, and one
    bucket for all beyond. ``bidirectional=False`` (the decoder) puts every future position
    in bucket 0; otherwise half the buckets are for positive distances."""
    buckets = ember.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).to(ember.long) * num_buckets
        relative_position = relative_position.abs()
    else:
        relative_position = -ember.minimum(relative_position,
                                           ember.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    # The small distances take the exact branch: clamping them keeps log() finite.
    scaled = (ember.log(relative_position.clamp(min=max_exact).float() / max_exact)
              / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    if_large = (max_exact + scaled.to(ember.long)).clamp(max=num_buckets - 1)
    return buckets + ember.where(is_small, relative_position, if_large)


def compute_position_bias(embedding, query_length, key_length, bidirectional, num_buckets,
                          max_distance, offset=0):
    """The (1, heads, query_length, key_length) relative position bias looked up in
    ``embedding`` (num_buckets, heads); queries sit at ``offset .. offset + query_length``."""
    device = embedding.weight.device
    context = ember.arange(query_length, device=device)[:, None] + offset
    memory = ember.arange(key_length, device=device)[None, :]
    buckets = relative_position_bucket(memory - context, bidirectional, num_buckets,
                                       max_distance)
    return embedding(buckets).permute(2, 0, 1).unsqueeze(0)


def attend(q, k, v, bias, dropout_p, training):
    """T5's attention on (B, H, L, D) heads: ``softmax(q k^T + bias) v`` (no 1/sqrt(D): the
    scale is folded into the weights). Returns the (B, L, H * D) output and the weights."""
    scores = ember.matmul(q, k.transpose(-1, -2))
    if bias is not None:
        scores = scores + bias
    weights = F.dropout(F.softmax(scores, dim=-1), p=dropout_p, training=training)
    batch, heads, length, size = q.shape[0], q.shape[1], q.shape[2], v.shape[-1]
    out = ember.matmul(weights, v).transpose(1, 2)
    return out.reshape(batch, length, heads * size), weights


def feed_forward(x, act, dropout, wo, wi=None, wi_0=None, wi_1=None):
    """``wo(act(wi x))``, or the gated ``wo(act(wi_0 x) * wi_1 x)`` of T5 v1.1 / Flan-T5."""
    h = act(wi(x)) if wi is not None else act(wi_0(x)) * wi_1(x)
    h = dropout(h)
    if h.dtype != wo.weight.dtype:
        h = h.to(wo.weight.dtype)
    return wo(h)


def split_heads(x, heads):
    """(B, L, H * D) -> (B, H, L, D)."""
    batch, length, features = x.shape
    return x.view(batch, length, heads, features // heads).transpose(1, 2)


class T5MultiheadAttention(nn.MultiheadAttention):
    r"""Multi-head attention with T5's relative position bias and separate query, key and
    value projections of ``num_heads * qkv_dim`` features, batch first.

    Args:
        embed_dim (int): the model dimension.
        num_heads (int): the number of heads.
        is_decoder (bool): causal self-attention (unidirectional buckets).
        dropout (float): dropout on the attention weights.
        bias (bool): biases on the projections. Default: False.
        qkv_dim (int): the size of each head. Default: 64.
        compute_relative_attention_bias (bool): own the relative position embedding (the
            first layer of a stack; the others reuse its bias).
        relative_attention_num_buckets (int): the number of buckets. Default: 32.
        relative_attention_max_distance (int): distances beyond share a bucket.
            Default: 128.
    """

    def __init__(self, embed_dim, num_heads, is_decoder=False, dropout=0.0, bias=False,
                 qkv_dim=64, compute_relative_attention_bias=False,
                 relative_attention_num_buckets=32, relative_attention_max_distance=128,
                 device=None, dtype=None):
        super().__init__(embed_dim, num_heads, dropout, bias, False, False, qkv_dim, qkv_dim,
                         True, device, dtype)
        factory = {"device": device, "dtype": dtype}
        self.is_decoder = is_decoder
        self.inner_dim = qkv_dim * num_heads
        self.q_proj_weight = nn.Parameter(ember.empty(self.inner_dim, embed_dim, **factory))
        self.k_proj_weight = nn.Parameter(ember.empty(self.inner_dim, embed_dim, **factory))
        self.v_proj_weight = nn.Parameter(ember.empty(self.inner_dim, embed_dim, **factory))
        for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            nn.init.xavier_uniform_(weight)
        self.register_parameter("in_proj_weight", None)
        self.in_proj_bias = (nn.Parameter(ember.zeros(3 * self.inner_dim, **factory))
                             if bias else None)
        self.out_proj = nn.Linear(self.inner_dim, embed_dim, bias=bias, **factory)
        self.compute_relative_attention_bias = compute_relative_attention_bias
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.relative_attention_max_distance = relative_attention_max_distance
        self.relative_attention_bias = (
            nn.Embedding(relative_attention_num_buckets, num_heads, **factory)
            if compute_relative_attention_bias else None)

    def forward(self, query, key, value, query_length=None, key_padding_mask=None,
                need_weights=True, attn_mask=None, average_attn_weights=False,
                position_bias=None, past_key_value=None):
        r"""Attend from ``query`` (B, L, E) to ``key`` / ``value`` (B, S, E).

        Self-attention when ``query`` equals ``key``: its ``past_key_value`` (the cached keys
        and values, (B, H, P, D)) are extended; in cross-attention they are used as they are.
        ``attn_mask`` (L, S) and ``key_padding_mask`` (B, S) are boolean (True: hidden) or
        additive float masks.

        Returns:
            the output (B, L, E), the position bias (1, H, L, S), the attention weights
            (B, H, L, S) (averaged over heads with ``average_attn_weights``; None without
            ``need_weights``) and the new (keys, values).
        """
        if query.dim() != 3:
            raise ValueError(f"query must be (batch, length, embed_dim), got shape "
                             f"{tuple(query.shape)}")
        is_self_attention = query is key or (query.shape == key.shape
                                             and bool(ember.equal(query, key)))
        batch, tgt_len, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise ValueError(f"was expecting embedding dimension of {self.embed_dim}, but got "
                             f"{embed_dim}")
        if past_key_value is not None and len(past_key_value) != 2:
            raise ValueError(f"past_key_value should have 2 past states: keys and values. Got "
                             f"{len(past_key_value)} past states")
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        q = split_heads(F.linear(query, self.q_proj_weight, b_q), self.num_heads)
        if is_self_attention:
            k = split_heads(F.linear(query, self.k_proj_weight, b_k), self.num_heads)
            v = split_heads(F.linear(query, self.v_proj_weight, b_v), self.num_heads)
            if past_key_value is not None:
                k = ember.cat([past_key_value[0], k], dim=2)
                v = ember.cat([past_key_value[1], v], dim=2)
        elif past_key_value is not None:
            k, v = past_key_value
        else:
            k = split_heads(F.linear(key, self.k_proj_weight, b_k), self.num_heads)
            v = split_heads(F.linear(value, self.v_proj_weight, b_v), self.num_heads)
        src_len = k.shape[2]
        dtype = q.dtype

        if attn_mask is None and self.is_decoder and is_self_attention:
            attn_mask = ember.ones(tgt_len, src_len, dtype=ember.bool,
                                   device=query.device).triu(diagonal=src_len - tgt_len + 1)
        mask = None
        if attn_mask is not None:
            if attn_mask.dim() != 2:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
            if attn_mask.dtype == ember.uint8:
                attn_mask = attn_mask.to(ember.bool)
            mask = _additive(attn_mask, dtype)[None, None]
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (batch, src_len):
                if past_key_value is None:
                    raise ValueError(f"expecting key_padding_mask shape of {(batch, src_len)}, "
                                     f"but got {tuple(key_padding_mask.shape)}")
                key_padding_mask = key_padding_mask.expand(batch, src_len)
            if key_padding_mask.dtype == ember.uint8:
                key_padding_mask = key_padding_mask.to(ember.bool)
            padding = _additive(key_padding_mask, dtype)[:, None, None, :]
            mask = padding if mask is None else mask + padding

        if position_bias is None:
            if self.relative_attention_bias is None:
                position_bias = ember.zeros(1, self.num_heads, tgt_len, src_len, dtype=dtype,
                                            device=query.device)
            else:
                length = src_len if is_self_attention else tgt_len
                position_bias = compute_position_bias(
                    self.relative_attention_bias, length, src_len, not self.is_decoder,
                    self.relative_attention_num_buckets, self.relative_attention_max_distance)
                position_bias = position_bias[:, :, -tgt_len:, :]
        bias = position_bias if mask is None else position_bias + mask
        out, weights = attend(q, k, v, bias, self.dropout, self.training)
        out = self.out_proj(out)
        if not need_weights:
            weights = None
        elif average_attn_weights:
            weights = weights.mean(dim=1)
        return out, position_bias, weights, (k, v)


def _additive(mask, dtype):
    """A boolean mask (True: hidden) as 0 / -inf; a float mask as it is."""
    if mask.dtype == ember.bool:
        return ember.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    if not mask.is_floating_point():
        raise TypeError(f"Only float and bool types are supported for masks, not {mask.dtype}")
    return mask.to(dtype)


class T5Layer(nn.Module):
    r"""A pre-norm T5 layer: self-attention, cross-attention on the encoder's output (in the
    decoder), and the feed-forward network, each added to its input.

    Args:
        d_model (int): the model dimension.
        nhead (int): the number of heads.
        dim_feedforward (int): the feed-forward width. Default: 3072.
        qkv_dim (int): the size of each head. Default: 64.
        dropout (float): the dropout probability. Default: 0.1.
        activation (str or callable): ``"relu"``, ``"gelu"``, ``"gelu_new"`` or a function.
        is_gated_act (bool): the gated feed-forward of T5 v1.1 / Flan-T5.
        layer_norm_eps (float): the layer norms' epsilon. Default: 1e-6.
        relative_attention_num_buckets (int): Default: 32.
        relative_attention_max_distance (int): Default: 128.
        compute_relative_attention_bias (bool): this layer owns the position embedding.
        is_decoder (bool): a decoder layer (causal, with cross-attention).

    Examples::

        >>> layer = T5Layer(d_model=64, nhead=4, dim_feedforward=128, qkv_dim=16)
        >>> out, position_bias, sa_scores, ca_scores, key_values = layer(ember.rand(2, 7, 64))
    """

    def __init__(self, d_model, nhead, dim_feedforward=3072, qkv_dim=64, dropout=0.1,
                 activation=F.relu, is_gated_act=False, layer_norm_eps=1e-6,
                 relative_attention_num_buckets=32, relative_attention_max_distance=128,
                 compute_relative_attention_bias=False, is_decoder=False, device=None,
                 dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.is_gated_act = is_gated_act
        self.compute_relative_attention_bias = compute_relative_attention_bias
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.relative_attention_max_distance = relative_attention_max_distance
        self.is_decoder = is_decoder
        attention = dict(dropout=dropout, qkv_dim=qkv_dim,
                         relative_attention_num_buckets=relative_attention_num_buckets,
                         relative_attention_max_distance=relative_attention_max_distance,
                         **factory)
        self.self_attn = T5MultiheadAttention(
            d_model, nhead, is_decoder=is_decoder,
            compute_relative_attention_bias=compute_relative_attention_bias, **attention)
        if is_decoder:
            self.cross_attn = T5MultiheadAttention(d_model, nhead, is_decoder=True,
                                                   compute_relative_attention_bias=False,
                                                   **attention)
            self.norm3 = T5LayerNorm(d_model, eps=layer_norm_eps)
            self.dropout4 = nn.Dropout(dropout)
        else:
            self.cross_attn = self.norm3 = self.dropout4 = None
        if is_gated_act:
            self.linear1 = None
            self.linear1_0 = nn.Linear(d_model, dim_feedforward, bias=False, **factory)
            self.linear1_1 = nn.Linear(d_model, dim_feedforward, bias=False, **factory)
        else:
            self.linear1 = nn.Linear(d_model, dim_feedforward, bias=False, **factory)
            self.linear1_0 = self.linear1_1 = None
        self.linear2 = nn.Linear(dim_feedforward, d_model, bias=False, **factory)
        self.norm1 = T5LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = T5LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.activation = _activation(activation) if isinstance(activation, str) else activation

    def forward(self, seq, memory=None, mask=None, seq_key_padding_mask=None, memory_mask=None,
                memory_key_padding_mask=None, position_bias=None, past_key_values=None):
        r"""Run the layer on ``seq`` (B, L, E); ``memory`` (B, S, E) is the encoder's output
        (decoder layers). ``past_key_values`` is this layer's (self keys, self values, cross
        keys, cross values) of an earlier step.

        Returns:
            the output, the position bias, the self- and cross-attention weights and the
            new (self keys, self values, cross keys, cross values) (the last two None in
            the encoder).
        """
        self_past = cross_past = None
        if past_key_values is not None:
            self_past, cross_past = past_key_values[:2], past_key_values[2:]
        x = seq
        attended, current_bias, sa_scores, sa_kv = self._self_attention(
            x, mask, seq_key_padding_mask, position_bias, self_past)
        if self.compute_relative_attention_bias:
            position_bias = current_bias
        x = x + attended
        ca_scores, ca_kv = None, (None, None)
        if self.is_decoder:
            if memory is None:
                raise ValueError("Must provide memory (encoder hidden states).")
            normed = self.norm3(x)
            out, _, ca_scores, ca_kv = self.cross_attn(
                normed, memory, memory, query_length=sa_kv[0].shape[2], attn_mask=memory_mask,
                key_padding_mask=memory_key_padding_mask, past_key_value=cross_past)
            x = x + self.dropout4(out)
        x = x + self.dropout3(feed_forward(self.norm2(x), self.activation, self.dropout2,
                                           self.linear2, self.linear1, self.linear1_0,
                                           self.linear1_1))
        return x, position_bias, sa_scores, ca_scores, tuple(sa_kv) + tuple(ca_kv)

    def _self_attention(self, x, mask, key_padding_mask, position_bias, past):
        normed = self.norm1(x)
        out, bias, scores, kv = self.self_attn(normed, normed, normed, attn_mask=mask,
                                               key_padding_mask=key_padding_mask,
                                               position_bias=position_bias, past_key_value=past)
        return self.dropout1(out), bias, scores, kv


class _T5Stack(nn.Module):
    """The layers of an encoder or a decoder and its final norm."""

    def __init__(self, d_model, nhead, num_layers, dim_feedforward, qkv_dim, dropout,
                 activation, is_gated_act, layer_norm_eps, relative_attention_num_buckets,
                 relative_attention_max_distance, is_decoder, device, dtype,
                 token_embeddings=None):
        super().__init__()
        if not is_decoder:
            # first, as in torchtext: the state dict's order is the modules' order
            self.token_embeddings = token_embeddings
        self.layers = nn.ModuleList([
            T5Layer(d_model, nhead, dim_feedforward=dim_feedforward, qkv_dim=qkv_dim,
                    dropout=dropout, activation=activation, is_gated_act=is_gated_act,
                    layer_norm_eps=layer_norm_eps,
                    relative_attention_num_buckets=relative_attention_num_buckets,
                    relative_attention_max_distance=relative_attention_max_distance,
                    compute_relative_attention_bias=i == 0, is_decoder=is_decoder,
                    device=device, dtype=dtype)
            for i in range(num_layers)])
        self.num_layers = num_layers
        # torchtext's stacks keep the default epsilon in their final norm.
        self.norm = T5LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)


class T5Encoder(_T5Stack):
    r"""A stack of ``num_layers`` T5 encoder layers and a final norm.

    Takes the arguments of :class:`T5Layer` and ``token_embeddings`` (an ``nn.Embedding``
    that embeds ``src`` when no ``embedded_src`` is given).

    Examples::

        >>> encoder = T5Encoder(d_model=64, nhead=4, num_layers=2, dim_feedforward=128,
        ...                     qkv_dim=16)
        >>> encoder(embedded_src=ember.rand(2, 7, 64))["encoder_output"].shape
        (2, 7, 64)
    """

    def __init__(self, d_model, nhead, num_layers, dim_feedforward=3072, qkv_dim=64,
                 dropout=0.1, activation=F.relu, is_gated_act=False, layer_norm_eps=1e-6,
                 relative_attention_num_buckets=32, relative_attention_max_distance=128,
                 token_embeddings=None, device=None, dtype=None):
        super().__init__(d_model, nhead, num_layers, dim_feedforward, qkv_dim, dropout,
                         activation, is_gated_act, layer_norm_eps,
                         relative_attention_num_buckets, relative_attention_max_distance,
                         False, device, dtype, token_embeddings)

    def forward(self, src=None, mask=None, src_key_padding_mask=None, embedded_src=None):
        r"""Encode the tokens ``src`` (B, S) or their embeddings ``embedded_src`` (B, S, E).

        Returns:
            dict: ``encoder_output`` (B, S, E), ``encoder_hidden_states`` (the input of each
            layer and the output), ``encoder_position_bias`` and ``encoder_sa_scores``.
        """
        if embedded_src is None:
            if self.token_embeddings is None or src is None:
                raise ValueError("Must provide `token_embeddings` and `src` if not providing "
                                 "already embedded tokens.")
            embedded_src = self.token_embeddings(src)
        output = self.dropout1(embedded_src)
        position_bias = None
        hidden_states, sa_scores = [], []
        for layer in self.layers:
            hidden_states.append(output)
            output, position_bias, scores, _, _ = layer(
                output, mask=mask, seq_key_padding_mask=src_key_padding_mask,
                position_bias=position_bias)
            sa_scores.append(scores)
        output = self.dropout2(self.norm(output))
        hidden_states.append(output)
        return {"encoder_output": output, "encoder_hidden_states": hidden_states,
                "encoder_position_bias": position_bias, "encoder_sa_scores": sa_scores}


class T5Decoder(_T5Stack):
    r"""A stack of ``num_layers`` T5 decoder layers (causal self-attention, cross-attention on
    the encoder's output) and a final norm. Takes the arguments of :class:`T5Layer`.
    """

    def __init__(self, d_model, nhead, num_layers, dim_feedforward=3072, qkv_dim=64,
                 dropout=0.1, activation=F.relu, is_gated_act=False, layer_norm_eps=1e-6,
                 relative_attention_num_buckets=32, relative_attention_max_distance=128,
                 device=None, dtype=None):
        super().__init__(d_model, nhead, num_layers, dim_feedforward, qkv_dim, dropout,
                         activation, is_gated_act, layer_norm_eps,
                         relative_attention_num_buckets, relative_attention_max_distance,
                         True, device, dtype)

    def forward(self, embedded_tgt, memory, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, past_key_values=None,
                return_past_key_values=False):
        r"""Decode the embedded ``embedded_tgt`` (B, T, E) against ``memory`` (B, S, E).

        ``past_key_values`` (one (self k, self v, cross k, cross v) per layer, from an earlier
        call with ``return_past_key_values=True``) continues from cached steps.

        Returns:
            dict: ``decoder_output`` (B, T, E), ``decoder_hidden_states``,
            ``decoder_position_bias``, ``decoder_sa_scores``, ``decoder_ca_scores`` and
            ``past_key_values`` (empty unless ``return_past_key_values``).
        """
        output = self.dropout1(embedded_tgt)
        position_bias = None
        hidden_states, sa_scores, ca_scores, key_values = [], [], [], []
        for i, layer in enumerate(self.layers):
            hidden_states.append(output)
            output, position_bias, sa, ca, key_value = layer(
                output, memory, mask=tgt_mask, memory_mask=memory_mask,
                seq_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask, position_bias=position_bias,
                past_key_values=None if past_key_values is None else past_key_values[i])
            sa_scores.append(sa)
            ca_scores.append(ca)
            if return_past_key_values:
                key_values.append(key_value)
        output = self.dropout2(self.norm(output))
        hidden_states.append(output)
        return {"decoder_output": output, "decoder_hidden_states": hidden_states,
                "decoder_position_bias": position_bias, "decoder_sa_scores": sa_scores,
                "decoder_ca_scores": ca_scores, "past_key_values": key_values}
