"""Tacotron2: text to mel spectrogram (Shen et al., 2018), laid out as NVIDIA's
implementation (and torchaudio's) lays it out: a convolutional and bidirectional-LSTM
encoder, an autoregressive decoder with location-sensitive attention, and a postnet."""

from __future__ import annotations

import warnings

import ember
from ember import nn
from ember.nn import functional as F

__all__ = ["Tacotron2"]


def _linear(in_dim: int, out_dim: int, bias: bool = True, w_init_gain: str = "linear"
            ) -> nn.Linear:
    layer = nn.Linear(in_dim, out_dim, bias=bias)
    nn.init.xavier_uniform_(layer.weight, gain=nn.init.calculate_gain(w_init_gain))
    return layer


def _conv1d(in_channels: int, out_channels: int, kernel_size: int, bias: bool = True,
            w_init_gain: str = "linear") -> nn.Conv1d:
    if kernel_size % 2 != 1:
        raise ValueError("kernel_size must be odd")
    conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size, stride=1,
                     padding=(kernel_size - 1) // 2, dilation=1, bias=bias)
    nn.init.xavier_uniform_(conv.weight, gain=nn.init.calculate_gain(w_init_gain))
    return conv


def _padding_mask(lengths: ember.Tensor) -> ember.Tensor:
    """``True`` past each length: ``(B, max(lengths))``."""
    max_len = int(lengths.max().item())
    return ember.arange(max_len, device=lengths.device).expand(
        lengths.shape[0], max_len) >= lengths.unsqueeze(1)


class _LocationLayer(nn.Module):
    """Convolves the previous and cumulative attention weights ``(B, 2, T_text)`` and
    projects them to the attention's hidden dimension."""

    def __init__(self, attention_n_filter: int, attention_kernel_size: int,
                 attention_hidden_dim: int) -> None:
        super().__init__()
        self.location_conv = _conv1d(2, attention_n_filter, attention_kernel_size, bias=False)
        self.location_dense = _linear(attention_n_filter, attention_hidden_dim, bias=False,
                                      w_init_gain="tanh")

    def forward(self, attention_weights_cat: ember.Tensor) -> ember.Tensor:
        return self.location_dense(self.location_conv(attention_weights_cat).transpose(1, 2))


class _Attention(nn.Module):
    """Location-sensitive additive attention: ``v(tanh(W q + U loc + memory'))``, masked past
    the text lengths, softmax over the text."""

    def __init__(self, attention_rnn_dim: int, encoder_embedding_dim: int,
                 attention_hidden_dim: int, attention_location_n_filter: int,
                 attention_location_kernel_size: int) -> None:
        super().__init__()
        self.query_layer = _linear(attention_rnn_dim, attention_hidden_dim, bias=False,
                                   w_init_gain="tanh")
        self.memory_layer = _linear(encoder_embedding_dim, attention_hidden_dim, bias=False,
                                    w_init_gain="tanh")
        self.v = _linear(attention_hidden_dim, 1, bias=False)
        self.location_layer = _LocationLayer(attention_location_n_filter,
                                             attention_location_kernel_size,
                                             attention_hidden_dim)
        self.score_mask_value = -float("inf")

    def forward(self, attention_hidden_state, memory, processed_memory,
                attention_weights_cat, mask):
        energies = self.v(ember.tanh(self.query_layer(attention_hidden_state.unsqueeze(1))
                                     + self.location_layer(attention_weights_cat)
                                     + processed_memory)).squeeze(2)
        weights = F.softmax(energies.masked_fill(mask, self.score_mask_value), dim=1)
        context = ember.bmm(weights.unsqueeze(1), memory).squeeze(1)
        return context, weights


class _Prenet(nn.Module):
    """Linear layers with ReLU and dropout 0.5, in evaluation too (as in the paper: the
    dropout is the decoder's source of variation)."""

    def __init__(self, in_dim: int, out_sizes: list[int]) -> None:
        super().__init__()
        in_sizes = [in_dim] + out_sizes[:-1]
        self.layers = nn.ModuleList([_linear(i, o, bias=False)
                                     for i, o in zip(in_sizes, out_sizes)])

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        for linear in self.layers:
            x = F.dropout(F.relu(linear(x)), p=0.5, training=True)
        return x


