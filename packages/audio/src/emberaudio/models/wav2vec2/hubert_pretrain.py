"""HuBERT pre-training (Hsu et al., 2021): span masking of the feature frames, the
transformer, and cosine-similarity logits of the masked and unmasked frames against the
embeddings of the cluster labels; with torchaudio's module and parameter names."""

from __future__ import annotations

import math

import ember
from ember import nn
from emberaudio.models.wav2vec2 import components
from emberaudio.models.wav2vec2.model import Wav2Vec2Model

__all__ = ["HuBERTPretrainModel", "LogitGenerator", "MaskGenerator", "hubert_pretrain_base",
           "hubert_pretrain_large", "hubert_pretrain_model", "hubert_pretrain_xlarge"]


def _span_lengths(num: int, mask_type: str, mask_length: int, mask_other: float) -> list[int]:
    if mask_type == "static":
        return [mask_length] * num
    if mask_type == "uniform":
        return ember.randint(int(mask_other), mask_length * 2 + 1, (num,)).tolist()
    if mask_type == "normal":
        drawn = ember.normal(float(mask_length), float(mask_other), (num,))
        return [max(1, round(v)) for v in drawn.tolist()]
    if mask_type == "poisson":
        return [round(v) for v in ember.poisson(ember.full((num,), float(mask_length))).tolist()]
    raise ValueError(f"unknown mask selection: {mask_type}")


def _spans_without_overlap(size: int, lengths: list[int], min_space: int) -> list[int]:
    """Places the spans (longest first) one by one in free stretches chosen with
    probability proportional to their length, keeping ``min_space`` frames between spans."""
    masked: list[int] = []
    parts = [(0, size)]
    shortest = min(lengths)
    for length in sorted(lengths, reverse=True):
        room = [e - s if e - s >= length + min_space else 0 for s, e in parts]
        total = sum(room)
        if total == 0:
            break
        choice = int(ember.multinomial(ember.tensor(room, dtype=ember.float64) / total, 1))
        s, e = parts.pop(choice)
        start = int(ember.randint(s, e - length, (1,)))
        masked.extend(range(start, start + length))
        if start - s - min_space >= shortest:
            parts.append((s, start - min_space + 1))
        if e - start - shortest - min_space > shortest:
            parts.append((start + length + min_space, e))
    return masked


def _compute_mask_indices(shape: tuple[int, int], padding_mask: ember.Tensor | None,
                          mask_prob: float, mask_length: int, mask_type: str = "static",
                          mask_other: float = 0.0, min_masks: int = 0, no_overlap: bool = False,
                          min_space: int = 0) -> ember.Tensor:
    """Random spans to mask, ``(batch, frame)`` booleans, every row with as many masked
    frames as the row with the fewest.

    About ``mask_prob * frames / mask_length`` spans start per row (rounded at random, at
    least ``min_masks``), of lengths given by ``mask_type`` (``"static"``: ``mask_length``;
    ``"uniform"``: in ``[mask_other, 2 * mask_length]``; ``"normal"``: mean
    ``mask_length``, deviation ``mask_other``; ``"poisson"``: mean ``mask_length``).
    Without ``no_overlap`` the spans start anywhere (and may overlap); with it they are laid
    out ``min_space`` frames apart. Padded frames are not masked.
    """
    batch, frames = shape
    all_num = max(min_masks, int(mask_prob * frames / float(mask_length) + ember.rand(1).item()))
    rows = []
    for i in range(batch):
        if padding_mask is not None:
            size = frames - int(padding_mask[i].long().sum().item())
            num = max(min_masks, int(mask_prob * size / float(mask_length)
                                     + ember.rand(1).item()))
        else:
            size, num = frames, all_num
        lengths = _span_lengths(num, mask_type, mask_length, mask_other)
        if lengths and sum(lengths) == 0:
            lengths[0] = min(mask_length, size - 1)
        if not lengths:
            rows.append([])
            continue
        if no_overlap:
            masked = _spans_without_overlap(size, lengths, min_space)
        else:
            shortest = min(lengths)
            if size - shortest <= num:
                shortest = size - num - 1
            starts = ember.randperm(size - shortest)[:num].tolist()
            masked = [s + offset for s, length in zip(starts, lengths)
                      for offset in range(length)]
        rows.append(sorted({m for m in masked if m < size}))
    fewest = min(len(r) for r in rows) if rows else 0
    mask = ember.zeros(batch, frames, dtype=ember.bool)
    for i, row in enumerate(rows):
        if len(row) > fewest:
            keep = ember.randperm(len(row))[:fewest].tolist()
            row = [row[k] for k in keep]
        if row:
            mask[i, ember.tensor(row, dtype=ember.int64)] = True
    return mask


