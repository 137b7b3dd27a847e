"""T5 (Raffel et al., 2020) with the module names of Hugging Face `transformers`
(``transformers.models.t5.modeling_t5``), so that its checkpoints (``config.json`` +
``model.safetensors`` or ``pytorch_model.bin``) of T5, T5 v1.1 and Flan-T5 load with
``strict=True`` and give the same hidden states, logits and generations."""

import os
from dataclasses import dataclass, field

import ember
from ember import nn
from ember.nn import functional as F
from embertext.models._config import HFConfig
from embertext.models._generation import causal_bias, decode
from embertext.models.bert import BertOutput, _activation, _attention_bias, _read_weights
from embertext.models.t5.model import parse_feed_forward_proj
from embertext.models.t5.modules import (
    T5LayerNorm,
    attend,
    compute_position_bias,
    feed_forward,
    split_heads,
)

__all__ = ["T5Config", "T5Model", "T5EncoderModel", "T5ForConditionalGeneration"]


@dataclass
class T5Config(HFConfig):
    """The hyper-parameters of a T5 model (the keys of its ``config.json``; t5-small's by
    default). ``num_decoder_layers`` defaults to ``num_layers``; ``feed_forward_proj`` is
    ``"relu"`` (T5) or ``"gated-gelu"`` (T5 v1.1, Flan-T5). With ``tie_word_embeddings``
    the language-model head is the shared embedding matrix and the decoder output is scaled
    by ``d_model ** -0.5`` before it (``scale_decoder_outputs``, which `transformers` 5
    writes to ``config.json``, says so on its own)."""

    model_type = "t5"

    vocab_size: int = 32128
    d_model: int = 512
    d_kv: int = 64
    d_ff: int = 2048
    num_layers: int = 6
    num_decoder_layers: int = None
    num_heads: int = 8
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128
    dropout_rate: float = 0.1
    layer_norm_epsilon: float = 1e-6
    initializer_factor: float = 1.0
    feed_forward_proj: str = "relu"
    is_encoder_decoder: bool = True
    use_cache: bool = True
    pad_token_id: int = 0
    eos_token_id: int = 1
    decoder_start_token_id: int = 0
    tie_word_embeddings: bool = True
    scale_decoder_outputs: bool = None
    extra: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.num_decoder_layers is None:
            self.num_decoder_layers = self.num_layers
        if self.scale_decoder_outputs is None:
            self.scale_decoder_outputs = self.tie_word_embeddings is not False
        self.dense_act_fn, self.is_gated_act = parse_feed_forward_proj(self.feed_forward_proj)
        _activation(self.dense_act_fn)  # an unknown activation fails here, not in forward

    @property
    def hidden_size(self):
        return self.d_model

    @property
    def num_attention_heads(self):
        return self.num_heads

    @property
    def num_hidden_layers(self):
        return self.num_layers



