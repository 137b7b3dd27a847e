"""wav2vec 2.0 / HuBERT / XLS-R / WavLM models, and HuBERT pre-training."""

from emberaudio.models.wav2vec2.hubert_pretrain import (
    HuBERTPretrainModel,
    hubert_pretrain_base,
    hubert_pretrain_large,
    hubert_pretrain_model,
    hubert_pretrain_xlarge,
)
from emberaudio.models.wav2vec2.model import (
    Wav2Vec2Model,
    hubert_base,
    hubert_large,
    hubert_xlarge,
    wav2vec2_base,
    wav2vec2_large,
    wav2vec2_large_lv60k,
    wav2vec2_model,
    wav2vec2_xlsr_1b,
    wav2vec2_xlsr_2b,
    wav2vec2_xlsr_300m,
    wavlm_base,
    wavlm_large,
    wavlm_model,
)

__all__ = ["HuBERTPretrainModel", "Wav2Vec2Model", "hubert_base", "hubert_large",
           "hubert_pretrain_base", "hubert_pretrain_large", "hubert_pretrain_model",
           "hubert_pretrain_xlarge", "hubert_xlarge", "wav2vec2_base", "wav2vec2_large",
           "wav2vec2_large_lv60k", "wav2vec2_model", "wav2vec2_xlsr_1b", "wav2vec2_xlsr_2b",
           "wav2vec2_xlsr_300m", "wavlm_base", "wavlm_large", "wavlm_model"]