class MaskGenerator(nn.Module):
    """Replaces random spans of frames by a learnt embedding (and, with
    ``mask_channel_prob``, zeroes random spans of channels), in training.

    Args:
        encoder_embed_dim (int): the transformer's width.
        mask_prob (float): the fraction of frames to cover with spans (before overlaps).
        mask_selection (str): span lengths: ``"static"``, ``"uniform"``, ``"normal"`` or
            ``"poisson"``.
        mask_other (float): the second parameter of the span-length distribution.
        mask_length (int): the span length.
        no_mask_overlap (bool): keep spans apart.
        mask_min_space (int): frames between spans (with ``no_mask_overlap``).
        mask_channel_prob (float): the same for channels (0: none).
        mask_channel_selection (str): span lengths of the channel masks.
        mask_channel_other (float): their second parameter.
        mask_channel_length (int): the channel span length.
        no_mask_channel_overlap (bool): keep channel spans apart.
        mask_channel_min_space (int): channels between channel spans.
    """

    def __init__(self, encoder_embed_dim: int, mask_prob: float, mask_selection: str,
                 mask_other: float, mask_length: int, no_mask_overlap: bool,
                 mask_min_space: int, mask_channel_prob: float, mask_channel_selection: str,
                 mask_channel_other: float, mask_channel_length: int,
                 no_mask_channel_overlap: bool, mask_channel_min_space: int) -> None:
        super().__init__()
        self.mask_prob = mask_prob
        self.mask_selection = mask_selection
        self.mask_other = mask_other
        self.mask_length = mask_length
        self.no_mask_overlap = no_mask_overlap
        self.mask_min_space = mask_min_space
        self.mask_channel_prob = mask_channel_prob
        self.mask_channel_selection = mask_channel_selection
        self.mask_channel_other = mask_channel_other
        self.mask_channel_length = mask_channel_length
        self.no_mask_channel_overlap = no_mask_channel_overlap
        self.mask_channel_min_space = mask_channel_min_space
        self.mask_embedding = nn.Parameter(ember.empty(encoder_embed_dim).uniform_())

    def forward(self, x: ember.Tensor, padding_mask: ember.Tensor | None
                ) -> tuple[ember.Tensor, ember.Tensor | None]:
        """Returns the masked ``(B, T, C)`` frames and the ``(B, T)`` frame mask (``None``
        when ``mask_prob`` is 0)."""
        batch, frames, channels = x.shape
        mask = None
        if self.mask_prob > 0:
            mask = _compute_mask_indices(
                (batch, frames), padding_mask, self.mask_prob, self.mask_length,
                self.mask_selection, self.mask_other, min_masks=2,
                no_overlap=self.no_mask_overlap, min_space=self.mask_min_space).to(x.device)
            x = ember.where(mask[:, :, None], self.mask_embedding.to(x.dtype), x)
        if self.mask_channel_prob > 0:
            channel_mask = _compute_mask_indices(
                (batch, channels), None, self.mask_channel_prob, self.mask_channel_length,
                self.mask_channel_selection, self.mask_channel_other,
                no_overlap=self.no_mask_channel_overlap,
                min_space=self.mask_channel_min_space).to(x.device)
            x = x.masked_fill(channel_mask[:, None, :], 0.0)
        return x, mask


