"""emberaudio.models: speech models with torchaudio's module names and state-dict keys."""

from emberaudio.models._hdemucs import HDemucs, hdemucs_high, hdemucs_low, hdemucs_medium
from emberaudio.models.conformer import Conformer
from emberaudio.models.conv_tasnet import ConvTasNet, conv_tasnet_base
from emberaudio.models.deepspeech import DeepSpeech
from emberaudio.models.emformer import Emformer
from emberaudio.models.rnnt import RNNT, emformer_rnnt_base, emformer_rnnt_model
from emberaudio.models.rnnt_decoder import Hypothesis, RNNTBeamSearch
from emberaudio.models.squim import (
    SquimObjective,
    SquimSubjective,
    squim_objective_base,
    squim_objective_model,
    squim_subjective_base,
    squim_subjective_model,
)
from emberaudio.models.tacotron2 import Tacotron2
from emberaudio.models.wav2letter import Wav2Letter
from emberaudio.models.wav2vec2 import (
    HuBERTPretrainModel,
    Wav2Vec2Model,
    hubert_base,
    hubert_large,
    hubert_pretrain_base,
    hubert_pretrain_large,
    hubert_pretrain_model,
    hubert_pretrain_xlarge,
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
from emberaudio.models.wavernn import WaveRNN

__all__ = [
    "Conformer", "ConvTasNet", "DeepSpeech", "Emformer", "HDemucs", "HuBERTPretrainModel",
    "Hypothesis", "RNNT", "RNNTBeamSearch", "SquimObjective", "SquimSubjective",
    "Tacotron2", "Wav2Letter", "Wav2Vec2Model", "WaveRNN", "conv_tasnet_base",
    "emformer_rnnt_base", "emformer_rnnt_model", "hdemucs_high", "hdemucs_low",
    "hdemucs_medium", "hubert_base", "hubert_large", "hubert_pretrain_base",
    "hubert_pretrain_large", "hubert_pretrain_model", "hubert_pretrain_xlarge",
    "hubert_xlarge", "squim_objective_base", "squim_objective_model",
    "squim_subjective_base", "squim_subjective_model", "wav2vec2_base", "wav2vec2_large",
    "wav2vec2_large_lv60k", "wav2vec2_model", "wav2vec2_xlsr_1b", "wav2vec2_xlsr_2b",
    "wav2vec2_xlsr_300m", "wavlm_base", "wavlm_large", "wavlm_model"
]
