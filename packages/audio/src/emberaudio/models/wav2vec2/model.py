"""Wav2Vec2Model and its factory functions (wav2vec 2.0 and HuBERT architectures)."""

from __future__ import annotations

import ember
from ember import nn
from emberaudio.models.wav2vec2 import components

__all__ = ["Wav2Vec2Model", "hubert_base", "hubert_large", "hubert_xlarge", "wav2vec2_base",
           "wav2vec2_large", "wav2vec2_large_lv60k", "wav2vec2_model", "wav2vec2_xlsr_1b",
           "wav2vec2_xlsr_2b", "wav2vec2_xlsr_300m", "wavlm_base", "wavlm_large", "wavlm_model"]


class Wav2Vec2Model(nn.Module):
    """The acoustic model of *wav2vec 2.0* (Baevski et al., 2020), also HuBERT's.

    Note:
        Build it with one of the factory functions (:func:`wav2vec2_model`,
        :func:`wav2vec2_base`, :func:`hubert_base`, ...).

    Args:
        feature_extractor (nn.Module): raw audio to feature frames.
        encoder (nn.Module): feature frames to (contextual) features.
        aux (nn.Module or None, optional): applied to the encoder's output when given
            (e.g. a linear layer to CTC labels).

    Shape:
        - waveforms: :math:`(N, T)`; lengths: :math:`(N,)`.
        - output: :math:`(N, F, C)` and the valid frame counts :math:`(N,)` (``None``
          without ``lengths``).

    Examples::

        >>> model = emberaudio.models.wav2vec2_base(aux_num_out=32).eval()
        >>> logits, lengths = model(ember.randn(2, 16000), ember.tensor([16000, 8000]))
    """

    def __init__(self, feature_extractor: nn.Module, encoder: nn.Module,
                 aux: nn.Module | None = None) -> None:
        super().__init__()
        self.feature_extractor = feature_extractor
        self.encoder = encoder
        self.aux = aux

    def extract_features(self, waveforms: ember.Tensor, lengths: ember.Tensor | None = None,
                         num_layers: int | None = None
                         ) -> tuple[list[ember.Tensor], ember.Tensor | None]:
        """The outputs of the transformer's layers (the first ``num_layers`` of them, or
        all), each ``(batch, frame, feature)``, and the valid frame counts."""
        x, lengths = self.feature_extractor(waveforms, lengths)
        return self.encoder.extract_features(x, lengths, num_layers), lengths

    def forward(self, waveforms: ember.Tensor, lengths: ember.Tensor | None = None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        """The encoder's output (through ``aux`` when set), ``(batch, frame, feature)``, and
        the valid frame counts (``None`` when ``lengths`` is)."""
        x, lengths = self.feature_extractor(waveforms, lengths)
        x = self.encoder(x, lengths)
        if self.aux is not None:
            x = self.aux(x)
        return x, lengths


def wav2vec2_model(extractor_mode: str,
                   extractor_conv_layer_config: list[tuple[int, int, int]] | None,
                   extractor_conv_bias: bool, encoder_embed_dim: int,
                   encoder_projection_dropout: float, encoder_pos_conv_kernel: int,
                   encoder_pos_conv_groups: int, encoder_num_layers: int,
                   encoder_num_heads: int, encoder_attention_dropout: float,
                   encoder_ff_interm_features: int, encoder_ff_interm_dropout: float,
                   encoder_dropout: float, encoder_layer_norm_first: bool,
                   encoder_layer_drop: float, aux_num_out: int | None) -> Wav2Vec2Model:
    """Builds a custom :class:`Wav2Vec2Model` (the options of fairseq's wav2vec2).

    Args:
        extractor_mode (str): ``"group_norm"`` (one group norm, in the first convolution)
            or ``"layer_norm"`` (a layer norm in every convolution).
        extractor_conv_layer_config (list of (int, int, int) or None): the convolutions as
            ``(out_channels, kernel_size, stride)``; ``None`` for
            ``[(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2``.
        extractor_conv_bias (bool): whether the convolutions have a bias.
        encoder_embed_dim (int): the transformer's width.
        encoder_projection_dropout (float): dropout after the feature projection.
        encoder_pos_conv_kernel (int): kernel size of the positional convolution.
        encoder_pos_conv_groups (int): groups of the positional convolution.
        encoder_num_layers (int): the number of transformer layers.
        encoder_num_heads (int): the number of attention heads.
        encoder_attention_dropout (float): dropout on the attention weights.
        encoder_ff_interm_features (int): the feed-forward's hidden width.
        encoder_ff_interm_dropout (float): dropout inside the feed-forward.
        encoder_dropout (float): dropout after attention and feed-forward.
        encoder_layer_norm_first (bool): pre-norm layers (and the transformer's norm at the
            end) if ``True``; post-norm layers (and the norm at the start) if ``False``.
        encoder_layer_drop (float): the probability of skipping each layer in training.
        aux_num_out (int or None): when given, a linear layer to this many outputs on top.

    Returns:
        Wav2Vec2Model: the model.
    """
    if extractor_conv_layer_config is None:
        extractor_conv_layer_config = [(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2
    feature_extractor = components._get_feature_extractor(
        extractor_mode, extractor_conv_layer_config, extractor_conv_bias)
    encoder = components._get_encoder(
        in_features=extractor_conv_layer_config[-1][0], embed_dim=encoder_embed_dim,
        dropout_input=encoder_projection_dropout, pos_conv_kernel=encoder_pos_conv_kernel,
        pos_conv_groups=encoder_pos_conv_groups, num_layers=encoder_num_layers,
        num_heads=encoder_num_heads, attention_dropout=encoder_attention_dropout,
        ff_interm_features=encoder_ff_interm_features,
        ff_interm_dropout=encoder_ff_interm_dropout, dropout=encoder_dropout,
        layer_norm_first=encoder_layer_norm_first, layer_drop=encoder_layer_drop)
    aux = None
    if aux_num_out is not None:
        aux = nn.Linear(in_features=encoder_embed_dim, out_features=aux_num_out)
    return Wav2Vec2Model(feature_extractor, encoder, aux)


def _preset(extractor_mode, conv_bias, embed_dim, num_layers, num_heads, ff_features,
            layer_norm_first, dropouts, aux_num_out):
    projection, attention, ff_interm, dropout, layer_drop = dropouts
    return wav2vec2_model(
        extractor_mode=extractor_mode, extractor_conv_layer_config=None,
        extractor_conv_bias=conv_bias, encoder_embed_dim=embed_dim,
        encoder_projection_dropout=projection, encoder_pos_conv_kernel=128,
        encoder_pos_conv_groups=16, encoder_num_layers=num_layers,
        encoder_num_heads=num_heads, encoder_attention_dropout=attention,
        encoder_ff_interm_features=ff_features, encoder_ff_interm_dropout=ff_interm,
        encoder_dropout=dropout, encoder_layer_norm_first=layer_norm_first,
        encoder_layer_drop=layer_drop, aux_num_out=aux_num_out)


_FACTORY_ARGS = """
    Args:
        encoder_projection_dropout (float): see :func:`wav2vec2_model`.
        encoder_attention_dropout (float): see :func:`wav2vec2_model`.
        encoder_ff_interm_dropout (float): see :func:`wav2vec2_model`.
        encoder_dropout (float): see :func:`wav2vec2_model`.
        encoder_layer_drop (float): see :func:`wav2vec2_model`.
        aux_num_out (int or None, optional): see :func:`wav2vec2_model`.

    Returns:
        Wav2Vec2Model: the model.
"""


def wav2vec2_base(encoder_projection_dropout: float = 0.1,
                  encoder_attention_dropout: float = 0.1,
                  encoder_ff_interm_dropout: float = 0.1, encoder_dropout: float = 0.1,
                  encoder_layer_drop: float = 0.1, aux_num_out: int | None = None
                  ) -> Wav2Vec2Model:
    return _preset("group_norm", False, 768, 12, 12, 3072, False,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wav2vec2_large(encoder_projection_dropout: float = 0.1,
                   encoder_attention_dropout: float = 0.1,
                   encoder_ff_interm_dropout: float = 0.1, encoder_dropout: float = 0.1,
                   encoder_layer_drop: float = 0.1, aux_num_out: int | None = None
                   ) -> Wav2Vec2Model:
    return _preset("group_norm", False, 1024, 24, 16, 4096, False,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wav2vec2_large_lv60k(encoder_projection_dropout: float = 0.1,
                         encoder_attention_dropout: float = 0.0,
                         encoder_ff_interm_dropout: float = 0.1, encoder_dropout: float = 0.0,
                         encoder_layer_drop: float = 0.1, aux_num_out: int | None = None
                         ) -> Wav2Vec2Model:
    return _preset("layer_norm", True, 1024, 24, 16, 4096, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def hubert_base(encoder_projection_dropout: float = 0.1,
                encoder_attention_dropout: float = 0.1,
                encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.1,
                encoder_layer_drop: float = 0.05, aux_num_out: int | None = None
                ) -> Wav2Vec2Model:
    return _preset("group_norm", False, 768, 12, 12, 3072, False,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def hubert_large(encoder_projection_dropout: float = 0.0,
                 encoder_attention_dropout: float = 0.0,
                 encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                 encoder_layer_drop: float = 0.0, aux_num_out: int | None = None
                 ) -> Wav2Vec2Model:
    return _preset("layer_norm", False, 1024, 24, 16, 4096, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def hubert_xlarge(encoder_projection_dropout: float = 0.0,
                  encoder_attention_dropout: float = 0.0,
                  encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                  encoder_layer_drop: float = 0.0, aux_num_out: int | None = None
                  ) -> Wav2Vec2Model:
    return _preset("layer_norm", False, 1280, 48, 16, 5120, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wav2vec2_xlsr_300m(encoder_projection_dropout: float = 0.0,
                       encoder_attention_dropout: float = 0.0,
                       encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                       encoder_layer_drop: float = 0.0, aux_num_out: int | None = None
                       ) -> Wav2Vec2Model:
    return _preset("layer_norm", True, 1024, 24, 16, 4096, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wav2vec2_xlsr_1b(encoder_projection_dropout: float = 0.1,
                     encoder_attention_dropout: float = 0.0,
                     encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                     encoder_layer_drop: float = 0.0, aux_num_out: int | None = None
                     ) -> Wav2Vec2Model:
    return _preset("layer_norm", True, 1280, 48, 16, 5120, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wav2vec2_xlsr_2b(encoder_projection_dropout: float = 0.1,
                     encoder_attention_dropout: float = 0.0,
                     encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                     encoder_layer_drop: float = 0.0, aux_num_out: int | None = None
                     ) -> Wav2Vec2Model:
    return _preset("layer_norm", True, 1920, 48, 16, 7680, True,
                   (encoder_projection_dropout, encoder_attention_dropout,
                    encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                   aux_num_out)


def wavlm_model(extractor_mode: str,
                extractor_conv_layer_config: list[tuple[int, int, int]] | None,
                extractor_conv_bias: bool, encoder_embed_dim: int,
                encoder_projection_dropout: float, encoder_pos_conv_kernel: int,
                encoder_pos_conv_groups: int, encoder_num_layers: int, encoder_num_heads: int,
                encoder_num_buckets: int, encoder_max_distance: int,
                encoder_attention_dropout: float, encoder_ff_interm_features: int,
                encoder_ff_interm_dropout: float, encoder_dropout: float,
                encoder_layer_norm_first: bool, encoder_layer_drop: float,
                aux_num_out: int | None) -> Wav2Vec2Model:
    """Builds a custom WavLM model (Chen et al., 2022): :func:`wav2vec2_model` 's
    architecture with :class:`~emberaudio.models.wav2vec2.wavlm_attention.WavLMSelfAttention`
    (a gated relative position bias, made in the first layer).

    Args:
        encoder_num_buckets (int): the number of relative position buckets.
        encoder_max_distance (int): the distance where the buckets stop growing.

        The other arguments are :func:`wav2vec2_model` 's.

    Returns:
        Wav2Vec2Model: the model.
    """
    if extractor_conv_layer_config is None:
        extractor_conv_layer_config = [(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2
    feature_extractor = components._get_feature_extractor(
        extractor_mode, extractor_conv_layer_config, extractor_conv_bias)
    encoder = components._get_wavlm_encoder(
        in_features=extractor_conv_layer_config[-1][0], embed_dim=encoder_embed_dim,
        dropout_input=encoder_projection_dropout, pos_conv_kernel=encoder_pos_conv_kernel,
        pos_conv_groups=encoder_pos_conv_groups, num_layers=encoder_num_layers,
        num_heads=encoder_num_heads, num_buckets=encoder_num_buckets,
        max_distance=encoder_max_distance, attention_dropout=encoder_attention_dropout,
        ff_interm_features=encoder_ff_interm_features,
        ff_interm_dropout=encoder_ff_interm_dropout, dropout=encoder_dropout,
        layer_norm_first=encoder_layer_norm_first, layer_drop=encoder_layer_drop)
    aux = None
    if aux_num_out is not None:
        aux = nn.Linear(in_features=encoder_embed_dim, out_features=aux_num_out)
    return Wav2Vec2Model(feature_extractor, encoder, aux)


def _wavlm_preset(extractor_mode, embed_dim, num_layers, num_heads, ff_features,
                  layer_norm_first, dropouts, aux_num_out):
    projection, attention, ff_interm, dropout, layer_drop = dropouts
    return wavlm_model(
        extractor_mode=extractor_mode, extractor_conv_layer_config=None,
        extractor_conv_bias=False, encoder_embed_dim=embed_dim,
        encoder_projection_dropout=projection, encoder_pos_conv_kernel=128,
        encoder_pos_conv_groups=16, encoder_num_layers=num_layers,
        encoder_num_heads=num_heads, encoder_num_buckets=320, encoder_max_distance=800,
        encoder_attention_dropout=attention, encoder_ff_interm_features=ff_features,
        encoder_ff_interm_dropout=ff_interm, encoder_dropout=dropout,
        encoder_layer_norm_first=layer_norm_first, encoder_layer_drop=layer_drop,
        aux_num_out=aux_num_out)


def wavlm_base(encoder_projection_dropout: float = 0.1, encoder_attention_dropout: float = 0.1,
               encoder_ff_interm_dropout: float = 0.1, encoder_dropout: float = 0.1,
               encoder_layer_drop: float = 0.1, aux_num_out: int | None = None
               ) -> Wav2Vec2Model:
    return _wavlm_preset("group_norm", 768, 12, 12, 3072, False,
                         (encoder_projection_dropout, encoder_attention_dropout,
                          encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                         aux_num_out)


def wavlm_large(encoder_projection_dropout: float = 0.1,
                encoder_attention_dropout: float = 0.1,
                encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.1,
                encoder_layer_drop: float = 0.1, aux_num_out: int | None = None
                ) -> Wav2Vec2Model:
    return _wavlm_preset("layer_norm", 1024, 24, 16, 4096, True,
                         (encoder_projection_dropout, encoder_attention_dropout,
                          encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                         aux_num_out)


for _factory, _title in [
        (wav2vec2_base, '"base" wav2vec 2.0 (12 layers of 768, group-norm extractor)'),
        (wav2vec2_large, '"large" wav2vec 2.0 (24 layers of 1024, group-norm extractor)'),
        (wav2vec2_large_lv60k, '"large lv-60k" wav2vec 2.0 (24 layers of 1024, pre-norm, '
                               'layer-norm extractor with biases)'),
        (hubert_base, '"base" HuBERT (12 layers of 768)'),
        (hubert_large, '"large" HuBERT (24 layers of 1024, pre-norm)'),
        (hubert_xlarge, '"extra large" HuBERT (48 layers of 1280, pre-norm)'),
        (wav2vec2_xlsr_300m, 'XLS-R 300M wav2vec 2.0 (24 layers of 1024, pre-norm)'),
        (wav2vec2_xlsr_1b, 'XLS-R 1B wav2vec 2.0 (48 layers of 1280, pre-norm)'),
        (wav2vec2_xlsr_2b, 'XLS-R 2B wav2vec 2.0 (48 layers of 1920, pre-norm)'),
        (wavlm_base, '"base" WavLM (12 layers of 768, 320 relative position buckets)'),
        (wavlm_large, '"large" WavLM (24 layers of 1024, pre-norm, 320 buckets)')]:
    _factory.__doc__ = f"Builds the {_title} :class:`Wav2Vec2Model`.\n{_FACTORY_ARGS}"
