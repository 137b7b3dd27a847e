"""Conformer: convolution-augmented transformer layers for speech (Gulati et al., 2020)."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["Conformer"]


def _lengths_to_padding_mask(lengths: ember.Tensor) -> ember.Tensor:
    batch_size = lengths.shape[0]
    max_length = int(lengths.max().item()) if batch_size else 0
    return ember.arange(max_length, device=lengths.device, dtype=lengths.dtype).expand(
        batch_size, max_length) >= lengths.unsqueeze(1)


class _ConvolutionModule(nn.Module):
    """Layer norm, pointwise conv to twice the channels, GLU, depthwise conv, batch (or
    group) norm, SiLU, pointwise conv, dropout; on ``(B, T, D)``."""

    def __init__(self, input_dim: int, num_channels: int, depthwise_kernel_size: int,
                 dropout: float = 0.0, bias: bool = False, use_group_norm: bool = False
                 ) -> None:
        super().__init__()
        if (depthwise_kernel_size - 1) % 2 != 0:
            raise ValueError("depthwise_kernel_size must be odd to achieve 'SAME' padding.")
        self.layer_norm = nn.LayerNorm(input_dim)
        self.sequential = nn.Sequential(
            nn.Conv1d(input_dim, 2 * num_channels, 1, stride=1, padding=0, bias=bias),
            nn.GLU(dim=1),
            nn.Conv1d(num_channels, num_channels, depthwise_kernel_size, stride=1,
                      padding=(depthwise_kernel_size - 1) // 2, groups=num_channels,
                      bias=bias),
            nn.GroupNorm(num_groups=1, num_channels=num_channels) if use_group_norm
            else nn.BatchNorm1d(num_channels),
            nn.SiLU(),
            nn.Conv1d(num_channels, input_dim, kernel_size=1, stride=1, padding=0, bias=bias),
            nn.Dropout(dropout),
        )

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        x = self.layer_norm(input).transpose(1, 2)
        return self.sequential(x).transpose(1, 2)


class _FeedForwardModule(nn.Module):
    """Layer norm, linear, SiLU, dropout, linear, dropout."""

    def __init__(self, input_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.sequential = nn.Sequential(
            nn.LayerNorm(input_dim), nn.Linear(input_dim, hidden_dim, bias=True), nn.SiLU(),
            nn.Dropout(dropout), nn.Linear(hidden_dim, input_dim, bias=True),
            nn.Dropout(dropout))

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        return self.sequential(input)


class ConformerLayer(nn.Module):
    """One Conformer layer: half-step feed-forward, self-attention, convolution module (or
    convolution first), half-step feed-forward, layer norm; on ``(T, B, D)``.

    Args:
        input_dim (int): input dimension.
        ffn_dim (int): hidden layer dimension of the feed-forward networks.
        num_attention_heads (int): number of attention heads.
        depthwise_conv_kernel_size (int): kernel size of the depthwise convolution (odd).
        dropout (float, optional): dropout probability. (Default: ``0.0``)
        use_group_norm (bool, optional): use ``GroupNorm`` rather than ``BatchNorm1d`` in
            the convolution module. (Default: ``False``)
        convolution_first (bool, optional): apply the convolution module ahead of the
            attention module. (Default: ``False``)
    """

    def __init__(self, input_dim: int, ffn_dim: int, num_attention_heads: int,
                 depthwise_conv_kernel_size: int, dropout: float = 0.0,
                 use_group_norm: bool = False, convolution_first: bool = False) -> None:
        super().__init__()
        self.ffn1 = _FeedForwardModule(input_dim, ffn_dim, dropout=dropout)
        self.self_attn_layer_norm = nn.LayerNorm(input_dim)
        self.self_attn = nn.MultiheadAttention(input_dim, num_attention_heads, dropout=dropout)
        self.self_attn_dropout = nn.Dropout(dropout)
        self.conv_module = _ConvolutionModule(input_dim, input_dim, depthwise_conv_kernel_size,
                                              dropout=dropout, bias=True,
                                              use_group_norm=use_group_norm)
        self.ffn2 = _FeedForwardModule(input_dim, ffn_dim, dropout=dropout)
        self.final_layer_norm = nn.LayerNorm(input_dim)
        self.convolution_first = convolution_first

    def _apply_convolution(self, input: ember.Tensor) -> ember.Tensor:
        return input + self.conv_module(input.transpose(0, 1)).transpose(0, 1)

    def forward(self, input: ember.Tensor, key_padding_mask: ember.Tensor | None
                ) -> ember.Tensor:
        """
        Args:
            input (Tensor): ``(T, B, D)``.
            key_padding_mask (Tensor or None): ``(B, T)``, ``True`` at padded frames.

        Returns:
            Tensor: ``(T, B, D)``.
        """
        x = self.ffn1(input) * 0.5 + input
        if self.convolution_first:
            x = self._apply_convolution(x)
        residual = x
        x = self.self_attn_layer_norm(x)
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=key_padding_mask,
                              need_weights=False)
        x = self.self_attn_dropout(x) + residual
        if not self.convolution_first:
            x = self._apply_convolution(x)
        x = self.ffn2(x) * 0.5 + x
        return self.final_layer_norm(x)


class Conformer(nn.Module):
    r"""Conformer architecture from *Conformer: Convolution-augmented Transformer for
    Speech Recognition* (Gulati et al., 2020).

    Args:
        input_dim (int): input dimension.
        num_heads (int): number of attention heads in each Conformer layer.
        ffn_dim (int): hidden layer dimension of the feed-forward networks.
        num_layers (int): number of Conformer layers.
        depthwise_conv_kernel_size (int): kernel size of each layer's depthwise convolution.
        dropout (float, optional): dropout probability. (Default: ``0.0``)
        use_group_norm (bool, optional): use ``GroupNorm`` rather than ``BatchNorm1d`` in
            the convolution module. (Default: ``False``)
        convolution_first (bool, optional): apply the convolution module ahead of the
            attention module. (Default: ``False``)

    Shape:
        - input: :math:`(B, T, \text{input\_dim})`; lengths: :math:`(B,)`, the valid frames.
        - output: :math:`(B, T, \text{input\_dim})` and the lengths, unchanged.

    Examples::

        >>> conformer = Conformer(input_dim=80, num_heads=4, ffn_dim=128, num_layers=4,
        ...                       depthwise_conv_kernel_size=31)
        >>> lengths = ember.randint(1, 400, (10,))
        >>> input = ember.rand(10, int(lengths.max()), 80)
        >>> output, lengths = conformer(input, lengths)
    """

    def __init__(self, input_dim: int, num_heads: int, ffn_dim: int, num_layers: int,
                 depthwise_conv_kernel_size: int, dropout: float = 0.0,
                 use_group_norm: bool = False, convolution_first: bool = False) -> None:
        super().__init__()
        self.conformer_layers = nn.ModuleList([
            ConformerLayer(input_dim, ffn_dim, num_heads, depthwise_conv_kernel_size,
                           dropout=dropout, use_group_norm=use_group_norm,
                           convolution_first=convolution_first)
            for _ in range(num_layers)])

    def forward(self, input: ember.Tensor, lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor]:
        if input.ndim != 3:
            raise ValueError(f"Conformer expects a (batch, frames, input_dim) input, got "
                             f"shape {tuple(input.shape)}")
        if lengths.ndim != 1 or lengths.shape[0] != input.shape[0]:
            raise ValueError(f"lengths must have shape ({input.shape[0]},), got "
                             f"{tuple(lengths.shape)}")
        padding_mask = _lengths_to_padding_mask(lengths)
        if padding_mask.shape[1] != input.shape[1]:
            raise ValueError(f"the longest length ({padding_mask.shape[1]}) must equal the "
                             f"number of frames ({input.shape[1]})")
        x = input.transpose(0, 1)
        for layer in self.conformer_layers:
            x = layer(x, padding_mask)
        return x.transpose(0, 1), lengths
