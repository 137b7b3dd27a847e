"""Hybrid Demucs: music source separation by two U-Nets, one on the waveform and one on its
spectrogram, merged in their innermost layers (Défossez, 2021); with torchaudio's module and
parameter names, so torchaudio's checkpoints load as they are."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember import nn
from ember.nn import functional as F

__all__ = ["HDemucs", "hdemucs_high", "hdemucs_low", "hdemucs_medium"]


class _ScaledEmbedding(nn.Module):
    """An embedding stored divided by ``scale`` and multiplied back on use (a learning rate
    ``scale`` times larger for it); ``smooth`` starts it as a normalised running sum over the
    rows (smooth across frequencies)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, scale: float = 10.0,
                 smooth: bool = False) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        with ember.no_grad():
            weight = self.embedding.weight
            if smooth:
                counts = ember.arange(1, num_embeddings + 1, dtype=weight.dtype).sqrt()
                weight.copy_(ember.cumsum(weight, dim=0) / counts[:, None])
            weight.div_(scale)
        self.scale = scale

    @property
    def weight(self) -> ember.Tensor:
        return self.embedding.weight * self.scale

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.embedding(x) * self.scale


class _LayerScale(nn.Module):
    """A learnt per-channel scale of a residual branch, starting at ``init`` (Touvron et al.,
    2021)."""

    def __init__(self, channels: int, init: float = 0.0) -> None:
        super().__init__()
        self.scale = nn.Parameter(ember.full((channels,), float(init)))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.scale[:, None] * x


class _BLSTM(nn.Module):
    """A two-way LSTM with ``dim`` hidden units projected back to ``dim``, on ``(batch, dim,
    time)``. Sequences longer than 200 steps are cut into half-overlapping windows of 200, run
    separately, and joined again keeping each window's middle."""

    def __init__(self, dim: int, layers: int = 1, skip: bool = False) -> None:
        super().__init__()
        self.max_steps = 200
        self.lstm = nn.LSTM(bidirectional=True, num_layers=layers, hidden_size=dim,
                            input_size=dim)
        self.linear = nn.Linear(2 * dim, dim)
        self.skip = skip

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        batch, channels, steps = x.shape
        residual = x
        windowed = self.max_steps is not None and steps > self.max_steps
        if windowed:
            width = self.max_steps
            hop = width // 2
            frames = _frames(x, width, hop)  # (batch, channels, n, width)
            count = frames.shape[2]
            x = frames.permute(0, 2, 1, 3).reshape(-1, channels, width)
        y = self.linear(self.lstm(x.permute(2, 0, 1))[0]).permute(1, 2, 0)
        if windowed:
            frames = y.reshape(batch, count, channels, width)
            keep = hop // 2
            pieces = [frames[:, k, :, (keep if k else 0):(width - keep if k < count - 1
                                                          else width)]
                      for k in range(count)]
            y = ember.cat(pieces, -1)[..., :steps]
        return y + residual if self.skip else y


class _LocalState(nn.Module):
    """Self-attention over time from the content alone (no positions), with a learnt penalty
    growing with the distance between query and key; a step never attends to itself."""

    def __init__(self, channels: int, heads: int = 4, ndecay: int = 4) -> None:
        super().__init__()
        if channels % heads != 0:
            raise ValueError(f"channels ({channels}) must be divisible by heads ({heads})")
        self.heads = heads
        self.ndecay = ndecay
        self.content = nn.Conv1d(channels, channels, 1)
        self.query = nn.Conv1d(channels, channels, 1)
        self.key = nn.Conv1d(channels, channels, 1)
        self.query_decay = nn.Conv1d(channels, heads * ndecay, 1)
        if ndecay:
            # decays start near zero (behind a sigmoid): the widest window at first
            with ember.no_grad():
                self.query_decay.weight.mul_(0.01)
                self.query_decay.bias.fill_(-2.0)
        self.proj = nn.Conv1d(channels, channels, 1)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        batch, channels, steps = x.shape
        heads = self.heads
        positions = ember.arange(steps, device=x.device, dtype=x.dtype)
        distance = (positions[:, None] - positions[None, :]).abs()  # (keys t, queries s)
        queries = self.query(x).view(batch, heads, -1, steps)
        keys = self.key(x).view(batch, heads, -1, steps)
        scores = ember.einsum("bhct,bhcs->bhts", keys, queries) / math.sqrt(keys.shape[2])
        if self.ndecay:
            decays = ember.arange(1, self.ndecay + 1, device=x.device, dtype=x.dtype)
            decay_q = ember.sigmoid(self.query_decay(x).view(batch, heads, -1, steps)) / 2
            kernel = -decays.view(-1, 1, 1) * distance / math.sqrt(self.ndecay)
            scores = scores + ember.einsum("fts,bhfs->bhts", kernel, decay_q)
        scores = scores.masked_fill(ember.eye(steps, device=x.device, dtype=ember.bool), -100)
        weights = ember.softmax(scores, dim=2)
        content = self.content(x).view(batch, heads, -1, steps)
        result = ember.einsum("bhts,bhct->bhcs", weights, content).reshape(batch, -1, steps)
        return x + self.proj(result)