class T5DenseActDense(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wi = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wo = nn.Linear(config.d_ff, config.d_model, bias=False)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.act = _activation(config.dense_act_fn)

    def forward(self, hidden_states):
        return feed_forward(hidden_states, self.act, self.dropout, self.wo, wi=self.wi)


class T5DenseGatedActDense(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wi_0 = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wi_1 = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wo = nn.Linear(config.d_ff, config.d_model, bias=False)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.act = _activation(config.dense_act_fn)

    def forward(self, hidden_states):
        return feed_forward(hidden_states, self.act, self.dropout, self.wo, wi_0=self.wi_0,
                            wi_1=self.wi_1)


class T5LayerFF(nn.Module):
    def __init__(self, config):
        super().__init__()
        dense = T5DenseGatedActDense if config.is_gated_act else T5DenseActDense
        self.DenseReluDense = dense(config)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states):
        forwarded = self.DenseReluDense(self.layer_norm(hidden_states))
        return hidden_states + self.dropout(forwarded)


class T5Attention(nn.Module):
    """Multi-head attention with T5's relative position bias (owned by the first layer of a
    stack, ``has_relative_attention_bias``, and passed on to the others)."""

    def __init__(self, config, is_decoder=False, has_relative_attention_bias=False):
        super().__init__()
        self.is_decoder = is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = config.relative_attention_num_buckets
        self.relative_attention_max_distance = config.relative_attention_max_distance
        self.n_heads = config.num_heads
        self.dropout = config.dropout_rate
        self.inner_dim = config.num_heads * config.d_kv
        self.q = nn.Linear(config.d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(config.d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(config.d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, config.d_model, bias=False)
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(config.relative_attention_num_buckets,
                                                        config.num_heads)

    def compute_bias(self, query_length, key_length, past_seen_tokens=0):
        """The (1, heads, query_length, key_length) position bias of queries that follow
        ``past_seen_tokens`` cached ones."""
        return compute_position_bias(self.relative_attention_bias, query_length, key_length,
                                     not self.is_decoder, self.relative_attention_num_buckets,
                                     self.relative_attention_max_distance, past_seen_tokens)

    def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None,
                past_key_value=None, use_cache=False):
        q = split_heads(self.q(hidden_states), self.n_heads)
        if key_value_states is not None and past_key_value is not None:
            k, v = past_key_value  # the encoder's keys and values do not change
        else:
            source = hidden_states if key_value_states is None else key_value_states
            k = split_heads(self.k(source), self.n_heads)
            v = split_heads(self.v(source), self.n_heads)
            if key_value_states is None and past_key_value is not None:
                k = ember.cat([past_key_value[0], k], dim=2)
                v = ember.cat([past_key_value[1], v], dim=2)
        length, key_length = hidden_states.shape[1], k.shape[2]
        if position_bias is None:
            if self.has_relative_attention_bias:
                past = key_length - length if key_value_states is None else 0
                position_bias = self.compute_bias(length, key_length, past)
            else:
                position_bias = ember.zeros(1, self.n_heads, length, key_length,
                                            dtype=q.dtype, device=q.device)
        bias = position_bias if mask is None else position_bias + mask
        out, weights = attend(q, k, v, bias, self.dropout, self.training)
        present = (k, v) if use_cache else None
        return self.o(out), position_bias, weights, present


class T5LayerSelfAttention(nn.Module):
    def __init__(self, config, is_decoder=False, has_relative_attention_bias=False):
        super().__init__()
        self.SelfAttention = T5Attention(config, is_decoder, has_relative_attention_bias)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states, attention_mask=None, position_bias=None,
                past_key_value=None, use_cache=False):
        out, bias, weights, present = self.SelfAttention(
            self.layer_norm(hidden_states), mask=attention_mask, position_bias=position_bias,
            past_key_value=past_key_value, use_cache=use_cache)
        return hidden_states + self.dropout(out), bias, weights, present


class T5LayerCrossAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.EncDecAttention = T5Attention(config, is_decoder=True)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states, key_value_states, attention_mask=None, position_bias=None,
                past_key_value=None, use_cache=False):
        out, bias, weights, present = self.EncDecAttention(
            self.layer_norm(hidden_states), mask=attention_mask,
            key_value_states=key_value_states, position_bias=position_bias,
            past_key_value=past_key_value, use_cache=use_cache)
        return hidden_states + self.dropout(out), bias, weights, present


def _clamp_half(hidden_states):
    # float16 overflows in the deep T5 models: keep the values finite, as transformers does.
    if hidden_states.dtype != ember.float16:
        return hidden_states
    limit = ember.finfo(ember.float16).max
    if bool(ember.isinf(hidden_states).any()):
        limit -= 1000
    return hidden_states.clamp(min=-limit, max=limit)


class T5Block(nn.Module):
    def __init__(self, config, is_decoder=False, has_relative_attention_bias=False):
        super().__init__()
        self.is_decoder = is_decoder
        self.layer = nn.ModuleList([T5LayerSelfAttention(config, is_decoder,
                                                         has_relative_attention_bias)])
        if is_decoder:
            self.layer.append(T5LayerCrossAttention(config))
        self.layer.append(T5LayerFF(config))

    def forward(self, hidden_states, attention_mask=None, position_bias=None,
                encoder_hidden_states=None, encoder_attention_mask=None,
                encoder_decoder_position_bias=None, past_key_value=None, use_cache=False):
        self_past = cross_past = None
        if past_key_value is not None:
            self_past, cross_past = past_key_value[:2], past_key_value[2:] or None
        hidden_states, position_bias, self_weights, present = self.layer[0](
            hidden_states, attention_mask, position_bias, self_past, use_cache)
        hidden_states = _clamp_half(hidden_states)
        cross_weights = None
        if self.is_decoder and encoder_hidden_states is not None:
            hidden_states, encoder_decoder_position_bias, cross_weights, cross_present = \
                self.layer[1](hidden_states, encoder_hidden_states, encoder_attention_mask,
                              encoder_decoder_position_bias, cross_past, use_cache)
            hidden_states = _clamp_half(hidden_states)
            if use_cache:
                present = present + cross_present
        hidden_states = _clamp_half(self.layer[-1](hidden_states))
        return (hidden_states, position_bias, encoder_decoder_position_bias, present,
                self_weights, cross_weights)


