"""torchtext's pretrained T5 bundles (``torchtext.models.T5Bundle``, ``T5_BASE`` ...): a
configuration, the address of torchtext's checkpoint and the matching text transform.

Checkpoints are downloaded once into ember's hub cache (``<ember.hub.get_dir()>/checkpoints``,
where ``torch.hub`` keeps torchtext's) and read with the safe loader."""

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

# load_state_dict_from_url was defined here before embertext._download_hooks
from embertext._download_hooks import _TEXT_BUCKET, load_state_dict_from_url  # noqa: F401
from embertext.models._bundle import check_pretrained, read_checkpoint
from embertext.models.bert import _read_weights
from embertext.models.t5.model import T5Conf, T5Model
from embertext.models.t5_transform import T5Transform

__all__ = ["T5Bundle", "T5_SMALL_ENCODER", "T5_SMALL", "T5_SMALL_GENERATION", "T5_BASE_ENCODER",
           "T5_BASE", "T5_BASE_GENERATION", "T5_LARGE_ENCODER", "T5_LARGE",
           "T5_LARGE_GENERATION", "T5_3B_ENCODER", "T5_3B", "T5_3B_GENERATION",
           "T5_11B_ENCODER", "T5_11B", "T5_11B_GENERATION", "FLAN_T5_BASE_ENCODER",
           "FLAN_T5_BASE", "FLAN_T5_BASE_GENERATION", "FLAN_T5_LARGE_ENCODER",
           "FLAN_T5_LARGE", "FLAN_T5_LARGE_GENERATION", "FLAN_T5_XL_ENCODER",
           "FLAN_T5_XL", "FLAN_T5_XL_GENERATION", "FLAN_T5_XXL_ENCODER", "FLAN_T5_XXL",
           "FLAN_T5_XXL_GENERATION"]

logger = logging.getLogger(__name__)


@dataclass
class T5Bundle:
    r"""A pretrained T5: its :class:`T5Conf`, the path of its weights and its transform.

    Examples::

        >>> t5_base = T5_BASE_ENCODER
        >>> transform = t5_base.transform()
        >>> model = t5_base.get_model()
        >>> model(transform(["Hello world", "Attention rocks!"]))["encoder_output"].shape
        (2, 4, 768)
        >>> model = T5Bundle.build_model(config=T5Conf(encoder_only=True),
        ...                              checkpoint="t5.base.encoder.pt")
    """

    _config: T5Conf
    _path: str | None = None
    transform: Callable | None = None

    def get_model(self, *, load_weights=True, freeze_model=False, dl_kwargs=None):
        r"""The model, with the pretrained weights when ``load_weights``.

        Args:
            load_weights (bool): load the weights (downloaded the first time).
            freeze_model (bool): set ``requires_grad=False`` on the parameters.
            dl_kwargs (dict, optional): passed to the download (``model_dir``,
                ``progress``, ``check_hash``, ``file_name``, ``map_location``).
        """
        check_pretrained(self._path, load_weights, freeze_model, "model", logger)
        return T5Bundle.build_model(config=self._config, freeze_model=freeze_model,
                                    checkpoint=self._path if load_weights else None,
                                    strict=True, dl_kwargs=dl_kwargs)

    @classmethod
    def build_model(cls, config, *, freeze_model=False, checkpoint=None, strict=False,
                    dl_kwargs=None):
        r"""A :class:`T5Model` of ``config``, loaded from ``checkpoint`` (a URL or path, or a
        state dict; it may hold the encoder's weights only) with ``strict``."""
        model = T5Model(config, freeze_model)
        if checkpoint is not None:
            model.load_state_dict(read_checkpoint(checkpoint, dl_kwargs), strict=strict)
        return model

    @staticmethod
    def build_model_from_huggingface_ckpt(ckpt_path, encoder_only=False, *, freeze_model=False,
                                          strict=True):
        r"""A :class:`T5Model` from a Hugging Face T5 folder (``config.json`` and
        ``pytorch_model.bin`` or ``model.safetensors``), its keys renamed to torchtext's.

        The model has a ``lm_head`` when the checkpoint has one or is a tied
        ``T5ForConditionalGeneration`` (whose head is the shared embedding matrix).
        ``strict`` makes every weight of the model come from the checkpoint.
        """
        with open(os.path.join(ckpt_path, "config.json"), encoding="utf-8") as handle:
            hf_config = json.load(handle)
        weights = _read_weights(ckpt_path)
        architectures = hf_config.get("architectures") or []
        linear_head = not encoder_only and (
            "lm_head.weight" in weights or "T5ForConditionalGeneration" in architectures)
        num_layers = hf_config.get("num_layers", 6)
        config = T5Conf(
            encoder_only=encoder_only, linear_head=linear_head,
            embedding_dim=hf_config.get("d_model", 512), qkv_dim=hf_config.get("d_kv", 64),
            num_attention_heads=hf_config.get("num_heads", 8), num_encoder_layers=num_layers,
            num_decoder_layers=hf_config.get("num_decoder_layers") or num_layers,
            ffn_dimension=hf_config.get("d_ff", 2048),
            dropout=hf_config.get("dropout_rate", 0.1),
            layer_norm_eps=hf_config.get("layer_norm_epsilon", 1e-6),
            relative_attention_num_buckets=hf_config.get("relative_attention_num_buckets", 32),
            relative_attention_max_distance=hf_config.get("relative_attention_max_distance",
                                                          128),
            padding_idx=hf_config.get("pad_token_id", 0),
            vocab_size=hf_config.get("vocab_size", 32128),
            feed_forward_proj=hf_config.get("feed_forward_proj"))
        model = T5Model(config, freeze_model)
        model.load_state_dict(_from_huggingface(weights, config), strict=strict)
        return model

    @property
    def config(self):
        """The :class:`T5Conf` of the bundle."""
        return self._config