class _DConv(nn.Module):
    """The residual branch of an encoder layer: ``depth`` blocks, each a dilated convolution
    into ``channels / compress`` channels (dilation doubling per block), optionally a BLSTM
    and local attention, a 1x1 convolution and GLU back to ``channels``, and a layer scale."""

    def __init__(self, channels: int, compress: float = 4, depth: int = 2, init: float = 1e-4,
                 norm_type: str = "group_norm", attn: bool = False, heads: int = 4,
                 ndecay: int = 4, lstm: bool = False, kernel_size: int = 3) -> None:
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        self.channels = channels
        self.compress = compress
        self.depth = abs(depth)
        hidden = int(channels / compress)

        def norm(dim: int) -> nn.Module:
            return nn.GroupNorm(1, dim) if norm_type == "group_norm" else nn.Identity()

        self.layers = nn.ModuleList()
        for d in range(self.depth):
            dilation = 2 ** d if depth > 0 else 1
            mods: list[nn.Module] = [
                nn.Conv1d(channels, hidden, kernel_size, dilation=dilation,
                          padding=dilation * (kernel_size // 2)),
                norm(hidden), nn.GELU()]
            if lstm:
                mods.append(_BLSTM(hidden, layers=2, skip=True))
            if attn:
                mods.append(_LocalState(hidden, heads=heads, ndecay=ndecay))
            mods += [nn.Conv1d(hidden, 2 * channels, 1), norm(2 * channels), nn.GLU(1),
                     _LayerScale(channels, init)]
            self.layers.append(nn.Sequential(*mods))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


def _norm_fn(norm_type: str, groups: int):
    if norm_type == "group_norm":
        return lambda dim: nn.GroupNorm(groups, dim)
    return lambda dim: nn.Identity()


class _HEncLayer(nn.Module):
    """One encoder layer of either branch: a strided convolution (over frequencies, 2-D with a
    ``(k, 1)`` kernel, when ``freq``; over time otherwise), then GELU, the DConv branch, and a
    1 + 2 * ``context`` convolution with GLU. ``empty`` keeps only the first convolution (the
    time branch's last layer, merged into the frequency branch through ``inject``)."""

    def __init__(self, chin: int, chout: int, kernel_size: int = 8, stride: int = 4,
                 norm_groups: int = 4, empty: bool = False, freq: bool = True,
                 norm_type: str = "group_norm", context: int = 0,
                 dconv_kw: dict[str, Any] | None = None, pad: bool = True) -> None:
        super().__init__()
        norm = _norm_fn(norm_type, norm_groups)
        padding = kernel_size // 4 if pad else 0
        self.freq = freq
        self.kernel_size = kernel_size
        self.stride = stride
        self.empty = empty
        self.pad = padding
        if freq:
            conv = nn.Conv2d
            kernel_size, stride, padding = (kernel_size, 1), (stride, 1), (padding, 0)
        else:
            conv = nn.Conv1d
        self.conv = conv(chin, chout, kernel_size, stride, padding)
        self.norm1 = norm(chout)
        if empty:
            self.rewrite = nn.Identity()
            self.norm2 = nn.Identity()
            self.dconv = nn.Identity()
        else:
            self.rewrite = conv(chout, 2 * chout, 1 + 2 * context, 1, context)
            self.norm2 = norm(2 * chout)
            self.dconv = _DConv(chout, **(dconv_kw or {}))

    def forward(self, x: ember.Tensor, inject: ember.Tensor | None = None) -> ember.Tensor:
        if not self.freq:
            if x.dim() == 4:
                x = x.reshape(x.shape[0], -1, x.shape[-1])
            remainder = x.shape[-1] % self.stride
            if remainder:
                x = F.pad(x, (0, self.stride - remainder))
        y = self.conv(x)
        if self.empty:
            return y
        if inject is not None:
            if inject.shape[-1] != y.shape[-1]:
                raise ValueError(f"the injected time branch has {inject.shape[-1]} steps, the "
                                 f"frequency branch {y.shape[-1]}")
            if inject.dim() == 3 and y.dim() == 4:
                inject = inject[:, :, None]
            y = y + inject
        y = F.gelu(self.norm1(y))
        if self.freq:
            batch, channels, freqs, steps = y.shape
            y = y.permute(0, 2, 1, 3).reshape(-1, channels, steps)
            y = self.dconv(y).view(batch, freqs, channels, steps).permute(0, 2, 1, 3)
        else:
            y = self.dconv(y)
        return F.glu(self.norm2(self.rewrite(y)), dim=1)


class _HDecLayer(nn.Module):
    """One decoder layer of either branch: the skip added, a 1 + 2 * ``context`` convolution
    with GLU, then a transposed strided convolution (GELU after it unless ``last``). Returns
    the output and the tensor before the transposed convolution (where the time branch splits
    off the frequency one)."""

    def __init__(self, chin: int, chout: int, last: bool = False, kernel_size: int = 8,
                 stride: int = 4, norm_groups: int = 1, empty: bool = False, freq: bool = True,
                 norm_type: str = "group_norm", context: int = 1,
                 dconv_kw: dict[str, Any] | None = None, pad: bool = True) -> None:
        super().__init__()
        norm = _norm_fn(norm_type, norm_groups)
        if pad:
            if (kernel_size - stride) % 2 != 0:
                raise ValueError(f"kernel_size - stride must be even, got kernel_size "
                                 f"{kernel_size} and stride {stride}")
            self.pad = (kernel_size - stride) // 2
        else:
            self.pad = 0
        self.last = last
        self.freq = freq
        self.chin = chin
        self.empty = empty
        self.stride = stride
        self.kernel_size = kernel_size
        if freq:
            conv, conv_tr = nn.Conv2d, nn.ConvTranspose2d
            kernel_size, stride = (kernel_size, 1), (stride, 1)
        else:
            conv, conv_tr = nn.Conv1d, nn.ConvTranspose1d
        self.conv_tr = conv_tr(chin, chout, kernel_size, stride)
        self.norm2 = norm(chout)
        if empty:
            self.rewrite = nn.Identity()
            self.norm1 = nn.Identity()
        else:
            self.rewrite = conv(chin, 2 * chin, 1 + 2 * context, 1, context)
            self.norm1 = norm(2 * chin)

    def forward(self, x: ember.Tensor, skip: ember.Tensor | None,
                length: int) -> tuple[ember.Tensor, ember.Tensor]:
        if self.freq and x.dim() == 3:
            x = x.view(x.shape[0], self.chin, -1, x.shape[-1])
        if self.empty:
            if skip is not None:
                raise ValueError("an empty decoder layer takes no skip connection")
            y = x
        else:
            y = F.glu(self.norm1(self.rewrite(x + skip)), dim=1)
        z = self.norm2(self.conv_tr(y))
        if self.freq:
            if self.pad:
                z = z[..., self.pad:-self.pad, :]
        else:
            z = z[..., self.pad:self.pad + length]
            if z.shape[-1] != length:
                raise ValueError(f"the decoded time branch has {z.shape[-1]} steps, expected "
                                 f"{length}")
        if not self.last:
            z = F.gelu(z)
        return z, y


class HDemucs(nn.Module):
    r"""Hybrid Demucs from *Hybrid Spectrogram and Waveform Source Separation*
    (Défossez, 2021): a waveform U-Net and a spectrogram U-Net (the real and imaginary parts
    of the STFT as channels) that share their innermost layers; the output is the sum of the
    time branch and the inverse STFT of the frequency branch.

    Args:
        sources (list of str): names of the sources to separate (for example
            ``["drums", "bass", "other", "vocals"]``).
        audio_channels (int, optional): channels of the input and output audio. (Default: 2)
        channels (int, optional): hidden channels of the first layer. (Default: 48)
        growth (int, optional): hidden channels grow by this factor each layer. (Default: 2)
        nfft (int, optional): FFT size of the frequency branch (hop ``nfft // 4``).
            (Default: 4096)
        depth (int, optional): layers of the encoder and the decoder. (Default: 6)
        freq_emb (float, optional): weight of a frequency embedding added after the first
            frequency layer (none when 0). (Default: 0.2)
        emb_scale (int, optional): learning-rate scale of that embedding. (Default: 10)
        emb_smooth (bool, optional): start the embedding smooth across frequencies.
            (Default: ``True``)
        kernel_size (int, optional): kernel size of the layers. (Default: 8)
        time_stride (int, optional): stride of the time layer after the merge. (Default: 2)
        stride (int, optional): stride of the layers. (Default: 4)
        context (int, optional): context of the decoders' 1x1 convolutions. (Default: 1)
        context_enc (int, optional): context of the encoders' 1x1 convolutions. (Default: 0)
        norm_starts (int, optional): first layer with group norms (decoder layers counted
            from the inside). (Default: 4)
        norm_groups (int, optional): groups of the group norms. (Default: 4)
        dconv_depth (int, optional): blocks in each DConv branch. (Default: 2)
        dconv_comp (int, optional): channel compression inside the DConv branch. (Default: 4)
        dconv_attn (int, optional): first layer whose DConv branch has local attention.
            (Default: 4)
        dconv_lstm (int, optional): first layer whose DConv branch has a BLSTM. (Default: 4)
        dconv_init (float, optional): starting layer scale of the DConv branch.
            (Default: 1e-4)

    Example::

        >>> model = emberaudio.models.hdemucs_low(["bass", "drums", "other", "vocals"])
        >>> sources = model(ember.randn(1, 2, 8000))  # (1, 4, 2, 8000)
    """

    def __init__(self, sources: list[str], audio_channels: int = 2, channels: int = 48,
                 growth: int = 2, nfft: int = 4096, depth: int = 6, freq_emb: float = 0.2,
                 emb_scale: int = 10, emb_smooth: bool = True, kernel_size: int = 8,
                 time_stride: int = 2, stride: int = 4, context: int = 1, context_enc: int = 0,
                 norm_starts: int = 4, norm_groups: int = 4, dconv_depth: int = 2,
                 dconv_comp: int = 4, dconv_attn: int = 4, dconv_lstm: int = 4,
                 dconv_init: float = 1e-4) -> None:
        super().__init__()
        self.depth = depth
        self.nfft = nfft
        self.audio_channels = audio_channels
        self.sources = sources
        self.kernel_size = kernel_size
        self.context = context
        self.stride = stride
        self.channels = channels
        self.hop_length = nfft // 4
        self.freq_emb = None
        self.freq_encoder = nn.ModuleList()
        self.freq_decoder = nn.ModuleList()
        self.time_encoder = nn.ModuleList()
        self.time_decoder = nn.ModuleList()

        chin, chout = audio_channels, channels
        chin_z, chout_z = 2 * audio_channels, channels  # the frequency branch: real and imag
        freqs = nfft // 2
        for index in range(depth):
            freq = freqs > 1
            ker, stri, pad, last_freq = kernel_size, stride, True, False
            if not freq:
                if freqs != 1:
                    raise ValueError(f"the frequency axis is reduced to {freqs} bins, not 1")
                ker, stri = 2 * time_stride, time_stride
            elif freqs <= kernel_size:  # the last frequency layer takes all remaining bins
                ker, pad, last_freq = freqs, False, True
            kw = {"kernel_size": ker, "stride": stri, "freq": freq, "pad": pad,
                  "norm_type": "group_norm" if index >= norm_starts else "none",
                  "norm_groups": norm_groups,
                  "dconv_kw": {"lstm": index >= dconv_lstm, "attn": index >= dconv_attn,
                               "depth": dconv_depth, "compress": dconv_comp,
                               "init": dconv_init}}
            kw_time = dict(kw, freq=False, kernel_size=kernel_size, stride=stride, pad=True)
            if last_freq:
                chout_z = max(chout, chout_z)
                chout = chout_z
            self.freq_encoder.append(_HEncLayer(chin_z, chout_z, context=context_enc, **kw))
            if freq:
                if last_freq and nfft == 2048:
                    kw_time.update(stride=2, kernel_size=4)
                self.time_encoder.append(_HEncLayer(chin, chout, context=context_enc,
                                                    empty=last_freq, **kw_time))
            if index == 0:
                chin = audio_channels * len(sources)
                chin_z = 2 * chin
            self.freq_decoder.insert(0, _HDecLayer(chout_z, chin_z, last=index == 0,
                                                   context=context, **kw))
            if freq:
                self.time_decoder.insert(0, _HDecLayer(chout, chin, empty=last_freq,
                                                       last=index == 0, context=context,
                                                       **kw_time))
            chin, chin_z = chout, chout_z
            chout, chout_z = int(growth * chout), int(growth * chout_z)
            if freq:
                freqs = 1 if freqs <= kernel_size else freqs // stride
            if index == 0 and freq_emb:
                self.freq_emb = _ScaledEmbedding(freqs, chin_z, smooth=emb_smooth,
                                                 scale=emb_scale)
                self.freq_emb_scale = freq_emb
        _rescale_module(self)

    def _spec(self, x: ember.Tensor) -> ember.Tensor:
        # Padded by 3/2 hops on each side and trimmed after, so the spectrogram has exactly
        # ceil(length / hop) frames, as the time branch's convolutions have.
        hop = self.hop_length
        frames = math.ceil(x.shape[-1] / hop)
        pad = hop // 2 * 3
        x = _pad1d_reflect(x, pad, pad + frames * hop - x.shape[-1])
        z = _spectro(x, self.nfft, hop)[..., :-1, :]
        if z.shape[-1] != frames + 4:
            raise ValueError(f"the spectrogram has {z.shape[-1]} frames, expected {frames + 4}")
        return z[..., 2:2 + frames]

    def _ispec(self, z: ember.Tensor, length: int) -> ember.Tensor:
        hop = self.hop_length
        z = F.pad(F.pad(z, [0, 0, 0, 1]), [2, 2])
        pad = hop // 2 * 3
        x = _ispectro(z, hop, length=hop * math.ceil(length / hop) + 2 * pad)
        return x[..., pad:pad + length]

    def forward(self, input: ember.Tensor) -> ember.Tensor:
        r"""Separates a mixture.

        Args:
            input (Tensor): mixtures, ``(batch, audio_channels, frames)``.

        Returns:
            Tensor: the sources, ``(batch, len(sources), audio_channels, frames)``.
        """
        if input.ndim != 3:
            raise ValueError(f"Expected 3D tensor with dimensions (batch, channel, frames). "
                             f"Found: {tuple(input.shape)}")
        if input.shape[1] != self.audio_channels:
            raise ValueError(f"The channel dimension of input Tensor must match "
                             f"`audio_channels` of HDemucs model. Found:{input.shape[1]}.")
        length = input.shape[-1]
        z = self._spec(input)
        batch, channels, freqs, frames = z.shape
        # real and imaginary parts as channels: (B, C, F, T, 2) -> (B, 2C, F, T)
        x = ember.view_as_real(z).permute(0, 1, 4, 2, 3).reshape(batch, 2 * channels, freqs,
                                                                  frames)
        # both branches are normalised (and the outputs scaled back)
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        std = x.std(dim=(1, 2, 3), keepdim=True)
        x = (x - mean) / (1e-5 + std)
        mean_t = input.mean(dim=(1, 2), keepdim=True)
        std_t = input.std(dim=(1, 2), keepdim=True)
        xt = (input - mean_t) / (1e-5 + std_t)

        saved, saved_t, lengths, lengths_t = [], [], [], []
        for index, encode in enumerate(self.freq_encoder):
            lengths.append(x.shape[-1])
            inject = None
            if index < len(self.time_encoder):
                lengths_t.append(xt.shape[-1])
                time_encode = self.time_encoder[index]
                xt = time_encode(xt)
                if time_encode.empty:
                    inject = xt  # now the same shape as the frequency branch: merged
                else:
                    saved_t.append(xt)
            x = encode(x, inject)
            if index == 0 and self.freq_emb is not None:
                bins = ember.arange(x.shape[-2], device=x.device)
                emb = self.freq_emb(bins).t()[None, :, :, None].expand_as(x)
                x = x + self.freq_emb_scale * emb
            saved.append(x)

        # the decoders start from zeros: the signal comes through the skips
        x = ember.zeros_like(x)
        xt = ember.zeros_like(x)
        offset = self.depth - len(self.time_decoder)
        for index, decode in enumerate(self.freq_decoder):
            x, pre = decode(x, saved.pop(-1), lengths.pop(-1))
            if index >= offset:
                time_decode = self.time_decoder[index - offset]
                length_t = lengths_t.pop(-1)
                if time_decode.empty:  # the time branch splits off here
                    if pre.shape[2] != 1:
                        raise ValueError(f"the merged layer has {pre.shape[2]} frequency bins, "
                                         f"not 1")
                    xt, _ = time_decode(pre[:, :, 0], None, length_t)
                else:
                    xt, _ = time_decode(xt, saved_t.pop(-1), length_t)

        num_sources = len(self.sources)
        x = x.view(batch, num_sources, -1, freqs, frames) * std[:, None] + mean[:, None]
        # channels back to complex: (B, S, 2C', F, T) -> (B, S, C', F, T) complex
        x = x.view(batch, num_sources, -1, 2, freqs, frames).permute(0, 1, 2, 4, 5, 3)
        x = self._ispec(ember.view_as_complex(x.contiguous()), length)
        xt = xt.view(batch, num_sources, -1, length) * std_t[:, None] + mean_t[:, None]
        return xt + x


def _frames(x: ember.Tensor, width: int, hop: int) -> ember.Tensor:
    """``(..., T)`` to ``(..., ceil(T / hop), width)`` windows every ``hop`` steps, the end
    zero-padded."""
    count = math.ceil(x.shape[-1] / hop)
    x = F.pad(x, [0, (count - 1) * hop + width - x.shape[-1]])
    return x.unfold(-1, width, hop)


def _pad1d_reflect(x: ember.Tensor, left: int, right: int) -> ember.Tensor:
    """Reflect padding that also works when the signal is not longer than the padding
    (zeros appended first)."""
    longest = max(left, right)
    if x.shape[-1] <= longest:
        x = F.pad(x, (0, longest - x.shape[-1] + 1))
    return F.pad(x, (left, right), mode="reflect")


def _rescale_module(module: nn.Module) -> None:
    """Scales every convolution's starting weights and bias by ``sqrt(0.1 / std(weight))``."""
    convs = (nn.Conv1d, nn.ConvTranspose1d, nn.Conv2d, nn.ConvTranspose2d)
    with ember.no_grad():
        for sub in module.modules():
            if isinstance(sub, convs):
                scale = (sub.weight.std() / 0.1) ** 0.5
                sub.weight.div_(scale)
                if sub.bias is not None:
                    sub.bias.div_(scale)


def _spectro(x: ember.Tensor, n_fft: int, hop_length: int) -> ember.Tensor:
    leading = list(x.shape[:-1])
    z = ember.stft(x.reshape(-1, x.shape[-1]), n_fft, hop_length,
                   window=ember.hann_window(n_fft, dtype=x.dtype, device=x.device),
                   win_length=n_fft, normalized=True, center=True, return_complex=True,
                   pad_mode="reflect")
    return z.view(leading + list(z.shape[-2:]))


def _ispectro(z: ember.Tensor, hop_length: int, length: int) -> ember.Tensor:
    leading = list(z.shape[:-2])
    freqs, frames = z.shape[-2:]
    n_fft = 2 * freqs - 2
    window = ember.hann_window(n_fft, dtype=z.real.dtype, device=z.device)
    x = ember.istft(z.reshape(-1, freqs, frames), n_fft, hop_length, window=window,
                    win_length=n_fft, normalized=True, length=length, center=True)
    return x.view(leading + [x.shape[-1]])


def hdemucs_low(sources: list[str]) -> HDemucs:
    """:class:`HDemucs` with ``nfft=1024`` and ``depth=5``, for sample rates around 8 kHz.

    Args:
        sources (list of str): see :class:`HDemucs`.
    """
    return HDemucs(sources=sources, nfft=1024, depth=5)


def hdemucs_medium(sources: list[str]) -> HDemucs:
    """:class:`HDemucs` with ``nfft=2048`` and ``depth=6``, for sample rates of 16-32 kHz.

    Args:
        sources (list of str): see :class:`HDemucs`.
    """
    return HDemucs(sources=sources, nfft=2048, depth=6)


def hdemucs_high(sources: list[str]) -> HDemucs:
    """:class:`HDemucs` with ``nfft=4096`` and ``depth=6``, for sample rates of 44.1-48 kHz.

    Args:
        sources (list of str): see :class:`HDemucs`.
    """
    return HDemucs(sources=sources, nfft=4096, depth=6)