class _Postnet(nn.Module):
    """Convolutions with batch norm (tanh between them) predicting a residual for the mel
    spectrogram ``(B, n_mels, T)``."""

    def __init__(self, n_mels: int, postnet_embedding_dim: int, postnet_kernel_size: int,
                 postnet_n_convolution: int) -> None:
        super().__init__()
        self.convolutions = nn.ModuleList()
        for i in range(postnet_n_convolution):
            last = i == postnet_n_convolution - 1
            in_channels = n_mels if i == 0 else postnet_embedding_dim
            out_channels = n_mels if last else postnet_embedding_dim
            self.convolutions.append(nn.Sequential(
                _conv1d(in_channels, out_channels, postnet_kernel_size,
                        w_init_gain="linear" if last else "tanh"),
                nn.BatchNorm1d(out_channels)))
        self.n_convs = len(self.convolutions)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        for i, conv in enumerate(self.convolutions):
            x = conv(x)
            if i < self.n_convs - 1:
                x = ember.tanh(x)
            x = F.dropout(x, 0.5, training=self.training)
        return x


class _Encoder(nn.Module):
    """Convolutions with batch norm and ReLU, then a bidirectional LSTM over the valid
    tokens: ``(B, D, T_text)`` to ``(B, T_text, D)``."""

    def __init__(self, encoder_embedding_dim: int, encoder_n_convolution: int,
                 encoder_kernel_size: int) -> None:
        super().__init__()
        self.convolutions = nn.ModuleList([
            nn.Sequential(_conv1d(encoder_embedding_dim, encoder_embedding_dim,
                                  encoder_kernel_size, w_init_gain="relu"),
                          nn.BatchNorm1d(encoder_embedding_dim))
            for _ in range(encoder_n_convolution)])
        self.lstm = nn.LSTM(encoder_embedding_dim, encoder_embedding_dim // 2, 1,
                            batch_first=True, bidirectional=True)

    def forward(self, x: ember.Tensor, input_lengths: ember.Tensor) -> ember.Tensor:
        for conv in self.convolutions:
            x = F.dropout(F.relu(conv(x)), 0.5, self.training)
        packed = nn.utils.rnn.pack_padded_sequence(x.transpose(1, 2), input_lengths.cpu(),
                                                   batch_first=True)
        outputs, _ = self.lstm(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class _Decoder(nn.Module):
    """The autoregressive decoder: prenet, attention LSTM, attention, decoder LSTM, and the
    projections to the next frame and to the stop-token logit."""

    def __init__(self, n_mels: int, n_frames_per_step: int, encoder_embedding_dim: int,
                 decoder_rnn_dim: int, decoder_max_step: int, decoder_dropout: float,
                 decoder_early_stopping: bool, attention_rnn_dim: int,
                 attention_hidden_dim: int, attention_location_n_filter: int,
                 attention_location_kernel_size: int, attention_dropout: float,
                 prenet_dim: int, gate_threshold: float) -> None:
        super().__init__()
        self.n_mels = n_mels
        self.n_frames_per_step = n_frames_per_step
        self.encoder_embedding_dim = encoder_embedding_dim
        self.attention_rnn_dim = attention_rnn_dim
        self.decoder_rnn_dim = decoder_rnn_dim
        self.prenet_dim = prenet_dim
        self.decoder_max_step = decoder_max_step
        self.gate_threshold = gate_threshold
        self.attention_dropout = attention_dropout
        self.decoder_dropout = decoder_dropout
        self.decoder_early_stopping = decoder_early_stopping
        self.prenet = _Prenet(n_mels * n_frames_per_step, [prenet_dim, prenet_dim])
        self.attention_rnn = nn.LSTMCell(prenet_dim + encoder_embedding_dim, attention_rnn_dim)
        self.attention_layer = _Attention(attention_rnn_dim, encoder_embedding_dim,
                                          attention_hidden_dim, attention_location_n_filter,
                                          attention_location_kernel_size)
        self.decoder_rnn = nn.LSTMCell(attention_rnn_dim + encoder_embedding_dim,
                                       decoder_rnn_dim, True)
        self.linear_projection = _linear(decoder_rnn_dim + encoder_embedding_dim,
                                         n_mels * n_frames_per_step)
        self.gate_layer = _linear(decoder_rnn_dim + encoder_embedding_dim, 1, bias=True,
                                  w_init_gain="sigmoid")

    def _initial_states(self, memory: ember.Tensor):
        batch, max_time = memory.shape[0], memory.shape[1]

        def zeros(*shape):
            return ember.zeros(*shape, dtype=memory.dtype, device=memory.device)

        return (zeros(batch, self.attention_rnn_dim), zeros(batch, self.attention_rnn_dim),
                zeros(batch, self.decoder_rnn_dim), zeros(batch, self.decoder_rnn_dim),
                zeros(batch, max_time), zeros(batch, max_time),
                zeros(batch, self.encoder_embedding_dim),
                self.attention_layer.memory_layer(memory))

    def _go_frame(self, memory: ember.Tensor) -> ember.Tensor:
        return ember.zeros(memory.shape[0], self.n_mels * self.n_frames_per_step,
                           dtype=memory.dtype, device=memory.device)

    def decode(self, decoder_input, attention_hidden, attention_cell, decoder_hidden,
               decoder_cell, attention_weights, attention_weights_cum, attention_context,
               memory, processed_memory, mask):
        """One decoder step from the prenet's output ``(B, prenet_dim)``; returns the frame
        ``(B, n_mels)``, the stop-token logit ``(B, 1)`` and the updated states (attention
        LSTM h and c, decoder LSTM h and c, attention weights, cumulative weights,
        context)."""
        attention_hidden, attention_cell = self.attention_rnn(
            ember.cat((decoder_input, attention_context), -1),
            (attention_hidden, attention_cell))
        attention_hidden = F.dropout(attention_hidden, self.attention_dropout, self.training)
        weights_cat = ember.cat((attention_weights.unsqueeze(1),
                                 attention_weights_cum.unsqueeze(1)), dim=1)
        attention_context, attention_weights = self.attention_layer(
            attention_hidden, memory, processed_memory, weights_cat, mask)
        attention_weights_cum = attention_weights_cum + attention_weights
        decoder_hidden, decoder_cell = self.decoder_rnn(
            ember.cat((attention_hidden, attention_context), -1),
            (decoder_hidden, decoder_cell))
        decoder_hidden = F.dropout(decoder_hidden, self.decoder_dropout, self.training)
        hidden_context = ember.cat((decoder_hidden, attention_context), dim=1)
        return (self.linear_projection(hidden_context), self.gate_layer(hidden_context),
                attention_hidden, attention_cell, decoder_hidden, decoder_cell,
                attention_weights, attention_weights_cum, attention_context)

    def _outputs(self, mels, gates, alignments):
        """``(steps, B, n_mels * n_frames_per_step)``, ``(steps, B)``, ``(steps, B, T_text)``
        to ``(B, n_mels, frames)``, ``(B, steps)``, ``(B, steps, T_text)``."""
        mels = mels.transpose(0, 1).contiguous()
        mels = mels.view(mels.shape[0], -1, self.n_mels).transpose(1, 2)
        return mels, gates.transpose(0, 1).contiguous(), alignments.transpose(0, 1).contiguous()

    def forward(self, memory: ember.Tensor, mel_specgram_truth: ember.Tensor,
                memory_lengths: ember.Tensor):
        """Teacher-forced decoding: each step is fed the previous true frame."""
        truth = mel_specgram_truth.transpose(1, 2)
        truth = truth.reshape(truth.shape[0], truth.shape[1] // self.n_frames_per_step, -1)
        inputs = ember.cat((self._go_frame(memory).unsqueeze(0), truth.transpose(0, 1)), dim=0)
        inputs = self.prenet(inputs)
        mask = _padding_mask(memory_lengths)
        states = self._initial_states(memory)
        processed_memory = states[-1]
        states = states[:-1]
        mels, gates, alignments = [], [], []
        for step in range(inputs.shape[0] - 1):
            mel, gate, *states = self.decode(inputs[step], *states, memory, processed_memory,
                                             mask)
            mels.append(mel)
            gates.append(gate.squeeze(1))
            alignments.append(states[4])
        return self._outputs(ember.stack(mels), ember.stack(gates), ember.stack(alignments))

    def infer(self, memory: ember.Tensor, memory_lengths: ember.Tensor):
        """Free-running decoding until every stop-token probability passes
        ``gate_threshold`` (with early stopping) or ``decoder_max_step`` steps; returns the
        mel spectrogram, its lengths, the stop-token logits and the alignments."""
        batch = memory.shape[0]
        decoder_input = self._go_frame(memory)
        mask = _padding_mask(memory_lengths)
        states = self._initial_states(memory)
        processed_memory = states[-1]
        states = states[:-1]
        lengths = ember.zeros(batch, dtype=ember.int32, device=memory.device)
        finished = ember.zeros(batch, dtype=ember.bool, device=memory.device)
        mels, gates, alignments = [], [], []
        for _ in range(self.decoder_max_step):
            mel, gate, *states = self.decode(self.prenet(decoder_input), *states, memory,
                                             processed_memory, mask)
            mels.append(mel)
            gates.append(gate.squeeze(1))
            alignments.append(states[4])
            lengths = lengths + (~finished).to(ember.int32)
            finished = finished | (ember.sigmoid(gate.squeeze(1)) > self.gate_threshold)
            if self.decoder_early_stopping and bool(finished.all()):
                break
            decoder_input = mel
        if len(mels) == self.decoder_max_step:
            warnings.warn("Reached max decoder steps. The generated spectrogram might not "
                          "cover the whole transcript.", stacklevel=2)
        mels, gates, alignments = self._outputs(ember.stack(mels), ember.stack(gates),
                                                ember.stack(alignments))
        return mels, lengths, gates, alignments


class Tacotron2(nn.Module):
    r"""Tacotron2 from *Natural TTS Synthesis by Conditioning WaveNet on Mel Spectrogram
    Predictions* (Shen et al., 2018), after NVIDIA's Deep Learning Examples.

    Args:
        mask_padding (bool, optional): zero the outputs past ``mel_specgram_lengths`` in
            ``forward``. (Default: ``False``)
        n_mels (int, optional): number of mel bins. (Default: ``80``)
        n_symbol (int, optional): number of input symbols. (Default: ``148``)
        n_frames_per_step (int, optional): frames per decoder step; only 1 is supported.
            (Default: ``1``)
        symbol_embedding_dim (int, optional): input embedding dimension. (Default: ``512``)
        encoder_embedding_dim (int, optional): encoder dimension. (Default: ``512``)
        encoder_n_convolution (int, optional): encoder convolutions. (Default: ``3``)
        encoder_kernel_size (int, optional): encoder kernel size. (Default: ``5``)
        decoder_rnn_dim (int, optional): decoder LSTM units. (Default: ``1024``)
        decoder_max_step (int, optional): most frames ``infer`` generates. (Default: ``2000``)
        decoder_dropout (float, optional): dropout after the decoder LSTM. (Default: ``0.1``)
        decoder_early_stopping (bool, optional): stop ``infer`` once every sample has
            finished. (Default: ``True``)
        attention_rnn_dim (int, optional): attention LSTM units. (Default: ``1024``)
        attention_hidden_dim (int, optional): attention dimension. (Default: ``128``)
        attention_location_n_filter (int, optional): location filters. (Default: ``32``)
        attention_location_kernel_size (int, optional): location kernel size.
            (Default: ``31``)
        attention_dropout (float, optional): dropout after the attention LSTM.
            (Default: ``0.1``)
        prenet_dim (int, optional): prenet units. (Default: ``256``)
        postnet_n_convolution (int, optional): postnet convolutions. (Default: ``5``)
        postnet_kernel_size (int, optional): postnet kernel size. (Default: ``5``)
        postnet_embedding_dim (int, optional): postnet dimension. (Default: ``512``)
        gate_threshold (float, optional): stop-token probability that ends a sample.
            (Default: ``0.5``)

    Shape:
        - tokens: :math:`(B, T_{text})`, zero-padded, lengths sorted in decreasing order.
        - mel_specgram: :math:`(B, n\_mels, T_{mel})`.

    Examples::

        >>> model = Tacotron2(n_symbol=40, decoder_max_step=100).eval()
        >>> mel, mel_lengths, alignments = model.infer(tokens, lengths)
    """

    def __init__(self, mask_padding: bool = False, n_mels: int = 80, n_symbol: int = 148,
                 n_frames_per_step: int = 1, symbol_embedding_dim: int = 512,
                 encoder_embedding_dim: int = 512, encoder_n_convolution: int = 3,
                 encoder_kernel_size: int = 5, decoder_rnn_dim: int = 1024,
                 decoder_max_step: int = 2000, decoder_dropout: float = 0.1,
                 decoder_early_stopping: bool = True, attention_rnn_dim: int = 1024,
                 attention_hidden_dim: int = 128, attention_location_n_filter: int = 32,
                 attention_location_kernel_size: int = 31, attention_dropout: float = 0.1,
                 prenet_dim: int = 256, postnet_n_convolution: int = 5,
                 postnet_kernel_size: int = 5, postnet_embedding_dim: int = 512,
                 gate_threshold: float = 0.5) -> None:
        super().__init__()
        self.mask_padding = mask_padding
        self.n_mels = n_mels
        self.n_frames_per_step = n_frames_per_step
        self.embedding = nn.Embedding(n_symbol, symbol_embedding_dim)
        nn.init.xavier_uniform_(self.embedding.weight)
        self.encoder = _Encoder(encoder_embedding_dim, encoder_n_convolution,
                                encoder_kernel_size)
        self.decoder = _Decoder(n_mels, n_frames_per_step, encoder_embedding_dim,
                                decoder_rnn_dim, decoder_max_step, decoder_dropout,
                                decoder_early_stopping, attention_rnn_dim,
                                attention_hidden_dim, attention_location_n_filter,
                                attention_location_kernel_size, attention_dropout, prenet_dim,
                                gate_threshold)
        self.postnet = _Postnet(n_mels, postnet_embedding_dim, postnet_kernel_size,
                                postnet_n_convolution)

    def forward(self, tokens: ember.Tensor, token_lengths: ember.Tensor,
                mel_specgram: ember.Tensor, mel_specgram_lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor, ember.Tensor]:
        """Teacher-forced pass (training).

        Args:
            tokens (Tensor): ``(B, max(token_lengths))``, zero-padded.
            token_lengths (Tensor): ``(B,)``, in decreasing order.
            mel_specgram (Tensor): the target, ``(B, n_mels, max(mel_specgram_lengths))``.
            mel_specgram_lengths (Tensor): ``(B,)``.

        Returns:
            (Tensor, Tensor, Tensor, Tensor): the mel spectrogram before and after the
            postnet ``(B, n_mels, T_mel)``, the stop-token logits ``(B, T_mel)`` and the
            alignments ``(B, T_mel, T_text)``.
        """
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be (batch, length), got shape {tuple(tokens.shape)}")
        encoded = self.encoder(self.embedding(tokens).transpose(1, 2), token_lengths)
        mel, gates, alignments = self.decoder(encoded, mel_specgram,
                                              memory_lengths=token_lengths)
        mel_postnet = mel + self.postnet(mel)
        if self.mask_padding:
            mask = _padding_mask(mel_specgram_lengths)
            mel = mel.masked_fill(mask[:, None, :], 0.0)
            mel_postnet = mel_postnet.masked_fill(mask[:, None, :], 0.0)
            gates = gates.masked_fill(mask, 1e3)
        return mel, mel_postnet, gates, alignments

    def infer(self, tokens: ember.Tensor, lengths: ember.Tensor | None = None
              ) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor]:
        """Generates mel spectrograms from text.

        Args:
            tokens (Tensor): ``(B, max(lengths))``, zero-padded.
            lengths (Tensor or None, optional): ``(B,)`` in decreasing order; ``None`` when
                every token is valid. (Default: ``None``)

        Returns:
            (Tensor, Tensor, Tensor): the mel spectrogram ``(B, n_mels, T_mel)`` (after the
            postnet), its lengths ``(B,)`` and the alignments ``(B, T_mel, T_text)``.
        """
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be (batch, length), got shape {tuple(tokens.shape)}")
        batch, max_length = tokens.shape
        if lengths is None:
            lengths = ember.full((batch,), max_length, dtype=tokens.dtype, device=tokens.device)
        encoded = self.encoder(self.embedding(tokens).transpose(1, 2), lengths)
        mel, mel_lengths, _, alignments = self.decoder.infer(encoded, lengths)
        return mel + self.postnet(mel), mel_lengths, alignments