def _from_huggingface(hf, config):
    """Hugging Face T5 keys -> torchtext's."""
    shared = hf.get("shared.weight", hf.get("encoder.embed_tokens.weight"))
    out = {"token_embeddings.weight": shared, "encoder.token_embeddings.weight": shared}
    attention = {"SelfAttention": "self_attn", "EncDecAttention": "cross_attn"}
    stacks = [("encoder", config.num_encoder_layers, {0: "norm1", 1: "norm2"}, 1)]
    if not config.encoder_only:
        stacks.append(("decoder", config.num_decoder_layers,
                       {0: "norm1", 1: "norm3", 2: "norm2"}, 2))
    for stack, layers, norms, ff in stacks:
        out[f"{stack}.norm.weight"] = hf[f"{stack}.final_layer_norm.weight"]
        bias = f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        out[f"{stack}.layers.0.self_attn.relative_attention_bias.weight"] = hf[bias]
        for i in range(layers):
            hf_layer, layer = f"{stack}.block.{i}.layer", f"{stack}.layers.{i}"
            for index, norm in norms.items():
                out[f"{layer}.{norm}.weight"] = hf[f"{hf_layer}.{index}.layer_norm.weight"]
            for index, (hf_name, name) in enumerate(attention.items()):
                if index >= ff:
                    break
                for proj in "qkv":
                    out[f"{layer}.{name}.{proj}_proj_weight"] = \
                        hf[f"{hf_layer}.{index}.{hf_name}.{proj}.weight"]
                out[f"{layer}.{name}.out_proj.weight"] = \
                    hf[f"{hf_layer}.{index}.{hf_name}.o.weight"]
            dense = f"{hf_layer}.{ff}.DenseReluDense"
            if config.is_gated_act:
                out[f"{layer}.linear1_0.weight"] = hf[f"{dense}.wi_0.weight"]
                out[f"{layer}.linear1_1.weight"] = hf[f"{dense}.wi_1.weight"]
            else:
                out[f"{layer}.linear1.weight"] = hf[f"{dense}.wi.weight"]
            out[f"{layer}.linear2.weight"] = hf[f"{dense}.wo.weight"]
    if config.linear_head:
        out["lm_head.weight"] = hf.get("lm_head.weight", shared)
    return out


def t5_transform():
    """The SentencePiece transform of torchtext's T5 bundles."""
    return T5Transform(urljoin(_TEXT_BUCKET, "t5_tokenizer_base.model"), max_seq_len=512,
                       eos_idx=1, padding_idx=0)


def _bundle(path, doc, **config):
    bundle = T5Bundle(_path=urljoin(_TEXT_BUCKET, path), _config=T5Conf(**config),
                      transform=t5_transform)
    bundle.__doc__ = doc
    return bundle