class T5Stack(nn.Module):
    r"""The encoder or the decoder of T5: the token embedding (shared with the model's
    ``shared``), ``num_layers`` blocks, the final norm.

    The position bias of the first block's self-attention (and, in the decoder, the zero
    bias of its cross-attention) is reused by every block.
    """

    def __init__(self, config, embed_tokens=None, is_decoder=False):
        super().__init__()
        self.config = config
        self.is_decoder = is_decoder
        self.embed_tokens = (embed_tokens if embed_tokens is not None
                             else nn.Embedding(config.vocab_size, config.d_model))
        layers = config.num_decoder_layers if is_decoder else config.num_layers
        self.block = nn.ModuleList([T5Block(config, is_decoder, i == 0) for i in range(layers)])
        self.final_layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, inputs_embeds=None, past_key_values=None,
                use_cache=None, output_hidden_states=False, output_attentions=False):
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        if input_ids is not None and input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, length), got shape "
                             f"{tuple(input_ids.shape)}")
        if use_cache is None:
            use_cache = self.is_decoder and self.config.use_cache
        if use_cache and not self.is_decoder:
            raise ValueError("`use_cache` can only be set to `True` if the stack is a decoder")
        if past_key_values is not None and len(past_key_values) != len(self.block):
            raise ValueError(f"past_key_values has {len(past_key_values)} layers, the stack "
                             f"{len(self.block)}")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        dtype = inputs_embeds.dtype
        if self.is_decoder:
            past = 0 if past_key_values is None else past_key_values[0][0].shape[2]
            mask = causal_bias(inputs_embeds.shape[1], past, attention_mask, dtype)
        else:
            mask = _attention_bias(attention_mask, dtype)
        cross_mask = _attention_bias(encoder_attention_mask, dtype)

        position_bias = cross_bias = None
        hidden_states = self.dropout(inputs_embeds)
        all_states, self_attentions, cross_attentions, presents = [], [], [], []
        for i, block in enumerate(self.block):
            all_states.append(hidden_states)
            hidden_states, position_bias, cross_bias, present, self_w, cross_w = block(
                hidden_states, mask, position_bias, encoder_hidden_states, cross_mask,
                cross_bias, None if past_key_values is None else past_key_values[i],
                use_cache)
            presents.append(present)
            self_attentions.append(self_w)
            cross_attentions.append(cross_w)
        hidden_states = self.dropout(self.final_layer_norm(hidden_states))
        all_states.append(hidden_states)
        with_cross = self.is_decoder and encoder_hidden_states is not None
        return BertOutput(
            last_hidden_state=hidden_states,
            past_key_values=tuple(presents) if use_cache else None,
            hidden_states=tuple(all_states) if output_hidden_states else None,
            attentions=tuple(self_attentions) if output_attentions else None,
            cross_attentions=(tuple(cross_attentions) if output_attentions and with_cross
                              else None))


