"""``MultiheadAttention`` and the Transformer: encoder/decoder layers and stacks, and
``nn.Transformer``.

PyTorch keeps ``MultiheadAttention`` in ``torch.nn.modules.activation``; it lives here,
next to the layers built from it. Constructor arguments, parameter names and shapes,
default initializations, reprs and ``state_dict`` keys are PyTorch's.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np

from ember._backend import backend_of
from ember.nn import functional as F
from ember.nn._functional.attention import _canonical_mask, _mha_forward, _none_or_dtype
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear, NonDynamicallyQuantizableLinear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm
from ember.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


def _empty(shape, factory_kwargs):
    from ember._ops.creation import empty

    return empty(shape, **factory_kwargs)


class MultiheadAttention(Module):
    r"""Multi-head attention: ``Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``.

    Args:
        embed_dim: total dimension of the model (split across the heads).
        num_heads: number of parallel attention heads; must divide ``embed_dim``.
        dropout: dropout probability on the attention weights. Default: 0.0.
        bias: add biases to the input and output projections. Default: True.
        add_bias_kv: add a learned bias to the key and value sequences. Default: False.
        add_zero_attn: add a zero position to the key and value sequences. Default: False.
        kdim, vdim: features of the keys and values (default ``embed_dim``); when they
            differ from ``embed_dim`` the projections are separate ``q_proj_weight``,
            ``k_proj_weight`` and ``v_proj_weight`` instead of one ``in_proj_weight``.
        batch_first: inputs and outputs are ``(N, L, E)`` instead of ``(L, N, E)``.

    Examples::

        >>> mha = nn.MultiheadAttention(16, 4)
        >>> x = ember.randn(5, 2, 16)
        >>> out, weights = mha(x, x, x)
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0,"
                f" got embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty((embed_dim, embed_dim), factory_kwargs))
            self.k_proj_weight = Parameter(_empty((embed_dim, self.kdim), factory_kwargs))
            self.v_proj_weight = Parameter(_empty((embed_dim, self.vdim), factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty((3 * embed_dim, embed_dim), factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty((3 * embed_dim,), factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(_empty((1, 1, embed_dim), factory_kwargs))
            self.bias_v = Parameter(_empty((1, 1, embed_dim), factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        from ember.nn.init import constant_, xavier_normal_, xavier_uniform_

        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        r"""Attention of ``query`` over ``key``/``value``.

        Args:
            query: ``(L, E)``, ``(L, N, E)`` or, with ``batch_first``, ``(N, L, E)``.
            key: ``(S, kdim)`` / ``(S, N, kdim)`` / ``(N, S, kdim)``.
            value: ``(S, vdim)`` / ``(S, N, vdim)`` / ``(N, S, vdim)``.
            key_padding_mask: ``(N, S)`` (or ``(S)``): True (bool) marks keys to ignore; a
                float mask is added to the scores.
            need_weights: also return the attention weights. Default: True.
            attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``: True (bool) forbids a
                position; a float mask is added to the scores.
            average_attn_weights: average the returned weights over the heads.
            is_causal: a hint that ``attn_mask`` is the causal mask.

        Returns:
            ``(attn_output, attn_output_weights)``; the weights are ``(N, L, S)`` averaged,
            ``(N, num_heads, L, S)`` otherwise, or None without ``need_weights``.
        """
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask",
                                           query._data.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query._data.dtype,
                                    check_other=False)
        separate = not self._qkv_same_embed_dim
        return _mha_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
            need_weights, attn_mask, separate, self.q_proj_weight if separate else None,
            self.k_proj_weight if separate else None, self.v_proj_weight if separate else None,
            None, None, average_attn_weights, is_causal, batch_first=self.batch_first)

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine ``attn_mask`` and ``key_padding_mask`` into one mask; returns
        ``(merged_mask, mask_type)`` with type 0 (attn_mask only), 1 (padding only) or 2
        (both, expanded to ``(batch, num_heads, seq, seq)``)."""
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged_mask = expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
                merged_mask = expanded + kpm
        return merged_mask, mask_type


# ---------------------------------------------------------------------------------------
# the Transformer

def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A square causal mask: ``-inf`` above the diagonal, 0 elsewhere."""
    from ember._ops.creation import full

    return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _get_seq_len(src, batch_first):
    shape = src.shape
    if len(shape) == 2:
        return shape[0]
    return shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of
    ``size`` (PyTorch's detection)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        m = mask._data
        if tuple(m.shape) == (sz, sz):
            ref = np.triu(np.full((sz, sz), -math.inf, dtype=m.dtype), 1)
            make_causal = bool((np.asarray(_host(m)) == ref).all())
        else:
            make_causal = False
    return make_causal


def _host(a):
    return backend_of(a).to_numpy(a)


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _left_aligned(kpm_bool):
    """Whether every row of the padding mask (True = padding) is padding only at its end."""
    keep = ~_host(kpm_bool)
    lengths = keep.sum(axis=1)
    return bool((keep == (np.arange(keep.shape[1]) < lengths[:, None])).all())


class Transformer(Module):
    r"""The Transformer of "Attention Is All You Need": an encoder and a decoder stack.

    Args:
        d_model: features of the encoder/decoder inputs (default 512).
        nhead: attention heads (default 8).
        num_encoder_layers, num_decoder_layers: layers of each stack (default 6).
        dim_feedforward: width of the feed-forward network (default 2048).
        dropout: dropout probability (default 0.1).
        activation: ``"relu"``, ``"gelu"`` or a unary callable (default relu).
        custom_encoder, custom_decoder: modules used instead of the default stacks.
        layer_norm_eps: eps of the layer norms (default 1e-5).
        batch_first: inputs and outputs are ``(N, S, E)`` (default ``(S, N, E)``).
        norm_first: layer norm before (True) or after (False) each sub-block.
        bias: whether the ``Linear`` and ``LayerNorm`` layers have biases (default True).

    Examples::

        >>> model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2,
        ...                        num_decoder_layers=2, dim_feedforward=64)
        >>> out = model(ember.rand(10, 3, 32), ember.rand(7, 3, 32))
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        r"""Encode ``src``, then decode ``tgt`` attending to the encoding.

        Args:
            src: ``(S, E)``, ``(S, N, E)`` or ``(N, S, E)`` with ``batch_first``.
            tgt: ``(T, E)``, ``(T, N, E)`` or ``(N, T, E)`` with ``batch_first``.
            src_mask, tgt_mask, memory_mask: ``(S, S)``, ``(T, T)``, ``(T, S)`` masks
                (or per batch and head ``(N * nhead, ., .)``); True (bool) forbids.
            src_key_padding_mask, tgt_key_padding_mask, memory_key_padding_mask:
                ``(N, S)``, ``(N, T)``, ``(N, S)``; True (bool) marks padding.
            src_is_causal, tgt_is_causal, memory_is_causal: hints that the masks are
                causal (None: detect it).

        Returns:
            ``(T, N, E)`` (``(N, T, E)`` with ``batch_first``).
        """
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        elif self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""A square causal mask for a sequence of length ``sz``: ``-inf`` above the
        diagonal (masked), 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        from ember.nn.init import xavier_uniform_

        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` copies of ``encoder_layer`` (deep copies: all start
    with the same parameters), then ``norm`` if given.

    Args:
        encoder_layer: a ``TransformerEncoderLayer``.
        num_layers: the number of layers.
        norm: the final layer normalization (optional).
        enable_nested_tensor: PyTorch's sparsity fast path for padded inputs in
            evaluation; accepted. Its visible effect, zeros at the padded positions
            before ``norm``, is reproduced. Default: True.
        mask_check: check that the padding mask is left-aligned for that path.

    Examples::

        >>> layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, batch_first=True)
        >>> enc = nn.TransformerEncoder(layer, num_layers=2)
        >>> out = enc(ember.rand(3, 10, 32))
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

        enc_layer = "encoder_layer"
        why_not = ""
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why_not = f"{enc_layer} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why_not = f"{enc_layer}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why_not = (f"{enc_layer}.self_attn.batch_first was not True"
                       "(use batch_first for better inference performance)")
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why_not = f"{enc_layer}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why_not = f"{enc_layer}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why_not = f"{enc_layer}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why_not = f"{enc_layer}.norm1.eps was not equal to {enc_layer}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why_not = f"{enc_layer}.self_attn.num_heads is odd"
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def _nested_path(self, src, mask, src_key_padding_mask, raw_kpm):
        """Whether PyTorch would take its nested-tensor fast path (evaluation, no grad,
        batched, padding mask only, left-aligned)."""
        from ember.autograd.grad_mode import is_grad_enabled

        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training:
            return False
        if src.dim() != 3 or src_key_padding_mask is None or mask is not None:
            return False
        if raw_kpm._data.dtype.kind == "b":
            pad = raw_kpm._data
        else:
            pad = src_key_padding_mask._data == -math.inf
        if getattr(self, "mask_check", True) and not _left_aligned(pad):
            return False
        sa = first.self_attn
        args = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight,
                sa.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                first.norm2.bias, first.linear1.weight, first.linear1.bias,
                first.linear2.weight, first.linear2.bias)
        if is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return False
        return True

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        r"""Run ``src`` through the layers in turn.

        Args:
            src: the sequence (required).
            mask: the attention mask for ``src`` (optional).
            src_key_padding_mask: the padding mask of ``src`` per batch (optional).
            is_causal: a hint that ``mask`` is causal (None: detect it).
        """
        raw_kpm = src_key_padding_mask
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src._data.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src._data.dtype, check_other=False)
        output = src
        first_layer = self.layers[0]
        batch_first = first_layer.self_attn.batch_first
        nested = self._nested_path(src, mask, src_key_padding_mask, raw_kpm)
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if nested:  # PyTorch's nested tensors come back padded with zeros
            pad = src_key_padding_mask == -math.inf
            pad = pad.unsqueeze(-1) if batch_first else pad.transpose(0, 1).unsqueeze(-1)
            output = output.masked_fill(pad, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` copies of ``decoder_layer``, then ``norm`` if given.

    Args:
        decoder_layer: a ``TransformerDecoderLayer``.
        num_layers: the number of layers.
        norm: the final layer normalization (optional).

    Examples::

        >>> layer = nn.TransformerDecoderLayer(d_model=32, nhead=4)
        >>> dec = nn.TransformerDecoder(layer, num_layers=2)
        >>> out = dec(ember.rand(7, 3, 32), ember.rand(10, 3, 32))
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        r"""Run ``tgt`` (attending to ``memory``) through the layers in turn.

        Args:
            tgt: the sequence to the decoder (required).
            memory: the sequence from the encoder (required).
            tgt_mask, memory_mask: attention masks (optional).
            tgt_key_padding_mask, memory_key_padding_mask: padding masks (optional).
            tgt_is_causal: a hint that ``tgt_mask`` is causal (None: detect it).
            memory_is_causal: a hint that ``memory_mask`` is causal.
        """
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _is_relu(activation):
    from ember.nn.modules.activation import ReLU

    return activation is F.relu or isinstance(activation, ReLU)


def _is_gelu(activation):
    from ember.nn.modules.activation import GELU

    return activation is F.gelu or isinstance(activation, GELU)


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward network, each with a residual connection and a
    layer norm (after, or with ``norm_first`` before, the sub-block).

    Args:
        d_model: features of the input (required).
        nhead: attention heads (required).
        dim_feedforward: width of the feed-forward network (default 2048).
        dropout: dropout probability (default 0.1).
        activation: ``"relu"``, ``"gelu"`` or a unary callable (default relu).
        layer_norm_eps: eps of the layer norms (default 1e-5).
        batch_first: inputs and outputs are ``(N, S, E)`` (default ``(S, N, E)``).
        norm_first: layer norm before attention and feed-forward (default False: after).
        bias: whether the ``Linear`` and ``LayerNorm`` layers have biases (default True).

    Examples::

        >>> layer = nn.TransformerEncoderLayer(d_model=32, nhead=4)
        >>> out = layer(ember.rand(10, 3, 32))
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if _is_relu(activation):
            self.activation_relu_or_gelu = 1
        elif _is_gelu(activation):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        r"""Pass ``src`` through the layer.

        Args:
            src: the sequence (required).
            src_mask: the attention mask (optional).
            src_key_padding_mask: the padding mask per batch (optional).
            is_causal: a hint that ``src_mask`` is causal.
        """
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask",
                                               src._data.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src._data.dtype,
                                   check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                   is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask,
                                              is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder's output (``memory``) and a
    feed-forward network, each with a residual connection and a layer norm.

    Args:
        d_model: features of the input (required).
        nhead: attention heads (required).
        dim_feedforward: width of the feed-forward network (default 2048).
        dropout: dropout probability (default 0.1).
        activation: ``"relu"``, ``"gelu"`` or a unary callable (default relu).
        layer_norm_eps: eps of the layer norms (default 1e-5).
        batch_first: inputs and outputs are ``(N, T, E)`` (default ``(T, N, E)``).
        norm_first: layer norm before each sub-block (default False: after).
        bias: whether the ``Linear`` and ``LayerNorm`` layers have biases (default True).

    Examples::

        >>> layer = nn.TransformerDecoderLayer(d_model=32, nhead=4)
        >>> out = layer(ember.rand(7, 3, 32), ember.rand(10, 3, 32))
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        r"""Pass ``tgt`` (attending to ``memory``) through the layer.

        Args:
            tgt: the sequence to the decoder layer (required).
            memory: the sequence from the encoder (required).
            tgt_mask, memory_mask: attention masks (optional).
            tgt_key_padding_mask, memory_key_padding_mask: padding masks (optional).
            tgt_is_causal, memory_is_causal: hints that the masks are causal.
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
