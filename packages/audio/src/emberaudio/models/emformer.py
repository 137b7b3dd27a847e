"""Emformer: the efficient memory transformer for streaming speech recognition (Shi et al.,
2021), with training-time ``forward`` over whole utterances and segment-by-segment ``infer``
with carried states.

NOTE [ Emformer's blocks ]
The utterance (``T`` frames) is cut into segments of ``segment_length`` frames. Each segment
has a block of ``right_context_length`` look-ahead frames (the frames after it) and, when
``max_memory_size > 0``, a summary vector (the segment's mean). The attention's queries are
``[right context blocks, utterance, summaries]``, its keys ``[memories, right context blocks,
utterance]`` (a memory is the attention's output for the summary of an earlier segment). A query
of segment ``i`` sees: the memories of the ``max_memory_size`` segments before ``i``, the right
context block of ``i``, and the utterance frames from ``left_context_length`` before segment
``i`` to its end. A summary sees the same but no memories. ``infer`` processes one segment,
keeping each layer's memories and the last ``left_context_length`` keys and values.
"""

from __future__ import annotations

import math

import numpy as np

import ember
from ember import nn

__all__ = ["Emformer"]


def _activation(name: str) -> nn.Module:
    modules = {"relu": nn.ReLU, "gelu": nn.GELU, "silu": nn.SiLU}
    if name not in modules:
        raise ValueError(f"Unsupported activation {name}")
    return modules[name]()


def _weight_init_gains(strategy: str | None, num_layers: int) -> list[float | None]:
    if strategy is None:
        return [None] * num_layers
    if strategy == "depthwise":
        return [1.0 / math.sqrt(i + 1) for i in range(num_layers)]
    if strategy == "constant":
        return [1.0 / math.sqrt(2)] * num_layers
    raise ValueError(f"Unsupported weight_init_scale_strategy value {strategy}")


def _empty_like(x: ember.Tensor) -> ember.Tensor:
    return ember.zeros(0, x.shape[1], x.shape[2], dtype=x.dtype, device=x.device)


