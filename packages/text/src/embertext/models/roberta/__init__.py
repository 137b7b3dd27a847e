"""RoBERTa and XLM-R: torchtext's (:class:`RobertaModel`, :class:`RobertaEncoderConf`,
:class:`RobertaClassificationHead`, :class:`RobertaBundle` and its pretrained bundles) here,
and Hugging Face's layout in :mod:`embertext.models.roberta.modeling_roberta`."""

from embertext.models.roberta.bundler import (
    ROBERTA_BASE_ENCODER,
    ROBERTA_DISTILLED_ENCODER,
    ROBERTA_LARGE_ENCODER,
    XLMR_BASE_ENCODER,
    XLMR_LARGE_ENCODER,
    RobertaBundle,
)
from embertext.models.roberta.model import (
    RobertaClassificationHead,
    RobertaEncoderConf,
    RobertaModel,
)

__all__ = ["RobertaEncoderConf", "RobertaClassificationHead", "RobertaModel", "RobertaBundle",
           "XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
           "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER"]
