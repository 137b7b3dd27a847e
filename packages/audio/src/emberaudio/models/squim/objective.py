"""SQUIM objective: reference-free estimates of STOI, wide-band PESQ and SI-SDR from a
waveform (Kumar et al., 2023): a convolutional encoder, a dual-path RNN, and one transformer
branch per metric; with torchaudio's module and parameter names."""

from __future__ import annotations

import math

import ember
from ember import nn
from ember.nn import functional as F

__all__ = ["SquimObjective", "squim_objective_base", "squim_objective_model"]


def transform_wb_pesq_range(x: float) -> float:
    """A narrow-band PESQ score (ITU-T P.862) on the wide-band scale (P.862.2)."""
    return 0.999 + (4.999 - 0.999) / (1 + math.exp(-1.3669 * x + 3.8224))


# The lower bound of wide-band PESQ is not known exactly; 1.0 is a close approximation.
PESQRange: tuple[float, float] = (1.0, transform_wb_pesq_range(4.5))


class RangeSigmoid(nn.Module):
    """A sigmoid rescaled to ``val_range``."""

    def __init__(self, val_range: tuple[float, float] = (0.0, 1.0)) -> None:
        super().__init__()
        if not (isinstance(val_range, tuple) and len(val_range) == 2):
            raise ValueError(f"val_range must be a (low, high) tuple, got {val_range!r}")
        self.val_range = val_range
        self.sigmoid = nn.Sigmoid()

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        low, high = self.val_range
        return self.sigmoid(x) * (high - low) + low


