"""RoBERTa and XLM-R in torchtext's layout (``torchtext.models.roberta``):
:class:`RobertaEncoderConf`, :class:`RobertaModel`, :class:`RobertaClassificationHead`,
:class:`RobertaBundle` and the pretrained bundles. The Hugging Face layout is in
:mod:`embertext.models.roberta.modeling_roberta` (its ``RobertaConfig``,
``RobertaForMaskedLM``, ``RobertaForSequenceClassification`` and ``XLMRobertaModel`` are
importable from here too)."""

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
from embertext.models.roberta.modeling_roberta import (  # noqa: F401 (where they were)
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    XLMRobertaModel,
)

__all__ = ["RobertaEncoderConf", "RobertaClassificationHead", "RobertaModel", "RobertaBundle",
           "XLMR_BASE_ENCODER", "XLMR_LARGE_ENCODER", "ROBERTA_BASE_ENCODER",
           "ROBERTA_LARGE_ENCODER", "ROBERTA_DISTILLED_ENCODER"]