def _compute_logits(proj_x: ember.Tensor, target: ember.Tensor,
                    label_embeddings: ember.Tensor) -> ember.Tensor:
    """Cosine similarities / 0.1 of each frame with its label's embedding (column 0) and
    with every label's (columns 1...; the frame's own label there is -inf):
    ``(frames, num_classes + 1)``."""
    positive = label_embeddings.index_select(0, target.long())
    negatives = label_embeddings.unsqueeze(1).expand(-1, proj_x.shape[0], -1)
    neg_is_pos = (positive == negatives).all(-1)
    targets = ember.cat([positive.unsqueeze(0), negatives], dim=0)
    logits = nn.functional.cosine_similarity(proj_x.float(), targets.float(), dim=-1)
    logits = logits.to(proj_x.dtype) / 0.1
    blocked = ember.cat([ember.zeros_like(neg_is_pos[:1]), neg_is_pos], dim=0)
    return logits.masked_fill(blocked, float("-inf")).transpose(0, 1)


class LogitGenerator(nn.Module):
    """Projects the transformer's output to ``final_dim`` and scores it against the label
    embeddings, for the masked and the unmasked frames.

    Args:
        encoder_embed_dim (int): the transformer's width.
        num_classes (int): the number of labels (clusters).
        final_dim (int): the projection's width.
        skip_masked (bool): no logits for the masked frames.
        skip_nomask (bool): no logits for the unmasked frames.
    """

    def __init__(self, encoder_embed_dim: int, num_classes: int, final_dim: int,
                 skip_masked: bool, skip_nomask: bool) -> None:
        super().__init__()
        self.label_embeddings = nn.Parameter(ember.empty(num_classes, final_dim).uniform_())
        self.final_proj = nn.Linear(encoder_embed_dim, final_dim)
        self.skip_masked = skip_masked
        self.skip_nomask = skip_nomask

    def forward(self, x, label, mask_m, mask_u):
        proj_x = self.final_proj(x)
        logit_m = None if self.skip_masked else _compute_logits(
            proj_x[mask_m], label[mask_m], self.label_embeddings)
        logit_u = None if self.skip_nomask else _compute_logits(
            proj_x[mask_u], label[mask_u], self.label_embeddings)
        return logit_m, logit_u


