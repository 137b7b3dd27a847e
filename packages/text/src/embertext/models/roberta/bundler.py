"""torchtext's pretrained RoBERTa and XLM-R encoders (``torchtext.models.RobertaBundle``,
``XLMR_BASE_ENCODER`` ...): a configuration, the address of torchtext's checkpoint, an
optional head and the matching text transform.

Checkpoints and vocabularies are downloaded once into ember's hub cache
(``<ember.hub.get_dir()>/checkpoints``, where ``torch.hub`` keeps torchtext's) and read with
the safe loader; the tokenizer files go to embertext's cache (``<EMBER_HOME>/text``)."""

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

from ember import nn
from embertext import transforms as T
from embertext._download_hooks import _TEXT_BUCKET, load_state_dict_from_url
from embertext.models._bundle import check_pretrained, read_checkpoint
from embertext.models.roberta.model import RobertaEncoderConf, RobertaModel

__all__ = ["RobertaBundle", "XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
           "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER", "xlmr_transform",
           "roberta_transform"]

logger = logging.getLogger(__name__)


def _is_head_available_in_checkpoint(checkpoint, head_state_dict):
    return all(key in checkpoint for key in head_state_dict)


@dataclass
class RobertaBundle:
    r"""A pretrained RoBERTa / XLM-R encoder: its :class:`RobertaEncoderConf`, the path of its
    weights, an optional default head and its transform (a function returning it).

    Examples::

        >>> xlmr_base = XLMR_BASE_ENCODER
        >>> model = xlmr_base.get_model()
        >>> transform = xlmr_base.transform()
        >>> model_input = to_tensor(transform(["Hello world", "How are you!"]),
        ...                         padding_value=1)
        >>> model(model_input).shape
        ember.Size([2, 6, 768])
        >>> classifier_head = RobertaClassificationHead(num_classes=2, input_dim=768)
        >>> model = XLMR_BASE_ENCODER.get_model(head=classifier_head)
        >>> model = RobertaBundle.build_model(encoder_conf=RobertaEncoderConf(vocab_size=250002),
        ...                                   head=classifier_head,
        ...                                   checkpoint="xlmr.base.encoder.pt")
    """

    _encoder_conf: RobertaEncoderConf
    _path: str | None = None
    _head: nn.Module | None = None
    transform: Callable | None = None

    def get_model(self, *, head=None, load_weights=True, freeze_encoder=False, dl_kwargs=None):
        r"""The model, with the pretrained encoder weights when ``load_weights``.

        Args:
            head (nn.Module, optional): the task head, instead of the bundle's own; its
                weights are its own, never the checkpoint's.
            load_weights (bool): load the weights (downloaded the first time).
            freeze_encoder (bool): set ``requires_grad=False`` on the encoder's parameters.
            dl_kwargs (dict, optional): passed to the download (``model_dir``,
                ``progress``, ``check_hash``, ``file_name``, ``map_location``).
        """
        check_pretrained(self._path, load_weights, freeze_encoder, "encoder", logger)
        if head is not None:
            if self._head is not None:
                logger.info("A custom head module was provided, discarding the default head "
                            "module.")
        else:
            head = self._head
        return RobertaBundle.build_model(
            encoder_conf=self._encoder_conf, head=head, freeze_encoder=freeze_encoder,
            checkpoint=self._path if load_weights else None, override_checkpoint_head=True,
            strict=False, dl_kwargs=dl_kwargs)

    @classmethod
    def build_model(cls, encoder_conf, *, head=None, freeze_encoder=False, checkpoint=None,
                    override_checkpoint_head=False, strict=False, dl_kwargs=None):
        r"""A :class:`RobertaModel` of ``encoder_conf`` with ``head``, loaded from
        ``checkpoint`` with ``strict``.

        Args:
            encoder_conf (RobertaEncoderConf): the encoder's hyper-parameters.
            head (nn.Module, optional): the task head.
            freeze_encoder (bool): set ``requires_grad=False`` on the encoder's parameters.
            checkpoint (str or dict, optional): a URL or path, or a state dict; it may hold
                the encoder's weights only.
            override_checkpoint_head (bool): keep ``head``'s own weights even when the
                checkpoint has weights for it (they are kept anyway when it has not).
            strict (bool): passed to ``load_state_dict``. Default: ``False``.
            dl_kwargs (dict, optional): passed to the download.
        """
        model = RobertaModel(encoder_conf, head, freeze_encoder)
        if checkpoint is None:
            return model
        state_dict = read_checkpoint(checkpoint, dl_kwargs)
        if head is not None:
            head_state_dict = {k: v for k, v in model.state_dict().items()
                               if re.match(r"head\.", k)}
            if (override_checkpoint_head
                    or not _is_head_available_in_checkpoint(state_dict, head_state_dict)):
                state_dict.update(head_state_dict)
        model.load_state_dict(state_dict, strict=strict)
        return model

    @property
    def encoderConf(self):
        """The bundle's :class:`RobertaEncoderConf`."""
        return self._encoder_conf


