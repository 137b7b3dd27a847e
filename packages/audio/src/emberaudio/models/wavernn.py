"""WaveRNN: a GRU vocoder conditioned on an upsampled mel spectrogram (Kalchbrenner et al.,
2018, after fatchord/WaveRNN)."""

from __future__ import annotations

import math

import ember
from ember import nn

__all__ = ["MelResNet", "ResBlock", "Stretch2d", "UpsampleNetwork", "WaveRNN"]


class ResBlock(nn.Module):
    r"""Residual block of two 1x1 convolutions with batch norm.

    Args:
        n_freq (int, optional): the number of bins in a spectrogram. (Default: ``128``)

    Shape:
        - specgram: :math:`(N, \text{n\_freq}, T)`; output: the same.
    """

    def __init__(self, n_freq: int = 128) -> None:
        super().__init__()
        self.resblock_model = nn.Sequential(
            nn.Conv1d(n_freq, n_freq, kernel_size=1, bias=False), nn.BatchNorm1d(n_freq),
            nn.ReLU(inplace=True),
            nn.Conv1d(n_freq, n_freq, kernel_size=1, bias=False), nn.BatchNorm1d(n_freq))

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        return self.resblock_model(specgram) + specgram


class MelResNet(nn.Module):
    r"""A convolution of ``kernel_size`` frames, then a stack of :class:`ResBlock` s.

    Args:
        n_res_block (int, optional): the number of ResBlocks. (Default: ``10``)
        n_freq (int, optional): the number of bins in a spectrogram. (Default: ``128``)
        n_hidden (int, optional): the ResBlocks' width. (Default: ``128``)
        n_output (int, optional): the output width. (Default: ``128``)
        kernel_size (int, optional): the first convolution's kernel size. (Default: ``5``)

    Shape:
        - specgram: :math:`(N, \text{n\_freq}, T)`.
        - output: :math:`(N, \text{n\_output}, T - \text{kernel\_size} + 1)`.
    """

    def __init__(self, n_res_block: int = 10, n_freq: int = 128, n_hidden: int = 128,
                 n_output: int = 128, kernel_size: int = 5) -> None:
        super().__init__()
        self.melresnet_model = nn.Sequential(
            nn.Conv1d(n_freq, n_hidden, kernel_size=kernel_size, bias=False),
            nn.BatchNorm1d(n_hidden), nn.ReLU(inplace=True),
            *[ResBlock(n_hidden) for _ in range(n_res_block)],
            nn.Conv1d(n_hidden, n_output, kernel_size=1))

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        return self.melresnet_model(specgram)


class Stretch2d(nn.Module):
    r"""Repeat every frequency bin ``freq_scale`` times and every frame ``time_scale``
    times.

    Args:
        time_scale (int): the scale factor in time.
        freq_scale (int): the scale factor in frequency.

    Shape:
        - specgram: :math:`(..., F, T)`; output: :math:`(..., F \cdot \text{freq\_scale},
          T \cdot \text{time\_scale})`.
    """

    def __init__(self, time_scale: int, freq_scale: int) -> None:
        super().__init__()
        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram: ember.Tensor) -> ember.Tensor:
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(
            self.time_scale, -1)


