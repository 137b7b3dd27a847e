"""The building blocks of wav2vec 2.0 / HuBERT: the convolutional feature extractor and the
transformer encoder, laid out (module names, parameter names) as torchaudio lays them out so
that its state dicts load."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["ConvLayerBlock", "ConvolutionalPositionalEmbedding", "Encoder", "EncoderLayer",
           "FeatureExtractor", "FeatureProjection", "FeedForward", "LayerNorm", "SelfAttention",
           "Transformer"]


class LayerNorm(nn.LayerNorm):
    """Layer norm over the channel axis of ``(batch, channel, frame)`` features."""

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        x = input.transpose(-2, -1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.transpose(-2, -1)


class ConvLayerBlock(nn.Module):
    """One convolution of the feature extractor: conv, optional norm, GELU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 bias: bool, layer_norm: nn.Module | None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.layer_norm = layer_norm
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, bias=bias)

    def forward(self, x: ember.Tensor, length: ember.Tensor | None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        x = self.conv(x)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        x = nn.functional.gelu(x)
        if length is not None:
            length = ember.div(length - self.kernel_size, self.stride, rounding_mode="floor") + 1
            length = ember.clamp(length, min=0)  # an input shorter than the kernel: 0 frames
        return x, length


class FeatureExtractor(nn.Module):
    """The convolutional feature encoder: ``(batch, time)`` audio to ``(batch, frame,
    feature)``, with the valid lengths carried through each convolution.

    Args:
        conv_layers (nn.ModuleList): the :class:`ConvLayerBlock` s.
    """

    def __init__(self, conv_layers: nn.ModuleList) -> None:
        super().__init__()
        self.conv_layers = conv_layers

    def forward(self, x: ember.Tensor, length: ember.Tensor | None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        if x.ndim != 2:
            raise ValueError("Expected the input Tensor to be 2D (batch, time). "
                             f"Found: {list(x.shape)}")
        x = x.unsqueeze(1)
        for layer in self.conv_layers:
            x, length = layer(x, length)
        return x.transpose(1, 2), length


class FeatureProjection(nn.Module):
    """Layer norm, linear projection to the encoder's width, dropout."""

    def __init__(self, in_features: int, out_features: int, dropout: float) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(in_features)
        self.projection = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.dropout(self.projection(self.layer_norm(x)))


class _WeightNorm(nn.Module):
    """The weight-norm parametrization's parameters, named as
    ``torch.nn.utils.parametrizations.weight_norm`` names them: ``original0`` the magnitude
    g, ``original1`` the direction v; the weight is ``g * v / ||v||`` with the norm taken
    over every dimension but ``dim``."""

    def __init__(self, weight: ember.Tensor, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.original0 = nn.Parameter(self._norm(weight.detach()))
        self.original1 = nn.Parameter(weight.detach().clone())

    def _norm(self, v: ember.Tensor) -> ember.Tensor:
        dims = tuple(d for d in range(v.ndim) if d != self.dim)
        return (v * v).sum(dim=dims, keepdim=True).sqrt()

    def forward(self) -> ember.Tensor:
        return self.original0 * self.original1 / self._norm(self.original1)


class _WeightNormConv1d(nn.Module):
    def __init__(self, channels: int, kernel_size: int, groups: int) -> None:
        super().__init__()
        conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2,
                         groups=groups)
        self.padding = kernel_size // 2
        self.groups = groups
        self.bias = conv.bias
        self.parametrizations = nn.ModuleDict({"weight": _WeightNorm(conv.weight, dim=2)})

    @property
    def weight(self) -> ember.Tensor:
        return self.parametrizations["weight"]()

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return nn.functional.conv1d(x, self.weight, self.bias, padding=self.padding,
                                    groups=self.groups)


class ConvolutionalPositionalEmbedding(nn.Module):
    """The relative positional embedding at the start of the transformer: a grouped,
    weight-normed convolution over frames, then GELU.

    Args:
        embed_dim (int): feature dimension of the input.
        kernel_size (int): the number of frames the convolution spans.
        groups (int): the number of groups of the convolution.
    """

    def __init__(self, embed_dim: int, kernel_size: int, groups: int) -> None:
        super().__init__()
        if embed_dim % groups:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by groups ({groups})")
        self.embed_dim = embed_dim
        self.kernel_size = kernel_size
        self.conv = _WeightNormConv1d(embed_dim, kernel_size, groups)
        self.num_remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = self.conv(x.transpose(-2, -1))
        if self.num_remove > 0:
            x = x[..., :-self.num_remove]
        return nn.functional.gelu(x).transpose(-2, -1)


class SelfAttention(nn.Module):
    """Multi-head self-attention with separate ``q_proj``/``k_proj``/``v_proj``/``out_proj``.

    Args:
        embed_dim (int): total dimension of the model.
        num_heads (int): the number of heads.
        dropout (float, optional): dropout on the attention weights. Default: ``0.0``
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        head_dim = embed_dim // num_heads
        if head_dim * num_heads != embed_dim:
            raise ValueError(f"`embed_dim ({embed_dim})` is not divisible by "
                             f"`num_heads ({num_heads})`")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = head_dim
        self.scaling = head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)

    def forward(self, x: ember.Tensor, attention_mask: ember.Tensor | None = None,
                position_bias: ember.Tensor | None = None,
                key_padding_mask: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, None]:
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError("The expected input shape is (batch, sequence, "
                             f"embed_dim=={self.embed_dim}). Found {tuple(x.shape)}.")
        batch_size, length, _ = x.shape
        if attention_mask is not None and tuple(attention_mask.shape) != (
                batch_size, 1, length, length):
            raise ValueError("The expected attention mask shape is "
                             f"{(batch_size, 1, length, length)}. "
                             f"Found {tuple(attention_mask.shape)}.")
        shape = (batch_size, length, self.num_heads, self.head_dim)
        q = self.q_proj(x).view(*shape).transpose(2, 1)
        k = self.k_proj(x).view(*shape).transpose(2, 1)
        v = self.v_proj(x).view(*shape).transpose(2, 1)
        output = nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=attention_mask, dropout_p=self.dropout if self.training else 0.0)
        output = output.transpose(1, 2).reshape(batch_size, length, self.embed_dim)
        return self.out_proj(output), None


class FeedForward(nn.Module):
    """Linear, GELU, dropout, linear, dropout."""

    def __init__(self, io_features: int, intermediate_features: int,
                 intermediate_dropout: float, output_dropout: float) -> None:
        super().__init__()
        self.intermediate_dense = nn.Linear(io_features, intermediate_features)
        self.intermediate_dropout = nn.Dropout(intermediate_dropout)
        self.output_dense = nn.Linear(intermediate_features, io_features)
        self.output_dropout = nn.Dropout(output_dropout)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = self.intermediate_dropout(nn.functional.gelu(self.intermediate_dense(x)))
        return self.output_dropout(self.output_dense(x))


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward with residuals; layer norms before (pre-norm) or
    after (post-norm) each, as ``layer_norm_first`` says."""

    def __init__(self, attention: nn.Module, dropout: float, layer_norm_first: bool,
                 feed_forward: nn.Module) -> None:
        super().__init__()
        self.attention = attention
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(attention.embed_dim)
        self.layer_norm_first = layer_norm_first
        self.feed_forward = feed_forward
        self.final_layer_norm = nn.LayerNorm(attention.embed_dim)

    def forward(self, x: ember.Tensor, attention_mask: ember.Tensor | None = None,
                position_bias: ember.Tensor | None = None,
                key_padding_mask: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        residual = x
        if self.layer_norm_first:
            x = self.layer_norm(x)
        x, position_bias = self.attention(x, attention_mask=attention_mask,
                                          position_bias=position_bias,
                                          key_padding_mask=key_padding_mask)
        x = residual + self.dropout(x)
        if self.layer_norm_first:
            x = x + self.feed_forward(self.final_layer_norm(x))
        else:
            x = self.layer_norm(x)
            x = self.final_layer_norm(x + self.feed_forward(x))
        return x, position_bias


class Transformer(nn.Module):
    """Positional convolution, (layer norm,) dropout, the encoder layers with layer drop."""

    def __init__(self, pos_conv_embed: nn.Module, dropout: float, layers: nn.Module,
                 layer_norm_first: bool, layer_drop: float) -> None:
        super().__init__()
        self.pos_conv_embed = pos_conv_embed
        self.layer_norm = nn.LayerNorm(pos_conv_embed.embed_dim)
        self.layer_norm_first = layer_norm_first
        self.layer_drop = layer_drop
        self.dropout = nn.Dropout(dropout)
        self.layers = layers

    def _preprocess(self, x: ember.Tensor) -> ember.Tensor:
        x = x + self.pos_conv_embed(x)
        if self.layer_norm_first:
            x = self.layer_norm(x)
        return self.dropout(x)

    def forward(self, x: ember.Tensor, attention_mask: ember.Tensor | None = None,
                position_bias: ember.Tensor | None = None) -> ember.Tensor:
        x = self._preprocess(x)
        for layer in self.layers:
            if not (self.training and self.layer_drop > 0
                    and ember.rand(1).item() <= self.layer_drop):
                x, position_bias = layer(x, attention_mask, position_bias=position_bias)
        if not self.layer_norm_first:
            x = self.layer_norm(x)
        return x

    def get_intermediate_outputs(self, x: ember.Tensor,
                                 attention_mask: ember.Tensor | None = None,
                                 num_layers: int | None = None) -> list[ember.Tensor]:
        if num_layers is not None and not 0 < num_layers <= len(self.layers):
            raise ValueError(f"`num_layers` must be between [1, {len(self.layers)}]")
        outputs = []
        position_bias = None
        x = self._preprocess(x)
        for layer in self.layers:
            x, position_bias = layer(x, attention_mask, position_bias=position_bias)
            outputs.append(x)
            if num_layers is not None and len(outputs) >= num_layers:
                break
        return outputs


class Encoder(nn.Module):
    """Feature projection and transformer; padded frames (past ``lengths``) are zeroed and
    masked out of the attention."""

    def __init__(self, feature_projection: nn.Module, transformer: nn.Module) -> None:
        super().__init__()
        self.feature_projection = feature_projection
        self.transformer = transformer

    def _preprocess(self, features: ember.Tensor, lengths: ember.Tensor | None = None
                    ) -> tuple[ember.Tensor, ember.Tensor | None]:
        x = self.feature_projection(features)
        mask = None
        if lengths is not None:
            batch_size, max_len, _ = x.shape
            padded = ember.arange(max_len, device=lengths.device).expand(
                batch_size, max_len) >= lengths[:, None]
            x = x.masked_fill(padded[:, :, None], 0.0)
            mask = -10000.0 * padded[:, None, None, :].to(dtype=features.dtype)
            mask = mask.expand(batch_size, 1, max_len, max_len)
        return x, mask

    def forward(self, features: ember.Tensor, lengths: ember.Tensor | None = None
                ) -> ember.Tensor:
        x, mask = self._preprocess(features, lengths)
        return self.transformer(x, attention_mask=mask)

    def extract_features(self, features: ember.Tensor, lengths: ember.Tensor | None = None,
                         num_layers: int | None = None) -> list[ember.Tensor]:
        x, mask = self._preprocess(features, lengths)
        return self.transformer.get_intermediate_outputs(x, attention_mask=mask,
                                                         num_layers=num_layers)


def _get_feature_extractor(norm_mode: str, shapes: list[tuple[int, int, int]],
                           bias: bool) -> FeatureExtractor:
    if norm_mode not in ("group_norm", "layer_norm"):
        raise ValueError(f"Invalid norm mode {norm_mode!r}: expected 'group_norm' or "
                         "'layer_norm'")
    blocks = []
    in_channels = 1
    for i, (out_channels, kernel_size, stride) in enumerate(shapes):
        normalization = None
        if norm_mode == "group_norm" and i == 0:
            normalization = nn.GroupNorm(out_channels, out_channels, affine=True)
        elif norm_mode == "layer_norm":
            normalization = LayerNorm(out_channels, elementwise_affine=True)
        blocks.append(ConvLayerBlock(in_channels, out_channels, kernel_size, stride, bias,
                                     normalization))
        in_channels = out_channels
    return FeatureExtractor(nn.ModuleList(blocks))


def _get_encoder(in_features: int, embed_dim: int, dropout_input: float,
                 pos_conv_kernel: int, pos_conv_groups: int, num_layers: int, num_heads: int,
                 attention_dropout: float, ff_interm_features: int, ff_interm_dropout: float,
                 dropout: float, layer_norm_first: bool, layer_drop: float) -> Encoder:
    layers = nn.ModuleList(
        EncoderLayer(SelfAttention(embed_dim, num_heads, attention_dropout), dropout,
                     layer_norm_first,
                     FeedForward(embed_dim, ff_interm_features, ff_interm_dropout, dropout))
        for _ in range(num_layers))
    # The transformer's own norm comes first exactly when the layers' norms come last.
    transformer = Transformer(
        ConvolutionalPositionalEmbedding(embed_dim, pos_conv_kernel, pos_conv_groups),
        dropout, layers, not layer_norm_first, layer_drop)
    return Encoder(FeatureProjection(in_features, embed_dim, dropout_input), transformer)


def _get_wavlm_encoder(in_features: int, embed_dim: int, dropout_input: float,
                       pos_conv_kernel: int, pos_conv_groups: int, num_layers: int,
                       num_heads: int, num_buckets: int, max_distance: int,
                       attention_dropout: float, ff_interm_features: int,
                       ff_interm_dropout: float, dropout: float, layer_norm_first: bool,
                       layer_drop: float) -> Encoder:
    from emberaudio.models.wav2vec2.wavlm_attention import WavLMSelfAttention

    layers = nn.ModuleList(
        EncoderLayer(WavLMSelfAttention(embed_dim, num_heads, dropout=attention_dropout,
                                        has_relative_attention_bias=(i == 0),
                                        num_buckets=num_buckets, max_distance=max_distance),
                     dropout, layer_norm_first,
                     FeedForward(embed_dim, ff_interm_features, ff_interm_dropout, dropout))
        for i in range(num_layers))
    transformer = Transformer(
        ConvolutionalPositionalEmbedding(embed_dim, pos_conv_kernel, pos_conv_groups),
        dropout, layers, not layer_norm_first, layer_drop)
    return Encoder(FeatureProjection(in_features, embed_dim, dropout_input), transformer)
