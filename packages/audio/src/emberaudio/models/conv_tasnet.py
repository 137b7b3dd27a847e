"""Conv-TasNet: time-domain speech separation with a temporal convolutional mask network
(Luo and Mesgarani, 2019)."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["ConvTasNet", "conv_tasnet_base"]


class ConvBlock(nn.Module):
    """One block of the temporal convolutional network: a 1x1 convolution, then a dilated
    depthwise one (each followed by PReLU and global layer norm), with a residual and a skip
    output.

    Args:
        io_channels (int): channels of the block's input and outputs.
        hidden_channels (int): channels inside the block.
        kernel_size (int): kernel size of the depthwise convolution.
        padding (int): its padding.
        dilation (int, optional): its dilation. (Default: ``1``)
        no_residual (bool, optional): leave out the residual output. (Default: ``False``)
    """

    def __init__(self, io_channels: int, hidden_channels: int, kernel_size: int, padding: int,
                 dilation: int = 1, no_residual: bool = False) -> None:
        super().__init__()
        self.conv_layers = nn.Sequential(
            nn.Conv1d(io_channels, hidden_channels, kernel_size=1),
            nn.PReLU(),
            nn.GroupNorm(num_groups=1, num_channels=hidden_channels, eps=1e-08),
            nn.Conv1d(hidden_channels, hidden_channels, kernel_size=kernel_size,
                      padding=padding, dilation=dilation, groups=hidden_channels),
            nn.PReLU(),
            nn.GroupNorm(num_groups=1, num_channels=hidden_channels, eps=1e-08),
        )
        self.res_out = (None if no_residual
                        else nn.Conv1d(hidden_channels, io_channels, kernel_size=1))
        self.skip_out = nn.Conv1d(hidden_channels, io_channels, kernel_size=1)

    def forward(self, input: ember.Tensor) -> tuple[ember.Tensor | None, ember.Tensor]:
        feature = self.conv_layers(input)
        residual = None if self.res_out is None else self.res_out(feature)
        return residual, self.skip_out(feature)


class MaskGenerator(nn.Module):
    """The temporal convolutional network that estimates one mask per source.

    Args:
        input_dim (int): channels of the encoded input.
        num_sources (int): number of sources to separate.
        kernel_size (int): kernel size of the depthwise convolutions.
        num_feats (int): channels of the blocks' inputs and outputs.
        num_hidden (int): channels inside the blocks.
        num_layers (int): blocks per stack (dilations 1, 2, ..., 2**(num_layers - 1)).
        num_stacks (int): number of stacks.
        msk_activate (str): the mask's activation, ``"sigmoid"`` or ``"relu"``.
    """

    def __init__(self, input_dim: int, num_sources: int, kernel_size: int, num_feats: int,
                 num_hidden: int, num_layers: int, num_stacks: int, msk_activate: str) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.num_sources = num_sources
        self.input_norm = nn.GroupNorm(num_groups=1, num_channels=input_dim, eps=1e-8)
        self.input_conv = nn.Conv1d(input_dim, num_feats, kernel_size=1)
        self.receptive_field = 0
        self.conv_layers = nn.ModuleList([])
        for stack in range(num_stacks):
            for layer in range(num_layers):
                dilation = 2 ** layer
                last = layer == num_layers - 1 and stack == num_stacks - 1
                self.conv_layers.append(ConvBlock(
                    io_channels=num_feats, hidden_channels=num_hidden, kernel_size=kernel_size,
                    dilation=dilation, padding=dilation, no_residual=last))
                first = stack == 0 and layer == 0
                self.receptive_field += kernel_size if first else (kernel_size - 1) * dilation
        self.output_prelu = nn.PReLU()
        self.output_conv = nn.Conv1d(num_feats, input_dim * num_sources, kernel_size=1)
        if msk_activate == "sigmoid":
            self.mask_activate = nn.Sigmoid()
        elif msk_activate == "relu":
            self.mask_activate = nn.ReLU()
        else:
            raise ValueError(f"Unsupported activation {msk_activate}")

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        """
        Args:
            input (Tensor): encoded features, ``(batch, input_dim, frames)``.

        Returns:
            Tensor: masks, ``(batch, num_sources, input_dim, frames)``.
        """
        feats = self.input_conv(self.input_norm(input))
        output = 0.0
        for block in self.conv_layers:
            residual, skip = block(feats)
            if residual is not None:  # the last block has no residual output
                feats = feats + residual
            output = output + skip
        output = self.mask_activate(self.output_conv(self.output_prelu(output)))
        return output.view(input.shape[0], self.num_sources, self.input_dim, -1)


class ConvTasNet(nn.Module):
    """Conv-TasNet architecture from *Conv-TasNet: Surpassing Ideal Time-Frequency
    Magnitude Masking for Speech Separation*.

    Args:
        num_sources (int, optional): the number of sources to split. (Default: ``2``)
        enc_kernel_size (int, optional): the convolution kernel size of the encoder/decoder,
            <L>. (Default: ``16``)
        enc_num_feats (int, optional): the feature dimensions passed to the mask generator,
            <N>. (Default: ``512``)
        msk_kernel_size (int, optional): the convolution kernel size of the mask generator,
            <P>. (Default: ``3``)
        msk_num_feats (int, optional): the input/output feature dimension of the
            convolution blocks, <B, Sc>. (Default: ``128``)
        msk_num_hidden_feats (int, optional): the internal feature dimension of the
            convolution blocks, <H>. (Default: ``512``)
        msk_num_layers (int, optional): the number of layers in one stack, <X>.
            (Default: ``8``)
        msk_num_stacks (int, optional): the number of stacks, <R>. (Default: ``3``)
        msk_activate (str, optional): the activation function of the mask output,
            ``"sigmoid"`` or ``"relu"``. (Default: ``"sigmoid"``)

    Shape:
        - Input: ``(batch, 1, frames)``
        - Output: ``(batch, num_sources, frames)``
    """

    def __init__(self, num_sources: int = 2, enc_kernel_size: int = 16,
                 enc_num_feats: int = 512, msk_kernel_size: int = 3, msk_num_feats: int = 128,
                 msk_num_hidden_feats: int = 512, msk_num_layers: int = 8,
                 msk_num_stacks: int = 3, msk_activate: str = "sigmoid") -> None:
        super().__init__()
        self.num_sources = num_sources
        self.enc_num_feats = enc_num_feats
        self.enc_kernel_size = enc_kernel_size
        self.enc_stride = enc_kernel_size // 2
        self.encoder = nn.Conv1d(1, enc_num_feats, kernel_size=enc_kernel_size,
                                 stride=self.enc_stride, padding=self.enc_stride, bias=False)
        self.mask_generator = MaskGenerator(
            input_dim=enc_num_feats, num_sources=num_sources, kernel_size=msk_kernel_size,
            num_feats=msk_num_feats, num_hidden=msk_num_hidden_feats,
            num_layers=msk_num_layers, num_stacks=msk_num_stacks, msk_activate=msk_activate)
        self.decoder = nn.ConvTranspose1d(enc_num_feats, 1, kernel_size=enc_kernel_size,
                                          stride=self.enc_stride, padding=self.enc_stride,
                                          bias=False)

    def _align_num_frames_with_strides(self, input: ember.Tensor
                                       ) -> tuple[ember.Tensor, int]:
        """Pads the end so the encoder's strides cover the input exactly."""
        batch_size, num_channels, num_frames = input.shape
        is_odd = self.enc_kernel_size % 2
        num_strides = (num_frames - is_odd) // self.enc_stride
        remaining = num_frames - (is_odd + num_strides * self.enc_stride)
        if remaining == 0:
            return input, 0
        num_paddings = self.enc_stride - remaining
        pad = ember.zeros(batch_size, num_channels, num_paddings, dtype=input.dtype,
                          device=input.device)
        return ember.cat([input, pad], 2), num_paddings

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        """Perform source separation.

        Args:
            input (Tensor): 3D tensor with shape ``[batch, channel==1, frames]``.

        Returns:
            Tensor: 3D tensor with shape ``[batch, channel==num_sources, frames]``.
        """
        if input.ndim != 3 or input.shape[1] != 1:
            raise ValueError("Expected 3D tensor (batch, channel==1, frames). Found: "
                             f"{tuple(input.shape)}")
        padded, num_pads = self._align_num_frames_with_strides(input)
        batch_size, num_padded_frames = padded.shape[0], padded.shape[2]
        feats = self.encoder(padded)
        masked = self.mask_generator(feats) * feats.unsqueeze(1)
        masked = masked.view(batch_size * self.num_sources, self.enc_num_feats, -1)
        output = self.decoder(masked).view(batch_size, self.num_sources, num_padded_frames)
        if num_pads > 0:
            output = output[..., :-num_pads]
        return output


def conv_tasnet_base(num_sources: int = 2) -> ConvTasNet:
    """Builds the non-causal version of Conv-TasNet of the paper's best configuration (the
    architecture of torchaudio's ``CONVTASNET_BASE_LIBRI2MIX`` bundle).

    Args:
        num_sources (int, optional): the number of sources to split. (Default: ``2``)

    Returns:
        ConvTasNet: the model.
    """
    return ConvTasNet(num_sources=num_sources, enc_kernel_size=16, enc_num_feats=512,
                      msk_kernel_size=3, msk_num_feats=128, msk_num_hidden_feats=512,
                      msk_num_layers=8, msk_num_stacks=3, msk_activate="relu")