class Encoder(nn.Module):
    """Waveforms ``(batch, time)`` to ReLU features ``(batch, feat_dim, frames)`` by a
    convolution of ``win_len`` with half-window hops."""

    def __init__(self, feat_dim: int = 512, win_len: int = 32) -> None:
        super().__init__()
        self.conv1d = nn.Conv1d(1, feat_dim, win_len, stride=win_len // 2, bias=False)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return F.relu(self.conv1d(x.unsqueeze(1)))


class SingleRNN(nn.Module):
    """A bidirectional RNN (``"RNN"``, ``"LSTM"`` or ``"GRU"``) projected back to
    ``input_size``, on ``(batch, seq, dim)``."""

    def __init__(self, rnn_type: str, input_size: int, hidden_size: int,
                 dropout: float = 0.0) -> None:
        super().__init__()
        if rnn_type not in ("RNN", "LSTM", "GRU"):
            raise ValueError(f"rnn_type must be 'RNN', 'LSTM' or 'GRU', got {rnn_type!r}")
        self.rnn_type = rnn_type
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.rnn = getattr(nn, rnn_type)(input_size, hidden_size, 1, dropout=dropout,
                                         batch_first=True, bidirectional=True)
        self.proj = nn.Linear(hidden_size * 2, input_size)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        out, _ = self.rnn(x)
        return self.proj(out)


class DPRNN(nn.Module):
    """Dual-path RNN (Luo et al., 2020): the frames are cut into half-overlapping chunks;
    RNNs run along each chunk (rows) and across the chunks (columns), each with a residual
    and a group norm; a 1x1 convolution and PReLU, and overlap-add back to frames.

    Input ``(batch, feat_dim, frames)``; output ``(batch, frames, d_model)``.
    """

    def __init__(self, feat_dim: int = 64, hidden_dim: int = 128, num_blocks: int = 6,
                 rnn_type: str = "LSTM", d_model: int = 256, chunk_size: int = 100,
                 chunk_stride: int = 50) -> None:
        super().__init__()
        self.num_blocks = num_blocks
        self.row_rnn = nn.ModuleList()
        self.col_rnn = nn.ModuleList()
        self.row_norm = nn.ModuleList()
        self.col_norm = nn.ModuleList()
        for _ in range(num_blocks):
            self.row_rnn.append(SingleRNN(rnn_type, feat_dim, hidden_dim))
            self.col_rnn.append(SingleRNN(rnn_type, feat_dim, hidden_dim))
            self.row_norm.append(nn.GroupNorm(1, feat_dim, eps=1e-8))
            self.col_norm.append(nn.GroupNorm(1, feat_dim, eps=1e-8))
        self.conv = nn.Sequential(nn.Conv2d(feat_dim, d_model, 1), nn.PReLU())
        self.chunk_size = chunk_size
        self.chunk_stride = chunk_stride

    def pad_chunk(self, x: ember.Tensor) -> tuple[ember.Tensor, int]:
        rest = self.chunk_size - (self.chunk_stride + x.shape[-1] % self.chunk_size
                                  ) % self.chunk_size
        return F.pad(x, [self.chunk_stride, rest + self.chunk_stride]), rest

    def chunking(self, x: ember.Tensor) -> tuple[ember.Tensor, int]:
        """``(B, N, T)`` to ``(B, N, chunk_size, num_chunks)`` (chunks every
        ``chunk_stride`` frames), and the right padding added."""
        out, rest = self.pad_chunk(x)
        batch, dim, _ = out.shape
        first = out[:, :, :-self.chunk_stride].contiguous().view(batch, dim, -1,
                                                                 self.chunk_size)
        second = out[:, :, self.chunk_stride:].contiguous().view(batch, dim, -1,
                                                                 self.chunk_size)
        out = ember.cat([first, second], dim=3).view(batch, dim, -1, self.chunk_size)
        return out.transpose(2, 3).contiguous(), rest

    def merging(self, x: ember.Tensor, rest: int) -> ember.Tensor:
        """Overlap-add of the chunks back to ``(B, N, T)``."""
        batch, dim, _, _ = x.shape
        out = x.transpose(2, 3).contiguous().view(batch, dim, -1, self.chunk_size * 2)
        first = out[:, :, :, :self.chunk_size].contiguous().view(batch, dim, -1)[
            :, :, self.chunk_stride:]
        second = out[:, :, :, self.chunk_size:].contiguous().view(batch, dim, -1)[
            :, :, :-self.chunk_stride]
        out = first + second
        if rest > 0:
            out = out[:, :, :-rest]
        return out.contiguous()

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        out, rest = self.chunking(x)
        batch, _, rows, cols = out.shape
        for row_rnn, row_norm, col_rnn, col_norm in zip(self.row_rnn, self.row_norm,
                                                        self.col_rnn, self.col_norm):
            row_in = out.permute(0, 3, 2, 1).contiguous().view(batch * cols, rows, -1)
            row_out = row_rnn(row_in).view(batch, cols, rows, -1).permute(0, 3, 2, 1)
            out = out + row_norm(row_out.contiguous())
            col_in = out.permute(0, 2, 3, 1).contiguous().view(batch * rows, cols, -1)
            col_out = col_rnn(col_in).view(batch, rows, cols, -1).permute(0, 3, 1, 2)
            out = out + col_norm(col_out.contiguous())
        out = self.merging(self.conv(out), rest)
        return out.transpose(1, 2).contiguous()


class AutoPool(nn.Module):
    """Softmax-weighted pooling along ``pool_dim`` with a learnt sharpness ``alpha``."""

    def __init__(self, pool_dim: int = 1) -> None:
        super().__init__()
        self.pool_dim = pool_dim
        self.softmax = nn.Softmax(dim=pool_dim)
        self.register_parameter("alpha", nn.Parameter(ember.ones(1)))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return (x * self.softmax(x * self.alpha)).sum(dim=self.pool_dim)


class SquimObjective(nn.Module):
    """Speech Quality and Intelligibility Measures (SQUIM) model for **objective** metrics:
    STOI, wide-band PESQ and SI-SDR of a speech waveform, without a reference.

    Args:
        encoder (nn.Module): waveform to features.
        dprnn (nn.Module): the sequence model.
        branches (nn.ModuleList): one branch per metric (STOI, PESQ, SI-SDR).

    Shape:
        - input: :math:`(B, T)`.
        - output: a list of :math:`(B,)` scores, one per branch.

    Examples::

        >>> model = emberaudio.models.squim_objective_base().eval()
        >>> stoi, pesq, si_sdr = model(ember.randn(1, 16000))
    """

    def __init__(self, encoder: nn.Module, dprnn: nn.Module, branches: nn.ModuleList) -> None:
        super().__init__()
        self.encoder = encoder
        self.dprnn = dprnn
        self.branches = branches

    def forward(self, x: ember.Tensor) -> list[ember.Tensor]:
        if x.ndim != 2:
            raise ValueError(f"The input must be a 2D Tensor. Found dimension {x.ndim}.")
        x = x / ((x ** 2).mean(dim=1, keepdim=True) ** 0.5 * 20)
        out = self.dprnn(self.encoder(x))
        return [branch(out).squeeze(1) for branch in self.branches]


def _create_branch(d_model: int, nhead: int, metric: str) -> nn.Module:
    head = [nn.Linear(d_model, d_model), nn.PReLU(), nn.Linear(d_model, 1)]
    if metric == "stoi":
        head.append(RangeSigmoid())
    elif metric == "pesq":
        head.append(RangeSigmoid(val_range=PESQRange))
    return nn.Sequential(
        nn.TransformerEncoderLayer(d_model, nhead, d_model * 4, dropout=0.0, batch_first=True),
        AutoPool(), nn.Sequential(*head))


def squim_objective_model(feat_dim: int, win_len: int, d_model: int, nhead: int,
                          hidden_dim: int, num_blocks: int, rnn_type: str, chunk_size: int,
                          chunk_stride: int | None = None) -> SquimObjective:
    """Builds a custom :class:`SquimObjective`.

    Args:
        feat_dim (int): the encoder's feature dimension.
        win_len (int): the encoder's kernel size.
        d_model (int): the width after the DPRNN (and of the transformer branches).
        nhead (int): attention heads of the branches.
        hidden_dim (int): hidden size of the DPRNN's RNNs.
        num_blocks (int): the number of DPRNN blocks.
        rnn_type (str): ``"RNN"``, ``"LSTM"`` or ``"GRU"``.
        chunk_size (int): the DPRNN's chunk size.
        chunk_stride (int or None, optional): its hop; ``None`` for half the chunk size.

    Returns:
        SquimObjective: the model.
    """
    if chunk_stride is None:
        chunk_stride = chunk_size // 2
    branches = nn.ModuleList([_create_branch(d_model, nhead, metric)
                              for metric in ("stoi", "pesq", "sisdr")])
    return SquimObjective(Encoder(feat_dim, win_len),
                          DPRNN(feat_dim, hidden_dim, num_blocks, rnn_type, d_model,
                                chunk_size, chunk_stride), branches)


def squim_objective_base() -> SquimObjective:
    """Builds the :class:`SquimObjective` of the published model (256 features, windows of
    64, two DPRNN blocks of LSTMs with 256 units, chunks of 71)."""
    return squim_objective_model(feat_dim=256, win_len=64, d_model=256, nhead=4,
                                 hidden_dim=256, num_blocks=2, rnn_type="LSTM", chunk_size=71)