_KINDS = {
    "_ENCODER": (".encoder", dict(encoder_only=True),
                 "an encoder-only model; it returns the normalized output of the encoder's last "
                 "layer"),
    "": ("", dict(encoder_only=False),
         "an encoder-decoder model; it returns the normalized output of the decoder's last "
         "layer"),
    "_GENERATION": (".generation", dict(encoder_only=False, linear_head=True),
                    "an encoder-decoder model with the language-model head; it returns the "
                    "logits over the vocabulary, for generation"),
}
_T5_SIZES = {
    "SMALL": ("small", dict(embedding_dim=512, num_attention_heads=8, num_encoder_layers=6,
                            num_decoder_layers=6, ffn_dimension=2048)),
    "BASE": ("base", {}),
    "LARGE": ("large", dict(embedding_dim=1024, num_attention_heads=16, num_encoder_layers=24,
                            num_decoder_layers=24, ffn_dimension=4096)),
    "3B": ("3b", dict(embedding_dim=1024, qkv_dim=128, num_attention_heads=32,
                      num_encoder_layers=24, num_decoder_layers=24, ffn_dimension=16384)),
    "11B": ("11b", dict(embedding_dim=1024, qkv_dim=128, num_attention_heads=128,
                        num_encoder_layers=24, num_decoder_layers=24, ffn_dimension=65536)),
}
_FLAN_SIZES = {
    "BASE": ("base", dict(ffn_dimension=2048)),
    "LARGE": ("large", dict(embedding_dim=1024, num_attention_heads=16, num_encoder_layers=24,
                            num_decoder_layers=24, ffn_dimension=2816)),
    "XL": ("xl", dict(embedding_dim=2048, num_attention_heads=32, num_encoder_layers=24,
                      num_decoder_layers=24, ffn_dimension=5120)),
    "XXL": ("xxl", dict(embedding_dim=4096, qkv_dim=64, num_attention_heads=64,
                        num_encoder_layers=24, num_decoder_layers=24, ffn_dimension=10240)),
}

BUNDLES = {}
for _size, (_file, _dims) in _T5_SIZES.items():
    for _kind, (_suffix, _flags, _what) in _KINDS.items():
        BUNDLES[f"T5_{_size}{_kind}"] = _bundle(
            f"t5.{_file}{_suffix}.v2.pt",
            f"T5 {_file} (Raffel et al., 2020, pretrained on C4), {_what}.",
            **_flags, **_dims)
for _size, (_file, _dims) in _FLAN_SIZES.items():
    for _kind, (_suffix, _flags, _what) in _KINDS.items():
        BUNDLES[f"FLAN_T5_{_size}{_kind}"] = _bundle(
            f"t5.flan.{_file}{_suffix}.pt",
            f"Flan-T5 {_file} (Chung et al., 2022, instruction-finetuned T5 v1.1), {_what}.",
            feed_forward_proj="gated-gelu", **_flags, **_dims)

T5_SMALL_ENCODER = BUNDLES["T5_SMALL_ENCODER"]
T5_SMALL = BUNDLES["T5_SMALL"]
T5_SMALL_GENERATION = BUNDLES["T5_SMALL_GENERATION"]
T5_BASE_ENCODER = BUNDLES["T5_BASE_ENCODER"]
T5_BASE = BUNDLES["T5_BASE"]
T5_BASE_GENERATION = BUNDLES["T5_BASE_GENERATION"]
T5_LARGE_ENCODER = BUNDLES["T5_LARGE_ENCODER"]
T5_LARGE = BUNDLES["T5_LARGE"]
T5_LARGE_GENERATION = BUNDLES["T5_LARGE_GENERATION"]
T5_3B_ENCODER = BUNDLES["T5_3B_ENCODER"]
T5_3B = BUNDLES["T5_3B"]
T5_3B_GENERATION = BUNDLES["T5_3B_GENERATION"]
T5_11B_ENCODER = BUNDLES["T5_11B_ENCODER"]
T5_11B = BUNDLES["T5_11B"]
T5_11B_GENERATION = BUNDLES["T5_11B_GENERATION"]
FLAN_T5_BASE_ENCODER = BUNDLES["FLAN_T5_BASE_ENCODER"]
FLAN_T5_BASE = BUNDLES["FLAN_T5_BASE"]
FLAN_T5_BASE_GENERATION = BUNDLES["FLAN_T5_BASE_GENERATION"]
FLAN_T5_LARGE_ENCODER = BUNDLES["FLAN_T5_LARGE_ENCODER"]
FLAN_T5_LARGE = BUNDLES["FLAN_T5_LARGE"]
FLAN_T5_LARGE_GENERATION = BUNDLES["FLAN_T5_LARGE_GENERATION"]
FLAN_T5_XL_ENCODER = BUNDLES["FLAN_T5_XL_ENCODER"]
FLAN_T5_XL = BUNDLES["FLAN_T5_XL"]
FLAN_T5_XL_GENERATION = BUNDLES["FLAN_T5_XL_GENERATION"]
FLAN_T5_XXL_ENCODER = BUNDLES["FLAN_T5_XXL_ENCODER"]
FLAN_T5_XXL = BUNDLES["FLAN_T5_XXL"]
FLAN_T5_XXL_GENERATION = BUNDLES["FLAN_T5_XXL_GENERATION"]