class _GradMultiply(ember.autograd.Function):
    """The identity, with the gradient scaled by ``scale``."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class HuBERTPretrainModel(nn.Module):
    """HuBERT for pre-training: masked prediction of cluster labels.

    Note:
        Build it with :func:`hubert_pretrain_model`, :func:`hubert_pretrain_base`...

    Args:
        wav2vec2 (Wav2Vec2Model): the feature extractor and transformer.
        mask_generator (nn.Module): masks the frames in training.
        logit_generator (nn.Module): the logits of the masked and unmasked frames.
        feature_grad_mult (float or None): scales the feature extractor's gradients (in
            (0, 1)); ``None`` leaves them.

    Shape:
        - waveforms: :math:`(B, T)`; labels: :math:`(B, F)` with :math:`F` the frames.
        - output: masked logits :math:`(M, C + 1)`, unmasked logits :math:`(U, C + 1)`,
          and the features' mean square (a penalty term), a scalar.
    """

    def __init__(self, wav2vec2: Wav2Vec2Model, mask_generator: nn.Module,
                 logit_generator: nn.Module, feature_grad_mult: float | None) -> None:
        super().__init__()
        self.wav2vec2 = wav2vec2
        self.mask_generator = mask_generator
        self.logit_generator = logit_generator
        if feature_grad_mult is not None and not 0.0 < feature_grad_mult < 1.0:
            raise ValueError("The value of `feature_grad_mult` must be ``None``or between "
                             f"(0, 1). Found {feature_grad_mult}")
        self.feature_grad_mult = feature_grad_mult

    def forward(self, waveforms: ember.Tensor, labels: ember.Tensor,
                audio_lengths: ember.Tensor | None = None):
        x, lengths = self.wav2vec2.feature_extractor(waveforms, audio_lengths)
        if self.feature_grad_mult is not None and self.feature_grad_mult < 1.0:
            x = _GradMultiply.apply(x, self.feature_grad_mult)
        features_pen = x.float().pow(2).mean()
        padding_mask = None
        if lengths is not None:
            batch, frames, _ = x.shape
            padding_mask = ember.arange(frames, device=lengths.device).expand(
                batch, frames) >= lengths[:, None]
        x, attention_mask = self.wav2vec2.encoder._preprocess(x, lengths)
        x, mask = self.mask_generator(x, padding_mask)
        x = self.wav2vec2.encoder.transformer(x, attention_mask=attention_mask)
        if x.shape[1] != labels.shape[1]:
            raise ValueError("The length of label must match that of HuBERT model output")
        if mask is None:
            mask = ember.zeros(x.shape[0], x.shape[1], dtype=ember.bool, device=x.device)
        if padding_mask is not None:
            mask_m = ~padding_mask & mask
            mask_u = ~padding_mask & ~mask_m
        else:
            mask_m, mask_u = mask, ~mask
        logit_m, logit_u = self.logit_generator(x, labels, mask_m, mask_u)
        return logit_m, logit_u, features_pen


def _init_pretrain(module: nn.Module) -> None:
    if isinstance(module, components.ConvLayerBlock):
        nn.init.kaiming_normal_(module.conv.weight)
    elif isinstance(module, components.ConvolutionalPositionalEmbedding):
        std = math.sqrt(4.0 / (module.embed_dim * module.kernel_size))
        with ember.no_grad():
            direction = module.conv.parametrizations["weight"].original1
            nn.init.normal_(direction, mean=0.0, std=std)
            module.conv.parametrizations["weight"].original0.copy_(
                module.conv.parametrizations["weight"]._norm(direction))
        nn.init.constant_(module.conv.bias, 0.0)
    elif isinstance(module, components.SelfAttention):
        for proj in (module.k_proj, module.v_proj, module.q_proj):
            nn.init.xavier_uniform_(proj.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(module.out_proj.weight)
        nn.init.constant_(module.out_proj.bias, 0.0)
    elif isinstance(module, components.Transformer):
        for sub in module.modules():   # BERT's initialization of the transformer
            if isinstance(sub, nn.Linear):
                nn.init.normal_(sub.weight, mean=0.0, std=0.02)
                if sub.bias is not None:
                    nn.init.zeros_(sub.bias)


def hubert_pretrain_model(
        extractor_mode: str, extractor_conv_layer_config: list[tuple[int, int, int]] | None,
        extractor_conv_bias: bool, encoder_embed_dim: int, encoder_projection_dropout: float,
        encoder_pos_conv_kernel: int, encoder_pos_conv_groups: int, encoder_num_layers: int,
        encoder_num_heads: int, encoder_attention_dropout: float,
        encoder_ff_interm_features: int, encoder_ff_interm_dropout: float,
        encoder_dropout: float, encoder_layer_norm_first: bool, encoder_layer_drop: float,
        mask_prob: float, mask_selection: str, mask_other: float, mask_length: int,
        no_mask_overlap: bool, mask_min_space: int, mask_channel_prob: float,
        mask_channel_selection: str, mask_channel_other: float, mask_channel_length: int,
        no_mask_channel_overlap: bool, mask_channel_min_space: int, skip_masked: bool,
        skip_nomask: bool, num_classes: int, final_dim: int,
        feature_grad_mult: float | None) -> HuBERTPretrainModel:
    """Builds a custom :class:`HuBERTPretrainModel` for training from scratch.

    The ``extractor_*`` and ``encoder_*`` arguments are those of
    :func:`~emberaudio.models.wav2vec2_model`; the ``mask_*`` ones are
    :class:`MaskGenerator` 's; ``skip_masked``, ``skip_nomask``, ``num_classes`` and
    ``final_dim`` are :class:`LogitGenerator` 's; ``feature_grad_mult`` is
    :class:`HuBERTPretrainModel` 's.

    Returns:
        HuBERTPretrainModel: the model, initialized for pre-training.
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
    mask_generator = MaskGenerator(
        encoder_embed_dim, mask_prob, mask_selection, mask_other, mask_length, no_mask_overlap,
        mask_min_space, mask_channel_prob, mask_channel_selection, mask_channel_other,
        mask_channel_length, no_mask_channel_overlap, mask_channel_min_space)
    logit_generator = LogitGenerator(encoder_embed_dim, num_classes, final_dim, skip_masked,
                                     skip_nomask)
    model = HuBERTPretrainModel(Wav2Vec2Model(feature_extractor, encoder), mask_generator,
                                logit_generator, feature_grad_mult)
    model.apply(_init_pretrain)
    return model


