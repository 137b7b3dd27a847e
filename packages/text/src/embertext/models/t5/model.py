"""torchtext's T5 model (``torchtext.models.T5Conf``, ``torchtext.models.T5Model``): its
configuration, module names and state-dict keys, so that torchtext's T5 checkpoints load."""

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import ember
from ember import nn
from embertext.models.t5.modules import T5Decoder, T5Encoder

__all__ = ["T5Conf", "T5Model"]


@dataclass
class T5Conf:
    r"""The hyper-parameters of torchtext's :class:`T5Model` (T5-base's by default).

    ``feed_forward_proj`` (``"relu"``, ``"gated-gelu"``, ``"gated-<act>"``) sets
    ``activation`` and ``is_gated_act`` as Hugging Face's T5 configuration does (T5 v1.1 and
    Flan-T5 use ``"gated-gelu"``, whose activation is the tanh GELU ``"gelu_new"``).
    ``training`` turns dropout on (``dropout`` is ignored otherwise).
    """

    encoder_only: bool = False
    linear_head: bool = False
    embedding_dim: int = 768
    qkv_dim: int = 64
    num_attention_heads: int = 12
    num_encoder_layers: int = 12
    num_decoder_layers: int = 12
    ffn_dimension: int = 3072
    dropout: float = 0.1
    activation: str | Callable = "relu"
    layer_norm_eps: float = 1e-6
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128
    padding_idx: int = 0
    max_seq_len: int = 512
    vocab_size: int = 32128
    training: bool = False
    feed_forward_proj: str = None
    is_gated_act: bool = False

    def __post_init__(self):
        if self.feed_forward_proj:
            self.activation, self.is_gated_act = parse_feed_forward_proj(
                self.feed_forward_proj)


def parse_feed_forward_proj(feed_forward_proj):
    """``"relu"`` -> ("relu", False); ``"gated-gelu"`` -> ("gelu_new", True) as in Hugging
    Face's T5Config; ``"gated-<act>"`` -> (act, True)."""
    parts = feed_forward_proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated"):
        raise ValueError(f"`feed_forward_proj`: {feed_forward_proj} is not a valid activation "
                         "function of the dense layer. Please make sure `feed_forward_proj` is "
                         "of the format `gated-{ACT_FN}` or `{ACT_FN}`, e.g. 'gated-gelu' or "
                         "'relu'")
    if feed_forward_proj == "gated-gelu":
        return "gelu_new", True
    return parts[-1], parts[0] == "gated"