class _EmformerAttention(nn.Module):
    """Multi-head attention of one Emformer layer over ``(frames, batch, input_dim)``
    sequences, returning the outputs for the right context and utterance and the new
    memories (the outputs for the summaries, squashed by tanh or clamped to [-10, 10])."""

    def __init__(self, input_dim: int, num_heads: int, dropout: float = 0.0,
                 weight_init_gain: float | None = None, tanh_on_mem: bool = False,
                 negative_inf: float = -1e8) -> None:
        super().__init__()
        if input_dim % num_heads != 0:
            raise ValueError(f"input_dim ({input_dim}) is not a multiple of num_heads "
                             f"({num_heads}).")
        self.input_dim = input_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.tanh_on_mem = tanh_on_mem
        self.negative_inf = negative_inf
        self.scaling = (input_dim // num_heads) ** -0.5
        self.emb_to_key_value = nn.Linear(input_dim, 2 * input_dim, bias=True)
        self.emb_to_query = nn.Linear(input_dim, input_dim, bias=True)
        self.out_proj = nn.Linear(input_dim, input_dim, bias=True)
        if weight_init_gain:
            nn.init.xavier_uniform_(self.emb_to_key_value.weight, gain=weight_init_gain)
            nn.init.xavier_uniform_(self.emb_to_query.weight, gain=weight_init_gain)

    def _attend(self, utterance, lengths, right_context, summary, mems, attention_mask,
                left_context_key=None, left_context_val=None):
        batch = utterance.shape[1]
        num_queries = right_context.shape[0] + utterance.shape[0] + summary.shape[0]
        query = self.emb_to_query(ember.cat([right_context, utterance, summary]))
        key, value = self.emb_to_key_value(
            ember.cat([mems, right_context, utterance])).chunk(2, dim=2)
        max_length = int(lengths.max().item()) if lengths.numel() else 0
        # The right-context rows, counted as the reference counts them (the query frames that
        # are neither valid utterance frames nor summaries).
        rc_rows = num_queries - max_length - summary.shape[0]
        left = 0
        if left_context_key is not None:
            cut = mems.shape[0] + rc_rows
            key = ember.cat([key[:cut], left_context_key, key[cut:]])
            value = ember.cat([value[:cut], left_context_val, value[cut:]])
            left = left_context_key.shape[0]
        head_dim = self.input_dim // self.num_heads

        def heads(x):
            return x.contiguous().view(x.shape[0], batch * self.num_heads, head_dim
                                       ).transpose(0, 1)

        q, k, v = heads(query), heads(key), heads(value)
        weights = ember.bmm(q * self.scaling, k.transpose(1, 2))
        work = weights.float() if weights.dtype in (ember.float16, ember.bfloat16) else weights
        work = work.masked_fill(attention_mask.unsqueeze(0), self.negative_inf)
        if batch > 1:
            key_lengths = lengths + (mems.shape[0] + rc_rows + left)
            width = key.shape[0]
            padding = ember.arange(width, device=lengths.device).expand(
                batch, width) >= key_lengths.unsqueeze(1)
            work = work.view(batch, self.num_heads, num_queries, width).masked_fill(
                padding[:, None, None, :], self.negative_inf
            ).view(batch * self.num_heads, num_queries, width)
        probs = nn.functional.softmax(work, dim=-1).to(weights.dtype)
        probs = nn.functional.dropout(probs, p=float(self.dropout), training=self.training)
        attention = ember.bmm(probs, v).transpose(0, 1).contiguous().view(
            num_queries, batch, self.input_dim)
        output = self.out_proj(attention)
        num_summary = summary.shape[0]
        output_rc, output_mems = output[:num_queries - num_summary], output[
            num_queries - num_summary:]
        output_mems = ember.tanh(output_mems) if self.tanh_on_mem else ember.clamp(
            output_mems, min=-10, max=10)
        return output_rc, output_mems, key, value

    def forward(self, utterance, lengths, right_context, summary, mems, attention_mask):
        output, output_mems, _, _ = self._attend(utterance, lengths, right_context, summary,
                                                 mems, attention_mask)
        return output, output_mems[:-1]

    def infer(self, utterance, lengths, right_context, summary, mems, left_context_key,
              left_context_val):
        num_queries = right_context.shape[0] + utterance.shape[0] + summary.shape[0]
        num_keys = (right_context.shape[0] + utterance.shape[0] + mems.shape[0]
                    + left_context_key.shape[0])
        mask = np.zeros((num_queries, num_keys), dtype=bool)
        mask[-1, :mems.shape[0]] = True  # the summary sees no memory
        mask = ember.as_tensor(mask, device=utterance.device)
        output, output_mems, key, value = self._attend(
            utterance, lengths, right_context, summary, mems, mask,
            left_context_key=left_context_key, left_context_val=left_context_val)
        start = mems.shape[0] + right_context.shape[0]
        return output, output_mems, key[start:], value[start:]


class _EmformerLayer(nn.Module):
    """One Emformer layer: layer norm, Emformer attention with a residual, a feed-forward
    block with a residual, layer norm."""

    def __init__(self, input_dim: int, num_heads: int, ffn_dim: int, segment_length: int,
                 dropout: float = 0.0, activation: str = "relu", left_context_length: int = 0,
                 max_memory_size: int = 0, weight_init_gain: float | None = None,
                 tanh_on_mem: bool = False, negative_inf: float = -1e8) -> None:
        super().__init__()
        self.attention = _EmformerAttention(input_dim, num_heads, dropout=dropout,
                                            weight_init_gain=weight_init_gain,
                                            tanh_on_mem=tanh_on_mem, negative_inf=negative_inf)
        self.dropout = nn.Dropout(dropout)
        self.memory_op = nn.AvgPool1d(kernel_size=segment_length, stride=segment_length,
                                      ceil_mode=True)
        self.pos_ff = nn.Sequential(
            nn.LayerNorm(input_dim), nn.Linear(input_dim, ffn_dim), _activation(activation),
            nn.Dropout(dropout), nn.Linear(ffn_dim, input_dim), nn.Dropout(dropout))
        self.layer_norm_input = nn.LayerNorm(input_dim)
        self.layer_norm_output = nn.LayerNorm(input_dim)
        self.left_context_length = left_context_length
        self.segment_length = segment_length
        self.max_memory_size = max_memory_size
        self.input_dim = input_dim
        self.use_mem = max_memory_size > 0

    def _summary(self, utterance: ember.Tensor) -> ember.Tensor:
        if not self.use_mem:
            return _empty_like(utterance)
        return self.memory_op(utterance.permute(1, 2, 0)).permute(2, 0, 1)

    def _init_state(self, batch: int, like: ember.Tensor) -> list[ember.Tensor]:
        def zeros(n):
            return ember.zeros(n, batch, self.input_dim, dtype=like.dtype, device=like.device)

        return [zeros(self.max_memory_size), zeros(self.left_context_length),
                zeros(self.left_context_length),
                ember.zeros(1, batch, dtype=ember.int32, device=like.device)]

    def _pre(self, utterance, right_context):
        normed = self.layer_norm_input(ember.cat([right_context, utterance]))
        return normed[right_context.shape[0]:], normed[:right_context.shape[0]]

    def _post(self, rc_output, utterance, right_context):
        x = self.dropout(rc_output) + ember.cat([right_context, utterance])
        x = self.layer_norm_output(self.pos_ff(x) + x)
        return x[right_context.shape[0]:], x[:right_context.shape[0]]

    def forward(self, utterance, lengths, right_context, mems, attention_mask):
        """Training pass: returns the utterance ``(T, B, D)``, right context ``(R, B, D)``
        and memories ``(M, B, D)`` for the next layer."""
        if attention_mask is None:
            raise ValueError("attention_mask must be not None when for_inference is False")
        normed_utterance, normed_rc = self._pre(utterance, right_context)
        rc_output, output_mems = self.attention(
            normed_utterance, lengths, normed_rc, self._summary(normed_utterance), mems,
            attention_mask)
        output_utterance, output_rc = self._post(rc_output, utterance, right_context)
        return output_utterance, output_rc, output_mems

    def infer(self, utterance, lengths, right_context, state, mems):
        """Streaming pass over one segment: returns the utterance, right context, the
        layer's new state and the memories for the next layer."""
        normed_utterance, normed_rc = self._pre(utterance, right_context)
        if state is None:
            state = self._init_state(utterance.shape[1], utterance)
        past = int(state[3][0][0].item())
        past_lc = min(self.left_context_length, past)
        past_mem = min(self.max_memory_size, math.ceil(past / self.segment_length))
        pre_mems = state[0][self.max_memory_size - past_mem:]
        lc_key = state[1][self.left_context_length - past_lc:]
        lc_val = state[2][self.left_context_length - past_lc:]
        summary = self._summary(normed_utterance)[:1]
        rc_output, output_mems, next_k, next_v = self.attention.infer(
            normed_utterance, lengths, normed_rc, summary, pre_mems, lc_key, lc_val)
        new_k = ember.cat([state[1], next_k])
        new_v = ember.cat([state[2], next_v])
        all_mems = ember.cat([state[0], mems])
        new_state = [all_mems[all_mems.shape[0] - self.max_memory_size:],
                     new_k[new_k.shape[0] - self.left_context_length:],
                     new_v[new_v.shape[0] - self.left_context_length:],
                     state[3] + utterance.shape[0]]
        output_utterance, output_rc = self._post(rc_output, utterance, right_context)
        return output_utterance, output_rc, new_state, output_mems


class _EmformerImpl(nn.Module):
    def __init__(self, emformer_layers: nn.ModuleList, segment_length: int,
                 left_context_length: int = 0, right_context_length: int = 0,
                 max_memory_size: int = 0) -> None:
        super().__init__()
        self.use_mem = max_memory_size > 0
        self.memory_op = nn.AvgPool1d(kernel_size=segment_length, stride=segment_length,
                                      ceil_mode=True)
        self.emformer_layers = emformer_layers
        self.left_context_length = left_context_length
        self.right_context_length = right_context_length
        self.segment_length = segment_length
        self.max_memory_size = max_memory_size

    def _right_context(self, input: ember.Tensor) -> ember.Tensor:
        """The right context block of every segment, ``(num_segments * R, B, D)``; the last
        block is the padding at the end of ``input``."""
        total = input.shape[0]
        rc = self.right_context_length
        num_segs = math.ceil((total - rc) / self.segment_length)
        blocks = [input[(i + 1) * self.segment_length:(i + 1) * self.segment_length + rc]
                  for i in range(num_segs - 1)]
        blocks.append(input[total - rc:])
        return ember.cat(blocks)

    def _attention_mask(self, utterance_length: int, device) -> ember.Tensor:
        """``True`` where a query may not attend to a key (see NOTE [ Emformer's blocks ])."""
        seg, rc = self.segment_length, self.right_context_length
        num_segs = math.ceil(utterance_length / seg)
        rc_seg = np.arange(num_segs * rc) // rc if rc else np.zeros(0, dtype=np.int64)
        utt_pos = np.arange(utterance_length)
        query_seg = np.concatenate([rc_seg, utt_pos // seg]
                                   + ([np.arange(num_segs)] if self.use_mem else []))
        is_summary = np.arange(query_seg.size) >= rc_seg.size + utterance_length
        q = query_seg[:, None]
        utt_start = np.maximum(q * seg - self.left_context_length, 0)
        utt_end = np.minimum((q + 1) * seg, utterance_length)
        allowed = [rc_seg[None, :] == q,
                   (utt_pos[None, :] >= utt_start) & (utt_pos[None, :] < utt_end)]
        if self.use_mem:
            mem = np.arange(num_segs - 1)[None, :]
            allowed.insert(0, (mem >= np.maximum(q - self.max_memory_size, 0)) & (mem < q)
                           & ~is_summary[:, None])
        mask = ~np.concatenate(allowed, axis=1)
        return ember.as_tensor(mask, device=device)

    def forward(self, input: ember.Tensor, lengths: ember.Tensor
                ) -> tuple[ember.Tensor, ember.Tensor]:
        """Training and non-streaming inference.

        Args:
            input (Tensor): utterance frames right-padded with ``right_context_length``
                frames, ``(B, T + right_context_length, D)``.
            lengths (Tensor): ``(B,)``, the valid utterance frames of each batch element.

        Returns:
            (Tensor, Tensor): the output frames ``(B, T, D)`` and their valid lengths.
        """
        if input.ndim != 3:
            raise ValueError(f"Emformer expects a (batch, frames, input_dim) input, got shape "
                             f"{tuple(input.shape)}")
        if input.shape[1] <= self.right_context_length:
            raise ValueError(f"the input has {input.shape[1]} frames, not more than "
                             f"right_context_length ({self.right_context_length})")
        x = input.permute(1, 0, 2)
        right_context = self._right_context(x)
        utterance = x[:x.shape[0] - self.right_context_length]
        mask = self._attention_mask(utterance.shape[0], input.device)
        if self.use_mem:
            mems = self.memory_op(utterance.permute(1, 2, 0)).permute(2, 0, 1)[:-1]
        else:
            mems = _empty_like(utterance)
        output = utterance
        for layer in self.emformer_layers:
            output, right_context, mems = layer(output, lengths, right_context, mems, mask)
        return output.permute(1, 0, 2), lengths

    def infer(self, input: ember.Tensor, lengths: ember.Tensor,
              states: list[list[ember.Tensor]] | None = None
              ) -> tuple[ember.Tensor, ember.Tensor, list[list[ember.Tensor]]]:
        """Streaming inference over one segment.

        Args:
            input (Tensor): one segment right-padded with its right context,
                ``(B, segment_length + right_context_length, D)``.
            lengths (Tensor): ``(B,)``, the valid frames of each batch element of ``input``.
            states (list of list of Tensor or None, optional): the states returned by the
                previous call; ``None`` at the start of a stream. (Default: ``None``)

        Returns:
            (Tensor, Tensor, list of list of Tensor): the output frames
            ``(B, segment_length, D)``, their valid lengths, and the states for the next call.
        """
        if input.ndim != 3 or input.shape[1] != self.segment_length + self.right_context_length:
            raise ValueError(
                "Per configured segment_length and right_context_length, expected size of "
                f"{self.segment_length + self.right_context_length} for dimension 1 of input, "
                f"but got {input.shape[1] if input.ndim > 1 else None}.")
        x = input.permute(1, 0, 2)
        start = x.shape[0] - self.right_context_length
        right_context, utterance = x[start:], x[:start]
        output_lengths = ember.clamp(lengths - self.right_context_length, min=0)
        if self.use_mem:
            mems = self.memory_op(utterance.permute(1, 2, 0)).permute(2, 0, 1)
        else:
            mems = _empty_like(utterance)
        output = utterance
        output_states = []
        for i, layer in enumerate(self.emformer_layers):
            output, right_context, state, mems = layer.infer(
                output, output_lengths, right_context, None if states is None else states[i],
                mems)
            output_states.append(state)
        return output.permute(1, 0, 2), output_lengths, output_states


class Emformer(_EmformerImpl):
    r"""Emformer architecture from *Emformer: Efficient Memory Transformer Based Acoustic
    Model for Low Latency Streaming Speech Recognition* (Shi et al., 2021).

    Args:
        input_dim (int): input dimension.
        num_heads (int): number of attention heads in each Emformer layer.
        ffn_dim (int): hidden layer dimension of each layer's feed-forward network.
        num_layers (int): number of Emformer layers.
        segment_length (int): length of each input segment.
        dropout (float, optional): dropout probability. (Default: ``0.0``)
        activation (str, optional): the feed-forward's activation, ``"relu"``, ``"gelu"`` or
            ``"silu"``. (Default: ``"relu"``)
        left_context_length (int, optional): length of left context. (Default: ``0``)
        right_context_length (int, optional): length of right context. (Default: ``0``)
        max_memory_size (int, optional): maximum number of memory elements. (Default: ``0``)
        weight_init_scale_strategy (str or None, optional): per-layer scaling of the
            attention's initial weights, ``"depthwise"``, ``"constant"`` or ``None``.
            (Default: ``"depthwise"``)
        tanh_on_mem (bool, optional): squash memories with tanh (else clamp them to
            [-10, 10]). (Default: ``False``)
        negative_inf (float, optional): the attention weight of masked keys.
            (Default: ``-1e8``)

    Shape:
        - forward: input :math:`(B, T + R, D)`, lengths :math:`(B,)`; output
          :math:`(B, T, D)` and the lengths.
        - infer: input :math:`(B, S + R, D)` with :math:`S` the segment length; output
          :math:`(B, S, D)`, the lengths and the states.

    Examples::

        >>> emformer = Emformer(512, 8, 2048, 20, 4, right_context_length=1)
        >>> input = ember.rand(128, 400, 512)  # batch, num_frames, feature_dim
        >>> lengths = ember.randint(1, 200, (128,))
        >>> output, lengths = emformer(input, lengths)
        >>> input = ember.rand(128, 5, 512)
        >>> lengths = ember.ones(128) * 5
        >>> output, lengths, states = emformer.infer(input, lengths, None)
    """

    def __init__(self, input_dim: int, num_heads: int, ffn_dim: int, num_layers: int,
                 segment_length: int, dropout: float = 0.0, activation: str = "relu",
                 left_context_length: int = 0, right_context_length: int = 0,
                 max_memory_size: int = 0, weight_init_scale_strategy: str | None = "depthwise",
                 tanh_on_mem: bool = False, negative_inf: float = -1e8) -> None:
        gains = _weight_init_gains(weight_init_scale_strategy, num_layers)
        layers = nn.ModuleList([
            _EmformerLayer(input_dim, num_heads, ffn_dim, segment_length, dropout=dropout,
                           activation=activation, left_context_length=left_context_length,
                           max_memory_size=max_memory_size, weight_init_gain=gains[i],
                           tanh_on_mem=tanh_on_mem, negative_inf=negative_inf)
            for i in range(num_layers)])
        super().__init__(layers, segment_length, left_context_length=left_context_length,
                         right_context_length=right_context_length,
                         max_memory_size=max_memory_size)