def _pretrain_preset(mode, dim, layers, heads, ff, norm_first, final_dim, num_classes,
                     dropouts, mask_prob, mask_channel_prob, mask_channel_length,
                     feature_grad_mult):
    projection, attention, ff_interm, dropout, layer_drop = dropouts
    return hubert_pretrain_model(
        extractor_mode=mode, extractor_conv_layer_config=None, extractor_conv_bias=False,
        encoder_embed_dim=dim, encoder_projection_dropout=projection,
        encoder_pos_conv_kernel=128, encoder_pos_conv_groups=16, encoder_num_layers=layers,
        encoder_num_heads=heads, encoder_attention_dropout=attention,
        encoder_ff_interm_features=ff, encoder_ff_interm_dropout=ff_interm,
        encoder_dropout=dropout, encoder_layer_norm_first=norm_first,
        encoder_layer_drop=layer_drop, mask_prob=mask_prob, mask_selection="static",
        mask_other=0.0, mask_length=10, no_mask_overlap=False, mask_min_space=1,
        mask_channel_prob=mask_channel_prob, mask_channel_selection="static",
        mask_channel_other=0.0, mask_channel_length=mask_channel_length,
        no_mask_channel_overlap=False, mask_channel_min_space=1, skip_masked=False,
        skip_nomask=False, num_classes=num_classes, final_dim=final_dim,
        feature_grad_mult=feature_grad_mult)


def hubert_pretrain_base(encoder_projection_dropout: float = 0.1,
                         encoder_attention_dropout: float = 0.1,
                         encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.1,
                         encoder_layer_drop: float = 0.05, mask_prob: float = 0.8,
                         mask_channel_prob: float = 0.0, mask_channel_length: int = 10,
                         feature_grad_mult: float | None = 0.1, num_classes: int = 100
                         ) -> HuBERTPretrainModel:
    """Builds the "base" :class:`HuBERTPretrainModel` (12 layers of 768, projections to
    256); the arguments are :func:`hubert_pretrain_model` 's."""
    return _pretrain_preset("group_norm", 768, 12, 12, 3072, False, 256, num_classes,
                            (encoder_projection_dropout, encoder_attention_dropout,
                             encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                            mask_prob, mask_channel_prob, mask_channel_length,
                            feature_grad_mult)


def hubert_pretrain_large(encoder_projection_dropout: float = 0.0,
                          encoder_attention_dropout: float = 0.0,
                          encoder_ff_interm_dropout: float = 0.0, encoder_dropout: float = 0.0,
                          encoder_layer_drop: float = 0.0, mask_prob: float = 0.8,
                          mask_channel_prob: float = 0.0, mask_channel_length: int = 10,
                          feature_grad_mult: float | None = None) -> HuBERTPretrainModel:
    """Builds the "large" :class:`HuBERTPretrainModel` (24 layers of 1024, pre-norm, 500
    classes, projections to 768); the arguments are :func:`hubert_pretrain_model` 's."""
    return _pretrain_preset("layer_norm", 1024, 24, 16, 4096, True, 768, 500,
                            (encoder_projection_dropout, encoder_attention_dropout,
                             encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                            mask_prob, mask_channel_prob, mask_channel_length,
                            feature_grad_mult)


def hubert_pretrain_xlarge(encoder_projection_dropout: float = 0.0,
                           encoder_attention_dropout: float = 0.0,
                           encoder_ff_interm_dropout: float = 0.0,
                           encoder_dropout: float = 0.0, encoder_layer_drop: float = 0.0,
                           mask_prob: float = 0.8, mask_channel_prob: float = 0.0,
                           mask_channel_length: int = 10,
                           feature_grad_mult: float | None = None) -> HuBERTPretrainModel:
    """Builds the "extra large" :class:`HuBERTPretrainModel` (48 layers of 1280, pre-norm,
    500 classes, projections to 1024); the arguments are :func:`hubert_pretrain_model` 's."""
    return _pretrain_preset("layer_norm", 1280, 48, 16, 5120, True, 1024, 500,
                            (encoder_projection_dropout, encoder_attention_dropout,
                             encoder_ff_interm_dropout, encoder_dropout, encoder_layer_drop),
                            mask_prob, mask_channel_prob, mask_channel_length,
                            feature_grad_mult)
