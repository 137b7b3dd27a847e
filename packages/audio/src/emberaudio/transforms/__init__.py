"""emberaudio.transforms: audio transforms as modules, in torchaudio's names.

The spectral transforms (Spectrogram, MelSpectrogram, MFCC, GriffinLim, ...) wait for
ember's fft/stft and are not here yet.
"""

from emberaudio.transforms._transforms import (
    AddNoise,
    AmplitudeToDB,
    ComputeDeltas,
    Convolve,
    Deemphasis,
    Fade,
    FrequencyMasking,
    Loudness,
    MelScale,
    MuLawDecoding,
    MuLawEncoding,
    Preemphasis,
    Resample,
    RNNTLoss,
    SlidingWindowCmn,
    SpecAugment,
    Speed,
    SpeedPerturbation,
    TimeMasking,
    Vol,
)

__all__ = [
    "AddNoise", "AmplitudeToDB", "ComputeDeltas", "Convolve", "Deemphasis", "Fade",
    "FrequencyMasking", "Loudness", "MelScale", "MuLawDecoding", "MuLawEncoding", "Preemphasis",
    "RNNTLoss", "Resample", "SlidingWindowCmn", "SpecAugment", "Speed", "SpeedPerturbation",
    "TimeMasking", "Vol",
]