class T5PreTrainedModel(nn.Module):
    """Loading from a folder in the Hugging Face layout, with the tied embeddings filled in."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = T5Stack(config, self.shared)

    @classmethod
    def from_pretrained(cls, path, strict=True, **overrides):
        r"""A model from a folder with ``config.json`` and ``model.safetensors`` (or
        ``pytorch_model.bin``), loaded with ``strict``; ``overrides`` set config fields.

        Examples::

            >>> model = T5ForConditionalGeneration.from_pretrained("t5-small/")
        """
        config = T5Config.from_json_file(os.path.join(path, "config.json"))
        for key, value in overrides.items():
            if not hasattr(config, key):
                raise TypeError(f"T5Config has no field {key!r}")
            setattr(config, key, value)
        model = cls(config)
        model.load_hf_state_dict(_read_weights(path), strict=strict)
        return model.eval()

    def load_hf_state_dict(self, state_dict, strict=True):
        """Load a Hugging Face state dict: the tied weights it leaves out
        (``encoder.embed_tokens``, ``decoder.embed_tokens``, a tied ``lm_head``) are taken
        from ``shared.weight``, and the cross-attention bias of old checkpoints is dropped."""
        state_dict = {k: v for k, v in state_dict.items()
                      if not k.endswith("EncDecAttention.relative_attention_bias.weight")}
        own = self.state_dict()
        if "shared.weight" not in state_dict:
            for key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
                if key in state_dict:
                    state_dict["shared.weight"] = state_dict[key]
                    break
        if "shared.weight" in state_dict:
            for key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
                        "lm_head.weight"):
                if key in own and key not in state_dict:
                    state_dict[key] = state_dict["shared.weight"]
        state_dict = {k: v for k, v in state_dict.items()
                      if k in own or not k.startswith(self._ignored_prefixes)}
        return self.load_state_dict(state_dict, strict=strict)

    _ignored_prefixes = ()

    def get_input_embeddings(self):
        return self.shared

    def get_encoder(self):
        return self.encoder

    def _shift_right(self, input_ids):
        """The decoder inputs of ``labels``: shifted right behind the decoder start id, with
        -100 replaced by the padding id."""
        start, pad = self.config.decoder_start_token_id, self.config.pad_token_id
        if start is None:
            raise ValueError("config.decoder_start_token_id has to be defined. In T5 it is "
                             "usually set to the pad_token_id.")
        if pad is None:
            raise ValueError("config.pad_token_id has to be defined.")
        begin = ember.full_like(input_ids[..., :1], start)
        shifted = ember.cat([begin, input_ids[..., :-1]], dim=-1)
        return shifted.masked_fill(shifted == -100, pad)

    def _encode(self, input_ids, attention_mask, inputs_embeds, encoder_outputs,
                output_hidden_states, output_attentions):
        if encoder_outputs is not None:
            if isinstance(encoder_outputs, (tuple, list)):
                encoder_outputs = BertOutput(last_hidden_state=encoder_outputs[0])
            return encoder_outputs
        return self.encoder(input_ids, attention_mask, inputs_embeds=inputs_embeds,
                            use_cache=False, output_hidden_states=output_hidden_states,
                            output_attentions=output_attentions)


class T5EncoderModel(T5PreTrainedModel):
    r"""The T5 encoder alone (``shared`` embeddings, ``encoder``); the decoder weights of a
    whole checkpoint are left out when loading.

    Shape:
        - input_ids, attention_mask: :math:`(B, L)`; last_hidden_state: :math:`(B, L, D)`.

    Examples::

        >>> model = T5EncoderModel(T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64,
        ...                                 num_layers=2, num_heads=4))
        >>> model(ember.tensor([[5, 6, 1]])).last_hidden_state.shape
        (1, 3, 32)
    """

    _ignored_prefixes = ("decoder.", "lm_head.")

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None,
                output_hidden_states=False, output_attentions=False):
        return self._encode(input_ids, attention_mask, inputs_embeds, None,
                            output_hidden_states, output_attentions)


class T5Model(T5PreTrainedModel):
    r"""The T5 encoder-decoder without a head: forward returns the decoder's
    ``last_hidden_state`` (B, T, D), its ``past_key_values`` and the
    ``encoder_last_hidden_state``.
    """

    _ignored_prefixes = ("lm_head.",)

    def __init__(self, config):
        super().__init__(config)
        self.decoder = T5Stack(config, self.shared, is_decoder=True)

    def get_decoder(self):
        return self.decoder

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None,
                decoder_attention_mask=None, encoder_outputs=None, past_key_values=None,
                inputs_embeds=None, decoder_inputs_embeds=None, use_cache=None,
                output_hidden_states=False, output_attentions=False):
        encoder_outputs = self._encode(input_ids, attention_mask, inputs_embeds,
                                       encoder_outputs, output_hidden_states,
                                       output_attentions)
        decoder_outputs = self.decoder(
            decoder_input_ids, decoder_attention_mask, encoder_outputs.last_hidden_state,
            attention_mask, decoder_inputs_embeds, past_key_values, use_cache,
            output_hidden_states, output_attentions)
        return _seq2seq_output(decoder_outputs, encoder_outputs,
                               last_hidden_state=decoder_outputs.last_hidden_state)


def _seq2seq_output(decoder_outputs, encoder_outputs, **head):
    return BertOutput(
        **head, past_key_values=decoder_outputs.past_key_values,
        decoder_hidden_states=decoder_outputs.hidden_states,
        decoder_attentions=decoder_outputs.attentions,
        cross_attentions=decoder_outputs.cross_attentions,
        encoder_last_hidden_state=encoder_outputs.last_hidden_state,
        encoder_hidden_states=getattr(encoder_outputs, "hidden_states", None),
        encoder_attentions=getattr(encoder_outputs, "attentions", None))


class T5ForConditionalGeneration(T5PreTrainedModel):
    r"""T5 with its language-model head (``lm_head``, the ``shared`` embeddings when
    ``tie_word_embeddings``) and :meth:`generate`.

    With ``labels`` (B, T) (-100 where no loss) the decoder inputs default to the labels
    shifted right behind ``decoder_start_token_id``, and forward returns the cross-entropy
    ``loss`` beside the ``logits`` (B, T, V).

    Examples::

        >>> model = T5ForConditionalGeneration.from_pretrained("t5-small/")
        >>> model.generate(ember.tensor([[13959, 1566, 12, 2968, 10, 1]]), max_new_tokens=8)
    """

    _ignored_prefixes = ()

    def __init__(self, config):
        super().__init__(config)
        self.model_dim = config.d_model
        self.decoder = T5Stack(config, self.shared, is_decoder=True)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.shared.weight

    def get_decoder(self):
        return self.decoder

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None,
                decoder_attention_mask=None, encoder_outputs=None, past_key_values=None,
                inputs_embeds=None, decoder_inputs_embeds=None, labels=None, use_cache=None,
                output_hidden_states=False, output_attentions=False):
        encoder_outputs = self._encode(input_ids, attention_mask, inputs_embeds,
                                       encoder_outputs, output_hidden_states,
                                       output_attentions)
        if labels is not None and decoder_input_ids is None and decoder_inputs_embeds is None:
            decoder_input_ids = self._shift_right(labels)
        decoder_outputs = self.decoder(
            decoder_input_ids, decoder_attention_mask, encoder_outputs.last_hidden_state,
            attention_mask, decoder_inputs_embeds, past_key_values, use_cache,
            output_hidden_states, output_attentions)
        sequence_output = decoder_outputs.last_hidden_state
        if self.config.scale_decoder_outputs:
            sequence_output = sequence_output * (self.model_dim ** -0.5)
        logits = self.lm_head(sequence_output)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                   ignore_index=-100)
        return _seq2seq_output(decoder_outputs, encoder_outputs, loss=loss, logits=logits)

    @ember.no_grad()
    def generate(self, input_ids=None, attention_mask=None, max_new_tokens=20,
                 do_sample=False, temperature=1.0, top_k=None, top_p=None,
                 eos_token_id=None, pad_token_id=None, decoder_start_token_id=None,
                 generator=None, encoder_outputs=None):
        r"""Decode from the encoding of ``input_ids`` (B, S) one token at a time on the key /
        value cache, by greedy search or by sampling (GPT-2's
        :meth:`~embertext.models.GPT2LMHeadModel.generate` options).

        Args:
            attention_mask (Tensor, optional): (B, S), 0 on the padding of ``input_ids``.
            max_new_tokens (int): the most tokens produced after the start token.
            eos_token_id (int, optional): a sequence that produced it stops and is padded
                with ``pad_token_id`` from then on (the config's ids by default).
            decoder_start_token_id (int, optional): the first decoder token (the config's).
            do_sample, temperature, top_k, top_p, generator: as in GPT-2's ``generate``.

        Returns:
            Tensor: (B, 1 + new tokens), the start token and the generated ones.
        """
        config = self.config
        eos_token_id = config.eos_token_id if eos_token_id is None else eos_token_id
        pad_token_id = config.pad_token_id if pad_token_id is None else pad_token_id
        start = (config.decoder_start_token_id if decoder_start_token_id is None
                 else decoder_start_token_id)
        encoder_outputs = self._encode(input_ids, attention_mask, None, encoder_outputs,
                                       False, False)
        memory = encoder_outputs.last_hidden_state
        tokens = ember.full((memory.shape[0], 1), start, dtype=ember.long, device=memory.device)

        def step(ids, past):
            out = self(attention_mask=attention_mask, decoder_input_ids=ids,
                       encoder_outputs=encoder_outputs, past_key_values=past, use_cache=True)
            return out.logits[:, -1], out.past_key_values

        return decode(step, tokens, tokens, max_new_tokens, do_sample, temperature, top_k,
                      top_p, eos_token_id, pad_token_id, generator)