class T5Model(nn.Module):
    r"""T5 (Raffel et al., 2020, "Exploring the Limits of Transfer Learning with a Unified
    Text-to-Text Transformer") in torchtext's layout: shared ``token_embeddings``, a
    :class:`~embertext.models.t5.modules.T5Encoder`, a
    :class:`~embertext.models.t5.modules.T5Decoder` (unless ``encoder_only``) and a
    ``lm_head`` (with ``linear_head``; the decoder output is scaled by
    ``embedding_dim ** -0.5`` before it, as the tied embeddings of T5 require).

    Args:
        config (T5Conf): the hyper-parameters.
        freeze (bool): set ``requires_grad=False`` on every parameter.
        device, dtype: where and in which floating type the parameters are made.

    Examples::

        >>> config = T5Conf(encoder_only=False, linear_head=True, embedding_dim=64,
        ...                 qkv_dim=16, num_attention_heads=4, num_encoder_layers=2,
        ...                 num_decoder_layers=2, ffn_dimension=128, vocab_size=100)
        >>> model = T5Model(config)
        >>> model(ember.randint(1, 100, (2, 9)))["decoder_output"].shape
        (2, 1, 100)
    """

    def __init__(self, config, freeze=False, device=None, dtype=None):
        super().__init__()
        if not isinstance(config, T5Conf):
            raise TypeError(f"config must be a T5Conf, got {type(config).__name__}")
        self.config = config
        self.embedding_dim = config.embedding_dim
        self.encoder_only = config.encoder_only
        self.linear_head = config.linear_head
        self.padding_idx = config.padding_idx
        self.training = config.training
        self.dropout = config.dropout if config.training else 0.0
        self.dtype = dtype
        factory = {"device": device, "dtype": dtype}
        stack = dict(d_model=config.embedding_dim, nhead=config.num_attention_heads,
                     dim_feedforward=config.ffn_dimension, qkv_dim=config.qkv_dim,
                     dropout=self.dropout, activation=config.activation,
                     layer_norm_eps=config.layer_norm_eps,
                     relative_attention_num_buckets=config.relative_attention_num_buckets,
                     relative_attention_max_distance=config.relative_attention_max_distance,
                     is_gated_act=config.is_gated_act, **factory)
        self.token_embeddings = nn.Embedding(config.vocab_size, config.embedding_dim,
                                             config.padding_idx, **factory)
        self.encoder = T5Encoder(num_layers=config.num_encoder_layers,
                                 token_embeddings=self.token_embeddings, **stack)
        self.decoder = (None if config.encoder_only
                        else T5Decoder(num_layers=config.num_decoder_layers, **stack))
        self.lm_head = (nn.Linear(config.embedding_dim, config.vocab_size, bias=False,
                                  **factory) if config.linear_head else None)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)  # the norms too
        if freeze:
            for p in self.parameters():
                p.requires_grad = False

    def _reorder_cache(self, past, beam_idx):
        """The cache ``past`` with its batch rows taken in the order ``beam_idx`` (beam
        search)."""
        if past is None:
            return past
        return [tuple(state.index_select(0, beam_idx.to(state.device)) for state in layer)
                for layer in past]

    def prepare_inputs_for_generation(self, input_ids, encoder_outputs=None,
                                      encoder_padding_mask=None, past=None,
                                      return_past_key_values=True, model_kwargs=None):
        """The keyword arguments of :meth:`forward` for the next decoding step: those given
        (or ``model_kwargs``, updated in place) and ``decoder_tokens``, only the last token
        when the earlier ones are cached (``past``, or ``model_kwargs["past"]``)."""
        if model_kwargs is None:
            if encoder_outputs is None:
                raise ValueError("encoder_outputs is needed when model_kwargs is not given")
            model_kwargs = {"encoder_outputs": encoder_outputs,
                            "encoder_padding_mask": encoder_padding_mask,
                            "past_key_values": past,
                            "return_past_key_values": return_past_key_values}
        # torchtext's generation loop keeps the cache in model_kwargs["past"]. (torchtext looks
        # only there, so a ``past`` given as an argument would not cut the tokens: with it the
        # next forward fails; here it cuts them.)
        if past is not None or model_kwargs.get("past") is not None:
            input_ids = input_ids[:, -1:]
        model_kwargs["decoder_tokens"] = input_ids
        return model_kwargs

    def get_encoder(self):
        return self.encoder

    def get_decoder(self):
        if self.decoder is None:
            warnings.warn("Decoder is not set on this model.", stacklevel=2)
        return self.decoder

    def forward(self, encoder_tokens=None, decoder_tokens=None, encoder_mask=None,
                decoder_mask=None, encoder_padding_mask=None, decoder_padding_mask=None,
                encoder_outputs=None, past_key_values=None, return_past_key_values=False):
        r"""Encode ``encoder_tokens`` (B, S) and decode ``decoder_tokens`` (B, T) (the
        padding id alone when None: the start of generation).

        The padding masks default to the tokens equal to ``padding_idx`` (but the first
        decoder token, T5's start token). ``encoder_outputs`` (an earlier result) skips the
        encoder; ``past_key_values`` continues decoding from cached steps.

        Returns:
            dict: the encoder's outputs (``encoder_output``, ``encoder_hidden_states``,
            ``encoder_position_bias``, ``encoder_sa_scores``; None when ``encoder_outputs`` is
            given) and, with a decoder, the decoder's (``decoder_output`` — the logits with
            ``linear_head`` —, ``decoder_hidden_states``, ``decoder_position_bias``,
            ``decoder_sa_scores``, ``decoder_ca_scores``, ``past_key_values``), and
            ``encoder_ca_scores``, always None: torchtext's keys.
        """
        # torchtext's keys, None where this call computes nothing for them (the encoder's
        # when encoder_outputs is given, the decoder's without a decoder)
        result = dict.fromkeys(["encoder_output", "encoder_hidden_states", "encoder_sa_scores",
                                "encoder_ca_scores", "decoder_output", "decoder_hidden_states",
                                "decoder_sa_scores", "decoder_ca_scores", "past_key_values"])
        if encoder_outputs is None:
            if encoder_tokens is None:
                raise ValueError("If `encoder_outputs` is not specified, must provide "
                                 "`encoder_tokens`")
            if encoder_tokens.dim() != 2:
                raise ValueError(f"encoder_tokens must be (batch, length), got shape "
                                 f"{tuple(encoder_tokens.shape)}")
            if encoder_padding_mask is None:
                encoder_padding_mask = encoder_tokens.eq(self.padding_idx)
            encoder_outputs = self.encoder(src=encoder_tokens, mask=encoder_mask,
                                           src_key_padding_mask=encoder_padding_mask)
            result.update(encoder_outputs)
        if self.encoder_only:
            return result
        encoder_output = encoder_outputs["encoder_output"]
        if decoder_tokens is None:
            decoder_tokens = ember.full((encoder_output.shape[0], 1), self.padding_idx,
                                        dtype=ember.long, device=encoder_output.device)
        if decoder_padding_mask is None:
            decoder_padding_mask = decoder_tokens.eq(self.padding_idx)
            # T5 starts decoding with the padding id: it is not padding.
            decoder_padding_mask[:, 0] = False
        decoder_outputs = self.decoder(
            self.token_embeddings(decoder_tokens), memory=encoder_output, tgt_mask=decoder_mask,
            memory_mask=encoder_mask, tgt_key_padding_mask=decoder_padding_mask,
            memory_key_padding_mask=encoder_padding_mask, past_key_values=past_key_values,
            return_past_key_values=return_past_key_values)
        if self.linear_head:
            output = decoder_outputs["decoder_output"] * (self.embedding_dim ** -0.5)
            decoder_outputs["decoder_output"] = self.lm_head(output)
        result.update(decoder_outputs)
        return result