class UpsampleNetwork(nn.Module):
    r"""Upsamples a spectrogram to the sample rate: stretches with smoothing convolutions
    (initialised as moving averages), and a :class:`MelResNet` output stretched alike.

    Args:
        upsample_scales (list[int]): the upsampling factors (their product is the hop).
        n_res_block (int, optional): the number of ResBlocks. (Default: ``10``)
        n_freq (int, optional): the number of bins in a spectrogram. (Default: ``128``)
        n_hidden (int, optional): the ResBlocks' width. (Default: ``128``)
        n_output (int, optional): the MelResNet's output width. (Default: ``128``)
        kernel_size (int, optional): the MelResNet's first kernel size. (Default: ``5``)

    Shape:
        - specgram: :math:`(N, \text{n\_freq}, T)`.
        - output: :math:`(N, \text{n\_freq}, (T - \text{kernel\_size} + 1) S)` and
          :math:`(N, \text{n\_output}, (T - \text{kernel\_size} + 1) S)`, :math:`S` the
          product of the scales.
    """

    def __init__(self, upsample_scales: list[int], n_res_block: int = 10, n_freq: int = 128,
                 n_hidden: int = 128, n_output: int = 128, kernel_size: int = 5) -> None:
        super().__init__()
        self.total_scale = math.prod(upsample_scales)
        self.indent = (kernel_size - 1) // 2 * self.total_scale
        self.resnet = MelResNet(n_res_block, n_freq, n_hidden, n_output, kernel_size)
        self.resnet_stretch = Stretch2d(self.total_scale, 1)
        layers = []
        for scale in upsample_scales:
            conv = nn.Conv2d(1, 1, kernel_size=(1, scale * 2 + 1), padding=(0, scale),
                             bias=False)
            nn.init.constant_(conv.weight, 1.0 / (scale * 2 + 1))
            layers += [Stretch2d(scale, 1), conv]
        self.upsample_layers = nn.Sequential(*layers)

    def forward(self, specgram: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        resnet_output = self.resnet_stretch(self.resnet(specgram).unsqueeze(1)).squeeze(1)
        upsampled = self.upsample_layers(specgram.unsqueeze(1)).squeeze(1)
        end = upsampled.shape[-1] - self.indent
        return upsampled[:, :, self.indent:end], resnet_output


class WaveRNN(nn.Module):
    r"""WaveRNN model from *Efficient Neural Audio Synthesis* (Kalchbrenner et al., 2018),
    as in fatchord/WaveRNN. Waveform and spectrogram have one channel; the product of
    ``upsample_scales`` must equal ``hop_length``.

    Args:
        upsample_scales (list[int]): the upsampling factors.
        n_classes (int): the number of output classes (``2 ** bits``).
        hop_length (int): the number of samples between the starts of consecutive frames.
        n_res_block (int, optional): the number of ResBlocks. (Default: ``10``)
        n_rnn (int, optional): the GRUs' width. (Default: ``512``)
        n_fc (int, optional): the fully connected layers' width. (Default: ``512``)
        kernel_size (int, optional): the MelResNet's first kernel size. (Default: ``5``)
        n_freq (int, optional): the number of bins in a spectrogram. (Default: ``128``)
        n_hidden (int, optional): the ResBlocks' width. (Default: ``128``)
        n_output (int, optional): the MelResNet's output width. (Default: ``128``)

    Shape:
        - waveform: :math:`(N, 1, (T - \text{kernel\_size} + 1) \cdot \text{hop\_length})`.
        - specgram: :math:`(N, 1, \text{n\_freq}, T)`.
        - output: :math:`(N, 1, (T - \text{kernel\_size} + 1) \cdot \text{hop\_length},
          \text{n\_classes})`.

    Examples::

        >>> wavernn = WaveRNN(upsample_scales=[5, 5, 8], n_classes=512, hop_length=200)
        >>> output = wavernn(ember.rand(1, 1, 2000), ember.rand(1, 1, 128, 14))
    """

    def __init__(self, upsample_scales: list[int], n_classes: int, hop_length: int,
                 n_res_block: int = 10, n_rnn: int = 512, n_fc: int = 512,
                 kernel_size: int = 5, n_freq: int = 128, n_hidden: int = 128,
                 n_output: int = 128) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self._pad = (kernel_size - 1 if kernel_size % 2 else kernel_size) // 2
        self.n_rnn = n_rnn
        self.n_aux = n_output // 4
        self.hop_length = hop_length
        self.n_classes = n_classes
        self.n_bits = int(math.log2(n_classes))
        total_scale = math.prod(upsample_scales)
        if total_scale != hop_length:
            raise ValueError(f"Expected: total_scale == hop_length, but found {total_scale} "
                             f"!= {hop_length}")
        self.upsample = UpsampleNetwork(upsample_scales, n_res_block, n_freq, n_hidden,
                                        n_output, kernel_size)
        self.fc = nn.Linear(n_freq + self.n_aux + 1, n_rnn)
        self.rnn1 = nn.GRU(n_rnn, n_rnn, batch_first=True)
        self.rnn2 = nn.GRU(n_rnn + self.n_aux, n_rnn, batch_first=True)
        self.relu1 = nn.ReLU(inplace=True)
        self.relu2 = nn.ReLU(inplace=True)
        self.fc1 = nn.Linear(n_rnn + self.n_aux, n_fc)
        self.fc2 = nn.Linear(n_fc + self.n_aux, n_fc)
        self.fc3 = nn.Linear(n_fc, n_classes)

    def _aux_split(self, aux: ember.Tensor, dim: int) -> list[ember.Tensor]:
        return [aux.narrow(dim, self.n_aux * i, self.n_aux) for i in range(4)]

    def forward(self, waveform: ember.Tensor, specgram: ember.Tensor) -> ember.Tensor:
        if waveform.ndim != 3 or waveform.shape[1] != 1:
            raise ValueError("Require the input channel of waveform is 1")
        if specgram.ndim != 4 or specgram.shape[1] != 1:
            raise ValueError("Require the input channel of specgram is 1")
        waveform, specgram = waveform.squeeze(1), specgram.squeeze(1)
        batch_size = waveform.shape[0]
        h1 = ember.zeros(1, batch_size, self.n_rnn, dtype=waveform.dtype,
                         device=waveform.device)
        h2 = ember.zeros_like(h1)
        specgram, aux = self.upsample(specgram)
        if specgram.shape[-1] != waveform.shape[-1]:
            raise ValueError(f"the waveform has {waveform.shape[-1]} samples but the "
                             f"spectrogram upsamples to {specgram.shape[-1]}: expected "
                             "(n_time - kernel_size + 1) * hop_length samples")
        specgram, aux = specgram.transpose(1, 2), aux.transpose(1, 2)
        a1, a2, a3, a4 = self._aux_split(aux, 2)
        x = self.fc(ember.cat([waveform.unsqueeze(-1), specgram, a1], dim=-1))
        res = x
        x, _ = self.rnn1(x, h1)
        x = x + res
        res = x
        x, _ = self.rnn2(ember.cat([x, a2], dim=-1), h2)
        x = x + res
        x = self.relu1(self.fc1(ember.cat([x, a3], dim=-1)))
        x = self.relu2(self.fc2(ember.cat([x, a4], dim=-1)))
        return self.fc3(x).unsqueeze(1)

    def infer(self, specgram: ember.Tensor, lengths: ember.Tensor | None = None
              ) -> tuple[ember.Tensor, ember.Tensor | None]:
        r"""Generates a waveform sample by sample, drawing each class from the softmax
        (multinomial sampling: the model is assumed trained with cross entropy).

        Args:
            specgram (Tensor): spectrograms, :math:`(N, \text{n\_freq}, T)`.
            lengths (Tensor or None, optional): the valid frames of each spectrogram,
                :math:`(N,)`. Default: ``None``.

        Returns:
            (Tensor, Tensor or None): the waveform in :math:`[-1, 1]`,
            :math:`(N, 1, T \cdot \text{hop\_length})`, and the valid samples (``lengths``
            times the hop) when ``lengths`` is given.
        """
        specgram = nn.functional.pad(specgram, (self._pad, self._pad))
        specgram, aux = self.upsample(specgram)
        if lengths is not None:
            lengths = lengths * self.upsample.total_scale
        batch_size, _, seq_len = specgram.shape
        h1 = ember.zeros(1, batch_size, self.n_rnn, dtype=specgram.dtype,
                         device=specgram.device)
        h2 = ember.zeros_like(h1)
        x = ember.zeros(batch_size, 1, dtype=specgram.dtype, device=specgram.device)
        aux_split = self._aux_split(aux, 1)
        output = []
        for i in range(seq_len):
            a1_t, a2_t, a3_t, a4_t = (a[:, :, i] for a in aux_split)
            x = self.fc(ember.cat([x, specgram[:, :, i], a1_t], dim=1))
            _, h1 = self.rnn1(x.unsqueeze(1), h1)
            x = x + h1[0]
            _, h2 = self.rnn2(ember.cat([x, a2_t], dim=1).unsqueeze(1), h2)
            x = x + h2[0]
            x = nn.functional.relu(self.fc1(ember.cat([x, a3_t], dim=1)))
            x = nn.functional.relu(self.fc2(ember.cat([x, a4_t], dim=1)))
            posterior = nn.functional.softmax(self.fc3(x), dim=1)
            x = ember.multinomial(posterior, 1).to(specgram.dtype)
            x = 2 * x / (2 ** self.n_bits - 1.0) - 1.0  # class -> [-1, 1]
            output.append(x)
        if not output:
            return ember.zeros(batch_size, 1, 0, dtype=specgram.dtype), lengths
        return ember.stack(output).permute(1, 2, 0), lengths
