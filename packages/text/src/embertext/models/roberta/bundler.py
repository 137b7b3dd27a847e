"""torchtext's pretrained RoBERTa / XLM-R encoders: :class:`RobertaBundle` (the encoder's
configuration, the URL of its weights and its text transform) and the five bundles.

Checkpoints are downloaded once into ember's hub cache (``<ember.hub.get_dir()>/checkpoints``);
offline, put the file there. The transforms read torchtext's own vocabulary files
(``*.vocab.pt``, pickled torchtext ``Vocab`` objects) with :func:`load_torchtext_vocab`.
"""

import os
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

import ember
from ember import nn
from embertext import transforms as T
from embertext.models._download import (
    _TEXT_BUCKET,
    cached_file,
    check_weights_request,
    load_state_dict_from_url,
)
from embertext.models.roberta.model import RobertaEncoderConf, RobertaModel
from embertext.vocab.vocab import Vocab, _VocabTable

__all__ = ["RobertaBundle", "XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
           "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER", "load_torchtext_vocab"]


class _PickledState:
    """Stands in for a class of a torchtext pickle: keeps the state it is given."""

    def __setstate__(self, state):
        self.state = state


class _TorchtextUnpickler(pickle.Unpickler):
    # torchtext.vocab.Vocab (a Module holding its C++ table) and that table
    CLASSES = {("torchtext.vocab.vocab", "Vocab"), ("torchtext._torchtext", "Vocab")}

    def find_class(self, module, name):
        if (module, name) in self.CLASSES:
            return type(name, (_PickledState,), {"torchtext_class": f"{module}.{name}"})
        return super().find_class(module, name)


class _TorchtextPickle:
    """A ``pickle_module`` for ``ember.load`` that reads torchtext's classes."""

    Unpickler = _TorchtextUnpickler
    load = staticmethod(pickle.load)
    __name__ = "pickle"


def load_torchtext_vocab(path):
    r"""A :class:`~embertext.vocab.Vocab` from a file of torchtext's ``torch.save(vocab)``
    (the ``*.vocab.pt`` files of its model bundles): the tokens in order and the default
    index.

    Raises:
        ValueError: if the file holds something else.
    """
    obj = ember.load(path, weights_only=False, pickle_module=_TorchtextPickle)
    table = getattr(obj, "state", {})
    table = table.get("vocab") if isinstance(table, dict) else None
    state = getattr(table, "state", None)
    # torchtext's table pickles as (version, [default index] or [], tokens, [])
    if not (isinstance(state, tuple) and len(state) == 4 and isinstance(state[2], list)):
        raise ValueError(f"{path} does not hold a torchtext Vocab")
    _, ints, itos, _ = state
    return Vocab(_VocabTable(itos, ints[0] if ints else None))


def _vocab_from_url(url):
    return load_torchtext_vocab(cached_file(url))


def _is_head_available_in_checkpoint(checkpoint, head_state_dict):
    return all(key in checkpoint for key in head_state_dict)


@dataclass
class RobertaBundle:
    r"""A pretrained RoBERTa / XLM-R encoder: its :class:`RobertaEncoderConf`, the path of its
    weights, a default head and its transform.

    Examples::

        >>> xlmr_base = XLMR_BASE_ENCODER
        >>> model = xlmr_base.get_model()
        >>> transform = xlmr_base.transform()
        >>> tokens = to_tensor(transform(["Hello world", "How are you!"]), padding_value=1)
        >>> model(tokens).shape
        (2, 6, 768)
        >>> head = RobertaClassificationHead(num_classes=2, input_dim=768)
        >>> model = RobertaBundle.build_model(encoder_conf=RobertaEncoderConf(vocab_size=250002),
        ...                                   head=head, checkpoint="xlmr.base.encoder.pt")
    """

    _encoder_conf: RobertaEncoderConf
    _path: str | None = None
    _head: nn.Module | None = None
    transform: Callable | None = None

    def get_model(self, *, head=None, load_weights=True, freeze_encoder=False, dl_kwargs=None):
        r"""The model, with the pretrained weights when ``load_weights``.

        Args:
            head (nn.Module, optional): the head on the encoder (instead of the bundle's).
            load_weights (bool): load the weights (downloaded the first time).
            freeze_encoder (bool): ``requires_grad=False`` on the encoder's parameters.
            dl_kwargs (dict, optional): passed to the download (``model_dir``,
                ``progress``, ``check_hash``, ``file_name``, ``map_location``).
        """
        check_weights_request(self._path, load_weights, freeze_encoder, "encoder")
        return RobertaBundle.build_model(
            encoder_conf=self._encoder_conf, head=head if head is not None else self._head,
            freeze_encoder=freeze_encoder, checkpoint=self._path if load_weights else None,
            override_checkpoint_head=True, strict=False, dl_kwargs=dl_kwargs)

    @classmethod
    def build_model(cls, encoder_conf, *, head=None, freeze_encoder=False, checkpoint=None,
                    override_checkpoint_head=False, strict=False, dl_kwargs=None):
        r"""A :class:`RobertaModel` of ``encoder_conf`` and ``head``, loaded from
        ``checkpoint`` (a URL or path, or a state dict, which may hold the encoder only).

        The head keeps its own weights where the checkpoint has none for it, or with
        ``override_checkpoint_head``.
        """
        model = RobertaModel(encoder_conf, head, freeze_encoder)
        if checkpoint is None:
            return model
        if isinstance(checkpoint, dict):
            state_dict = checkpoint
        elif isinstance(checkpoint, (str, os.PathLike)):
            state_dict = load_state_dict_from_url(os.fspath(checkpoint), **(dl_kwargs or {}))
        else:
            raise TypeError("checkpoint must be of type `str` or `Dict[str, torch.Tensor]` but "
                            f"got {type(checkpoint)}")
        if head is not None:
            head_state_dict = {k: v for k, v in model.state_dict().items()
                               if re.match(r"head\.", k)}
            if override_checkpoint_head or not _is_head_available_in_checkpoint(
                    state_dict, head_state_dict):
                state_dict.update(head_state_dict)
        model.load_state_dict(state_dict, strict=strict)
        return model

    @property
    def encoderConf(self):
        """The encoder's :class:`RobertaEncoderConf`."""
        return self._encoder_conf


