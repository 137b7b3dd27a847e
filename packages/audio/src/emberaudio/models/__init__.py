"""emberaudio.models: speech models with torchaudio's module names and state-dict keys."""

from emberaudio.models.conv_tasnet import ConvTasNet, conv_tasnet_base
from emberaudio.models.deepspeech import DeepSpeech
from emberaudio.models.wav2letter import Wav2Letter

__all__ = ["ConvTasNet", "DeepSpeech", "Wav2Letter", "conv_tasnet_base"]
