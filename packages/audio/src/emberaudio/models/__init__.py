"""emberaudio.models: speech models with torchaudio's module names and state-dict keys."""

from emberaudio.models.conformer import Conformer
from emberaudio.models.conv_tasnet import ConvTasNet, conv_tasnet_base
from emberaudio.models.deepspeech import DeepSpeech
from emberaudio.models.wav2letter import Wav2Letter
from emberaudio.models.wav2vec2 import (
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
from emberaudio.models.wavernn import WaveRNN

__all__ = ["Conformer", "ConvTasNet", "DeepSpeech", "Wav2Letter", "Wav2Vec2Model", "WaveRNN",
           "conv_tasnet_base", "hubert_base", "hubert_large", "hubert_xlarge", "wav2vec2_base",
           "wav2vec2_large", "wav2vec2_large_lv60k", "wav2vec2_model", "wav2vec2_xlsr_1b",
           "wav2vec2_xlsr_2b", "wav2vec2_xlsr_300m", "wavlm_base", "wavlm_large", "wavlm_model"]
