"""emberaudio.transforms: audio transforms as modules, in torchaudio's names."""

from emberaudio.transforms._multi_channel import MVDR, PSD, RTFMVDR, SoudenMVDR
from emberaudio.transforms._spectral import (
    LFCC,
    MFCC,
    FFTConvolve,
    GriffinLim,
    InverseMelScale,
    InverseSpectrogram,
    MelSpectrogram,
    PitchShift,
    SpectralCentroid,
    Spectrogram,
    TimeStretch,
    Vad,
)
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
    "FFTConvolve", "GriffinLim", "InverseMelScale", "InverseSpectrogram", "LFCC", "MFCC",
    "MVDR", "MelSpectrogram", "PSD", "PitchShift", "RTFMVDR", "SoudenMVDR", "SpectralCentroid",
    "Spectrogram", "TimeStretch", "Vad",
]