def _transform(tokenizer, vocab_file, truncate_length):
    """Tokens, their ids in the vocabulary, truncated, between <s> (0) and </s> (2)."""
    return T.Sequential(
        tokenizer, T.VocabTransform(_vocab_from_url(urljoin(_TEXT_BUCKET, vocab_file))),
        T.Truncate(truncate_length), T.AddToken(token=0, begin=True),
        T.AddToken(token=2, begin=False))


def xlmr_transform(truncate_length):
    """XLM-R's text transform (SentencePiece pieces)."""
    return _transform(
        T.SentencePieceTokenizer(urljoin(_TEXT_BUCKET, "xlmr.sentencepiece.bpe.model")),
        "xlmr.vocab.pt", truncate_length)


def roberta_transform(truncate_length):
    """RoBERTa's text transform (GPT-2's byte-level BPE)."""
    return _transform(
        T.GPT2BPETokenizer(encoder_json_path=urljoin(_TEXT_BUCKET, "gpt2_bpe_encoder.json"),
                           vocab_bpe_path=urljoin(_TEXT_BUCKET, "gpt2_bpe_vocab.bpe")),
        "roberta.vocab.pt", truncate_length)


_LARGE = dict(embedding_dim=1024, ffn_dimension=4096, num_attention_heads=16,
              num_encoder_layers=24)

XLMR_BASE_ENCODER = RobertaBundle(
    _path=urljoin(_TEXT_BUCKET, "xlmr.base.encoder.pt"),
    _encoder_conf=RobertaEncoderConf(vocab_size=250002),
    transform=lambda: xlmr_transform(254))
XLMR_BASE_ENCODER.__doc__ = """XLM-R encoder, base configuration (Conneau et al., 2020:
"Unsupervised Cross-lingual Representation Learning at Scale"), trained on 2.5 TB of
CommonCrawl text in 100 languages. Released by its authors under the MIT license."""

XLMR_LARGE_ENCODER = RobertaBundle(
    _path=urljoin(_TEXT_BUCKET, "xlmr.large.encoder.pt"),
    _encoder_conf=RobertaEncoderConf(vocab_size=250002, **_LARGE),
    transform=lambda: xlmr_transform(510))
XLMR_LARGE_ENCODER.__doc__ = "XLM-R encoder, large configuration (see XLMR_BASE_ENCODER)."

ROBERTA_BASE_ENCODER = RobertaBundle(
    _path=urljoin(_TEXT_BUCKET, "roberta.base.encoder.pt"),
    _encoder_conf=RobertaEncoderConf(vocab_size=50265),
    transform=lambda: roberta_transform(254))
ROBERTA_BASE_ENCODER.__doc__ = """RoBERTa encoder, base configuration (Liu et al., 2019:
"RoBERTa: A Robustly Optimized BERT Pretraining Approach"), trained on BookCorpus, English
Wikipedia, CC-News, OpenWebText and STORIES. Released by its authors under the MIT license."""

ROBERTA_LARGE_ENCODER = RobertaBundle(
    _path=urljoin(_TEXT_BUCKET, "roberta.large.encoder.pt"),
    _encoder_conf=RobertaEncoderConf(vocab_size=50265, **_LARGE),
    transform=lambda: roberta_transform(510))
ROBERTA_LARGE_ENCODER.__doc__ = "RoBERTa encoder, large configuration (see ROBERTA_BASE_ENCODER)."

ROBERTA_DISTILLED_ENCODER = RobertaBundle(
    _path=urljoin(_TEXT_BUCKET, "roberta.distilled.encoder.pt"),
    _encoder_conf=RobertaEncoderConf(num_encoder_layers=6, padding_idx=1),
    transform=lambda: roberta_transform(510))
ROBERTA_DISTILLED_ENCODER.__doc__ = """Distilled RoBERTa encoder (6 layers; Sanh et al., 2019:
"DistilBERT, a distilled version of BERT"), from Hugging Face's distilroberta-base. Released
under the Apache 2.0 license."""