def _transform(tokenizer, vocab_file, truncate_length):
    return T.Sequential(
        tokenizer,
        T.VocabTransform(load_state_dict_from_url(urljoin(_TEXT_BUCKET, vocab_file))),
        T.Truncate(truncate_length),
        T.AddToken(token=0, begin=True),
        T.AddToken(token=2, begin=False))


def xlmr_transform(truncate_length):
    """XLM-R's transform: SentencePiece pieces, their ids in XLM-R's vocabulary, at most
    ``truncate_length`` of them, between ``<s>`` (0) and ``</s>`` (2)."""
    return _transform(
        T.SentencePieceTokenizer(urljoin(_TEXT_BUCKET, "xlmr.sentencepiece.bpe.model")),
        "xlmr.vocab.pt", truncate_length)


def roberta_transform(truncate_length):
    """RoBERTa's transform: GPT-2 byte-level BPE ids, their ids in RoBERTa's vocabulary, at
    most ``truncate_length`` of them, between ``<s>`` (0) and ``</s>`` (2)."""
    return _transform(
        T.GPT2BPETokenizer(encoder_json_path=urljoin(_TEXT_BUCKET, "gpt2_bpe_encoder.json"),
                           vocab_bpe_path=urljoin(_TEXT_BUCKET, "gpt2_bpe_vocab.bpe")),
        "roberta.vocab.pt", truncate_length)


def _bundle(path, conf, transform, truncate_length, doc):
    bundle = RobertaBundle(_path=urljoin(_TEXT_BUCKET, path), _encoder_conf=conf,
                           transform=lambda: transform(truncate_length))
    bundle.__doc__ = doc + " See :class:`RobertaBundle` for the usage."
    return bundle


_LARGE = dict(embedding_dim=1024, ffn_dimension=4096, num_attention_heads=16,
              num_encoder_layers=24)
_XLMR = ("XLM-R (Conneau et al., 2020, \"Unsupervised Cross-lingual Representation Learning "
         "at Scale\"), the RoBERTa architecture trained on 2.5TB of CommonCrawl text in 100 "
         "languages; published by its authors under the MIT License.")
_ROBERTA = ("RoBERTa (Liu et al., 2019, \"RoBERTa: A Robustly Optimized BERT Pretraining "
            "Approach\"), trained on BookCorpus, English Wikipedia, CC-News, OpenWebText and "
            "STORIES; published by its authors under the MIT License.")

XLMR_BASE_ENCODER = _bundle("xlmr.base.encoder.pt", RobertaEncoderConf(vocab_size=250002),
                            xlmr_transform, 254, "XLM-R encoder, base configuration. " + _XLMR)
XLMR_LARGE_ENCODER = _bundle("xlmr.large.encoder.pt",
                             RobertaEncoderConf(vocab_size=250002, **_LARGE), xlmr_transform,
                             510, "XLM-R encoder, large configuration. " + _XLMR)
ROBERTA_BASE_ENCODER = _bundle("roberta.base.encoder.pt", RobertaEncoderConf(vocab_size=50265),
                               roberta_transform, 254,
                               "RoBERTa encoder, base configuration. " + _ROBERTA)
ROBERTA_LARGE_ENCODER = _bundle("roberta.large.encoder.pt",
                                RobertaEncoderConf(vocab_size=50265, **_LARGE),
                                roberta_transform, 510,
                                "RoBERTa encoder, large configuration. " + _ROBERTA)
ROBERTA_DISTILLED_ENCODER = _bundle(
    "roberta.distilled.encoder.pt", RobertaEncoderConf(num_encoder_layers=6, padding_idx=1),
    roberta_transform, 510,
    "DistilRoBERTa encoder: RoBERTa-base distilled into 6 layers on OpenWebTextCorpus, "
    "twice as fast; published by Hugging Face under the Apache 2.0 License.")
