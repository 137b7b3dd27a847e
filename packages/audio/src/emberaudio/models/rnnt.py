"""RNNT: the recurrent neural network transducer (transcription, prediction and joint
networks), with the Emformer-based transcriber of torchaudio's ``emformer_rnnt_*``."""

from __future__ import annotations

import ember
from ember import nn
from emberaudio.models.emformer import Emformer

__all__ = ["RNNT", "emformer_rnnt_base", "emformer_rnnt_model"]


class _TimeReduction(nn.Module):
    """Stacks every ``stride`` frames into one: ``(B, T, D)`` to ``(B, T // stride,
    D * stride)``; the lengths are divided by ``stride`` (truncating)."""

    def __init__(self, stride: int) -> None:
        super().__init__()
        self.stride = stride

    def forward(self, input: ember.Tensor, lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor]:
        batch, frames, dim = input.shape
        kept = frames - frames % self.stride
        output = input[:, :kept, :].reshape(batch, kept // self.stride, dim * self.stride)
        return output.contiguous(), ember.div(lengths, self.stride, rounding_mode="trunc")


class _CustomLSTM(nn.Module):
    """An LSTM layer over ``(T, B, D)`` with optional layer norms on the gates and the cell
    (``x2g`` and ``p2g`` the input and recurrent projections to the four gates)."""

    def __init__(self, input_dim: int, hidden_dim: int, layer_norm: bool = False,
                 layer_norm_epsilon: float = 1e-5) -> None:
        super().__init__()
        self.x2g = nn.Linear(input_dim, 4 * hidden_dim, bias=not layer_norm)
        self.p2g = nn.Linear(hidden_dim, 4 * hidden_dim, bias=False)
        if layer_norm:
            self.c_norm = nn.LayerNorm(hidden_dim, eps=layer_norm_epsilon)
            self.g_norm = nn.LayerNorm(4 * hidden_dim, eps=layer_norm_epsilon)
        else:
            self.c_norm = nn.Identity()
            self.g_norm = nn.Identity()
        self.hidden_dim = hidden_dim

    def forward(self, input: ember.Tensor, state: list[ember.Tensor] | None
                ) -> tuple[ember.Tensor, list[ember.Tensor]]:
        if state is None:
            h = ember.zeros(input.shape[1], self.hidden_dim, dtype=input.dtype,
                            device=input.device)
            c = ember.zeros_like(h)
        else:
            h, c = state
        outputs = []
        for gates_x in self.x2g(input).unbind(0):
            gates = self.g_norm(gates_x + self.p2g(h))
            i, f, g, o = gates.chunk(4, 1)
            c = self.c_norm(f.sigmoid() * c + i.sigmoid() * g.tanh())
            h = o.sigmoid() * c.tanh()
            outputs.append(h)
        if outputs:
            output = ember.stack(outputs, dim=0)
        else:
            output = ember.zeros(0, input.shape[1], self.hidden_dim, dtype=input.dtype,
                                 device=input.device)
        return output, [h, c]


class _EmformerEncoder(nn.Module):
    """The transcription network: linear, time reduction, Emformer, linear, layer norm."""

    def __init__(self, *, input_dim: int, output_dim: int, segment_length: int,
                 right_context_length: int, time_reduction_input_dim: int,
                 time_reduction_stride: int, transformer_num_heads: int,
                 transformer_ffn_dim: int, transformer_num_layers: int,
                 transformer_left_context_length: int, transformer_dropout: float = 0.0,
                 transformer_activation: str = "relu", transformer_max_memory_size: int = 0,
                 transformer_weight_init_scale_strategy: str = "depthwise",
                 transformer_tanh_on_mem: bool = False) -> None:
        super().__init__()
        self.input_linear = nn.Linear(input_dim, time_reduction_input_dim, bias=False)
        self.time_reduction = _TimeReduction(time_reduction_stride)
        width = time_reduction_input_dim * time_reduction_stride
        self.transformer = Emformer(
            width, transformer_num_heads, transformer_ffn_dim, transformer_num_layers,
            segment_length // time_reduction_stride, dropout=transformer_dropout,
            activation=transformer_activation,
            left_context_length=transformer_left_context_length,
            right_context_length=right_context_length // time_reduction_stride,
            max_memory_size=transformer_max_memory_size,
            weight_init_scale_strategy=transformer_weight_init_scale_strategy,
            tanh_on_mem=transformer_tanh_on_mem)
        self.output_linear = nn.Linear(width, output_dim)
        self.layer_norm = nn.LayerNorm(output_dim)

    def forward(self, input: ember.Tensor, lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor]:
        x, lengths = self.time_reduction(self.input_linear(input), lengths)
        x, lengths = self.transformer(x, lengths)
        return self.layer_norm(self.output_linear(x)), lengths

    def infer(self, input: ember.Tensor, lengths: ember.Tensor,
              states: list[list[ember.Tensor]] | None
              ) -> tuple[ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        x, lengths = self.time_reduction(self.input_linear(input), lengths)
        x, lengths, states = self.transformer.infer(x, lengths, states)
        return self.layer_norm(self.output_linear(x)), lengths, states


class _Predictor(nn.Module):
    """The prediction network: embedding, layer norm, LSTM layers, linear, layer norm."""

    def __init__(self, num_symbols: int, output_dim: int, symbol_embedding_dim: int,
                 num_lstm_layers: int, lstm_hidden_dim: int, lstm_layer_norm: bool = False,
                 lstm_layer_norm_epsilon: float = 1e-5, lstm_dropout: float = 0.0) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_symbols, symbol_embedding_dim)
        self.input_layer_norm = nn.LayerNorm(symbol_embedding_dim)
        self.lstm_layers = nn.ModuleList([
            _CustomLSTM(symbol_embedding_dim if i == 0 else lstm_hidden_dim, lstm_hidden_dim,
                        layer_norm=lstm_layer_norm, layer_norm_epsilon=lstm_layer_norm_epsilon)
            for i in range(num_lstm_layers)])
        self.dropout = nn.Dropout(p=lstm_dropout)
        self.linear = nn.Linear(lstm_hidden_dim, output_dim)
        self.output_layer_norm = nn.LayerNorm(output_dim)
        self.lstm_dropout = lstm_dropout

    def forward(self, input: ember.Tensor, lengths: ember.Tensor,
                state: list[list[ember.Tensor]] | None = None
                ) -> tuple[ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        x = self.input_layer_norm(self.embedding(input.permute(1, 0)))
        state_out = []
        for i, lstm in enumerate(self.lstm_layers):
            x, layer_state = lstm(x, None if state is None else state[i])
            x = self.dropout(x)
            state_out.append(layer_state)
        return self.output_layer_norm(self.linear(x)).permute(1, 0, 2), lengths, state_out


class _Joiner(nn.Module):
    """The joint network: ``linear(activation(source[:, :, None] + target[:, None]))``."""

    def __init__(self, input_dim: int, output_dim: int, activation: str = "relu") -> None:
        super().__init__()
        self.linear = nn.Linear(input_dim, output_dim, bias=True)
        if activation == "relu":
            self.activation = nn.ReLU()
        elif activation == "tanh":
            self.activation = nn.Tanh()
        else:
            raise ValueError(f"Unsupported activation {activation}")

    def forward(self, source_encodings: ember.Tensor, source_lengths: ember.Tensor,
                target_encodings: ember.Tensor, target_lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor]:
        joint = source_encodings.unsqueeze(2) + target_encodings.unsqueeze(1)
        return self.linear(self.activation(joint)), source_lengths, target_lengths


class RNNT(nn.Module):
    r"""Recurrent neural network transducer (RNN-T) model (Graves, 2012).

    Note:
        Build it with a factory function (:func:`emformer_rnnt_model`,
        :func:`emformer_rnnt_base`).

    Args:
        transcriber (nn.Module): transcription network.
        predictor (nn.Module): prediction network.
        joiner (nn.Module): joint network.

    Shape:
        - sources: :math:`(B, T, D)` (right-padded with the right context); targets
          :math:`(B, U)`.
        - output: :math:`(B, T', U, \text{num\_symbols})`, the source and target lengths and
          the predictor's state.

    Examples::

        >>> model = emformer_rnnt_base(num_symbols=4097)
        >>> output, source_lengths, target_lengths, state = model(
        ...     sources, source_lengths, targets, target_lengths)
    """

    def __init__(self, transcriber: nn.Module, predictor: nn.Module, joiner: nn.Module
                 ) -> None:
        super().__init__()
        self.transcriber = transcriber
        self.predictor = predictor
        self.joiner = joiner

    def forward(self, sources: ember.Tensor, source_lengths: ember.Tensor,
                targets: ember.Tensor, target_lengths: ember.Tensor,
                predictor_state: list[list[ember.Tensor]] | None = None
                ) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        """Training pass: the joint network's output ``(B, T', U, num_symbols)``, its
        source and target lengths, and the prediction network's state."""
        source_encodings, source_lengths = self.transcriber(input=sources,
                                                            lengths=source_lengths)
        target_encodings, target_lengths, predictor_state = self.predictor(
            input=targets, lengths=target_lengths, state=predictor_state)
        output, source_lengths, target_lengths = self.joiner(
            source_encodings=source_encodings, source_lengths=source_lengths,
            target_encodings=target_encodings, target_lengths=target_lengths)
        return output, source_lengths, target_lengths, predictor_state

    def transcribe_streaming(self, sources: ember.Tensor, source_lengths: ember.Tensor,
                             state: list[list[ember.Tensor]] | None
                             ) -> tuple[ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        """The transcription network on one segment (right-padded with its right context),
        with the state of the previous call."""
        return self.transcriber.infer(sources, source_lengths, state)

    def transcribe(self, sources: ember.Tensor, source_lengths: ember.Tensor
                   ) -> tuple[ember.Tensor, ember.Tensor]:
        """The transcription network on whole sequences (right-padded with the right
        context)."""
        return self.transcriber(sources, source_lengths)

    def predict(self, targets: ember.Tensor, target_lengths: ember.Tensor,
                state: list[list[ember.Tensor]] | None
                ) -> tuple[ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        """The prediction network on target tokens ``(B, U)``."""
        return self.predictor(input=targets, lengths=target_lengths, state=state)

    def join(self, source_encodings: ember.Tensor, source_lengths: ember.Tensor,
             target_encodings: ember.Tensor, target_lengths: ember.Tensor
             ) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor]:
        """The joint network on source ``(B, T, D)`` and target ``(B, U, D)`` encodings."""
        return self.joiner(source_encodings=source_encodings, source_lengths=source_lengths,
                           target_encodings=target_encodings, target_lengths=target_lengths)


def emformer_rnnt_model(*, input_dim: int, encoding_dim: int, num_symbols: int,
                        segment_length: int, right_context_length: int,
                        time_reduction_input_dim: int, time_reduction_stride: int,
                        transformer_num_heads: int, transformer_ffn_dim: int,
                        transformer_num_layers: int, transformer_dropout: float,
                        transformer_activation: str, transformer_left_context_length: int,
                        transformer_max_memory_size: int,
                        transformer_weight_init_scale_strategy: str,
                        transformer_tanh_on_mem: bool, symbol_embedding_dim: int,
                        num_lstm_layers: int, lstm_layer_norm: bool,
                        lstm_layer_norm_epsilon: float, lstm_dropout: float) -> RNNT:
    """Builds an Emformer-based :class:`RNNT`.

    Note:
        ``transcribe`` expects sequences right-padded with ``right_context_length`` frames;
        ``transcribe_streaming`` expects segments of ``segment_length`` frames right-padded
        with ``right_context_length`` frames.

    Args:
        input_dim (int): dimension of the input frames.
        encoding_dim (int): dimension of the transcriber's and predictor's encodings.
        num_symbols (int): the number of target tokens.
        segment_length (int): input segment length, in frames.
        right_context_length (int): right context length, in frames.
        time_reduction_input_dim (int): the dimension frames are projected to before the
            time reduction.
        time_reduction_stride (int): the factor the time reduction shortens sequences by.
        transformer_num_heads (int): attention heads of each Emformer layer.
        transformer_ffn_dim (int): hidden dimension of each Emformer feed-forward network.
        transformer_num_layers (int): the number of Emformer layers.
        transformer_dropout (float): Emformer dropout probability.
        transformer_activation (str): ``"relu"``, ``"gelu"`` or ``"silu"``.
        transformer_left_context_length (int): Emformer left context length.
        transformer_max_memory_size (int): the number of Emformer memories.
        transformer_weight_init_scale_strategy (str): ``"depthwise"``, ``"constant"`` or
            ``None``.
        transformer_tanh_on_mem (bool): squash memories with tanh.
        symbol_embedding_dim (int): dimension of the token embeddings (and of the LSTMs).
        num_lstm_layers (int): the number of LSTM layers.
        lstm_layer_norm (bool): layer norms inside the LSTM layers.
        lstm_layer_norm_epsilon (float): their epsilon.
        lstm_dropout (float): dropout after each LSTM layer.

    Returns:
        RNNT: the model.
    """
    encoder = _EmformerEncoder(
        input_dim=input_dim, output_dim=encoding_dim, segment_length=segment_length,
        right_context_length=right_context_length,
        time_reduction_input_dim=time_reduction_input_dim,
        time_reduction_stride=time_reduction_stride,
        transformer_num_heads=transformer_num_heads, transformer_ffn_dim=transformer_ffn_dim,
        transformer_num_layers=transformer_num_layers, transformer_dropout=transformer_dropout,
        transformer_activation=transformer_activation,
        transformer_left_context_length=transformer_left_context_length,
        transformer_max_memory_size=transformer_max_memory_size,
        transformer_weight_init_scale_strategy=transformer_weight_init_scale_strategy,
        transformer_tanh_on_mem=transformer_tanh_on_mem)
    predictor = _Predictor(num_symbols, encoding_dim, symbol_embedding_dim=symbol_embedding_dim,
                           num_lstm_layers=num_lstm_layers, lstm_hidden_dim=symbol_embedding_dim,
                           lstm_layer_norm=lstm_layer_norm,
                           lstm_layer_norm_epsilon=lstm_layer_norm_epsilon,
                           lstm_dropout=lstm_dropout)
    return RNNT(encoder, predictor, _Joiner(encoding_dim, num_symbols))


def emformer_rnnt_base(num_symbols: int) -> RNNT:
    """Builds the base Emformer :class:`RNNT` (80 mel inputs, 20 Emformer layers of 512,
    segments of 16 frames with 4 of right context, 3 LSTM layers of 512, encodings of 1024).

    Args:
        num_symbols (int): the number of target tokens.

    Returns:
        RNNT: the model.
    """
    return emformer_rnnt_model(
        input_dim=80, encoding_dim=1024, num_symbols=num_symbols, segment_length=16,
        right_context_length=4, time_reduction_input_dim=128, time_reduction_stride=4,
        transformer_num_heads=8, transformer_ffn_dim=2048, transformer_num_layers=20,
        transformer_dropout=0.1, transformer_activation="gelu",
        transformer_left_context_length=30, transformer_max_memory_size=0,
        transformer_weight_init_scale_strategy="depthwise", transformer_tanh_on_mem=True,
        symbol_embedding_dim=512, num_lstm_layers=3, lstm_layer_norm=True,
        lstm_layer_norm_epsilon=1e-3, lstm_dropout=0.3)
